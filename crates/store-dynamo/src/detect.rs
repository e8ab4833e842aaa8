//! detect's operations: a stock event is applied in one transaction with its
//! delivery id (the dedup) and, for a restock or top-up, the wake for notify;
//! the SKU's state item is guarded by its version.

use async_trait::async_trait;
use restock_core::{Millis, Rules, Sku, StockEvent, StockOutcome, allowance};
use restock_store::port::Result;
use restock_store::{ApplyOutcome, DetectStore, SkuSnapshot, StoreError, Wake, WakeKind};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::wake;
use crate::slots::write_slots;
use crate::table::fnv;
use crate::tx::{Change, MAX_ATTEMPTS, Outcome, PutIf, backoff};

/// The state item's update to `version + 1`, guarded by the version read
/// (or by there being none yet).
pub(crate) fn versioned(sku: &Sku, version: Option<u64>) -> Change {
    let change = Change::on(key(sku_pk(sku), STATE_SK)).set(VERSION, n(version.unwrap_or(0) + 1));
    match version {
        Some(v) => change.when(format!("{VERSION} = :v")).value(":v", n(v)),
        None => change.when(format!("attribute_not_exists({VERSION})")),
    }
}

pub(crate) fn stock_json(state: &restock_core::StockState) -> String {
    serde_json::to_string(state).expect("stock state serialises")
}

/// Writes `next` as the SKU's stock state (versioned on what `current`
/// read) with the level it implies, and moves the hold allowance by the
/// level's change, spread over the slots (the catalogue's shards; never
/// fewer than before). Labels `state` and `slot…`.
pub(crate) fn write_stock(
    tx: &mut crate::tx::Tx,
    sku: &Sku,
    current: &crate::codec::SkuItem,
    shards: u16,
    next: &restock_core::StockState,
) -> Result<()> {
    let mut slots = current.slots.clone();
    slots.resize(slots.len().max(usize::from(shards)), 0);
    let level = next.level().units();
    let delta = i64::from(level) - i64::from(current.snapshot.counters.level);
    tx.update(
        "state",
        versioned(sku, current.version)
            .set(STOCK, s(stock_json(next)))
            .set(LEVEL, n(level))
            .set(HOLD_SLOTS, n(slots.len()))
            .set_expr(format!("{OUT} = if_not_exists({OUT}, :zero)"))
            .value(":zero", n(0)),
    )?;
    write_slots(tx, sku, &allowance::plan(&slots, delta))
}

#[async_trait]
impl DetectStore for DynamoStore {
    async fn apply_stock(
        &self,
        sku: &Sku,
        event: &StockEvent,
        rules: &Rules,
        now: Millis,
    ) -> Result<ApplyOutcome> {
        let mut delivery = key(delivery_pk(&event.delivery_id), ONE_SK);
        delivery.insert(TTL.into(), ttl(now, DELIVERY_TTL_SECS));
        for attempt in 0..MAX_ATTEMPTS {
            let (current, shards) = self.sku_with_entry(sku).await?;
            let applied =
                current
                    .snapshot
                    .stock
                    .apply_reading(&event.location, event.reading(), rules);
            let mut tx = self.tx();
            tx.put("delivery", delivery.clone(), PutIf::Absent)?;
            // The newest reading is kept whatever it meant (a later, older
            // delivery must meet it); only a stale one changes nothing.
            if applied.next != current.snapshot.stock {
                write_stock(&mut tx, sku, &current, shards, &applied.next)?;
                let woken = match applied.outcome {
                    StockOutcome::Restock { episode, .. } => Some((WakeKind::Restock, episode)),
                    StockOutcome::TopUp { episode, .. } => Some((WakeKind::TopUp, episode)),
                    _ => None,
                };
                if let Some((kind, episode)) = woken {
                    let discriminator = format!("{:016x}", fnv(&event.delivery_id));
                    wake(&mut tx, sku, kind, episode, now, &discriminator)?;
                }
            }
            match self.transact(tx).await? {
                Outcome::Done => {
                    return Ok(ApplyOutcome::Applied {
                        outcome: applied.outcome,
                        tied: applied.tied,
                    });
                }
                Outcome::Cancelled(c) if c.failed("delivery") => {
                    return Ok(ApplyOutcome::Duplicate);
                }
                Outcome::Cancelled(_) => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention(sku_pk(sku)))
    }

    async fn release_paused(&self, sku: &Sku, now: Millis) -> Result<Option<StockOutcome>> {
        for attempt in 0..MAX_ATTEMPTS {
            let current = self.sku_item(sku).await?;
            let Ok((next, outcome)) = current.snapshot.stock.release() else {
                return Ok(None);
            };
            let mut tx = self.tx();
            tx.update(
                "state",
                versioned(sku, Some(current.version.unwrap_or(0))).set(STOCK, s(stock_json(&next))),
            )?;
            wake(
                &mut tx,
                sku,
                WakeKind::Restock,
                next.episode,
                now,
                "released",
            )?;
            match self.transact(tx).await? {
                Outcome::Done => return Ok(Some(outcome)),
                Outcome::Cancelled(_) => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention(sku_pk(sku)))
    }

    async fn reject_paused(&self, sku: &Sku, _now: Millis) -> Result<bool> {
        for attempt in 0..MAX_ATTEMPTS {
            let (current, shards) = self.sku_with_entry(sku).await?;
            let Ok(next) = current.snapshot.stock.reject() else {
                return Ok(false);
            };
            // The level falls to 0: the hold allowance falls with it, so no
            // new hold can be taken on the level not believed.
            let mut tx = self.tx();
            write_stock(&mut tx, sku, &current, shards, &next)?;
            match self.transact(tx).await? {
                Outcome::Done => return Ok(true),
                Outcome::Cancelled(_) => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention(sku_pk(sku)))
    }

    async fn snapshot(&self, sku: &Sku) -> Result<SkuSnapshot> {
        Ok(self.sku_item(sku).await?.snapshot)
    }

    async fn wakes(&self, sku: &Sku) -> Result<Vec<Wake>> {
        let mut items: Vec<Item> =
            futures::future::try_join_all(wake_pks(sku).map(|pk| self.partition(pk)))
                .await?
                .into_iter()
                .flatten()
                .collect();
        // Oldest first: the sort key starts with the time.
        items.sort_by(|a, b| opt_s(a, SK).cmp(&opt_s(b, SK)));
        items
            .iter()
            .map(|item| {
                let kind = WakeKind::parse(get_s(item, KIND)?)
                    .ok_or_else(|| corrupt(item, "unknown wake kind"))?;
                Ok(Wake {
                    sku: sku.clone(),
                    kind,
                    episode: get_n(item, EPISODE)?,
                    at: get_n(item, WRITTEN_AT)?,
                })
            })
            .collect()
    }

    async fn first_time(&self, once: &str, now: Millis) -> Result<bool> {
        let mut item = key(delivery_pk(&format!("once:{once}")), ONE_SK);
        item.insert(TTL.into(), ttl(now, DELIVERY_TTL_SECS));
        let mut tx = self.tx();
        tx.put("once", item, PutIf::Absent)?;
        Ok(matches!(self.transact(tx).await?, Outcome::Done))
    }

    async fn heard(&self, source: &str, now: Millis) -> Result<()> {
        // Only forwards: a delivery processed late never moves it back.
        Change::on(key(HEARD_PK, source))
            .set(WRITTEN_AT, n(now))
            .when(format!(
                "attribute_not_exists({WRITTEN_AT}) OR {WRITTEN_AT} < :now"
            ))
            .value(":now", n(now))
            .apply(self)
            .await
            .map(drop)
    }
}
