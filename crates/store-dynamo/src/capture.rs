//! capture's operations: joining (one transaction with the opt-out and
//! one-place checks), leaving, holding a unit (one from a hold slot in the
//! same transaction as the request's move to held), buying, opting out.

use async_trait::async_trait;
use restock_core::allowance::{self, Guard, Refill, SlotChange};
use restock_core::{
    ContactKey, Freed, HoldId, HoldRefused, HoldTaken, LinkToken, Millis, OptOutToken, RequestId,
    RequestState, ReserveToken, TokenHash, Window,
};
use restock_store::port::Result;
use restock_store::{
    BuyOutcome, CancelOutcome, CaptureStore, ConfirmOutcome, Consent, Counted, FiguresStore,
    Forgotten, HoldOutcome, JoinOutcome, NewRequest, OptOutOutcome, Order, Request, StoreError,
    WakeKind,
};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::{Ended, finish, requeue, wake};
use crate::slots::{give_back, slot_update, write_slots};
use crate::tickets::Presence;
use crate::tx::{Cancelled, Change, MAX_ATTEMPTS, Outcome, PutIf, Sent, Tx, backoff};

use restock_store::retry::{CLICK_BUDGET, DRY_ATTEMPTS, JOIN_BUDGET};

impl DynamoStore {
    /// The transaction that confirms unconfirmed request `r` but for its
    /// own update, returned beside it (the caller adds its conditions):
    /// into the queue at the place it signed up at, its wait `lifetime_ms`
    /// from then, its consent confirmed `now`; the inbox proved ownership,
    /// so the joining browser's secret ends and `owner` (the confirmation
    /// page's manage link) joins the inbox's.
    fn confirm_tx(
        &self,
        r: &Request,
        owner: Option<TokenHash>,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Result<(Tx<'_>, (Request, Change))> {
        let waiting = r
            .state
            .confirm()
            .map_err(|e| StoreError::corrupt(request_pk(&r.id), e))?;
        let confirmed = Request {
            state: waiting,
            stale_at: r.key.joined_ms + lifetime_ms,
            manage_hash: None,
            inbox_hashes: [r.inbox_hashes.as_slice(), owner.as_slice()].concat(),
            consent: r.consent.clone().map(|c| Consent {
                confirmed_at: Some(now),
                ..c
            }),
            ..r.clone()
        };
        let mut change = Change::on(key(request_pk(&r.id), REQUEST_SK))
            .set_all(state_attrs(&waiting))
            .tell(now, restock_core::story::Event::Confirmed)
            .set(STALE_AT, n(confirmed.stale_at))
            .set_all(index_attrs(&confirmed))
            .remove_all([MANAGE_HASH])
            .when(format!("{STATUS} = :from"))
            .value(":from", s(r.state.status().as_str()));
        if let Some(owner) = owner {
            change = change.add(INBOX_HASH, hash_set(&[owner]));
        }
        if let Some(consent) = &confirmed.consent {
            change = change.set(
                CONSENT,
                s(serde_json::to_string(consent).expect("consent serialises")),
            );
        }
        let mut tx = self.tx();
        tx.put("entry", queue_entry(&confirmed), PutIf::Always)?;
        Presence::arriving(&confirmed).write(&mut tx, &confirmed.sku)?;
        tx.delete("unconfirmed", unconfirmed_key(&r.sku, &r.id))?;
        tx.delete("pending", confirm_key(&r.sku, &r.id))?;
        // Units may be free now: notify looks.
        wake(
            &mut tx,
            &r.sku,
            WakeKind::Confirm,
            0,
            now,
            &r.id.to_string(),
        )?;
        Ok((tx, (confirmed, change)))
    }

    /// Confirms the other unconfirmed sign-ups of `confirmed`'s address
    /// (its places, read strongly consistent), each in a transaction of
    /// its own conditional on it still unconfirmed.
    async fn confirm_the_rest(
        &self,
        confirmed: &Request,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Result<Vec<Request>> {
        let mut also = Vec::new();
        for place in self.partition(place_pk(&confirmed.contact_key)).await? {
            let rid: RequestId = get_s(&place, REQUEST_ID)?
                .parse()
                .map_err(|e| corrupt(&place, e))?;
            if rid == confirmed.id {
                continue;
            }
            let Some(item) = self.request_item(&rid).await? else {
                continue;
            };
            let r = read_request(&item)?;
            if r.state.confirm().is_err() {
                continue;
            }
            let (mut tx, (other, change)) = self.confirm_tx(&r, None, lifetime_ms, now)?;
            tx.update("request", change)?;
            // Cancelled: it ended or was confirmed meanwhile.
            if let Outcome::Done = self.transact(tx).await? {
                also.push(other);
            }
        }
        Ok(also)
    }

    /// A click found every hold slot empty (`held = level`): the shop sold
    /// the units elsewhere.
    /// The request goes back to waiting with its original join key (the
    /// front of the line) and its offer's unit is freed. `None` when the
    /// request moved meanwhile (the caller tries again).
    async fn sold_out_again(
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
            tx.check_absent("opt-out", key(optout_pk(&request.contact_key), ONE_SK))?;
            tx.put("place", place_item(&request), PutIf::Absent)?;
            tx.put("request", request_item(&request), PutIf::Absent)?;
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
                    &mut tx,
                    &request.sku,
                    WakeKind::Confirm,
                    0,
                    request.key.joined_ms,
                    &request.id.to_string(),
                )?;
            } else {
                tx.put("entry", queue_entry(&request), PutIf::Always)?;
                Presence::arriving(&request).write(&mut tx, &request.sku)?;
            }
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
                        return Ok(JoinOutcome::AlreadyWaiting(existing));
                    }
                }
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
        let ended = self.opt_out_contact(&r.contact_key, now).await?;
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
            let (mut tx, confirmed) = self.confirm_tx(&r, Some(owner), lifetime_ms, now)?;
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
                let also = self
                    .confirm_the_rest(&confirmed.0, lifetime_ms, now)
                    .await?;
                return Ok(ConfirmOutcome::Confirmed(confirmed.0, also));
            }
            // Moved meanwhile (a second tap won, or it ended): read again.
        }
        Err(StoreError::Contention(request_pk(&token.request())))
    }

    async fn opt_out_contact(&self, contact: &ContactKey, now: Millis) -> Result<u32> {
        let mut item = key(optout_pk(contact), ONE_SK);
        item.insert(WRITTEN_AT.into(), n(now));
        self.put_item(item).await?;
        // The opt-out item exists before the places are read, so a join racing
        // with this either committed first (and is found here) or is refused.
        let mut ended = 0;
        for place in self.partition(place_pk(contact)).await? {
            let rid: RequestId = get_s(&place, REQUEST_ID)?
                .parse()
                .map_err(|e| corrupt(&place, e))?;
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

    async fn forget_contact(&self, contact: &ContactKey, now: Millis) -> Result<Forgotten> {
        let mut forgotten = Forgotten::default();
        // Live requests first, as a cancel would (units pass on, queue
        // entries and places go).
        for place in self.partition(place_pk(contact)).await? {
            let rid: RequestId = get_s(&place, REQUEST_ID)?
                .parse()
                .map_err(|e| corrupt(&place, e))?;
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
}

/// What a hold transaction that was cancelled leads to.
enum Retry {
    /// Try again, taking from this slot (or the same as before).
    Again(Option<Refill>),
    /// The click's answer.
    Answer(HoldOutcome),
}

impl DynamoStore {
    /// Counts a hold just taken in its restock's figures: the restock is
    /// the offer's, read back from the request (the click's token does not
    /// name it).
    async fn count_hold(&self, token: &ReserveToken, now: Millis) {
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
    fn hold_tx(
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
    async fn request_moved(
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
    async fn slot_dry(
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
