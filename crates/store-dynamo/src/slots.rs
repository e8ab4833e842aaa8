//! The hold allowance split over slots, on DynamoDB.
//!
//! A click used to write the SKU's state item (`held < level`), so the
//! clicks of a drop all serialised on one item. Now the allowance
//! `level - held` is kept in hold slots, `HS#<sku>#<n>` (`fr`), one per queue
//! shard, each in a partition of its own; a click takes one from its own
//! slot (`fr > 0`) and the state item keeps only `units_out` (offered or held),
//! which a click does not change. The rules that keep the slots exact and
//! their proofs are in `restock_core::allowance`; this module turns its
//! changes into conditional writes.
//!
//! How many slots are in use is the state item's `hs`: set by detect (the
//! catalogue's shards, never lowered) in the same transaction that spreads
//! the level over them, so every reader of the slots reads all of them.

use std::ops::Range;

use restock_core::Sku;
use restock_core::allowance::{Guard, SlotChange};
use restock_store::StoreError;
use restock_store::port::Result;

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::tx::{Change, Tx, backoff};

/// The update that applies `change` to one of `sku`'s slots. A slot never
/// written holds 0.
pub(crate) fn slot_update(sku: &Sku, change: SlotChange) -> Change {
    let update = Change::on(hold_slot_key(sku, change.slot)).add(ALLOWANCE, n(change.add));
    let (op, value) = match change.guard {
        Guard::None => return update,
        Guard::AtLeast(min) => (">=", min),
        Guard::Exactly(v) => ("=", v),
    };
    let unwritten_passes = match op {
        ">=" => 0 >= value,
        _ => value == 0,
    };
    let condition = if unwritten_passes {
        format!("attribute_not_exists({ALLOWANCE}) OR {ALLOWANCE} {op} :guard")
    } else {
        format!("{ALLOWANCE} {op} :guard")
    };
    update.when(condition).value(":guard", n(value))
}

/// Adds `changes` to a transaction, labelled `slot`.
pub(crate) fn write_slots(tx: &mut Tx<'_>, sku: &Sku, changes: &[SlotChange]) -> Result<()> {
    for change in changes {
        tx.update("slot", slot_update(sku, *change))?;
    }
    Ok(())
}

/// A freed hold's unit, given back to slot 0 (which may owe the debt).
pub(crate) fn give_back(tx: &mut Tx<'_>, sku: &Sku) -> Result<()> {
    write_slots(
        tx,
        sku,
        &[SlotChange {
            slot: 0,
            add: 1,
            guard: Guard::None,
        }],
    )
}

/// A slot item's allowance (`fr`; 0 before its first write).
pub(crate) fn allowance_of(item: &Item) -> Result<i64> {
    Ok(opt_n(item, ALLOWANCE)?.unwrap_or(0))
}

/// The slot a slot item is, from its key.
fn slot_of(item: &Item) -> Result<usize> {
    get_s(item, PK)?
        .rsplit('#')
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| corrupt(item, "not a hold slot"))
}

/// How often a click's snapshot of the slots is tried before the click
/// gives up with `Contention` (each after a wait of up to 80 ms).
const SNAPSHOT_ATTEMPTS: u32 = 48;

impl DynamoStore {
    /// Slots `range` of `sku`, strongly consistent (one `BatchGetItem`);
    /// not one snapshot across slots.
    pub(crate) async fn slots(&self, sku: &Sku, range: Range<usize>) -> Result<Vec<i64>> {
        let mut slots = vec![0; range.len()];
        for item in self
            .get_consistent(range.clone().map(|slot| hold_slot_key(sku, slot)))
            .await?
        {
            let slot = slot_of(&item)?;
            if let Some(value) = slot.checked_sub(range.start).and_then(|i| slots.get_mut(i)) {
                *value = allowance_of(&item)?;
            }
        }
        Ok(slots)
    }

    /// The state item's `hs` and every slot in use, each read strongly
    /// consistent (`BatchGetItem`), but not one snapshot: a refill may move
    /// units between slots while they are read. Good for picking a slot to
    /// take from (the hold's guard `fr ≥ k` keeps that exact); only
    /// [`Self::slots_at_once`] may say none is left. Never refused by a
    /// transaction in flight, unlike a snapshot.
    pub(crate) async fn slots_now(&self, sku: &Sku, guess: usize) -> Result<Vec<i64>> {
        let guess = guess.max(1);
        let mut keys = vec![key(sku_pk(sku), STATE_SK)];
        keys.extend((0..guess).map(|slot| hold_slot_key(sku, slot)));
        let (mut in_use, mut slots) = (1, vec![0; guess]);
        for item in self.get_consistent(keys).await? {
            if get_s(&item, SK)? == STATE_SK {
                in_use = hold_slots(Some(&item))?;
            } else if let Some(value) = slots.get_mut(slot_of(&item)?) {
                *value = allowance_of(&item)?;
            }
        }
        if in_use > guess {
            slots.extend(self.slots(sku, guess..in_use).await?);
        }
        slots.truncate(in_use);
        Ok(slots)
    }

    /// The state item's `hs` and every slot in use, as one snapshot
    /// (`TransactGetItems`): what a click whose slot ran dry decides on.
    /// `guess` is how many slots to read first (the caller's shards).
    pub(crate) async fn slots_at_once(&self, sku: &Sku, guess: usize) -> Result<Vec<i64>> {
        use aws_sdk_dynamodb::types::{Get, TransactGetItem};
        let mut count = guess.max(1);
        // Refused while a write is in flight on any of them (a drop's clicks
        // landing): read again, with short waits, for a while (it is needed
        // only when every slot looks empty, near the end of the units).
        for attempt in 0..SNAPSHOT_ATTEMPTS {
            let mut gets = vec![key(sku_pk(sku), STATE_SK)];
            gets.extend((0..count).map(|slot| hold_slot_key(sku, slot)));
            let items = gets
                .into_iter()
                .map(|k| {
                    Get::builder()
                        .table_name(&self.table)
                        .set_key(Some(k))
                        .projection_expression(format!("{PK}, {HOLD_SLOTS}, {ALLOWANCE}"))
                        .build()
                        .map(|get| TransactGetItem::builder().get(get).build())
                        .map_err(|e| StoreError::backend(crate::DYNAMODB, "TransactGetItems", e))
                })
                .collect::<Result<Vec<_>>>()?;
            let out = match self
                .client
                .transact_get_items()
                .set_transact_items(Some(items))
                .send()
                .await
            {
                Ok(out) => out,
                Err(e)
                    if e.as_service_error().is_some_and(|e| {
                        e.is_transaction_canceled_exception()
                            || e.is_provisioned_throughput_exceeded_exception()
                    }) =>
                {
                    // A write in flight on one of them: read again.
                    backoff(attempt.min(3)).await;
                    continue;
                }
                Err(e) => return Err(StoreError::backend(crate::DYNAMODB, "TransactGetItems", e)),
            };
            let mut responses = out.responses.unwrap_or_default().into_iter();
            let in_use = hold_slots(responses.next().and_then(|r| r.item).as_ref())?;
            if in_use > count {
                count = in_use;
                continue;
            }
            let mut slots = vec![0; in_use];
            for (slot, response) in responses.take(in_use).enumerate() {
                if let Some(item) = response.item {
                    slots[slot] = allowance_of(&item)?;
                }
            }
            return Ok(slots);
        }
        Err(StoreError::Contention(format!("HS#{sku}")))
    }
}
