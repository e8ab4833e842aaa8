//! sweep's operations: deadlines from the sparse `due` index (sharded, so a
//! drop's writes spread), each ended once by a conditional transaction, and
//! counters recounted from the `units` index.

use async_trait::async_trait;
use restock_core::{Counters, Millis, RequestId, RequestState, Sku};
use restock_store::port::Result;
use restock_store::{Drift, Due, ExpireOutcome, StoreError, SweepStore};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::finish;
use crate::table::DUE_SHARDS;
use crate::tx::{Change, Outcome};

/// A counter fix that lowers a count waits until the SKU has been quiet this
/// long, so index lag (milliseconds) cannot make a live offer look missing.
const RECONCILE_QUIET_MS: Millis = 60_000;

impl DynamoStore {
    /// Due requests of one `due` shard, at most about `limit`.
    async fn due_in_shard(&self, shard: u16, now: Millis, limit: usize) -> Result<Vec<Due>> {
        let mut found = Vec::new();
        let mut start = None;
        loop {
            let page = self
                .query()
                .index_name("due")
                .key_condition_expression(format!("{DUE_PK} = :d AND {DUE} <= :now"))
                .expression_attribute_values(":d", s(format!("DUE#{shard}")))
                .expression_attribute_values(":now", n(now))
                .set_exclusive_start_key(start)
                .limit(limit.clamp(1, 1000) as i32)
                .send()
                .await
                .map_err(|e| StoreError::backend("Query", e))?;
            for item in page.items() {
                let id: RequestId = get_s(item, REQUEST_ID)?
                    .parse()
                    .map_err(|e| corrupt(item, e))?;
                let sku = Sku::try_from(get_s(item, SKU)?).map_err(|e| corrupt(item, e))?;
                found.push(Due {
                    id,
                    sku,
                    due: get_n(item, DUE)?,
                });
            }
            start = page.last_evaluated_key;
            if start.is_none() || found.len() >= limit {
                return Ok(found);
            }
        }
    }
}

#[async_trait]
impl SweepStore for DynamoStore {
    async fn due(&self, now: Millis, limit: usize) -> Result<Vec<Due>> {
        let shards = (0..DUE_SHARDS).map(|shard| self.due_in_shard(shard, now, limit));
        let mut due: Vec<Due> = futures::future::try_join_all(shards)
            .await?
            .into_iter()
            .flatten()
            .collect();
        due.sort_by_key(|d| (d.due, d.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn expire(&self, due: &Due, now: Millis) -> Result<ExpireOutcome> {
        let Some(item) = self.request_item(&due.id).await? else {
            return Ok(ExpireOutcome::Skipped);
        };
        let r = read_request(&item)?;
        let Ok((to, freed)) = r.state.expire(now, r.stale_at) else {
            return Ok(ExpireOutcome::Skipped);
        };
        let mut tx = self.tx();
        finish(&mut tx, &r, to, freed, now)?;
        match self.transact(tx).await? {
            // Another sweep, a click or a cancel got there first; theirs stands.
            Outcome::Cancelled(_) => Ok(ExpireOutcome::Skipped),
            Outcome::Done => Ok(match to {
                RequestState::Stale => ExpireOutcome::Stale,
                RequestState::Lapsed => ExpireOutcome::Lapsed,
                _ => ExpireOutcome::Released,
            }),
        }
    }

    async fn reconcile(&self, sku: &Sku, now: Millis) -> Result<Option<Drift>> {
        let Some(before) = self.get(sku_pk(sku), STATE_SK).await? else {
            return Ok(None);
        };
        let stored = read_sku(Some(&before))?;
        let touched: Millis = opt_n(&before, TOUCHED)?.unwrap_or(0);
        let (mut offered, mut held) = (0u32, 0u32);
        let units = self
            .query_all(
                self.query()
                    .index_name("units")
                    .key_condition_expression(format!("{UNITS_PK} = :u"))
                    .expression_attribute_values(":u", s(units_pk(sku))),
            )
            .await?;
        for item in &units {
            match get_s(item, STATUS)? {
                "offered" => offered += 1,
                "held" => held += 1,
                _ => {}
            }
        }
        let counters = stored.snapshot.counters;
        if counters.offered == offered && counters.held == held {
            return Ok(None);
        }
        let counted = Counters {
            offered,
            held,
            ..counters
        };
        // Raising a count is always safe; lowering one could invite an extra
        // shopper if the index lagged, so it waits for a quiet SKU.
        let lowers = offered < counters.offered || held < counters.held;
        let quiet = now - touched >= RECONCILE_QUIET_MS;
        if lowers && !quiet {
            return Ok(Some(Drift {
                stored: counters,
                counted: counters,
            }));
        }
        let fixed = Change::on(key(sku_pk(sku), STATE_SK))
            .set(OFFERED, n(offered))
            .set(HELD, n(held))
            .set_expr(format!("{VERSION} = {VERSION} + :one"))
            .value(":one", n(1))
            .when(format!(
                "{OFFERED} = :oldo AND {HELD} = :oldh AND {VERSION} = :v"
            ))
            .value(":oldo", n(counters.offered))
            .value(":oldh", n(counters.held))
            .value(":v", n(stored.version.unwrap_or(0)))
            .apply(self)
            .await?;
        // A failed condition: something moved while counting; the next reconcile looks again.
        Ok(fixed.then_some(Drift {
            stored: counters,
            counted,
        }))
    }
}
