//! Rate limits: one counter item per key and fixed window, incremented with
//! `ADD` (no read, no contention beyond the item), cleaned up by TTL.

use async_trait::async_trait;
use restock_core::Millis;
use restock_store::port::Result;
use restock_store::{AbuseStore, RateDecision};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::tx::Change;

#[async_trait]
impl AbuseStore for DynamoStore {
    async fn rate_limit(
        &self,
        key_text: &str,
        limit: u32,
        window_ms: Millis,
        now: Millis,
    ) -> Result<RateDecision> {
        let start = now - now.rem_euclid(window_ms.max(1));
        let counted = Change::on(key(format!("RATE#{key_text}"), start.to_string()))
            .add(HITS, n(1))
            .set(TTL, n((start + window_ms) / 1000 + 60))
            .apply_returning(self)
            .await?
            .unwrap_or_default();
        let hits: u64 = opt_n(&counted, HITS)?.unwrap_or(1);
        Ok(RateDecision::from_count(hits, limit, start, window_ms, now))
    }
}
