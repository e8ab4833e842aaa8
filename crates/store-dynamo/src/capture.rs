//! capture's operations: joining (one transaction with the opt-out and
//! one-place checks), leaving, holding a unit (one from a hold slot in the
//! same transaction as the request's move to held), buying, opting out.

use async_trait::async_trait;
use restock_core::allowance::Refill;
use restock_core::{
    ContactKey, Freed, HoldId, LinkToken, Millis, OptOutToken, RequestId, RequestState,
    ReserveToken, TokenHash, Window,
};
use restock_store::port::Result;
use restock_store::retry::{CLICK_BUDGET, DRY_ATTEMPTS, JOIN_BUDGET};
use restock_store::{
    BuyOutcome, CancelOutcome, CaptureStore, ConfirmOutcome, Counted, FiguresStore, Forgotten,
    HoldOutcome, JoinOutcome, NewRequest, OptOutOutcome, Order, Request, StoreError, WakeKind,
};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::hold::Retry;
use crate::lifecycle::{Ended, finish, wake};
use crate::slots::give_back;
use crate::tickets::Presence;
use crate::tx::{Cancelled, Change, MAX_ATTEMPTS, Outcome, PutIf, Sent, Tx, backoff};

#[async_trait]
impl CaptureStore for DynamoStore {
    async fn join(&self, new: NewRequest) -> Result<JoinOutcome> {
        let shards = new.shards;
        let now = new.now;
        let joining = new.into_request();
        let started = tokio::time::Instant::now();
        // Each lost ticket is another sign-up getting in, so a join keeps
        // dealing again for a while rather than a fixed count.
        for attempt in 0.. {
            if attempt >= MAX_ATTEMPTS && started.elapsed() >= JOIN_BUDGET {
                break;
            }
            let mut request = joining.clone();
            let mut tx = self.tx();
            self.deal_ticket(&mut tx, &mut request, shards, now).await?;
            join_writes(&mut tx, &request)?;
            // Sent once: a conflict is another join taking this shard's
            // ticket (the same transaction again would fail its
            // condition), so deal again, as after a lost ticket. Measured
            // in simulated time, this took one shard from about 35 to 60
            // sign-ups a second (docs/PERFORMANCE.md).
            let cancelled = match self.transact_once(&tx).await? {
                Sent::Done => {
                    let at = request.key.joined_ms;
                    self.count(&request.sku, &request.id, Counted::SignUp, at)
                        .await;
                    return Ok(JoinOutcome::Joined(request));
                }
                Sent::Cancelled(cancelled) => cancelled,
                Sent::Conflict(_) => {
                    backoff(attempt).await;
                    continue;
                }
            };
            if cancelled.failed("opt-out") {
                return Ok(JoinOutcome::OptedOut);
            }
            if !cancelled.failed("place") {
                // Another join in this shard took the ticket first (or the
                // id was taken): deal again.
                backoff(attempt).await;
                continue;
            }
            if let Some(existing) = self.live_place(&cancelled, &request).await? {
                return Ok(JoinOutcome::AlreadyWaiting(existing));
            }
            // The other request finished between our write and our read: try again.
            backoff(attempt).await;
        }
        Err(StoreError::Contention(place_pk(&joining.contact_key)))
    }

    async fn request(&self, id: &RequestId) -> Result<Option<Request>> {
        self.request_item(id)
            .await?
            .as_ref()
            .map(read_request)
            .transpose()
    }

    async fn position(&self, request: &Request, shards: u16) -> Result<Option<usize>> {
        if !matches!(
            request.state,
            RequestState::Waiting | RequestState::Unconfirmed
        ) {
            return Ok(None);
        }
        if let Some(ticket) = &request.ticket {
            return Ok(Some(self.ticket_position(request, ticket, shards).await?));
        }
        // A request from before tickets: count who is ahead in the queue.
        let ahead = self
            .count_waiting(&request.sku, shards, Some(&request.key.to_string()))
            .await?;
        Ok(Some(restock_core::queue::position(ahead)))
    }

    async fn cancel(&self, id: &RequestId, now: Millis) -> Result<CancelOutcome> {
        Ok(
            match self.end_request(id, now, |r| r.state.cancel().ok()).await? {
                Ended::Done => CancelOutcome::Cancelled,
                Ended::NotApplicable(state) => CancelOutcome::NotLive(state.status()),
                Ended::Missing => CancelOutcome::NotFound,
            },
        )
    }

    async fn take_hold(
        &self,
        token: &ReserveToken,
        hold: HoldId,
        shards: u16,
        now: Millis,
        window: Window,
    ) -> Result<HoldOutcome> {
        let id = token.request();
        let hold_expires = now + window.as_millis();
        // The unit comes out of the click's own hold slot while it has any;
        // a dry one refills from the fullest (see `restock_core::allowance`).
        let own = usize::from(id.shard(shards));
        let mut from = Refill { from: own, take: 1 };
        let (mut attempt, mut dry) = (0, 0);
        let started = tokio::time::Instant::now();
        while (attempt < MAX_ATTEMPTS && dry < DRY_ATTEMPTS) || started.elapsed() < CLICK_BUDGET {
            let tx = self.hold_tx(token, hold, own, from, now, hold_expires)?;
            let cancelled = match self.transact(tx).await {
                Ok(Outcome::Done) => {
                    self.count_hold(token, now).await;
                    return Ok(HoldOutcome::Held {
                        hold,
                        expires: hold_expires,
                    });
                }
                Ok(Outcome::Cancelled(cancelled)) => cancelled,
                // Lost every race in a row to other clicks on the slot: each
                // of those was someone's hold, so go on while time allows.
                Err(StoreError::Contention(_)) if started.elapsed() < CLICK_BUDGET => {
                    attempt += 1;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let next = if cancelled.failed("request") {
                let next = self
                    .request_moved(&cancelled, token, hold, now, window)
                    .await?;
                if matches!(next, Retry::Again(_)) {
                    backoff(attempt).await;
                    attempt += 1;
                }
                next
            } else if cancelled.failed("counter") {
                dry += 1;
                self.slot_dry(token, own, shards, dry, now).await?
            } else {
                // The hold id collided (128 random bits: practically never); nothing to retry with.
                return Err(StoreError::Contention(hold_pk(&hold)));
            };
            match next {
                Retry::Again(refill) => from = refill.unwrap_or(from),
                Retry::Answer(outcome) => return Ok(outcome),
            }
        }
        Err(StoreError::Contention(request_pk(&id)))
    }

    async fn mark_bought(&self, hold: &HoldId, order: &Order, now: Millis) -> Result<BuyOutcome> {
        let Some(pointer) = self.get(hold_pk(hold), ONE_SK).await? else {
            return Ok(BuyOutcome::NotHeld);
        };
        let id: RequestId = get_s(&pointer, REQUEST_ID)?
            .parse()
            .map_err(|e| corrupt(&pointer, e))?;
        for attempt in 0..MAX_ATTEMPTS {
            let Some(item) = self.request_item(&id).await? else {
                return Ok(BuyOutcome::NotHeld);
            };
            let r = read_request(&item)?;
            match r.state {
                RequestState::Bought { hold: h } if &h == hold => {
                    return Ok(BuyOutcome::AlreadyBought);
                }
                RequestState::Held { hold: h, .. } if &h == hold && !order.has(&r.sku) => {
                    return Ok(BuyOutcome::NotInOrder(r.sku));
                }
                RequestState::Held { hold: h, .. } if &h == hold => {}
                _ => return Ok(BuyOutcome::NotHeld),
            }
            let (to, _) = r.state.buy().expect("held");
            let (current, _) = self.sku_with_entry(&r.sku).await?;
            // The unit left with the shopper: the sale comes off the level
            // until a reading taken after it counts it (not at all when the
            // newest reading is already after the order).
            let sold = current.snapshot.stock.sell(order.placed_at);
            let before = current.snapshot.counters.level;
            let after = sold.next.level().units();
            let mut tx = self.tx();
            finish(&mut tx, &r, to, Freed::Nothing, now)?;
            let mut counter = crate::detect::versioned(&r.sku, current.version)
                .set(STOCK, s(crate::detect::stock_json(&sold.next)))
                .set(LEVEL, n(after))
                .set_expr(format!(
                    "{OUT} = {OUT} - :one, {BOUGHT} = if_not_exists({BOUGHT}, :zero) + :one"
                ))
                .set(TOUCHED, n(now))
                .value(":one", n(1))
                .value(":zero", n(0));
            // What the order paid for the unit, for the team (the currency
            // is three letters: a safe attribute name).
            if let Some(paid) = order.price_of(&r.sku) {
                let revenue = format!("{REVENUE_PREFIX}{}", paid.currency);
                counter = counter.add(&revenue, n(paid.milli));
            }
            tx.update("counter", counter)?;
            // Held falls by one. The allowance (`level - held`, in the
            // slots) moves by the level's fall plus one: nothing when the
            // sale lowered the level, one unit back in slot 0 when a reading
            // had already counted it (or the level was already 0).
            if after + 1 > before {
                give_back(&mut tx, &r.sku)?;
            }
            match self.transact(tx).await? {
                Outcome::Done => {
                    if let RequestState::Held { episode, .. } = r.state {
                        self.count(&r.sku, &r.id, Counted::Bought(episode), now)
                            .await;
                    }
                    return Ok(BuyOutcome::Bought {
                        sku: r.sku,
                        tied: sold.tied,
                    });
                }
                Outcome::Cancelled(_) => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention(hold_pk(hold)))
    }

    async fn opt_out(&self, token: &OptOutToken, now: Millis) -> Result<OptOutOutcome> {
        let Some(item) = self.request_item(&token.request()).await? else {
            return Ok(OptOutOutcome::NotFound);
        };
        let r = read_request(&item)?;
        if !r.optout_link_is(token) {
            return Ok(OptOutOutcome::NotFound);
        }
        let ended = self
            .opt_out_contact(&r.contact_key, restock_core::OptOutVia::Link, now)
            .await?;
        Ok(OptOutOutcome::OptedOut { ended })
    }

    async fn confirm(
        &self,
        token: &LinkToken,
        owner: TokenHash,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Result<ConfirmOutcome> {
        for _ in 0..2 {
            let Some(item) = self.request_item(&token.request()).await? else {
                return Ok(ConfirmOutcome::Refused);
            };
            let r = read_request(&item)?;
            if !r.confirm_link_is(token) {
                return Ok(ConfirmOutcome::Refused);
            }
            if r.state.confirm().is_err() {
                return Ok(if r.state.status().is_live() {
                    ConfirmOutcome::AlreadyConfirmed(r)
                } else {
                    ConfirmOutcome::Refused
                });
            }
            let (mut tx, confirmed) = self.confirm_tx(&r, owner, lifetime_ms, now)?;
            tx.update(
                "request",
                confirmed
                    .1
                    .when(format!("{CONFIRM_HASH} = :h"))
                    .value(":h", s(token.secret_hash().to_hex())),
            )?;
            // The address's day ends with its confirmation.
            tx.delete("asked", asked_key(&r.contact_key))?;
            if let Outcome::Done = self.transact(tx).await? {
                return Ok(ConfirmOutcome::Confirmed(confirmed.0));
            }
            // Moved meanwhile (a second tap won, or it ended): read again.
        }
        Err(StoreError::Contention(request_pk(&token.request())))
    }

    async fn opt_out_contact(
        &self,
        contact: &ContactKey,
        via: restock_core::OptOutVia,
        now: Millis,
    ) -> Result<u32> {
        // The first record stands: when and how the opt-out first came.
        crate::tx::Change::on(key(optout_pk(contact), ONE_SK))
            .set_expr(format!(
                "{WRITTEN_AT} = if_not_exists({WRITTEN_AT}, :now), {VIA} = if_not_exists({VIA}, :via)"
            ))
            .value(":now", n(now))
            .value(":via", s(via.as_str()))
            .apply(self)
            .await?;
        // The opt-out item exists before the places are read, so a join racing
        // with this either committed first (and is found here) or is refused.
        let mut ended = 0;
        for rid in self.placed(contact).await? {
            // Its sign-up's other channel first, as the person said it: a
            // retry after a failure between the two finds this place again.
            if via.ends_every_channel()
                && let Some(source) = self.request(&rid).await?
                && source.state.opt_out().is_ok()
                && let Some(other) = source.consent.as_ref().and_then(|c| c.together)
            {
                let with = |t: &Request| {
                    t.goes_with(&source)
                        .then(|| t.state.opt_out().ok())
                        .flatten()
                };
                if let Ended::Done = self.end_request(&other, now, with).await? {
                    ended += 1;
                }
            }
            if let Ended::Done = self
                .end_request(&rid, now, |r| r.state.opt_out().ok())
                .await?
            {
                ended += 1;
            }
        }
        Ok(ended)
    }

    async fn assist(
        &self,
        sku: &restock_core::Sku,
        contacts: &[ContactKey],
        order: &str,
        paid: Option<&restock_core::Money>,
        since: Millis,
        now: Millis,
    ) -> Result<restock_store::Assist> {
        use restock_store::Assist;
        let mut told = false;
        for contact in contacts {
            if let Some(marker) = self.get(told_pk(contact), sku.as_str()).await?
                && opt_n::<Millis>(&marker, TOLD)?.is_some_and(|at| at >= since)
            {
                told = true;
                break;
            }
        }
        if !told {
            return Ok(Assist::NotTold);
        }
        // The order once (a redelivery finds its marker), with the count.
        let mut marker = key(assisted_pk(sku), order);
        marker.insert(TTL.into(), ttl(now, FINISHED_TTL_SECS));
        let mut tx = self.tx();
        tx.put("order", marker, PutIf::Absent)?;
        let mut counter = Change::on(key(sku_pk(sku), STATE_SK)).add(ASSISTED, n(1));
        if let Some(paid) = paid {
            counter = counter.add(
                &format!("{ASSISTED_REVENUE_PREFIX}{}", paid.currency),
                n(paid.milli),
            );
        }
        tx.update("counter", counter)?;
        Ok(match self.transact(tx).await? {
            Outcome::Done => Assist::Counted,
            Outcome::Cancelled(_) => Assist::AlreadyCounted,
        })
    }

    async fn live_requests(&self, contact: &ContactKey) -> Result<Vec<Request>> {
        let mut live = Vec::new();
        for rid in self.placed(contact).await? {
            // A place whose request ended meanwhile goes with it.
            if let Some(r) = self.request(&rid).await?
                && r.state.status().is_live()
            {
                live.push(r);
            }
        }
        live.sort_by_key(|r| r.key);
        Ok(live)
    }

    async fn forget_contact(&self, contact: &ContactKey, now: Millis) -> Result<Forgotten> {
        let mut forgotten = Forgotten::default();
        // Live requests first, as a cancel would (units pass on, queue
        // entries and places go).
        for rid in self.placed(contact).await? {
            if let Ended::Done = self
                .end_request(&rid, now, |r| r.state.cancel().ok())
                .await?
            {
                forgotten.ended += 1;
            }
        }
        // Then every request item of the contact, finished ones included
        // (a read of the whole table: an admin command, rare).
        for r in self.contact_requests(contact).await? {
            if r.state.status().is_live() {
                // Joined again while this ran: end it too.
                self.end_request(&r.id, now, |r| r.state.cancel().ok())
                    .await?;
                forgotten.ended += 1;
            }
            self.client
                .delete_item()
                .table_name(&self.table)
                .set_key(Some(key(request_pk(&r.id), REQUEST_SK)))
                .send()
                .await
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "DeleteItem", e))?;
            forgotten.erased += 1;
        }
        // And when it was told about each item (for assisted revenue).
        for marker in self.partition(told_pk(contact)).await? {
            if let Some(sk) = opt_s(&marker, SK) {
                self.client
                    .delete_item()
                    .table_name(&self.table)
                    .set_key(Some(key(told_pk(contact), sk)))
                    .send()
                    .await
                    .map_err(|e| StoreError::backend(crate::DYNAMODB, "DeleteItem", e))?;
            }
        }
        forgotten.opt_out_kept = self.is_opted_out(contact).await?;
        Ok(forgotten)
    }

    async fn forget_request(&self, id: &RequestId, now: Millis) -> Result<bool> {
        let Some(r) = self.request(id).await? else {
            return Ok(false);
        };
        if r.state.status().is_live() {
            self.end_request(id, now, |r| r.state.cancel().ok()).await?;
        }
        for (pk, sk) in [
            (request_pk(id), REQUEST_SK),
            (told_pk(&r.contact_key), r.sku.as_str()),
        ] {
            self.client
                .delete_item()
                .table_name(&self.table)
                .set_key(Some(key(pk, sk)))
                .send()
                .await
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "DeleteItem", e))?;
        }
        Ok(true)
    }

    async fn remove_opt_out(&self, contact: &ContactKey) -> Result<bool> {
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(optout_pk(contact), ONE_SK)))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| StoreError::backend(crate::DYNAMODB, "DeleteItem", e))?;
        Ok(out.attributes.is_some_and(|a| !a.is_empty()))
    }

    async fn is_opted_out(&self, contact: &ContactKey) -> Result<bool> {
        Ok(self.get(optout_pk(contact), ONE_SK).await?.is_some())
    }

    async fn opt_out_record(
        &self,
        contact: &ContactKey,
    ) -> Result<Option<restock_store::OptOutRecord>> {
        let Some(item) = self.get(optout_pk(contact), ONE_SK).await? else {
            return Ok(None);
        };
        Ok(Some(restock_store::OptOutRecord {
            at: opt_n(&item, WRITTEN_AT)?.unwrap_or_default(),
            via: opt_s(&item, VIA).and_then(restock_core::OptOutVia::parse),
        }))
    }
}

impl DynamoStore {
    /// The requests a contact's places name (its live requests, one per
    /// item): one partition read.
    async fn placed(&self, contact: &ContactKey) -> Result<Vec<RequestId>> {
        self.partition(place_pk(contact))
            .await?
            .iter()
            .map(|place| {
                get_s(place, REQUEST_ID)?
                    .parse()
                    .map_err(|e| corrupt(place, e))
            })
            .collect()
    }

    /// The live request that holds the contact's place for the item, when
    /// a join was cancelled on its place (read again if the cancellation
    /// did not carry it).
    async fn live_place(
        &self,
        cancelled: &Cancelled,
        request: &Request,
    ) -> Result<Option<Request>> {
        let existing = match cancelled.item("place") {
            Some(item) => Some(item),
            None => {
                self.get(place_pk(&request.contact_key), &sku_pk(&request.sku))
                    .await?
            }
        };
        if let Some(place) = existing {
            let rid: RequestId = get_s(&place, REQUEST_ID)?
                .parse()
                .map_err(|e| corrupt(&place, e))?;
            if let Some(item) = self.request_item(&rid).await? {
                let existing = read_request(&item)?;
                if existing.state.status().is_live() {
                    return Ok(Some(existing));
                }
            }
        }
        Ok(None)
    }
}

/// A join's writes beside its ticket: the opt-out checked, the place and
/// the request put if absent; then either the confirmation asked for (not
/// in the queue until confirmed: notify, woken through the stream, sends
/// it) or the queue entry and its presence bit.
fn join_writes(tx: &mut Tx, request: &Request) -> Result<()> {
    tx.check_absent("opt-out", key(optout_pk(&request.contact_key), ONE_SK))?;
    tx.put("place", place_item(request), PutIf::Absent)?;
    tx.put("request", request_item(request), PutIf::Absent)?;
    if request.state == RequestState::Unconfirmed {
        // Not in the queue until confirmed: notify, woken through
        // the stream, sends the confirmation.
        tx.put(
            "confirm",
            confirm_marker(&request.sku, &request.id),
            PutIf::Always,
        )?;
        tx.put(
            "unconfirmed",
            unconfirmed_key(&request.sku, &request.id),
            PutIf::Always,
        )?;
        wake(
            tx,
            &request.sku,
            WakeKind::Confirm,
            0,
            request.key.joined_ms,
            &request.id.to_string(),
        )?;
    } else {
        tx.put("entry", queue_entry(request), PutIf::Always)?;
        Presence::arriving(request).write(tx, &request.sku)?;
    }
    Ok(())
}
