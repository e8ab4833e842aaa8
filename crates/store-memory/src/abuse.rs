//! Fixed-window rate limits, forgotten once their window has passed.

use async_trait::async_trait;

use crate::*;

#[async_trait]
impl AbuseStore for MemoryStore {
    async fn rate_limit(
        &self,
        key: &str,
        limit: u32,
        window_ms: Millis,
        now: Millis,
    ) -> Result<RateDecision> {
        let start = now - now.rem_euclid(window_ms.max(1));
        let mut s = self.lock();
        if now - s.rates_swept >= window_ms {
            s.rates.retain(|(_, w), _| *w + window_ms > now);
            s.rates_swept = now;
        }
        let count = s.rates.entry((key.to_owned(), start)).or_default();
        *count += 1;
        Ok(RateDecision::from_count(
            *count, limit, start, window_ms, now,
        ))
    }
}
