//! capture's operations: each runs under the one lock, so join's checks, a
//! hold's `held < level` and an opt-out's ending of live requests are atomic.

use async_trait::async_trait;
use restock_core::story::Event;

use crate::*;

#[async_trait]
impl CaptureStore for MemoryStore {
    async fn join(&self, new: NewRequest) -> Result<JoinOutcome> {
        let mut s = self.lock();
        if s.optouts.contains_key(&new.contact_key) {
            return Ok(JoinOutcome::OptedOut);
        }
        if let Some(id) = s
            .places
            .get(&new.contact_key)
            .and_then(|of| of.get(&new.sku))
        {
            return Ok(JoinOutcome::AlreadyWaiting(s.requests[id].clone()));
        }
        let request = new.into_request();
        s.places
            .entry(request.contact_key.clone())
            .or_default()
            .insert(request.sku.clone(), request.id);
        if request.state == RequestState::Unconfirmed {
            // Not in the queue until confirmed; notify sends the confirmation.
            s.confirmations
                .entry(request.sku.clone())
                .or_default()
                .insert(request.key, (request.id, 0));
            s.wake(&request.sku, WakeKind::Confirm, request.key.joined_ms);
        } else {
            s.queues
                .entry(request.sku.clone())
                .or_default()
                .insert(request.key, request.id);
        }
        s.count(&request.sku, Counted::SignUp, request.key.joined_ms);
        s.requests.insert(request.id, request.clone());
        Ok(JoinOutcome::Joined(request))
    }
    async fn request(&self, id: &RequestId) -> Result<Option<Request>> {
        Ok(self.lock().requests.get(id).cloned())
    }
    async fn position(&self, request: &Request, _shards: u16) -> Result<Option<usize>> {
        if !matches!(
            request.state,
            RequestState::Waiting | RequestState::Unconfirmed
        ) {
            return Ok(None);
        }
        let s = self.lock();
        let ahead = s
            .queues
            .get(&request.sku)
            .map_or(0, |q| q.rank(&request.key));
        Ok(Some(restock_core::queue::position(ahead)))
    }
    async fn cancel(&self, id: &RequestId, now: Millis) -> Result<CancelOutcome> {
        let mut s = self.lock();
        let Some(state) = s.requests.get(id).map(|r| r.state) else {
            return Ok(CancelOutcome::NotFound);
        };
        Ok(match state.cancel() {
            Ok((to, freed)) => {
                s.finish(id, to, freed, now);
                CancelOutcome::Cancelled
            }
            Err(_) => CancelOutcome::NotLive(state.status()),
        })
    }
    async fn assist(
        &self,
        sku: &Sku,
        contacts: &[ContactKey],
        order: &str,
        paid: Option<&restock_core::Money>,
        since: Millis,
        _now: Millis,
    ) -> Result<Assist> {
        let mut s = self.lock();
        let told = contacts
            .iter()
            .filter_map(|c| s.told.get(&(c.clone(), sku.clone())))
            .any(|at| *at >= since);
        if !told {
            return Ok(Assist::NotTold);
        }
        if !s.assisted.insert((sku.clone(), order.to_owned())) {
            return Ok(Assist::AlreadyCounted);
        }
        let rec = s.sku(sku);
        rec.assisted += 1;
        if let Some(paid) = paid {
            *rec.assisted_revenue
                .entry(paid.currency.clone())
                .or_default() += paid.milli;
        }
        Ok(Assist::Counted)
    }

    async fn take_hold(
        &self,
        token: &ReserveToken,
        hold: HoldId,
        _shards: u16,
        now: Millis,
        window: Window,
    ) -> Result<HoldOutcome> {
        let mut s = self.lock();
        let id = token.request();
        let Some(req) = s.requests.get(&id).cloned() else {
            return Ok(HoldOutcome::Refused(restock_core::HoldRefused::Expired));
        };
        if !req.reserve_link_is(token) {
            return Ok(HoldOutcome::Refused(restock_core::HoldRefused::Expired));
        }
        match req.state.hold(now, hold, window) {
            Err(refused) => return Ok(HoldOutcome::Refused(refused)),
            Ok(HoldTaken::Existing { hold, expires_ms }) => {
                return Ok(HoldOutcome::AlreadyHeld {
                    hold,
                    expires: expires_ms,
                });
            }
            Ok(HoldTaken::New(held)) => {
                if s.sku(&req.sku).snapshot.counters.can_hold() {
                    let counters = &mut s.sku(&req.sku).snapshot.counters;
                    counters.offered = counters.offered.saturating_sub(1);
                    counters.held += 1;
                    s.holds.insert(hold, id);
                    let r = s.requests.get_mut(&id).expect("read above");
                    r.state = held;
                    r.moments.held_ms = Some(now);
                    let RequestState::Held {
                        expires_ms,
                        episode,
                        ..
                    } = held
                    else {
                        unreachable!("hold() gives a held state")
                    };
                    r.story.tell(now, Event::Held { hold, expires_ms });
                    s.count(&req.sku, Counted::Held(episode), now);
                    Ok(HoldOutcome::Held {
                        hold,
                        expires: expires_ms,
                    })
                } else {
                    s.requeue(&id, now);
                    Ok(HoldOutcome::SoldOutAgain)
                }
            }
        }
    }
    async fn mark_bought(&self, hold: &HoldId, order: &Order, now: Millis) -> Result<BuyOutcome> {
        let mut s = self.lock();
        let Some(id) = s.holds.get(hold).copied() else {
            return Ok(BuyOutcome::NotHeld);
        };
        let req = s.requests[&id].clone();
        match req.state {
            RequestState::Bought { .. } => return Ok(BuyOutcome::AlreadyBought),
            RequestState::Held { .. } if !order.has(&req.sku) => {
                return Ok(BuyOutcome::NotInOrder(req.sku));
            }
            RequestState::Held { .. } => {}
            _ => return Ok(BuyOutcome::NotHeld),
        }
        let (to, _) = req.state.buy().expect("held");
        s.finish(&id, to, Freed::Nothing, now);
        if let RequestState::Held { episode, .. } = req.state {
            s.count(&req.sku, Counted::Bought(episode), now);
        }
        let rec = s.sku(&req.sku);
        // The unit left with the shopper: the sale comes off the level until
        // a reading taken after it counts it (not at all if one already has).
        let sold = rec.snapshot.stock.sell(order.placed_at);
        rec.snapshot.stock = sold.next;
        rec.snapshot.counters.level = rec.snapshot.stock.level().units();
        rec.snapshot.counters.held = rec.snapshot.counters.held.saturating_sub(1);
        rec.snapshot.bought += 1;
        if let Some(paid) = order.price_of(&req.sku) {
            *rec.revenue.entry(paid.currency.clone()).or_default() += paid.milli;
        }
        Ok(BuyOutcome::Bought {
            sku: req.sku,
            tied: sold.tied,
        })
    }
    async fn opt_out(&self, token: &OptOutToken, now: Millis) -> Result<OptOutOutcome> {
        let mut s = self.lock();
        let Some(req) = s.requests.get(&token.request()).cloned() else {
            return Ok(OptOutOutcome::NotFound);
        };
        if !req.optout_link_is(token) {
            return Ok(OptOutOutcome::NotFound);
        }
        let ended = s.opt_out_contact(&req.contact_key, restock_core::OptOutVia::Link, now);
        Ok(OptOutOutcome::OptedOut { ended })
    }
    async fn confirm(
        &self,
        token: &LinkToken,
        owner: TokenHash,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Result<ConfirmOutcome> {
        let mut s = self.lock();
        let Some(r) = s.requests.get(&token.request()) else {
            return Ok(ConfirmOutcome::Refused);
        };
        if !r.confirm_link_is(token) {
            return Ok(ConfirmOutcome::Refused);
        }
        if r.state.confirm().is_err() {
            return Ok(if r.state.status().is_live() {
                ConfirmOutcome::AlreadyConfirmed(r.clone())
            } else {
                ConfirmOutcome::Refused
            });
        }
        let (id, contact) = (r.id, r.contact_key.clone());
        let request = s
            .confirm_one(&id, owner, lifetime_ms, now)
            .expect("unconfirmed, read above");
        s.asked.remove(&contact);
        Ok(ConfirmOutcome::Confirmed(request))
    }
    async fn opt_out_contact(
        &self,
        contact: &ContactKey,
        via: restock_core::OptOutVia,
        now: Millis,
    ) -> Result<u32> {
        Ok(self.lock().opt_out_contact(contact, via, now))
    }
    async fn forget_contact(&self, contact: &ContactKey, now: Millis) -> Result<Forgotten> {
        let mut s = self.lock();
        let live = s.places_of(contact);
        let mut forgotten = Forgotten::default();
        for id in live {
            if let Ok((to, freed)) = s.requests[&id].state.cancel() {
                s.finish(&id, to, freed, now);
                forgotten.ended += 1;
            }
        }
        let before = s.requests.len();
        s.requests.retain(|_, r| &r.contact_key != contact);
        s.told.retain(|(c, _), _| c != contact);
        forgotten.erased = (before - s.requests.len()) as u32;
        forgotten.opt_out_kept = s.optouts.contains_key(contact);
        Ok(forgotten)
    }
    async fn forget_request(&self, id: &RequestId, now: Millis) -> Result<bool> {
        let mut s = self.lock();
        let Some(r) = s.requests.get(id).cloned() else {
            return Ok(false);
        };
        if let Ok((to, freed)) = r.state.cancel() {
            s.finish(id, to, freed, now);
        }
        s.requests.remove(id);
        s.told.remove(&(r.contact_key, r.sku));
        Ok(true)
    }
    async fn live_requests(&self, contact: &ContactKey) -> Result<Vec<Request>> {
        let s = self.lock();
        let mut live: Vec<Request> = s
            .places_of(contact)
            .iter()
            .filter_map(|id| s.requests.get(id).cloned())
            .filter(|r| r.state.status().is_live())
            .collect();
        live.sort_by_key(|r| r.key);
        Ok(live)
    }
    async fn remove_opt_out(&self, contact: &ContactKey) -> Result<bool> {
        Ok(self.lock().optouts.remove(contact).is_some())
    }
    async fn is_opted_out(&self, contact: &ContactKey) -> Result<bool> {
        Ok(self.lock().optouts.contains_key(contact))
    }
    async fn opt_out_record(&self, contact: &ContactKey) -> Result<Option<OptOutRecord>> {
        Ok(self.lock().optouts.get(contact).copied())
    }
}
