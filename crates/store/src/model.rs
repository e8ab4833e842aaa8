//! What the store keeps and what its operations answer.
//!
//! A lost race is an outcome, not an error: every operation whose conditional
//! write can fail returns an enum that says what the caller found instead.

use restock_core::lifecycle::HoldRefused;
use restock_core::story::{self, Story};
use restock_core::{
    Contact, ContactKey, Counters, HoldId, JoinKey, Language, LinkToken, Millis, RequestId,
    RequestState, ShopperName, SkipReason, Sku, StockOutcome, StockState, TokenHash, Zone,
};
use serde::{Deserialize, Serialize};

/// A notify-me request as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Its id.
    pub id: RequestId,
    /// The item.
    pub sku: Sku,
    /// Who.
    pub name: ShopperName,
    /// Where they are told.
    pub contact: Contact,
    /// The contact's keyed hash.
    pub contact_key: ContactKey,
    /// Its place in the line.
    pub key: JoinKey,
    /// Which queue partition it sits in.
    pub shard: u16,
    /// Where it is in its lifecycle.
    pub state: RequestState,
    /// When it goes stale if still waiting (join time plus the lifetime then in force).
    pub stale_at: Millis,
    /// The restock it was last offered in (once per restock).
    pub last_offered_episode: Option<u32>,
    /// Hash of the current reserve link's secret.
    pub reserve_hash: Option<TokenHash>,
    /// Hashes of every opt-out link the request's notices have carried:
    /// each keeps working for good (I5), whatever was offered after it.
    pub optout_hashes: Vec<TokenHash>,
    /// What happened to the current offer's notice.
    pub notice: Option<NoticeOutcome>,
    /// When the current offer's one reminder is due (set once its notice
    /// is sent, with `remind_before` on; gone once the reminder is claimed
    /// or dropped, or the offer ends).
    pub remind_at: Option<Millis>,
    /// Hash of the reserve link the reminder carried: it holds the unit as
    /// the notice's own link does.
    pub remind_hash: Option<TokenHash>,
    /// Hash of the manage secret given once to the browser that joined:
    /// reading or leaving the request needs it, so knowing a shopper's
    /// address gives no power over their place.
    pub manage_hash: Option<TokenHash>,
    /// Hashes of the manage links sent to the shopper's own inbox (in the
    /// confirmation): each works like the browser's secret.
    pub inbox_hashes: Vec<TokenHash>,
    /// Hash of the confirmation link's secret, once the confirmation is
    /// claimed for sending (double opt-in).
    pub confirm_hash: Option<TokenHash>,
    /// What the shopper agreed to, when and from where.
    pub consent: Option<Consent>,
    /// The language they are spoken to in (`None`: the shop's default, for
    /// requests from before languages and bulk imports).
    pub language: Option<Language>,
    /// Their clock, for quiet hours (`None`: the shop's `time_zone`).
    pub zone: Option<Zone>,
    /// The store's bookkeeping for a position at constant cost (the
    /// DynamoDB store's ticket); `None` in a store that counts directly.
    pub ticket: Option<Ticket>,
    /// When it was told, held and ended, for the team's exports.
    pub moments: Moments,
    /// What happened to it and when, kept bounded as it happens, for the
    /// team (`restock show`).
    pub story: Story,
}

/// A page of every request kept (`FiguresStore::requests_page`).
#[derive(Debug, Clone, Default)]
pub struct RequestPage {
    /// This page's requests.
    pub requests: Vec<Request>,
    /// Where the next page starts; `None` after the last.
    pub next: Option<String>,
}

/// When a request was told, held and ended (joined and confirmed are its
/// join key and its consent): what an export and the team's figures read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moments {
    /// When its notice was accepted by SES or SNS (the latest offer's).
    pub told_ms: Option<Millis>,
    /// When it took a hold.
    pub held_ms: Option<Millis>,
    /// When it ended (bought, lapsed, cancelled, …: its state says which).
    pub ended_ms: Option<Millis>,
}

/// A request's ticket: its number in its shard (tickets are dealt in join
/// order within a shard) and, for every shard of its SKU, what the join saw
/// of the tickets ahead of it. With these a position is the number of
/// waiting tickets below one boundary per shard: a handful of reads at any
/// queue depth (`docs/TABLE.md`, "Positions").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticket {
    /// Its number in its own shard (0 = the shard's first).
    pub number: u64,
    /// Per shard (by index): every ticket below `ahead` joined before this
    /// request, and every ticket from `ahead` up to `dealt` after it; tickets
    /// from `dealt` on were dealt after this join read the shard.
    pub shards: Vec<ShardMark>,
}

/// What a join saw of one shard: see [`Ticket::shards`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardMark {
    /// Tickets below this joined earlier.
    pub ahead: u64,
    /// Tickets dealt in the shard when the join read it.
    pub dealt: u64,
}

/// Consent on record: what the shopper agreed to, when, from where (the
/// client address, keyed-hashed like contacts: never the address itself),
/// and when they confirmed it from their own inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consent {
    /// The settings' `consent_version` in force when they signed up.
    pub version: String,
    /// When they agreed (the sign-up).
    pub at: Millis,
    /// The keyed hash of the client address they signed up from.
    pub source: String,
    /// When they followed the confirmation link (`None` until then, and
    /// always with double opt-in off).
    pub confirmed_at: Option<Millis>,
}

impl Request {
    /// Whether `token` is a secret that manages this request: the joining
    /// browser's, or a manage link sent to the shopper's inbox.
    pub fn manage_link_is(&self, token: &LinkToken) -> bool {
        let hash = token.secret_hash();
        self.names(token) && (self.manage_hash == Some(hash) || self.inbox_hashes.contains(&hash))
    }

    /// Whether `token` is this request's confirmation link.
    pub fn confirm_link_is(&self, token: &LinkToken) -> bool {
        self.names(token) && self.confirm_hash == Some(token.secret_hash())
    }

    /// Whether `token` is this request's current reserve link: its
    /// notice's, or its reminder's.
    pub fn reserve_link_is(&self, token: &LinkToken) -> bool {
        let hash = Some(token.secret_hash());
        self.names(token) && (self.reserve_hash == hash || self.remind_hash == hash)
    }

    /// Whether `token` is one of the opt-out links this request has sent.
    pub fn optout_link_is(&self, token: &LinkToken) -> bool {
        self.names(token) && self.optout_hashes.contains(&token.secret_hash())
    }

    fn names(&self, token: &LinkToken) -> bool {
        token.request() == self.id && token.sku() == &self.sku
    }

    /// When the sweep must look at it next, if ever.
    pub fn due(&self) -> Option<Millis> {
        match (self.state, self.remind_at) {
            (RequestState::Offered { expires_ms, .. }, Some(at)) if at < expires_ms => Some(at),
            _ => self.state.due_ms(self.stale_at),
        }
    }

    /// Whether its offer's reminder is due at `now`: offered, the reminder
    /// asked for and its time come, the offer not yet run out.
    pub fn reminder_due(&self, now: Millis) -> Option<u32> {
        match (self.state, self.remind_at) {
            (
                RequestState::Offered {
                    episode,
                    expires_ms,
                },
                Some(at),
            ) if at <= now && now < expires_ms => Some(episode),
            _ => None,
        }
    }
}

/// A notice's fate, recorded so a redelivered batch sends nothing twice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "notice", rename_all = "snake_case")]
pub enum NoticeOutcome {
    /// Claimed for sending: a crash after this point never resends (at most once).
    Sending,
    /// Accepted by SES or SNS.
    Sent {
        /// The provider's message id.
        message_id: String,
    },
    /// Refused for good (bad address, opted out at the provider).
    Failed {
        /// Why, for the team.
        reason: String,
    },
}

/// What claiming a notice came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Claimed: send it, now, once.
    Claimed,
    /// Claimed before, re-armed since, or no longer offered: send nothing.
    NotClaimable,
    /// The contact opted out: send nothing, and end the request.
    OptedOut,
    /// The address was sent a confirmation within the day and has not
    /// confirmed: send nothing; the sign-up is no longer pending, and
    /// confirming that one confirms it.
    Covered,
}

/// A new request, before it is stored.
#[derive(Debug, Clone)]
pub struct NewRequest {
    /// Its id, drawn by the caller.
    pub id: RequestId,
    /// The item.
    pub sku: Sku,
    /// Who.
    pub name: ShopperName,
    /// Where they are told.
    pub contact: Contact,
    /// The contact's keyed hash.
    pub contact_key: ContactKey,
    /// When it joined.
    pub now: Millis,
    /// The item's queue shard count.
    pub shards: u16,
    /// How long it may wait before going stale.
    pub lifetime_ms: Millis,
    /// Hash of the manage secret the joining browser keeps (`None` for a
    /// trusted bulk import).
    pub manage_hash: Option<TokenHash>,
    /// The language they are spoken to in (`None`: the shop's default).
    pub language: Option<Language>,
    /// Their clock, for quiet hours (`None`: the shop's).
    pub zone: Option<Zone>,
    /// Double opt-in: how long the sign-up may stay unconfirmed (`None`:
    /// it joins the queue at once).
    pub confirm_window_ms: Option<Millis>,
    /// What the shopper agreed to.
    pub consent: Option<Consent>,
}

impl NewRequest {
    /// The request as it joins, in its shard, with its place in line (join
    /// time and id tie-break): waiting until it goes stale, or, with double
    /// opt-in, unconfirmed until its confirmation window ends.
    pub fn into_request(self) -> Request {
        let (state, stale_at) = match self.confirm_window_ms {
            Some(window) => (RequestState::Unconfirmed, self.now + window),
            None => (RequestState::Waiting, self.now + self.lifetime_ms),
        };
        Request {
            key: JoinKey::new(self.now, &self.id),
            shard: self.id.shard(self.shards),
            state,
            stale_at,
            last_offered_episode: None,
            reserve_hash: None,
            optout_hashes: Vec::new(),
            notice: None,
            remind_at: None,
            remind_hash: None,
            manage_hash: self.manage_hash,
            inbox_hashes: Vec::new(),
            confirm_hash: None,
            consent: self.consent,
            language: self.language,
            zone: self.zone,
            ticket: None,
            moments: Moments::default(),
            story: Story::starting(self.now, story::Event::Joined),
            id: self.id,
            sku: self.sku,
            name: self.name,
            contact: self.contact,
            contact_key: self.contact_key,
        }
    }
}

/// What a notify-me tap amounted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinOutcome {
    /// A new place in the line.
    Joined(Request),
    /// The same contact already waits for this item: their existing request.
    AlreadyWaiting(Request),
    /// The contact opted out for good.
    OptedOut,
}

/// What following a confirmation link amounted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmOutcome {
    /// Confirmed: in the queue at the place it joined at; with it, the
    /// address's other sign-ups that were waiting to be confirmed.
    Confirmed(Request, Vec<Request>),
    /// Confirmed before (a second tap, a mail scanner): as it is now.
    AlreadyConfirmed(Request),
    /// Not a live confirmation link (unknown, expired, or the sign-up ended).
    Refused,
}

/// The hashes of the links a confirmation carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfirmLinks {
    /// The confirmation link's.
    pub confirm: TokenHash,
    /// The inbox manage link's.
    pub manage: TokenHash,
    /// The opt-out link's.
    pub optout: TokenHash,
}

/// What forgetting a contact erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Forgotten {
    /// Live requests ended first (their units passed on).
    pub ended: u32,
    /// Requests erased, live or finished, with their contact details and consent.
    pub erased: u32,
    /// Whether an opt-out is kept (only its hash: it keeps them un-mailed).
    pub opt_out_kept: bool,
}

/// What leaving the queue amounted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelOutcome {
    /// Left; any unit it had is freed.
    Cancelled,
    /// Already final (bought, lapsed, cancelled...): nothing changed.
    NotLive(restock_core::Status),
    /// No such request.
    NotFound,
}

/// What a click on a reserve link amounted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldOutcome {
    /// A unit is held until `expires`.
    Held {
        /// The hold.
        hold: HoldId,
        /// When the hold ends unless bought.
        expires: Millis,
    },
    /// A repeat click: the existing hold.
    AlreadyHeld {
        /// The hold.
        hold: HoldId,
        /// When the hold ends unless bought.
        expires: Millis,
    },
    /// The shop sold the units elsewhere: back at the front of the line.
    SoldOutAgain,
    /// Expired, used, or never offered (unknown tokens look the same as expired).
    Refused(HoldRefused),
}

/// What an opt-out amounted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptOutOutcome {
    /// Recorded; this many live requests ended.
    OptedOut {
        /// Live requests of the contact that ended.
        ended: u32,
    },
    /// The token matches nothing.
    NotFound,
}

/// The order behind a purchase, as far as a hold is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    /// When the platform says the order was placed (ms): the sale's time,
    /// which tells whether the shop's own stock report already counted it.
    pub placed_at: Millis,
    /// The SKUs of its line items, when the format lists them: a hold ends
    /// as bought only if its item is among them.
    pub items: Option<Vec<String>>,
    /// The unit price of each item, where the platform says (only counted
    /// for the team: the revenue a hold brought).
    pub prices: std::collections::BTreeMap<String, restock_core::Money>,
}

impl Order {
    /// What one unit of `sku` cost in this order, if it says.
    pub fn price_of(&self, sku: &Sku) -> Option<&restock_core::Money> {
        self.prices.get(sku.as_str())
    }

    /// Whether the order has `sku` among its line items (or lists none).
    pub fn has(&self, sku: &Sku) -> bool {
        self.items
            .as_ref()
            .is_none_or(|items| items.iter().any(|i| i == sku.as_str()))
    }
}

/// What a purchase report amounted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuyOutcome {
    /// The hold ended as bought.
    Bought {
        /// The hold's item.
        sku: Sku,
        /// The order was placed at the same instant as the item's newest
        /// reading: whether that reading counts the sale cannot be told, so
        /// the platform should be asked for the level now.
        tied: bool,
    },
    /// Already recorded (a retried delivery).
    AlreadyBought,
    /// No live hold with that id (expired and released, or unknown).
    NotHeld,
    /// The order does not have the hold's item: the hold is left as it is
    /// and the level untouched (the team looks).
    NotInOrder(Sku),
}

/// What applying a stock event amounted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyOutcome {
    /// This delivery was applied before: nothing changed.
    Duplicate,
    /// Applied; what it meant.
    Applied {
        /// What the reading meant.
        outcome: StockOutcome,
        /// It tied with a reading or sale of the same instant and another
        /// level: the lower stands, and the platform should be asked now.
        tied: bool,
    },
}

impl ApplyOutcome {
    /// What the reading meant, unless it was a duplicate.
    pub fn outcome(&self) -> Option<&StockOutcome> {
        match self {
            Self::Duplicate => None,
            Self::Applied { outcome, .. } => Some(outcome),
        }
    }
}

/// Why notify should look at a SKU: carried by the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakeKind {
    /// A genuine crossing (or a released pause).
    Restock,
    /// More units while in stock.
    TopUp,
    /// A unit came back from an offer or hold.
    Freed,
    /// A notify pass stopped at its cap with units still free: the next
    /// pass carries the wave on.
    Continue,
    /// A sign-up waits for its confirmation to be sent, or was confirmed
    /// (double opt-in).
    Confirm,
    /// Someone passed over in their quiet hours, with units left over,
    /// woke (the sweep, at the time a wave asked for).
    Awake,
}

impl WakeKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Restock => "restock",
            Self::TopUp => "top_up",
            Self::Freed => "freed",
            Self::Continue => "continue",
            Self::Confirm => "confirm",
            Self::Awake => "awake",
        }
    }

    /// Reads the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Restock,
            Self::TopUp,
            Self::Freed,
            Self::Continue,
            Self::Confirm,
            Self::Awake,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// A record that wakes notify for a SKU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wake {
    /// The item.
    pub sku: Sku,
    /// Why.
    pub kind: WakeKind,
    /// The restock it belongs to.
    pub episode: u32,
    /// When it was written.
    pub at: Millis,
}

/// A SKU's stock and unit accounting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkuSnapshot {
    /// The restock state machine's state.
    pub stock: StockState,
    /// `level`, `offered`, `held`.
    pub counters: Counters,
    /// Units bought with holds (for conversion figures).
    pub bought: u32,
}

/// One offer made by a wave, with the link secrets in plain text: they exist
/// only here, on their way into the notice.
#[derive(Debug, Clone)]
pub struct Offer {
    /// The request, now offered.
    pub request: Request,
    /// `{request}.{secret}` for the reserve link.
    pub reserve: restock_core::ReserveToken,
    /// `{request}.{secret}` for the opt-out link.
    pub optout: restock_core::OptOutToken,
    /// `{request}.{secret}` for the link to see or leave the place (its
    /// hash joins the request's inbox manage links).
    pub manage: restock_core::LinkToken,
}

/// What a wave did.
#[derive(Debug, Clone, Default)]
pub struct Wave {
    /// The restock the wave belongs to (0 when the SKU has never restocked).
    pub episode: u32,
    /// Offers made, oldest first.
    pub offers: Vec<Offer>,
    /// Requests passed over and why (stale ones are ended, opted-out ones too).
    pub skipped: Vec<(RequestId, SkipReason)>,
    /// Requests passed over in their quiet hours (their places kept).
    pub asleep: u32,
    /// Units were left over and someone was passed over asleep: when the
    /// first of them wakes ([`NotifyStore::wake_at`](crate::NotifyStore::wake_at)
    /// that SKU then).
    pub wake_at: Option<Millis>,
}

/// What an order without a hold came to ([`CaptureStore::assist`](crate::CaptureStore::assist)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assist {
    /// No buyer was told about the item within the window.
    NotTold,
    /// Counted as assisted now.
    Counted,
    /// Counted before (a redelivery of the order).
    AlreadyCounted,
}

/// The links an offer's reminder carries, as their secrets' hashes: a
/// reserve link of its own, and an opt-out and a manage link, each added to
/// those the request has sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReminderLinks {
    /// The reminder's reserve link.
    pub reserve: TokenHash,
    /// Its opt-out link.
    pub optout: TokenHash,
    /// Its manage link.
    pub manage: TokenHash,
}

/// What a wave needs to know from the settings.
#[derive(Debug, Clone)]
pub struct WaveParams {
    /// The list share.
    pub share: restock_core::ListShare,
    /// How long reserve links live.
    pub offer_window: restock_core::Window,
    /// The SKU's queue shard count (from its catalogue entry).
    pub shards: u16,
    /// The most offers one wave may make.
    pub max_offers: u32,
    /// Quiet hours per channel.
    pub quiet_hours: restock_core::QuietHours,
    /// The clock of a shopper whose own is not known.
    pub shop_zone: Zone,
}

impl WaveParams {
    /// The planner's view of a waiting request at `now`, asleep or not by
    /// `sleepers` (made from these parameters).
    pub fn candidate(
        r: &Request,
        opted_out: bool,
        sleepers: &mut restock_core::Sleepers<'_>,
    ) -> restock_core::Candidate<RequestId> {
        restock_core::Candidate {
            request: r.id,
            key: r.key,
            stale_at_ms: r.stale_at,
            opted_out,
            last_offered_episode: r.last_offered_episode,
            asleep_until: sleepers.asleep_until(r.contact.channel(), r.zone.as_ref()),
        }
    }

    /// Who is asleep at `now`.
    pub fn sleepers(&self, now: Millis) -> restock_core::Sleepers<'_> {
        restock_core::Sleepers::new(&self.quiet_hours, &self.shop_zone, now)
    }
}

/// Sending is paused after a sender-side failure (the circuit breaker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderPause {
    /// When it opened.
    pub since: Millis,
    /// When sending may resume by itself.
    pub until: Millis,
    /// The provider's reason.
    pub reason: String,
    /// Items whose notices were held back (woken on resume).
    pub skus: Vec<Sku>,
}

/// A source of stock deliveries and when it was last heard from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heard {
    /// `shopify`, `woocommerce` or `stock`.
    pub source: String,
    /// The latest verified delivery.
    pub last: Millis,
    /// When its current silence was alerted, if it was.
    pub alerted: Option<Millis>,
}

/// A live request whose deadline has passed, found by the sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The request.
    pub id: RequestId,
    /// Its item.
    pub sku: Sku,
    /// When it fell due.
    pub due: Millis,
}

/// What expiring a due request did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpireOutcome {
    /// Waited too long: stale.
    Stale,
    /// Never confirmed within the confirmation window: the sign-up ended
    /// and its contact details were deleted.
    Unconfirmed,
    /// An unclicked offer lapsed; its unit is freed.
    Lapsed,
    /// An offer whose notice never went out (a pass that crashed, a send
    /// given back, sending paused) ran out: not the shopper's doing, so the
    /// request is back in the queue with its place, its unit freed.
    Requeued,
    /// An unbought hold was released; its unit is freed.
    Released,
    /// Not ended: the offer's one reminder of restock `episode` is due
    /// ([`SweepStore::claim_reminder`](crate::SweepStore::claim_reminder)).
    Remind(u32),
    /// Another sweep (or the shopper) got there first, or it is not due.
    Skipped,
    /// The stored request could not be read (a bug or a manual edit). It is
    /// taken out of the due listing, so it never blocks a sweep and is
    /// reported once; the item itself is left for the team to look at.
    Unreadable {
        /// The item's key and what was wrong with it.
        reason: String,
    },
}

/// A counter found different from the recount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// The stored counters.
    pub stored: Counters,
    /// The recount.
    pub counted: Counters,
}

/// How `SkuStats::waiting_by_language` names a request's language.
pub fn language_tag(language: Option<&restock_core::Language>) -> String {
    language.map_or_else(|| "-".to_owned(), ToString::to_string)
}

/// Per-SKU figures for the team.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SkuStats {
    /// Waiting requests.
    pub waiting: u32,
    /// Waiting requests by the language they are told in (its tag; `-` for
    /// a request kept before languages were), adding up to `waiting`.
    pub waiting_by_language: std::collections::BTreeMap<String, u32>,
    /// Sign-ups still to confirm (double opt-in): not in the queue yet.
    pub unconfirmed: u32,
    /// Live offers.
    pub offered: u32,
    /// Live holds.
    pub held: u32,
    /// Bought with a hold.
    pub bought: u32,
    /// Offers not clicked in time.
    pub lapsed: u32,
    /// Times reconcile found the counters wrong and corrected them.
    pub drifts: u32,
    /// What the holds bought brought in, per currency (thousandths), where
    /// the orders said.
    pub revenue: std::collections::BTreeMap<String, i64>,
    /// Orders for the item without a hold, by a contact told within the
    /// attribution window (assisted), each order once.
    pub assisted: u32,
    /// What those orders paid for the item, per currency (thousandths),
    /// where they said: apart from `revenue`.
    pub assisted_revenue: std::collections::BTreeMap<String, i64>,
}

/// One moment of a request's life, as it adds to its item's history
/// ([`ItemHistory`]): counted by the store when the write that made it
/// commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// A sign-up was saved (confirmed later or not).
    SignUp,
    /// The provider accepted a notice of restock `episode`.
    Told(u32),
    /// A reserve click took one of restock `episode`'s units.
    Held(u32),
    /// An order ended a hold on one of restock `episode`'s units.
    Bought(u32),
    /// An offer of restock `episode` ran out unclaimed.
    Lapsed(u32),
    /// A hold on one of restock `episode`'s units ran out unbought.
    Released(u32),
    /// The provider accepted the reminder of an offer of restock `episode`.
    Reminded(u32),
}

impl Counted {
    /// What the sweep ending a request in state `from` with `to` counts: an
    /// offer lapsed or a hold run out, in the restock whose unit it was.
    pub fn expiry(from: RequestState, to: RequestState) -> Option<Self> {
        match (from, to) {
            (RequestState::Offered { episode, .. }, RequestState::Lapsed) => {
                Some(Self::Lapsed(episode))
            }
            (RequestState::Held { episode, .. }, RequestState::Released) => {
                Some(Self::Released(episode))
            }
            _ => None,
        }
    }

    /// The figure of the day it happened that it adds one to, if any.
    pub fn day_figure(self) -> Option<&'static str> {
        match self {
            Self::SignUp => Some("sign_ups"),
            Self::Told(_) => Some("told"),
            Self::Bought(_) => Some("bought"),
            _ => None,
        }
    }

    /// The restock, and the figure of it that it adds one to, if any.
    pub fn restock_figure(self) -> Option<(u32, &'static str)> {
        match self {
            Self::SignUp => None,
            Self::Told(e) => Some((e, "told")),
            Self::Held(e) => Some((e, "held")),
            Self::Bought(e) => Some((e, "bought")),
            Self::Lapsed(e) => Some((e, "lapsed")),
            Self::Released(e) => Some((e, "released")),
            Self::Reminded(e) => Some((e, "reminded")),
        }
    }
}

/// A UTC day's figures of one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DayFigures {
    /// Sign-ups saved.
    pub sign_ups: u64,
    /// Notices the provider accepted.
    pub told: u64,
    /// Holds bought.
    pub bought: u64,
}

impl DayFigures {
    /// Every figure's name, as [`Counted::day_figure`] gives them.
    pub const NAMES: [&str; 3] = ["sign_ups", "told", "bought"];

    /// The figure [`Counted::day_figure`] names.
    pub fn figure_mut(&mut self, name: &str) -> Option<&mut u64> {
        match name {
            "sign_ups" => Some(&mut self.sign_ups),
            "told" => Some(&mut self.told),
            "bought" => Some(&mut self.bought),
            _ => None,
        }
    }
}

/// What one restock of an item turned into, counted as it happened: each
/// notice, click, purchase and expiry once, in the restock whose unit it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RestockFigures {
    /// When its first notice was recorded.
    pub first_told: Option<Millis>,
    /// Notices the provider accepted.
    pub told: u64,
    /// Reserve clicks that took a unit.
    pub held: u64,
    /// Holds bought.
    pub bought: u64,
    /// Offers not clicked in time.
    pub lapsed: u64,
    /// Holds not bought in time.
    pub released: u64,
    /// Reminders the provider accepted (one an offer at most).
    pub reminded: u64,
}

impl RestockFigures {
    /// Every figure's name, as [`Counted::restock_figure`] gives them.
    pub const NAMES: [&str; 6] = ["told", "held", "bought", "lapsed", "released", "reminded"];

    /// The figure [`Counted::restock_figure`] names.
    pub fn figure_mut(&mut self, name: &str) -> Option<&mut u64> {
        match name {
            "told" => Some(&mut self.told),
            "held" => Some(&mut self.held),
            "bought" => Some(&mut self.bought),
            "lapsed" => Some(&mut self.lapsed),
            "released" => Some(&mut self.released),
            "reminded" => Some(&mut self.reminded),
            _ => None,
        }
    }
}

/// An item's history for the team: its figures per UTC day and per
/// restock, kept as they happen so reading them costs the days and
/// restocks asked for, not the requests kept.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ItemHistory {
    /// Per UTC day (`YYYY-MM-DD`), days with nothing left out.
    pub days: std::collections::BTreeMap<String, DayFigures>,
    /// Per restock, by number.
    pub restocks: std::collections::BTreeMap<u32, RestockFigures>,
}

impl ItemHistory {
    /// Adds `counted`, which happened at `at`.
    pub fn add(&mut self, counted: Counted, at: Millis) {
        if let Some(name) = counted.day_figure() {
            let day = restock_core::feedback::day_of(at);
            if let Some(f) = self.days.entry(day).or_default().figure_mut(name) {
                *f += 1;
            }
        }
        if let Some((episode, name)) = counted.restock_figure() {
            let restock = self.restocks.entry(episode).or_default();
            if let Some(f) = restock.figure_mut(name) {
                *f += 1;
            }
            if name == "told" {
                restock.first_told.get_or_insert(at);
            }
        }
    }

    /// Only the days from `since` (`YYYY-MM-DD`) on, and every restock.
    #[must_use]
    pub fn since(mut self, since: &str) -> Self {
        self.days = self.days.split_off(since);
        self
    }
}

/// A rate limit's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateDecision {
    /// Under the limit.
    Allowed,
    /// Over it until `retry_after_ms` from now.
    Limited {
        /// Milliseconds until the window ends.
        retry_after_ms: Millis,
    },
}

impl RateDecision {
    /// Whether the count is over the limit.
    pub fn is_limited(&self) -> bool {
        matches!(self, Self::Limited { .. })
    }

    /// Decides from the count in the window.
    pub fn from_count(
        count: u64,
        limit: u32,
        window_start: Millis,
        window_ms: Millis,
        now: Millis,
    ) -> Self {
        if count <= u64::from(limit) {
            Self::Allowed
        } else {
            Self::Limited {
                retry_after_ms: (window_start + window_ms - now).max(1_000),
            }
        }
    }
}

/// Something a shop may care about, read from the store's record of
/// changes (the DynamoDB table's stream): each is published to the shop's
/// event bus (`restock_app::events`, `docs/EVENTS.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A sign-up now waits in line: confirmed from the inbox, or saved
    /// waiting (double opt-in off, or imported).
    SignUpConfirmed {
        /// The request as it is now.
        request: Box<Request>,
    },
    /// The provider accepted a notice.
    NoticeSent {
        /// The request as it is now.
        request: Box<Request>,
        /// The restock the notice was for.
        episode: u32,
    },
    /// A reserve click took a unit.
    HoldCreated {
        /// The request as it is now.
        request: Box<Request>,
        /// The restock the unit belongs to.
        episode: u32,
    },
    /// An order ended a hold as bought.
    HoldBought {
        /// The request as it is now.
        request: Box<Request>,
    },
    /// An offer ran out unclaimed (its unit passes on).
    OfferLapsed {
        /// The request as it is now.
        request: Box<Request>,
        /// The restock the offer belonged to.
        episode: u32,
    },
    /// An item came back and its restock is being offered (a restock the
    /// team released counts when released).
    RestockDetected {
        /// The item.
        sku: Sku,
        /// The restock.
        episode: u32,
        /// The level now.
        level: u32,
    },
    /// A rise too large to trust waits for the team (`restock release`).
    RestockEscalated {
        /// The item.
        sku: Sku,
        /// The restock that waits.
        episode: u32,
        /// The level now.
        level: u32,
    },
    /// A sender-side refusal paused all sending.
    SendingPaused {
        /// The provider's reason.
        reason: String,
        /// When sending resumes by itself.
        until: Millis,
    },
    /// The team paused an item's notices (`restock pause --sku`).
    ItemPaused {
        /// The item.
        sku: Sku,
        /// Why, as the team said it.
        reason: String,
    },
    /// The team resumed an item's notices.
    ItemResumed {
        /// The item.
        sku: Sku,
    },
}
