//! sweep's operations: deadlines from the sparse `due` index (sharded, so a
//! drop's writes spread), each ended once by a conditional transaction, and
//! counters recounted from the unit markers (base table, read strongly consistent).

use async_trait::async_trait;
use restock_core::allowance::{self, Guard, SlotChange};
use restock_core::{Counters, Millis, RequestId, RequestState, Sku};
use restock_store::port::Result;
use restock_store::{
    Counted, Drift, Due, ExpireOutcome, Heard, ReminderLinks, Request, StoreError, SweepStore,
    WakeKind,
};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::{finish, requeue, wake};
use crate::slots::write_slots;
use crate::table::DUE_SHARDS;
use crate::tx::{Change, Outcome};

impl DynamoStore {
    /// One page of the `due` index's partition `dpk`, due at or before
    /// `now`, from `start`.
    async fn due_page(
        &self,
        dpk: String,
        now: Millis,
        start: Option<Item>,
        limit: Option<i32>,
    ) -> Result<aws_sdk_dynamodb::operation::query::QueryOutput> {
        self.query()
            .index_name("due")
            .key_condition_expression(format!("{DUE_PK} = :d AND {DUE} <= :now"))
            .expression_attribute_values(":d", s(dpk))
            .expression_attribute_values(":now", n(now))
            .set_exclusive_start_key(start)
            .set_limit(limit)
            .send()
            .await
            .map_err(|e| StoreError::backend(crate::DYNAMODB, "Query", e))
    }

    /// Due requests of one `due` shard, at most about `limit`.
    async fn due_in_shard(&self, shard: u16, now: Millis, limit: usize) -> Result<Vec<Due>> {
        let mut found = Vec::new();
        let mut start = None;
        loop {
            let page = self
                .due_page(
                    format!("DUE#{shard}"),
                    now,
                    start,
                    Some(limit.clamp(1, 1000) as i32),
                )
                .await?;
            for item in page.items() {
                match read_due(item) {
                    Ok(due) => found.push(due),
                    // One bad entry never blocks the sweep: out of the listing, logged.
                    Err(e) => {
                        tracing::error!(error = %e, "unreadable entry in the due index; taken out of the listing");
                        self.quarantine(item).await?;
                    }
                }
            }
            start = page.last_evaluated_key;
            if start.is_none() || found.len() >= limit {
                return Ok(found);
            }
        }
    }
}

fn read_due(item: &Item) -> Result<Due> {
    Ok(Due {
        id: get_s(item, REQUEST_ID)?
            .parse()
            .map_err(|e| corrupt(item, e))?,
        sku: Sku::try_from(get_s(item, SKU)?).map_err(|e| corrupt(item, e))?,
        due: get_n(item, DUE)?,
    })
}

impl DynamoStore {
    /// Takes an unreadable item out of the `due` listing (its index keys
    /// removed; everything else kept for the team to look at), so no sweep
    /// meets it again.
    async fn quarantine(&self, item: &Item) -> Result<()> {
        let (Some(pk), Some(sk)) = (opt_s(item, PK), opt_s(item, SK)) else {
            return Ok(());
        };
        Change::on(key(pk, sk))
            .remove(DUE_PK)
            .remove(DUE)
            .when(format!("attribute_exists({PK})"))
            .apply(self)
            .await
            .map(drop)
    }

    /// The SKU's live offers and holds as the base table has them: every
    /// live unit's marker (a strongly consistent Query of each `UNITS#<sku>#<p>`),
    /// each request read back strongly consistent to tell an offer from a
    /// hold.
    async fn count_units(&self, sku: &Sku) -> Result<(u32, u32)> {
        // Every live unit's marker, read strongly consistent: a unit made
        // before this read is here (its marker was written with it).
        let markers = self.units(sku, None).await?;
        let mut ids = markers
            .iter()
            .map(|item| {
                get_s(item, REQUEST_ID)?
                    .parse::<RequestId>()
                    .map_err(|e| corrupt(item, e))
            })
            .collect::<Result<Vec<_>>>()?;
        ids.sort_unstable();
        ids.dedup();
        let (mut offered, mut held) = (0u32, 0u32);
        for item in self
            .get_consistent(ids.iter().map(|id| key(request_pk(id), REQUEST_SK)))
            .await?
        {
            let r = read_request(&item)?;
            if &r.sku != sku {
                continue;
            }
            match r.state {
                RequestState::Offered { .. } => offered += 1,
                RequestState::Held { .. } => held += 1,
                _ => {}
            }
        }
        Ok((offered, held))
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

    async fn claim_reminder(
        &self,
        id: &RequestId,
        episode: u32,
        links: Option<&ReminderLinks>,
        now: Millis,
    ) -> Result<Option<Request>> {
        let Some(item) = self.request_item(id).await? else {
            return Ok(None);
        };
        let r = read_request(&item)?;
        let (Some(at), RequestState::Offered { expires_ms, .. }) = (r.remind_at, r.state) else {
            return Ok(None);
        };
        if r.reminder_due(now) != Some(episode) {
            return Ok(None);
        }
        // Due again at the offer's end, whatever becomes of the reminder.
        let mut change = Change::on(key(request_pk(id), REQUEST_SK))
            .set(DUE, n(expires_ms))
            .remove(REMIND_AT)
            .when(format!(
                "{STATUS} = :offered AND {EPISODE} = :e AND {REMIND_AT} = :at"
            ))
            .value(":offered", s("offered"))
            .value(":e", n(episode))
            .value(":at", n(at));
        if let Some(links) = links {
            change = change
                .set(REMIND_HASH, s(links.reserve.to_hex()))
                .add(OPTOUT_HASH, hash_set(&[links.optout]))
                .add(INBOX_HASH, hash_set(&[links.manage]));
        }
        change
            .apply_returning(self)
            .await?
            .map(|item| read_request(&item))
            .transpose()
    }

    async fn wake_sleepers(&self, now: Millis) -> Result<Vec<Sku>> {
        // The index only picks them; each is ended on its item, with its
        // wake, in one transaction conditional on the time it was listed at.
        let mut listed = Vec::new();
        let mut start = None;
        loop {
            let page = self
                .due_page(SLEEPERS_DUE_PK.to_owned(), now, start, None)
                .await?;
            for item in page.items() {
                let sku = Sku::try_from(get_s(item, SKU)?).map_err(|e| corrupt(item, e))?;
                listed.push((sku, get_n::<Millis>(item, DUE)?));
            }
            start = page.last_evaluated_key;
            if start.is_none() {
                break;
            }
        }
        let mut woken = Vec::new();
        for (sku, at) in listed {
            let episode = self.sku_item(&sku).await?.snapshot.stock.episode;
            let mut tx = self.tx();
            tx.delete_if("sleepers", key(sku_pk(&sku), SLEEPERS_SK), DUE, n(at))?;
            wake(&mut tx, &sku, WakeKind::Awake, episode, now, "awake")?;
            if let Outcome::Done = self.transact(tx).await? {
                woken.push(sku);
            }
        }
        Ok(woken)
    }

    async fn expire(&self, due: &Due, now: Millis) -> Result<ExpireOutcome> {
        let Some(item) = self.request_item(&due.id).await? else {
            return Ok(ExpireOutcome::Skipped);
        };
        let r = match read_request(&item) {
            Ok(r) => r,
            Err(StoreError::Corrupt { key: at, reason }) => {
                self.quarantine(&item).await?;
                return Ok(ExpireOutcome::Unreadable {
                    reason: format!("{at}: {reason}"),
                });
            }
            Err(e) => return Err(e),
        };
        if let Some(episode) = r.reminder_due(now) {
            return Ok(ExpireOutcome::Remind(episode));
        }
        let Ok((to, freed)) = r.state.expire(now, r.stale_at) else {
            return Ok(ExpireOutcome::Skipped);
        };
        let mut tx = self.tx();
        if r.state == RequestState::Unconfirmed {
            // Never confirmed: the sign-up and its contact details go.
            tx.delete_if(
                "request",
                key(request_pk(&r.id), REQUEST_SK),
                STATUS,
                s(r.state.status().as_str()),
            )?;
            tx.delete("place", key(place_pk(&r.contact_key), sku_pk(&r.sku)))?;
            tx.delete("confirm", confirm_key(&r.sku, &r.id))?;
            tx.delete("unconfirmed", unconfirmed_key(&r.sku, &r.id))?;
            return Ok(match self.transact(tx).await? {
                Outcome::Cancelled(_) => ExpireOutcome::Skipped,
                Outcome::Done => ExpireOutcome::Unconfirmed,
            });
        }
        if matches!(r.state, RequestState::Offered { .. }) && r.notice.is_none() {
            let unclaimed = |change: Change| change.when(format!("attribute_not_exists({NOTICE})"));
            requeue(&mut tx, &r, now, unclaimed)?;
            return Ok(match self.transact(tx).await? {
                Outcome::Cancelled(_) => ExpireOutcome::Skipped,
                Outcome::Done => ExpireOutcome::Requeued,
            });
        }
        finish(&mut tx, &r, to, freed, now)?;
        match self.transact(tx).await? {
            // Another sweep, a click or a cancel got there first; theirs stands.
            Outcome::Cancelled(_) => Ok(ExpireOutcome::Skipped),
            Outcome::Done => {
                if let Some(counted) = Counted::expiry(r.state, to) {
                    self.count(&r.sku, &r.id, counted, now).await;
                }
                Ok(match to {
                    RequestState::Stale => ExpireOutcome::Stale,
                    RequestState::Lapsed => ExpireOutcome::Lapsed,
                    _ => ExpireOutcome::Released,
                })
            }
        }
    }

    async fn reconcile(&self, sku: &Sku, _now: Millis) -> Result<Option<Drift>> {
        let Some(before) = self.get(sku_pk(sku), STATE_SK).await? else {
            return Ok(None);
        };
        let slots = self.slots(sku, 0..hold_slots(Some(&before))?).await?;
        let stored = read_sku(Some(&before), slots.clone())?;
        let (offered, held) = self.count_units(sku).await?;
        let counters = stored.snapshot.counters;
        if counters.offered == offered && counters.held == held {
            return Ok(None);
        }
        let counted = Counters {
            offered,
            held,
            ..counters
        };
        // Both directions, on a busy SKU too: the recount read every unit's
        // marker strongly consistent after the state item, and the write
        // below holds only if nothing that moves a unit has written the
        // state item or a slot since (a wave bumps `ver`, an end or a
        // requeue moves `units_out`, a hold or its end moves a slot).
        // `units_out` and the hold allowance (`level - held`) set to the count,
        // each conditional on exactly what was read.
        let mut tx = self.tx();
        tx.update(
            "counter",
            Change::on(key(sku_pk(sku), STATE_SK))
                .set(OUT, n(offered + held))
                .set_expr(format!(
                    "{VERSION} = {VERSION} + :one, {DRIFTS} = if_not_exists({DRIFTS}, :zero) + :one"
                ))
                .value(":one", n(1))
                .value(":zero", n(0))
                .when(format!(
                    "{OUT} = :oldo AND {LEVEL} = :lvl AND {VERSION} = :v"
                ))
                .value(":oldo", n(stored.out))
                .value(":lvl", n(counters.level))
                .value(":v", n(stored.version.unwrap_or(0))),
        )?;
        let delta = i64::from(counters.level) - i64::from(held) - slots.iter().sum::<i64>();
        let planned = allowance::plan(&slots, delta);
        let exact: Vec<SlotChange> = (0..slots.len())
            .map(|slot| SlotChange {
                slot,
                add: planned.iter().find(|c| c.slot == slot).map_or(0, |c| c.add),
                guard: Guard::Exactly(slots[slot]),
            })
            .collect();
        write_slots(&mut tx, sku, &exact)?;
        // A failed condition: something moved while counting; the next reconcile looks again.
        Ok(match self.transact(tx).await? {
            Outcome::Done => Some(Drift {
                stored: counters,
                counted,
            }),
            Outcome::Cancelled(_) => None,
        })
    }

    async fn heard_from(&self) -> Result<Vec<Heard>> {
        self.partition(HEARD_PK.to_owned())
            .await?
            .iter()
            .map(|item| {
                Ok(Heard {
                    source: get_s(item, SK)?.to_owned(),
                    last: get_n(item, WRITTEN_AT)?,
                    alerted: opt_n(item, ALERTED_AT)?,
                })
            })
            .collect()
    }

    async fn claim_silence_alert(
        &self,
        source: &str,
        last_heard: Millis,
        now: Millis,
    ) -> Result<bool> {
        Change::on(key(HEARD_PK, source))
            .set(ALERTED_AT, n(now))
            .when(format!(
                "{WRITTEN_AT} = :last AND (attribute_not_exists({ALERTED_AT}) OR {ALERTED_AT} < :last)"
            ))
            .value(":last", n(last_heard))
            .apply(self)
            .await
    }
}
