//! The store port: the product's operations, each atomic where it matters,
//! in the sections the functions use them from.
//!
//! Each section is a trait of its own, so an adapter implements it in a file
//! of its own; [`Store`] is all of them together, and every type that
//! implements the seven sections is a `Store`. Two adapters implement it:
//! `restock-store-memory` and `restock-store-dynamo`, held to one conformance
//! suite (`conformance`, behind the feature of that name). Every time is an argument (`now`, [`Millis`]) and every random
//! value comes from the caller, so tests control both.
//!
//! Callers bring the sections into scope with `use restock_store::prelude::*`.

use async_trait::async_trait;
use restock_core::feedback::MailDay;
use restock_core::webhook::ItemRef;
use restock_core::{
    CatalogueEntry, ContactKey, HoldId, Language, Millis, OptOutToken, RequestId, ReserveToken,
    Rules, Settings, Sku, StockEvent, StockOutcome, TokenHash, Window,
};

use crate::error::StoreError;
use crate::model::*;

/// Draws 16 random bytes for ids and link secrets.
pub type Random<'a> = &'a mut (dyn FnMut() -> [u8; 16] + Send);

/// The same 16 bytes at a time for the same `seed` (a xorshift): ids and
/// link secrets for tests and benchmarks that must run alike every time.
pub fn seeded(seed: u64) -> impl FnMut() -> [u8; 16] + Send {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        let mut out = [0u8; 16];
        for chunk in out.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_be_bytes());
        }
        out
    }
}

/// Result of a store operation.
pub type Result<T> = std::result::Result<T, StoreError>;

/// Settings and catalogue: the operator's documents.
#[async_trait]
pub trait CatalogueStore: Send + Sync {
    /// Replaces the settings document.
    async fn put_settings(&self, settings: &Settings) -> Result<()>;
    /// The settings document, if one was stored.
    async fn settings(&self) -> Result<Option<Settings>>;
    /// Adds or replaces a catalogue entry (and its platform id mappings).
    async fn put_catalogue_entry(&self, entry: &CatalogueEntry) -> Result<()>;
    /// Every catalogue entry, in SKU order.
    async fn catalogue(&self) -> Result<Vec<CatalogueEntry>>;
    /// One catalogue entry.
    async fn catalogue_entry(&self, sku: &Sku) -> Result<Option<CatalogueEntry>>;
    /// The catalogue entry a webhook's item reference maps to.
    async fn resolve_item(&self, item: &ItemRef) -> Result<Option<CatalogueEntry>>;
}

/// capture: joining, leaving, holding, buying, opting out.
#[async_trait]
pub trait CaptureStore: Send + Sync {
    /// Joins the queue, atomically with the one-place-per-person and opt-out checks.
    async fn join(&self, request: NewRequest) -> Result<JoinOutcome>;
    /// One request.
    async fn request(&self, id: &RequestId) -> Result<Option<Request>>;
    /// A waiting request's position (1 = front) among its SKU's `shards`
    /// queue partitions; `None` unless waiting.
    async fn position(&self, request: &Request, shards: u16) -> Result<Option<usize>>;
    /// Leaves the queue, freeing any unit the request had.
    async fn cancel(&self, id: &RequestId, now: Millis) -> Result<CancelOutcome>;
    /// A click on a reserve link: holds one unit if the offer is live and
    /// `held < level`; otherwise says why not. `shards` is the SKU's queue
    /// shards, over which a store may spread the hold allowance.
    async fn take_hold(
        &self,
        token: &ReserveToken,
        hold: HoldId,
        shards: u16,
        now: Millis,
        window: Window,
    ) -> Result<HoldOutcome>;
    /// A purchase used a hold: the hold ends as bought and the sale lowers
    /// the level once (not at all when the item's newest reading was taken
    /// after the order, so it already counts the sale). Changes nothing when
    /// the order does not have the hold's item.
    async fn mark_bought(&self, hold: &HoldId, order: &Order, now: Millis) -> Result<BuyOutcome>;
    /// An order for `sku` without a hold: assisted revenue when one of
    /// `contacts` (the buyer's keys) was sent a notice for the item at or
    /// after `since`. Counted once per `order` (its id, or the delivery's),
    /// with what it paid for the item where it said.
    async fn assist(
        &self,
        sku: &Sku,
        contacts: &[ContactKey],
        order: &str,
        paid: Option<&restock_core::Money>,
        since: Millis,
        now: Millis,
    ) -> Result<Assist>;
    /// Opts out the contact behind an opt-out link, for good.
    async fn opt_out(&self, token: &OptOutToken, now: Millis) -> Result<OptOutOutcome>;
    /// Follows a confirmation link (double opt-in): an unconfirmed sign-up
    /// joins the queue at the place it signed up at, its wait lasting
    /// `lifetime_ms` from then; its consent records when. Only this
    /// sign-up: a tap confirms what it was sent for, never a sign-up someone
    /// else may have made for the address. The address's day ends: a later
    /// sign-up is asked at once. Conditional on the link and on the sign-up
    /// still unconfirmed. Confirming proves who owns
    /// the contact: the joining browser's manage secret stops working, and
    /// `owner` (the hash of a manage link for the confirmation page) joins
    /// the inbox manage links.
    async fn confirm(
        &self,
        token: &restock_core::LinkToken,
        owner: restock_core::TokenHash,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Result<ConfirmOutcome>;
    /// Opts out a contact directly (admin, SNS reporting an opted-out
    /// number, a reply, a bounce or complaint) and ends its live requests;
    /// the number ended. The opt-out is recorded with `via` and `now`, and
    /// the first record stands.
    async fn opt_out_contact(
        &self,
        contact: &ContactKey,
        via: restock_core::OptOutVia,
        now: Millis,
    ) -> Result<u32>;
    /// Erases everything held about a contact (`restock forget`): its live
    /// requests end (units pass on), then every request of it, live or
    /// finished, is deleted with its contact details and consent record.
    /// Only the opt-out, a keyed hash, is kept, so they stay un-mailed.
    async fn forget_contact(&self, contact: &ContactKey, now: Millis) -> Result<Forgotten>;
    /// Erases one request as [`CaptureStore::forget_contact`] erases each
    /// of a contact's: ended first if live (its unit passes on), then
    /// deleted with its contact details, consent and told marker; the
    /// contact's opt-out stays. Whether it was there. A shop's erasure goes
    /// a request at a time, never a table read per contact.
    async fn forget_request(&self, id: &RequestId, now: Millis) -> Result<bool>;
    /// A contact's live requests (unconfirmed, waiting, offered or held),
    /// oldest first, read through its places: one partition and its
    /// requests, whatever the table holds.
    async fn live_requests(&self, contact: &ContactKey) -> Result<Vec<Request>>;
    /// Lifts an opt-out (admin only: the contact asked again).
    async fn remove_opt_out(&self, contact: &ContactKey) -> Result<bool>;
    /// Whether a contact opted out.
    async fn is_opted_out(&self, contact: &ContactKey) -> Result<bool>;
    /// A contact's opt-out: when and how it came.
    async fn opt_out_record(&self, contact: &ContactKey) -> Result<Option<OptOutRecord>>;
}

/// detect: stock levels and restocks.
#[async_trait]
pub trait DetectStore: Send + Sync {
    /// Applies one stock event for `sku`: deduplicated on its delivery id,
    /// newest wins per location, and a wake recorded for a restock or top-up.
    async fn apply_stock(
        &self,
        sku: &Sku,
        event: &StockEvent,
        rules: &Rules,
        now: Millis,
    ) -> Result<ApplyOutcome>;
    /// Releases a paused restock (the team approved it).
    async fn release_paused(&self, sku: &Sku, now: Millis) -> Result<Option<StockOutcome>>;
    /// Rejects a paused restock (the team does not believe its level):
    /// [`restock_core::StockState::reject`], the level 0 and nobody woken.
    /// False when nothing was paused.
    async fn reject_paused(&self, sku: &Sku, now: Millis) -> Result<bool>;
    /// The SKU's stock and counters.
    async fn snapshot(&self, sku: &Sku) -> Result<SkuSnapshot>;
    /// The wakes recorded for a SKU, oldest first.
    async fn wakes(&self, sku: &Sku) -> Result<Vec<Wake>>;
    /// Notes that a verified stock delivery came from `source` at `now`
    /// (the silence check's evidence that the platform still delivers).
    async fn heard(&self, source: &str, now: Millis) -> Result<()>;
    /// True the first time `key` is named (kept 7 days): for telling the
    /// team of something once however often its delivery is retried.
    async fn first_time(&self, key: &str, now: Millis) -> Result<bool>;
}

/// notify: waves of offers, and each notice's fate.
#[async_trait]
pub trait NotifyStore: Send + Sync {
    /// Offers the free units to the oldest waiting requests: conditional on the
    /// free units and on each request still waiting, at most one offer per
    /// request per restock. Stale requests met on the way are ended.
    async fn create_offers(
        &self,
        sku: &Sku,
        params: &WaveParams,
        now: Millis,
        random: Random<'_>,
    ) -> Result<Wave>;
    /// Claims an offer's notice for sending with the reserve link whose
    /// secret hashes to `reserve`, in one step with the check that `contact`
    /// has not opted out (I5). Not claimable if it was claimed before (a
    /// redelivery) or re-armed with another link since (a concurrent pass),
    /// so a notice goes at most once and never with a dead link.
    async fn claim_notice(
        &self,
        sku: &Sku,
        id: &RequestId,
        episode: u32,
        reserve: &TokenHash,
        contact: &ContactKey,
    ) -> Result<Claim>;
    /// Records a notice's fate. A failure ends the offer and frees its unit.
    async fn record_notice(
        &self,
        id: &RequestId,
        episode: u32,
        outcome: NoticeOutcome,
        now: Millis,
    ) -> Result<()>;
    /// Asks for the offer's one reminder at `at` (its notice was sent):
    /// the sweep finds it then ([`SweepStore::claim_reminder`]). Changes
    /// nothing unless the request is offered in `episode` with its notice
    /// sent; false then.
    async fn schedule_reminder(&self, id: &RequestId, episode: u32, at: Millis) -> Result<bool>;
    /// Records that the provider accepted the reminder claimed for
    /// restock `episode`'s offer: its story's chapter and the item's
    /// history.
    async fn record_reminder(
        &self,
        id: &RequestId,
        episode: u32,
        message_id: &str,
        now: Millis,
    ) -> Result<()>;
    /// Gives back a claim whose send failed transiently, so a retry may send it.
    async fn release_notice(&self, sku: &Sku, id: &RequestId, episode: u32) -> Result<()>;
    /// Live offers of a SKU whose notice was never claimed (a send that failed
    /// transiently, or a crash between the wave and the send), with fresh link
    /// secrets: the old ones were never sent and stop working. Read so that a
    /// claim given back a moment ago is found (no lagging index).
    async fn reissue_unsent(&self, sku: &Sku, random: Random<'_>) -> Result<Vec<Offer>>;
    /// Up to `limit` unconfirmed sign-ups of a SKU whose confirmation has
    /// not been claimed and may go at `now` (one [`Claim::Covered`] waits
    /// for its address's day to end), oldest first among those read. Read
    /// so that a sign-up a moment ago is found (no lagging index).
    async fn pending_confirmations(
        &self,
        sku: &Sku,
        limit: usize,
        now: Millis,
    ) -> Result<Vec<Request>>;
    /// Claims a sign-up's confirmation for sending, once, with the links it
    /// carries (their hashes are kept), in one step with the opt-out check
    /// and the address's day ([`restock_core::confirm::may_ask`]): an
    /// address sent a confirmation within the day is not asked again, and
    /// the sign-up is [`Claim::Covered`] until that day ends (it stays
    /// pending, left out of the list until then, and its story says so).
    async fn claim_confirmation(
        &self,
        sku: &Sku,
        id: &RequestId,
        links: &ConfirmLinks,
        contact: &ContactKey,
        now: Millis,
    ) -> Result<Claim>;
    /// Gives back a confirmation claimed with `confirm` whose send failed
    /// transiently or was refused for the sender, so a later pass sends it;
    /// the address's day goes with it (nothing reached the address).
    async fn release_confirmation(
        &self,
        sku: &Sku,
        id: &RequestId,
        confirm: &TokenHash,
    ) -> Result<()>;
    /// Records a wake that hands the rest of a capped wave to the next
    /// notify pass (the stream delivers it like any other).
    async fn wake_again(&self, sku: &Sku, episode: u32, now: Millis) -> Result<()>;
    /// Asks for a wake of `sku` at `at` (a wave passed over someone asleep
    /// with units left over): the sweep's [`SweepStore::wake_sleepers`]
    /// records it once `at` has come. An earlier time already asked for
    /// stands.
    async fn wake_at(&self, sku: &Sku, at: Millis) -> Result<()>;
    /// Reserves `count` consecutive send slots, `interval_ms` apart, on the
    /// account-wide schedule every notify pass shares (so concurrent passes
    /// together keep to the settings' rate); answers the first slot's time,
    /// never before `now`.
    async fn reserve_sends(&self, count: u32, interval_ms: Millis, now: Millis) -> Result<Millis>;
    /// The sender's pause, if one was opened and not yet ended.
    async fn sender_pause(&self) -> Result<Option<SenderPause>>;
    /// Opens the pause until `until` for `reason` (none open, or the last
    /// one's time is up), or, when one is open, leaves it as it is; either
    /// way notes `sku` to wake on resume.
    /// True only for the call that opened it (the team is told once).
    async fn pause_sender(
        &self,
        reason: &str,
        until: Millis,
        sku: &Sku,
        now: Millis,
    ) -> Result<bool>;
    /// The team's pause over one already open (a provider's): its reason
    /// and end become `reason` and `until`, the items it holds back stay.
    /// False when no pause is open (the caller opens its own).
    async fn take_over_sender_pause(
        &self,
        reason: &str,
        until: Millis,
        now: Millis,
    ) -> Result<bool>;
    /// Ends the pause: the items held back, to wake (`None` when no pause
    /// was open).
    async fn resume_sender(&self) -> Result<Option<Vec<Sku>>>;
    /// The phrase written for a restock in `language`, if one was stored.
    async fn restock_phrase(
        &self,
        sku: &Sku,
        episode: u32,
        language: &Language,
    ) -> Result<Option<String>>;
    /// Stores the phrase for a restock in `language`, so later waves reuse it.
    async fn save_restock_phrase(
        &self,
        sku: &Sku,
        episode: u32,
        language: &Language,
        phrase: &str,
    ) -> Result<()>;
}

/// Abuse: rate limits.
#[async_trait]
pub trait AbuseStore: Send + Sync {
    /// Counts one hit on `key` in the fixed window containing `now`; says
    /// whether it is over `limit` and, if so, when the window ends.
    async fn rate_limit(
        &self,
        key: &str,
        limit: u32,
        window_ms: Millis,
        now: Millis,
    ) -> Result<RateDecision>;
}

/// sweep: deadlines and counter repair.
#[async_trait]
pub trait SweepStore: Send + Sync {
    /// Live requests whose deadline is at or before `now`, at most `limit`.
    async fn due(&self, now: Millis, limit: usize) -> Result<Vec<Due>>;
    /// Ends one due request (stale, lapsed or released), safe against a
    /// concurrent sweep: each is ended and counted once.
    async fn expire(&self, due: &Due, now: Millis) -> Result<ExpireOutcome>;
    /// Recounts the SKU's live offers and holds; fixes and reports drift.
    /// A fix that lowers a counter waits until the SKU has been quiet for a
    /// minute at `now` (the DynamoDB index it counts from may lag a write).
    async fn reconcile(&self, sku: &Sku, now: Millis) -> Result<Option<Drift>>;
    /// Claims the reminder of restock `episode`'s offer, once: with
    /// `links` the reminder is to be sent carrying them (their hashes kept,
    /// the reminder's reserve link holding the unit as the notice's does),
    /// without them it is dropped (the shopper is in their quiet hours).
    /// Either way the request is due again at its offer's end. `None` when
    /// the offer is no longer live in `episode` or the reminder was claimed
    /// already.
    async fn claim_reminder(
        &self,
        id: &RequestId,
        episode: u32,
        links: Option<&ReminderLinks>,
        now: Millis,
    ) -> Result<Option<Request>>;
    /// Records a wake ([`WakeKind::Awake`]) for each item whose
    /// [`NotifyStore::wake_at`] time has come, once each, and answers them.
    async fn wake_sleepers(&self, now: Millis) -> Result<Vec<Sku>>;
    /// Every source a stock delivery was ever heard from, with when.
    async fn heard_from(&self) -> Result<Vec<Heard>>;
    /// Claims the alert for `source`'s silence since `last_heard`: true for
    /// exactly one caller per silence (none once it has delivered again).
    async fn claim_silence_alert(
        &self,
        source: &str,
        last_heard: Millis,
        now: Millis,
    ) -> Result<bool>;
}

/// Figures for the team.
#[async_trait]
pub trait FiguresStore: Send + Sync {
    /// Waiting requests of a SKU, oldest first, at most `limit`.
    async fn queue(&self, sku: &Sku, shards: u16, limit: usize) -> Result<Vec<Request>>;
    /// The item's live offers and holds: every request offered a unit or
    /// holding one, soonest to run out first. Read strongly consistent; as
    /// many as there are units out, never the queue.
    async fn live_units(&self, sku: &Sku) -> Result<Vec<Request>>;
    /// Every request of a contact (any of its keys' spellings is one key),
    /// live and ended, of every item, oldest first, with its story. Read
    /// strongly consistent. No index names a contact's requests (normal
    /// running needs none), so it may read the whole table: for the team.
    async fn contact_requests(&self, contact: &ContactKey) -> Result<Vec<Request>>;
    /// Per-SKU figures.
    async fn stats(&self, sku: &Sku, shards: u16) -> Result<SkuStats>;
    /// [`FiguresStore::stats`] without the count by language
    /// (`waiting_by_language` left empty), for views of every item: it
    /// costs a read per 1,024 waiting rather than one per waiting request.
    async fn counts(&self, sku: &Sku, shards: u16) -> Result<SkuStats>;
    /// Whether anyone waits on a SKU (one short read per shard, whatever
    /// the depth).
    async fn anyone_waiting(&self, sku: &Sku, shards: u16) -> Result<bool>;
    /// Adds to a UTC day's mail figures (`day` as `YYYY-MM-DD`) and answers
    /// the day's totals.
    async fn count_mail(&self, day: &str, add: MailDay) -> Result<MailDay>;
    /// A UTC day's mail figures.
    async fn mail_day(&self, day: &str) -> Result<MailDay>;
    /// An item's figures per UTC day from `since` (`YYYY-MM-DD`) on, and
    /// per restock: what each request's moments added as they happened
    /// ([`Counted`]). Costs the days and restocks read, whatever the
    /// number of requests kept.
    async fn item_history(&self, sku: &Sku, since: &str) -> Result<ItemHistory>;
    /// Every request kept (live and ended, of every item), about `limit`
    /// at a time in no particular order: the first page with `after`
    /// `None`, the next with the page's `next`. For exports: it reads
    /// every item the store holds.
    async fn requests_page(&self, after: Option<&str>, limit: usize) -> Result<RequestPage>;
}

/// Everything restock persists: the seven sections together.
pub trait Store:
    CatalogueStore + CaptureStore + DetectStore + NotifyStore + AbuseStore + SweepStore + FiguresStore
{
}

impl<T> Store for T where
    T: CatalogueStore
        + CaptureStore
        + DetectStore
        + NotifyStore
        + AbuseStore
        + SweepStore
        + FiguresStore
{
}
