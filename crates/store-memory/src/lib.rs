//! # restock-store-memory
//!
//! The in-memory store: the port's reference implementation, for local mode
//! and fast tests.
//!
//! One mutex guards the whole state, so every operation is trivially atomic;
//! no lock is held across an await. The DynamoDB store must behave exactly
//! like this one (both run the conformance suite of `restock-store`'s
//! `conformance` feature), with conditional writes standing in for the mutex.
//!
//! ## Layout
//! One file per section of the port, each an `impl` of that section:
//! `catalogue`, `capture`, `detect`, `notify`, `abuse`, `sweep`, `figures`;
//! this file holds the state and the transitions they share.
#![warn(missing_docs)]

mod abuse;
mod capture;
mod catalogue;
mod detect;
mod figures;
mod notify;
mod sweep;

use restock_core::story::Event;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use restock_core::webhook::ItemRef;
use restock_core::{
    Candidate, CatalogueEntry, ContactKey, Freed, HoldId, HoldTaken, JoinKey, Language, LinkToken,
    Millis, OptOutToken, RequestId, RequestState, ReserveToken, Rules, Settings, SkipReason, Sku,
    StockEvent, StockOutcome, TokenHash, Window, plan_offers,
};
use restock_store::port::*;
use restock_store::*;

#[derive(Default)]
struct SkuRecord {
    snapshot: SkuSnapshot,
    lapsed: u32,
    drifts: u32,
    /// What bought holds brought in, per currency (thousandths).
    revenue: BTreeMap<String, i64>,
    /// Orders without a hold by a contact told (assisted), and what they paid.
    assisted: u32,
    assisted_revenue: BTreeMap<String, i64>,
}

#[derive(Default)]
struct State {
    settings: Option<Settings>,
    catalogue: BTreeMap<Sku, CatalogueEntry>,
    platform_ids: HashMap<(restock_core::Platform, u64), Sku>,
    requests: BTreeMap<RequestId, Request>,
    /// Waiting requests per SKU, in queue order (shards do not matter here),
    /// in an order-statistic tree: a position is a rank, O(log n).
    queues: HashMap<Sku, indexset::BTreeMap<JoinKey, RequestId>>,
    /// Unconfirmed sign-ups per SKU whose confirmation is not yet claimed,
    /// each with when it may be claimed (0, or a covering day's end).
    confirmations: HashMap<Sku, BTreeMap<JoinKey, (RequestId, Millis)>>,
    /// The live request of each contact per SKU, a contact's together.
    places: HashMap<ContactKey, BTreeMap<Sku, RequestId>>,
    /// Each address sent a confirmation: by which sign-up, and until when
    /// it is not asked again.
    asked: HashMap<ContactKey, (RequestId, Millis)>,
    /// Each opted-out contact, when and how.
    optouts: HashMap<ContactKey, restock_store::OptOutRecord>,
    skus: HashMap<Sku, SkuRecord>,
    deliveries: HashSet<String>,
    holds: HashMap<HoldId, RequestId>,
    wakes: Vec<Wake>,
    phrases: HashMap<(Sku, u32, Language), String>,
    rates: HashMap<(String, Millis), u64>,
    /// When ended windows were last forgotten (once a window, not per call:
    /// a sweep per call made every sign-up cost the number of live keys).
    rates_swept: Millis,
    /// The next free send slot on the account-wide schedule.
    next_send: Millis,
    /// Each item's figures per day and per restock, counted as they happen.
    histories: HashMap<Sku, ItemHistory>,
    /// Mail figures per UTC day.
    mail: BTreeMap<String, restock_core::feedback::MailDay>,
    /// Sending paused by a sender-side failure.
    pause: Option<SenderPause>,
    /// Stock delivery sources: last heard, and when their silence was alerted.
    heard: BTreeMap<String, (Millis, Option<Millis>)>,
    /// What the indexes show, when they lag ([`MemoryStore::lagging`]).
    index: Option<IndexView>,
    /// When each item is to be woken for shoppers passed over asleep.
    sleepers: BTreeMap<Sku, Millis>,
    /// When each contact was last sent a notice for each item.
    told: HashMap<(ContactKey, Sku), Millis>,
    /// The orders counted as assisted, per item.
    assisted: HashSet<(Sku, String)>,
}

/// The index reads of a lagging store: the deadlines as they were at the
/// last [`MemoryStore::catch_up`]. As on DynamoDB, they only pick candidates;
/// every decision re-reads the truth.
#[derive(Default)]
struct IndexView {
    /// Every live deadline, due or not.
    due: Vec<Due>,
    /// Every item's wake for its sleepers.
    sleepers: BTreeMap<Sku, Millis>,
}

impl IndexView {
    fn of(state: &State) -> Self {
        let mut view = Self {
            sleepers: state.sleepers.clone(),
            ..Self::default()
        };
        for r in state.requests.values() {
            if let Some(due) = r.due() {
                view.due.push(Due {
                    id: r.id,
                    sku: r.sku.clone(),
                    due,
                });
            }
        }
        view
    }
}

/// The in-memory store. Wakes are kept in a log that [`DetectStore::wakes`]
/// reads (local mode polls it, standing in for the DynamoDB stream).
#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store whose index reads lag as DynamoDB's global secondary
    /// indexes do: the sweep's due listing shows the store as it was at the
    /// last [`catch_up`](Self::catch_up), missing every write since and
    /// showing what has changed as it was. The queue, the unsent offers and
    /// every decision read the truth, as the DynamoDB store's do.
    pub fn lagging() -> Self {
        let store = Self::default();
        store.lock().index = Some(IndexView::default());
        store
    }

    /// Lets a lagging store's indexes catch up with every write so far (what
    /// real time does on DynamoDB); nothing on a store that does not lag.
    pub fn catch_up(&self) {
        let mut s = self.lock();
        if s.index.is_some() {
            s.index = Some(IndexView::of(&s));
        }
    }

    /// Makes the SKU's stored counters say `offered` and `held` (the level
    /// kept), as a defect would leave them: reconcile's tests set a drift
    /// with this and check it is corrected.
    pub fn set_counters(&self, sku: &Sku, offered: u32, held: u32) {
        let mut s = self.lock();
        let counters = &mut s.sku(sku).snapshot.counters;
        counters.offered = offered;
        counters.held = held;
    }

    /// Records `contact`'s opt-out without ending its requests: the state
    /// the DynamoDB store's two-step opt-out leaves when it stops between
    /// its steps (the conformance suite checks both stores act on it).
    pub fn opt_out_record_only(
        &self,
        contact: &ContactKey,
        via: restock_core::OptOutVia,
        now: Millis,
    ) {
        self.lock()
            .optouts
            .entry(contact.clone())
            .or_insert(restock_store::OptOutRecord {
                at: now,
                via: Some(via),
            });
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave half-applied state behind
        // (every operation computes first and mutates last), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    fn sku(&mut self, sku: &Sku) -> &mut SkuRecord {
        self.skus.entry(sku.clone()).or_default()
    }

    fn wake(&mut self, sku: &Sku, kind: WakeKind, now: Millis) {
        let episode = self.sku(sku).snapshot.stock.episode;
        self.wakes.push(Wake {
            sku: sku.clone(),
            kind,
            episode,
            at: now,
        });
    }

    /// Adds `counted`, which happened at `at`, to `sku`'s history.
    fn count(&mut self, sku: &Sku, counted: Counted, at: Millis) {
        self.histories
            .entry(sku.clone())
            .or_default()
            .add(counted, at);
    }

    /// Moves a request to `to`, taking it out of the queue and its place, and
    /// giving back the unit it had.
    fn finish(&mut self, id: &RequestId, to: RequestState, freed: Freed, now: Millis) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        let (sku, key, contact) = (req.sku.clone(), req.key, req.contact_key.clone());
        req.state = to;
        if to.status().is_live() {
            return;
        }
        req.moments.ended_ms = Some(now);
        req.story.tell(
            now,
            Event::Ended {
                status: to.status(),
            },
        );
        if let Some(q) = self.queues.get_mut(&sku) {
            q.remove(&key);
        }
        if let Some(q) = self.confirmations.get_mut(&sku) {
            q.remove(&key);
        }
        self.remove_place(&contact, &sku);
        self.release_unit(&sku, freed, now);
    }

    /// Puts an offered request back in the queue with its original join key
    /// (the front of the line: it may be offered again in this restock) and
    /// frees its unit.
    fn requeue(&mut self, id: &RequestId, now: Millis) {
        let Some(r) = self.requests.get_mut(id) else {
            return;
        };
        let Ok((waiting, freed)) = r.state.sold_out_again() else {
            return;
        };
        if let RequestState::Offered { episode, .. } = r.state {
            r.story.tell(now, Event::Back { episode });
        }
        r.state = waiting;
        r.last_offered_episode = None;
        r.reserve_hash = None;
        (r.remind_at, r.remind_hash) = (None, None);
        r.notice = None;
        let (sku, key) = (r.sku.clone(), r.key);
        self.queues.entry(sku.clone()).or_default().insert(key, *id);
        self.release_unit(&sku, freed, now);
    }

    fn release_unit(&mut self, sku: &Sku, freed: Freed, now: Millis) {
        let counters = &mut self.sku(sku).snapshot.counters;
        match freed {
            Freed::Nothing => return,
            Freed::Offer => counters.offered = counters.offered.saturating_sub(1),
            Freed::Hold => counters.held = counters.held.saturating_sub(1),
        }
        self.wake(sku, WakeKind::Freed, now);
    }

    /// Deletes an unconfirmed sign-up whose window ended: the request, its
    /// place and its pending confirmation (its contact details with them).
    fn forget_unconfirmed(&mut self, id: &RequestId) {
        if let Some(r) = self.requests.remove(id) {
            self.remove_place(&r.contact_key, &r.sku);
            if let Some(q) = self.confirmations.get_mut(&r.sku) {
                q.remove(&r.key);
            }
        }
    }

    /// Confirms request `id` if it is unconfirmed: into the queue at the
    /// place it signed up at, its wait `lifetime_ms` from then, its consent
    /// confirmed `now`; the inbox proved ownership, so the joining
    /// browser's secret ends and `owner` (the confirmation page's manage
    /// link) joins the inbox's.
    fn confirm_one(
        &mut self,
        id: &RequestId,
        owner: TokenHash,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Option<Request> {
        let r = self.requests.get_mut(id)?;
        let waiting = r.state.confirm().ok()?;
        r.state = waiting;
        r.story.tell(now, Event::Confirmed);
        r.stale_at = r.key.joined_ms + lifetime_ms;
        r.manage_hash = None;
        r.inbox_hashes.push(owner);
        if let Some(consent) = &mut r.consent {
            consent.confirmed_at = Some(now);
        }
        let request = r.clone();
        if let Some(q) = self.confirmations.get_mut(&request.sku) {
            q.remove(&request.key);
        }
        self.queues
            .entry(request.sku.clone())
            .or_default()
            .insert(request.key, request.id);
        // Units may be free now: notify looks.
        self.wake(&request.sku, WakeKind::Confirm, now);
        Some(request)
    }

    /// The live requests of `contact`, one per item.
    fn places_of(&self, contact: &ContactKey) -> Vec<RequestId> {
        self.places
            .get(contact)
            .map(|of| of.values().copied().collect())
            .unwrap_or_default()
    }

    fn remove_place(&mut self, contact: &ContactKey, sku: &Sku) {
        if let Some(of) = self.places.get_mut(contact) {
            of.remove(sku);
            if of.is_empty() {
                self.places.remove(contact);
            }
        }
    }

    fn opt_out_contact(
        &mut self,
        contact: &ContactKey,
        via: restock_core::OptOutVia,
        now: Millis,
    ) -> u32 {
        self.optouts
            .entry(contact.clone())
            .or_insert(restock_store::OptOutRecord {
                at: now,
                via: Some(via),
            });
        let ids = self.places_of(contact);
        let mut ended = 0;
        for id in ids {
            let source = self.requests[&id].clone();
            if let Ok((to, freed)) = source.state.opt_out() {
                ended += 1;
                self.finish(&id, to, freed, now);
                ended += self.end_together(&source, via, now);
            }
        }
        ended
    }

    /// Ends the request `source`'s sign-up made on its other channel, as
    /// [`restock_store::Request::goes_with`] says, for an opt-out the
    /// person said; whether it did.
    fn end_together(
        &mut self,
        source: &restock_store::Request,
        via: restock_core::OptOutVia,
        now: Millis,
    ) -> u32 {
        let Some(other) = source.consent.as_ref().and_then(|c| c.together) else {
            return 0;
        };
        let Some(target) = self.requests.get(&other) else {
            return 0;
        };
        match target.state.opt_out() {
            Ok((to, freed)) if via.ends_every_channel() && target.goes_with(source) => {
                self.finish(&other, to, freed, now);
                1
            }
            _ => 0,
        }
    }
}
