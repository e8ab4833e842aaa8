//! The in-memory store: the port's reference implementation, for local mode
//! and fast tests.
//!
//! One mutex guards the whole state, so every operation is trivially atomic;
//! no lock is held across an await. The DynamoDB store must behave exactly
//! like this one (the conformance suite checks it), with conditional writes
//! standing in for the mutex.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use restock_core::webhook::ItemRef;
use restock_core::{
    Candidate, CatalogEntry, ContactKey, Freed, HoldId, HoldTaken, JoinKey, LinkToken, ListShare,
    OptOutToken, RequestId, RequestState, ReserveToken, Rules, Settings, SkipReason, Sku,
    StockEvent, StockOutcome, Window, plan_offers,
};
use tokio::sync::broadcast;

use crate::model::*;
use crate::port::{Random, Result, Store};

#[derive(Default)]
struct SkuRecord {
    snapshot: SkuSnapshot,
    lapsed: u32,
}

#[derive(Default)]
struct State {
    settings: Option<Settings>,
    catalog: BTreeMap<Sku, CatalogEntry>,
    shopify: HashMap<u64, Sku>,
    woocommerce: HashMap<u64, Sku>,
    requests: HashMap<RequestId, Request>,
    /// Waiting requests per SKU, in queue order (shards do not matter here).
    queues: HashMap<Sku, BTreeMap<JoinKey, RequestId>>,
    /// The live request of each contact per SKU.
    places: HashMap<(ContactKey, Sku), RequestId>,
    optouts: HashSet<ContactKey>,
    skus: HashMap<Sku, SkuRecord>,
    deliveries: HashSet<String>,
    holds: HashMap<HoldId, RequestId>,
    wakes: Vec<Wake>,
    phrases: HashMap<(Sku, u32), String>,
    rates: HashMap<(String, Millis), u64>,
}

/// The in-memory store.
pub struct MemoryStore {
    state: Mutex<State>,
    wake_tx: broadcast::Sender<Wake>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        let (wake_tx, _) = broadcast::channel(1024);
        Self {
            state: Mutex::new(State::default()),
            wake_tx,
        }
    }

    /// Wakes as they are recorded: local mode's stand-in for the DynamoDB stream.
    pub fn subscribe(&self) -> broadcast::Receiver<Wake> {
        self.wake_tx.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave half-applied state behind
        // (every operation computes first and mutates last), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, wakes: Vec<Wake>) {
        for w in wakes {
            // No subscriber is fine: the wake is also kept in the log.
            let _ = self.wake_tx.send(w);
        }
    }
}

impl State {
    fn sku(&mut self, sku: &Sku) -> &mut SkuRecord {
        self.skus.entry(sku.clone()).or_default()
    }

    fn wake(&mut self, sku: &Sku, kind: WakeKind, now: Millis) -> Wake {
        let episode = self.sku(sku).snapshot.stock.episode;
        let wake = Wake {
            sku: sku.clone(),
            kind,
            episode,
            at: now,
        };
        self.wakes.push(wake.clone());
        wake
    }

    /// Moves a request to `to`, taking it out of the queue and its place, and
    /// giving back the unit it had.
    fn finish(
        &mut self,
        id: &RequestId,
        to: RequestState,
        freed: Freed,
        now: Millis,
    ) -> Option<Wake> {
        let req = self.requests.get_mut(id)?;
        let (sku, key, contact) = (req.sku.clone(), req.key, req.contact_key.clone());
        req.state = to;
        if to.status().is_live() {
            return None;
        }
        if let Some(q) = self.queues.get_mut(&sku) {
            q.remove(&key);
        }
        self.places.remove(&(contact, sku.clone()));
        self.release_unit(&sku, freed, now)
    }

    fn release_unit(&mut self, sku: &Sku, freed: Freed, now: Millis) -> Option<Wake> {
        let counters = &mut self.sku(sku).snapshot.counters;
        match freed {
            Freed::Nothing => return None,
            Freed::Offer => counters.offered = counters.offered.saturating_sub(1),
            Freed::Hold => counters.held = counters.held.saturating_sub(1),
        }
        Some(self.wake(sku, WakeKind::Freed, now))
    }

    fn opt_out_contact(&mut self, contact: &ContactKey, now: Millis) -> (u32, Vec<Wake>) {
        self.optouts.insert(contact.clone());
        let ids: Vec<RequestId> = self
            .places
            .iter()
            .filter(|((c, _), _)| c == contact)
            .map(|(_, id)| *id)
            .collect();
        let mut wakes = Vec::new();
        let mut ended = 0;
        for id in ids {
            let state = self.requests[&id].state;
            if let Ok((to, freed)) = state.opt_out() {
                ended += 1;
                wakes.extend(self.finish(&id, to, freed, now));
            }
        }
        (ended, wakes)
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn put_settings(&self, settings: &Settings) -> Result<()> {
        self.lock().settings = Some(settings.clone());
        Ok(())
    }

    async fn settings(&self) -> Result<Option<Settings>> {
        Ok(self.lock().settings.clone())
    }

    async fn put_catalog_entry(&self, entry: &CatalogEntry) -> Result<()> {
        let mut s = self.lock();
        if let Some(old) = s.catalog.get(&entry.sku)
            && entry.shards < old.shards
        {
            return Err(crate::StoreError::shards_lowered(
                &entry.sku,
                old.shards,
                entry.shards,
            ));
        }
        if let Some(old) = s.catalog.get(&entry.sku).cloned() {
            if let Some(id) = old.shopify_inventory_item_id {
                s.shopify.remove(&id);
            }
            if let Some(id) = old.woocommerce_product_id {
                s.woocommerce.remove(&id);
            }
        }
        if let Some(id) = entry.shopify_inventory_item_id {
            s.shopify.insert(id, entry.sku.clone());
        }
        if let Some(id) = entry.woocommerce_product_id {
            s.woocommerce.insert(id, entry.sku.clone());
        }
        s.catalog.insert(entry.sku.clone(), entry.clone());
        Ok(())
    }

    async fn catalog(&self) -> Result<Vec<CatalogEntry>> {
        Ok(self.lock().catalog.values().cloned().collect())
    }

    async fn catalog_entry(&self, sku: &Sku) -> Result<Option<CatalogEntry>> {
        Ok(self.lock().catalog.get(sku).cloned())
    }

    async fn resolve_item(&self, item: &ItemRef) -> Result<Option<CatalogEntry>> {
        let s = self.lock();
        let sku = match item {
            ItemRef::Sku { sku } => Some(sku.clone()),
            ItemRef::Shopify { inventory_item_id } => s.shopify.get(inventory_item_id).cloned(),
            ItemRef::WooCommerce { product_id, sku } => match sku {
                Some(sku) if s.catalog.contains_key(sku) => Some(sku.clone()),
                _ => s.woocommerce.get(product_id).cloned(),
            },
        };
        Ok(sku.and_then(|sku| s.catalog.get(&sku).cloned()))
    }

    async fn join(&self, new: NewRequest) -> Result<JoinOutcome> {
        let mut s = self.lock();
        if s.optouts.contains(&new.contact_key) {
            return Ok(JoinOutcome::OptedOut);
        }
        let place = (new.contact_key.clone(), new.sku.clone());
        if let Some(id) = s.places.get(&place) {
            return Ok(JoinOutcome::AlreadyWaiting(s.requests[id].clone()));
        }
        let request = Request {
            id: new.id,
            sku: new.sku.clone(),
            name: new.name,
            contact: new.contact,
            contact_key: new.contact_key,
            key: JoinKey::new(new.now, &new.id),
            shard: new.id.shard(new.shards),
            state: RequestState::Waiting,
            stale_at: new.now + new.lifetime_ms,
            last_offered_episode: None,
            reserve_hash: None,
            optout_hash: None,
            notice: None,
        };
        s.places.insert(place, new.id);
        s.queues
            .entry(new.sku)
            .or_default()
            .insert(request.key, new.id);
        s.requests.insert(new.id, request.clone());
        Ok(JoinOutcome::Joined(request))
    }

    async fn request(&self, id: &RequestId) -> Result<Option<Request>> {
        Ok(self.lock().requests.get(id).cloned())
    }

    async fn position(&self, request: &Request, _shards: u16) -> Result<Option<usize>> {
        if request.state != RequestState::Waiting {
            return Ok(None);
        }
        let s = self.lock();
        let ahead = s
            .queues
            .get(&request.sku)
            .map_or(0, |q| q.range(..request.key).count());
        Ok(Some(restock_core::queue::position(ahead)))
    }

    async fn cancel(&self, id: &RequestId, now: Millis) -> Result<CancelOutcome> {
        let (outcome, wake) = {
            let mut s = self.lock();
            let Some(state) = s.requests.get(id).map(|r| r.state) else {
                return Ok(CancelOutcome::NotFound);
            };
            match state.cancel() {
                Ok((to, freed)) => (CancelOutcome::Cancelled, s.finish(id, to, freed, now)),
                Err(_) => (CancelOutcome::NotLive(state.status()), None),
            }
        };
        self.publish(wake.into_iter().collect());
        Ok(outcome)
    }

    async fn take_hold(
        &self,
        token: &ReserveToken,
        hold: HoldId,
        now: Millis,
        window: Window,
    ) -> Result<HoldOutcome> {
        let (outcome, wake) = {
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
                        let RequestState::Held { expires_ms, .. } = held else {
                            unreachable!("hold() gives a held state")
                        };
                        (
                            HoldOutcome::Held {
                                hold,
                                expires: expires_ms,
                            },
                            None,
                        )
                    } else {
                        let (waiting, freed) = req
                            .state
                            .sold_out_again()
                            .expect("offered: hold() accepted it");
                        let r = s.requests.get_mut(&id).expect("read above");
                        r.state = waiting;
                        r.last_offered_episode = None;
                        r.reserve_hash = None;
                        r.notice = None;
                        let r = r.clone();
                        s.queues.entry(r.sku.clone()).or_default().insert(r.key, id);
                        let wake = s.release_unit(&r.sku, freed, now);
                        (HoldOutcome::SoldOutAgain, wake)
                    }
                }
            }
        };
        self.publish(wake.into_iter().collect());
        Ok(outcome)
    }

    async fn mark_bought(&self, hold: &HoldId, now: Millis) -> Result<BuyOutcome> {
        let mut s = self.lock();
        let Some(id) = s.holds.get(hold).copied() else {
            return Ok(BuyOutcome::NotHeld);
        };
        let req = s.requests[&id].clone();
        match req.state {
            RequestState::Bought { .. } => return Ok(BuyOutcome::AlreadyBought),
            RequestState::Held { .. } => {}
            _ => return Ok(BuyOutcome::NotHeld),
        }
        let (to, _) = req.state.buy().expect("held");
        // The unit left with the shopper: it comes off the level too until the
        // shop's next report says otherwise, so it is never offered again.
        s.finish(&id, to, Freed::Nothing, now);
        let rec = s.sku(&req.sku);
        rec.snapshot.counters.held = rec.snapshot.counters.held.saturating_sub(1);
        rec.snapshot.counters.level = rec.snapshot.counters.level.saturating_sub(1);
        rec.snapshot.bought += 1;
        Ok(BuyOutcome::Bought(req.sku))
    }

    async fn opt_out(&self, token: &OptOutToken, now: Millis) -> Result<OptOutOutcome> {
        let (outcome, wakes) = {
            let mut s = self.lock();
            let Some(req) = s.requests.get(&token.request()).cloned() else {
                return Ok(OptOutOutcome::NotFound);
            };
            if !req.optout_link_is(token) {
                return Ok(OptOutOutcome::NotFound);
            }
            let (ended, wakes) = s.opt_out_contact(&req.contact_key, now);
            (OptOutOutcome::OptedOut { ended }, wakes)
        };
        self.publish(wakes);
        Ok(outcome)
    }

    async fn opt_out_contact(&self, contact: &ContactKey, now: Millis) -> Result<u32> {
        let (ended, wakes) = self.lock().opt_out_contact(contact, now);
        self.publish(wakes);
        Ok(ended)
    }

    async fn remove_opt_out(&self, contact: &ContactKey) -> Result<bool> {
        Ok(self.lock().optouts.remove(contact))
    }

    async fn is_opted_out(&self, contact: &ContactKey) -> Result<bool> {
        Ok(self.lock().optouts.contains(contact))
    }

    async fn apply_stock(
        &self,
        sku: &Sku,
        event: &StockEvent,
        rules: &Rules,
        _share: ListShare,
        now: Millis,
    ) -> Result<ApplyOutcome> {
        let (outcome, wake) = {
            let mut s = self.lock();
            if !s.deliveries.insert(event.delivery_id.clone()) {
                return Ok(ApplyOutcome::Duplicate);
            }
            let rec = s.sku(sku);
            let (next, outcome) = rec
                .snapshot
                .stock
                .apply(&event.location, event.reading(), rules);
            if !matches!(outcome, StockOutcome::Stale | StockOutcome::Unchanged) {
                rec.snapshot.counters.level = next.level().units();
            }
            rec.snapshot.stock = next;
            let wake = match outcome {
                StockOutcome::Restock { .. } => Some(s.wake(sku, WakeKind::Restock, now)),
                StockOutcome::TopUp { .. } => Some(s.wake(sku, WakeKind::TopUp, now)),
                _ => None,
            };
            (outcome, wake)
        };
        self.publish(wake.into_iter().collect());
        Ok(ApplyOutcome::Applied(outcome))
    }

    async fn release_paused(&self, sku: &Sku, now: Millis) -> Result<Option<StockOutcome>> {
        let (outcome, wake) = {
            let mut s = self.lock();
            let rec = s.sku(sku);
            let Ok((next, outcome)) = rec.snapshot.stock.release() else {
                return Ok(None);
            };
            rec.snapshot.stock = next;
            (outcome, s.wake(sku, WakeKind::Restock, now))
        };
        self.publish(vec![wake]);
        Ok(Some(outcome))
    }

    async fn snapshot(&self, sku: &Sku) -> Result<SkuSnapshot> {
        Ok(self
            .lock()
            .skus
            .get(sku)
            .map(|r| r.snapshot.clone())
            .unwrap_or_default())
    }

    async fn wakes(&self, sku: &Sku) -> Result<Vec<Wake>> {
        Ok(self
            .lock()
            .wakes
            .iter()
            .filter(|w| &w.sku == sku)
            .cloned()
            .collect())
    }

    async fn create_offers(
        &self,
        sku: &Sku,
        params: &WaveParams,
        now: Millis,
        random: Random<'_>,
    ) -> Result<Wave> {
        let (wave, wakes) = {
            let mut s = self.lock();
            let rec = s.sku(sku);
            let stock = rec.snapshot.stock.clone();
            let mut wave = Wave {
                episode: stock.episode,
                ..Wave::default()
            };
            if !stock.in_stock || stock.paused {
                return Ok(wave);
            }
            let free = rec
                .snapshot
                .counters
                .free(params.share)
                .min(params.max_offers);
            let candidates: Vec<Candidate<RequestId>> = s
                .queues
                .get(sku)
                .map(|q| {
                    q.values()
                        .map(|id| {
                            let r = &s.requests[id];
                            Candidate {
                                request: *id,
                                key: r.key,
                                stale_at_ms: r.stale_at,
                                opted_out: s.optouts.contains(&r.contact_key),
                                last_offered_episode: r.last_offered_episode,
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            let plan = plan_offers(free, stock.episode, now, candidates);
            let mut wakes = Vec::new();
            for (c, reason) in plan.skipped {
                let to = match reason {
                    SkipReason::Stale => RequestState::Stale,
                    SkipReason::OptedOut => RequestState::OptedOut,
                    SkipReason::AlreadyOffered => continue,
                };
                wakes.extend(s.finish(&c.request, to, Freed::Nothing, now));
                wave.skipped.push((c.request, reason));
            }
            for c in plan.offers {
                let reserve = LinkToken::new(sku.clone(), c.request, random());
                let optout = LinkToken::new(sku.clone(), c.request, random());
                let r = s
                    .requests
                    .get_mut(&c.request)
                    .expect("queued requests exist");
                r.state = r
                    .state
                    .offer(stock.episode, now, params.offer_window)
                    .expect("queued requests are waiting");
                r.last_offered_episode = Some(stock.episode);
                r.reserve_hash = Some(reserve.secret_hash());
                r.optout_hash = Some(optout.secret_hash());
                r.notice = None;
                let request = r.clone();
                s.queues.get_mut(sku).expect("queued").remove(&c.key);
                s.sku(sku).snapshot.counters.offered += 1;
                wave.offers.push(Offer {
                    request,
                    reserve,
                    optout,
                });
            }
            (wave, wakes)
        };
        self.publish(wakes);
        Ok(wave)
    }

    async fn claim_notice(&self, id: &RequestId, episode: u32) -> Result<bool> {
        let mut s = self.lock();
        let Some(r) = s.requests.get_mut(id) else {
            return Ok(false);
        };
        match r.state {
            RequestState::Offered { episode: e, .. } if e == episode && r.notice.is_none() => {
                r.notice = Some(NoticeOutcome::Sending);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn record_notice(
        &self,
        id: &RequestId,
        episode: u32,
        outcome: NoticeOutcome,
        now: Millis,
    ) -> Result<()> {
        let wake = {
            let mut s = self.lock();
            let Some(r) = s.requests.get_mut(id) else {
                return Ok(());
            };
            if r.last_offered_episode != Some(episode) {
                return Ok(());
            }
            let failed = matches!(outcome, NoticeOutcome::Failed { .. });
            r.notice = Some(outcome);
            let state = r.state;
            match (failed, state.undeliverable()) {
                (true, Ok((to, freed))) => s.finish(id, to, freed, now),
                _ => None,
            }
        };
        self.publish(wake.into_iter().collect());
        Ok(())
    }

    async fn release_notice(&self, id: &RequestId, episode: u32) -> Result<()> {
        let mut s = self.lock();
        if let Some(r) = s.requests.get_mut(id)
            && matches!(r.state, RequestState::Offered { episode: e, .. } if e == episode)
            && r.notice == Some(NoticeOutcome::Sending)
        {
            r.notice = None;
        }
        Ok(())
    }

    async fn reissue_unsent(&self, sku: &Sku, random: Random<'_>) -> Result<Vec<Offer>> {
        let mut s = self.lock();
        let mut unsent: Vec<&mut Request> = s
            .requests
            .values_mut()
            .filter(|r| {
                &r.sku == sku
                    && r.notice.is_none()
                    && matches!(r.state, RequestState::Offered { .. })
            })
            .collect();
        unsent.sort_by_key(|r| r.key);
        Ok(unsent
            .into_iter()
            .map(|r| {
                let reserve = LinkToken::new(sku.clone(), r.id, random());
                let optout = LinkToken::new(sku.clone(), r.id, random());
                r.reserve_hash = Some(reserve.secret_hash());
                r.optout_hash = Some(optout.secret_hash());
                Offer {
                    request: r.clone(),
                    reserve,
                    optout,
                }
            })
            .collect())
    }

    async fn restock_phrase(&self, sku: &Sku, episode: u32) -> Result<Option<String>> {
        Ok(self.lock().phrases.get(&(sku.clone(), episode)).cloned())
    }

    async fn save_restock_phrase(&self, sku: &Sku, episode: u32, phrase: &str) -> Result<()> {
        self.lock()
            .phrases
            .insert((sku.clone(), episode), phrase.to_owned());
        Ok(())
    }

    async fn rate_limit(
        &self,
        key: &str,
        limit: u32,
        window_ms: Millis,
        now: Millis,
    ) -> Result<RateDecision> {
        let start = now - now.rem_euclid(window_ms.max(1));
        let mut s = self.lock();
        s.rates.retain(|(_, w), _| *w + window_ms > now);
        let count = s.rates.entry((key.to_owned(), start)).or_default();
        *count += 1;
        Ok(RateDecision::from_count(
            *count, limit, start, window_ms, now,
        ))
    }

    async fn due(&self, now: Millis, limit: usize) -> Result<Vec<Due>> {
        let s = self.lock();
        let mut due: Vec<Due> = s
            .requests
            .values()
            .filter_map(|r| {
                r.due().filter(|d| *d <= now).map(|d| Due {
                    id: r.id,
                    sku: r.sku.clone(),
                    due: d,
                })
            })
            .collect();
        due.sort_by_key(|d| (d.due, d.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn expire(&self, due: &Due, now: Millis) -> Result<ExpireOutcome> {
        let (outcome, wake) = {
            let mut s = self.lock();
            let Some(r) = s.requests.get(&due.id) else {
                return Ok(ExpireOutcome::Skipped);
            };
            let Ok((to, freed)) = r.state.expire(now, r.stale_at) else {
                return Ok(ExpireOutcome::Skipped);
            };
            let sku = r.sku.clone();
            let outcome = match to {
                RequestState::Stale => ExpireOutcome::Stale,
                RequestState::Lapsed => {
                    s.sku(&sku).lapsed += 1;
                    ExpireOutcome::Lapsed
                }
                _ => ExpireOutcome::Released,
            };
            (outcome, s.finish(&due.id, to, freed, now))
        };
        self.publish(wake.into_iter().collect());
        Ok(outcome)
    }

    async fn reconcile(&self, sku: &Sku, _now: Millis) -> Result<Option<Drift>> {
        let mut s = self.lock();
        let (mut offered, mut held) = (0, 0);
        for r in s.requests.values().filter(|r| &r.sku == sku) {
            match r.state {
                RequestState::Offered { .. } => offered += 1,
                RequestState::Held { .. } => held += 1,
                _ => {}
            }
        }
        let counters = &mut s.sku(sku).snapshot.counters;
        let stored = *counters;
        if stored.offered == offered && stored.held == held {
            return Ok(None);
        }
        counters.offered = offered;
        counters.held = held;
        Ok(Some(Drift {
            stored,
            counted: *counters,
        }))
    }

    async fn queue(&self, sku: &Sku, _shards: u16, limit: usize) -> Result<Vec<Request>> {
        let s = self.lock();
        Ok(s.queues
            .get(sku)
            .map(|q| {
                q.values()
                    .take(limit)
                    .map(|id| s.requests[id].clone())
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn stats(&self, sku: &Sku, _shards: u16) -> Result<SkuStats> {
        let s = self.lock();
        let rec = s.skus.get(sku);
        let counters = rec.map(|r| r.snapshot.counters).unwrap_or_default();
        Ok(SkuStats {
            waiting: s.queues.get(sku).map_or(0, |q| q.len() as u32),
            offered: counters.offered,
            held: counters.held,
            bought: rec.map_or(0, |r| r.snapshot.bought),
            lapsed: rec.map_or(0, |r| r.lapsed),
        })
    }
}
