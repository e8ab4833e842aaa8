//! A click's writes: one unit from a hold slot in the same transaction as
//! the request's move to held, the slots refilled when one runs dry, and
//! the request sent back to the front of the line when every slot is
//! empty (the shop sold the units elsewhere).

use restock_core::allowance::{self, Guard, Refill, SlotChange};
use restock_core::{HoldId, HoldRefused, HoldTaken, Millis, RequestState, ReserveToken, Window};
use restock_store::port::Result;
use restock_store::{Counted, HoldOutcome};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::requeue;
use crate::slots::{slot_update, write_slots};
use crate::tx::{Cancelled, Change, Outcome, PutIf, Tx, backoff};

impl DynamoStore {
    /// A click found every hold slot empty (`held = level`): the shop sold
    /// the units elsewhere.
    /// The request goes back to waiting with its original join key (the
    /// front of the line) and its offer's unit is freed. `None` when the
    /// request moved meanwhile (the caller tries again).
    pub(crate) async fn sold_out_again(
        &self,
        token: &ReserveToken,
        now: Millis,
    ) -> Result<Option<HoldOutcome>> {
        let id = token.request();
        let Some(item) = self.request_item(&id).await? else {
            return Ok(Some(HoldOutcome::Refused(HoldRefused::Expired)));
        };
        let r = read_request(&item)?;
        let mut tx = self.tx();
        let with_this_link = |change: Change| {
            change
                .when(format!("{RESERVE_HASH} = :h OR {REMIND_HASH} = :h"))
                .value(":h", s(token.secret_hash().to_hex()))
        };
        if !requeue(&mut tx, &r, now, with_this_link)? {
            return Ok(None);
        }
        Ok(match self.transact(tx).await? {
            Outcome::Done => Some(HoldOutcome::SoldOutAgain),
            Outcome::Cancelled(_) => None,
        })
    }
}

/// What a hold transaction that was cancelled leads to.
pub(crate) enum Retry {
    /// Try again, taking from this slot (or the same as before).
    Again(Option<Refill>),
    /// The click's answer.
    Answer(HoldOutcome),
}

impl DynamoStore {
    /// Counts a hold just taken in its restock's figures: the restock is
    /// the offer's, read back from the request (the click's token does not
    /// name it).
    pub(crate) async fn count_hold(&self, token: &ReserveToken, now: Millis) {
        let id = token.request();
        let episode = match self
            .request_item(&id)
            .await
            .and_then(|i| i.map(|i| read_request(&i)).transpose())
        {
            Ok(Some(r)) => match r.state {
                RequestState::Held { episode, .. } => Some(episode),
                _ => r.last_offered_episode,
            },
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(request = %id, error = %e, "a hold went uncounted in the item's history");
                None
            }
        };
        if let Some(episode) = episode {
            self.count(token.sku(), &id, Counted::Held(episode), now)
                .await;
        }
    }

    /// One click's transaction: the offer becomes a hold, a unit comes out
    /// of slot `from` (the rest of a refill moves into the click's own slot
    /// `own`), the hold's pointer is created, and the unit's marker moves
    /// from unsent to claimed.
    pub(crate) fn hold_tx(
        &self,
        token: &ReserveToken,
        hold: HoldId,
        own: usize,
        from: Refill,
        now: Millis,
        hold_expires: Millis,
    ) -> Result<Tx<'_>> {
        let (id, sku) = (token.request(), token.sku());
        let mut pointer = key(hold_pk(&hold), ONE_SK);
        pointer.insert(REQUEST_ID.into(), s(id.to_string()));
        pointer.insert(SKU.into(), s(sku.as_str()));
        pointer.insert(TTL.into(), ttl(now, FINISHED_TTL_SECS));
        let mut tx = self.tx();
        tx.update(
            "request",
            Change::on(key(request_pk(&id), REQUEST_SK))
                .set(STATUS, s("held"))
                .set(HELD_AT, n(now))
                .set(EXPIRES, n(hold_expires))
                .set(HOLD, s(hold.to_string()))
                .set(DUE, n(hold_expires))
                .tell(
                    now,
                    restock_core::story::Event::Held {
                        hold,
                        expires_ms: hold_expires,
                    },
                )
                .when(format!(
                    "{STATUS} = :offered AND ({RESERVE_HASH} = :h OR {REMIND_HASH} = :h) AND {SKU} = :sku AND {EXPIRES} > :now"
                ))
                .value(":offered", s("offered"))
                .value(":h", s(token.secret_hash().to_hex()))
                .value(":sku", s(sku.as_str()))
                .value(":now", n(now)),
        )?;
        tx.update(
            "counter",
            slot_update(
                sku,
                SlotChange {
                    slot: from.from,
                    add: -from.take,
                    guard: Guard::AtLeast(from.take),
                },
            ),
        )?;
        if from.take > 1 {
            write_slots(
                &mut tx,
                sku,
                &[SlotChange {
                    slot: own,
                    add: from.take - 1,
                    guard: Guard::None,
                }],
            )?;
        }
        tx.put("hold", pointer, PutIf::Absent)?;
        tx.delete("unsent", unit_key(sku, &id, Marker::Unsent))?;
        tx.put(
            "claimed",
            unit_marker(sku, &id, Marker::Claimed),
            PutIf::Always,
        )?;
        Ok(tx)
    }

    /// The request was not the offer the link was for when the transaction
    /// ran: a second tap gets its hold back, an ended offer its refusal, and
    /// an offer that changed under the click and is takeable again is tried
    /// again.
    pub(crate) async fn request_moved(
        &self,
        cancelled: &Cancelled,
        token: &ReserveToken,
        hold: HoldId,
        now: Millis,
        window: Window,
    ) -> Result<Retry> {
        let item = match cancelled.item("request") {
            Some(item) => Some(item.clone()),
            None => self.request_item(&token.request()).await?,
        };
        let Some(item) = item else {
            return Ok(Retry::Answer(HoldOutcome::Refused(HoldRefused::Expired)));
        };
        let r = read_request(&item)?;
        if !r.reserve_link_is(token) {
            return Ok(Retry::Answer(HoldOutcome::Refused(HoldRefused::Expired)));
        }
        Ok(match r.state.hold(now, hold, window) {
            Err(refused) => Retry::Answer(HoldOutcome::Refused(refused)),
            Ok(HoldTaken::Existing { hold, expires_ms }) => {
                Retry::Answer(HoldOutcome::AlreadyHeld {
                    hold,
                    expires: expires_ms,
                })
            }
            Ok(HoldTaken::New(_)) => Retry::Again(None),
        })
    }

    /// The slot ran dry, or another click took from it first (every such
    /// loss is someone else's hold, so this always progresses): read every
    /// slot and take from the fullest, half of it the first time (`dry` 1),
    /// one unit after a loss. Only a snapshot may say no unit is left, and
    /// then the offer goes back to the front of the queue.
    pub(crate) async fn slot_dry(
        &self,
        token: &ReserveToken,
        own: usize,
        shards: u16,
        dry: u32,
        now: Millis,
    ) -> Result<Retry> {
        if dry > 2 {
            backoff((dry / 4).min(3)).await;
        }
        let sku = token.sku();
        let mut slots = self.slots_now(sku, usize::from(shards)).await?;
        if allowance::refill(&slots, own).is_none() {
            slots = self.slots_at_once(sku, usize::from(shards)).await?;
        }
        Ok(match allowance::refill(&slots, own) {
            Some(refill) if own < slots.len() && dry == 1 => Retry::Again(Some(refill)),
            Some(refill) => Retry::Again(Some(Refill {
                from: refill.from,
                take: 1,
            })),
            None => match self.sold_out_again(token, now).await? {
                Some(outcome) => Retry::Answer(outcome),
                None => Retry::Again(Some(Refill { from: own, take: 1 })),
            },
        })
    }
}
