//! What the store keeps and what its operations answer.
//!
//! A lost race is an outcome, not an error: every operation whose conditional
//! write can fail returns an enum that says what the caller found instead.
//!
//! This module holds a request and the outcomes of a shopper's own
//! operations (join, confirm, cancel, opt out, forget); `units` the clicks,
//! orders, stock reports, waves and the sweep's due work; `figures` the
//! team's figures; `event` the events a write can be.

mod event;
mod figures;
mod units;

pub use event::*;
pub use figures::*;
use restock_core::story::{self, Story};
use restock_core::{
    Contact, ContactKey, JoinKey, Language, LinkToken, Millis, RequestId, RequestState,
    ShopperName, Sku, TokenHash, Zone,
};
use serde::{Deserialize, Serialize};
pub use units::*;

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
    /// The request the same sign-up made on its other channel (told by
    /// email and text): an opt-out on either ends both
    /// ([`Request::goes_with`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<RequestId>,
}

impl Request {
    /// Whether this request goes with `source`, the request its sign-up
    /// made on the other channel (told by email and text), when `source`
    /// is opted out or takes its hold. Each must name the other. A
    /// request its owner confirmed goes only with one whose contact was
    /// proven too: a number nobody confirmed speaks for no inbox (a
    /// stranger may have typed the pair).
    pub fn goes_with(&self, source: &Request) -> bool {
        let proven = |r: &Request| r.state != RequestState::Unconfirmed;
        self.paired_with(source) && (proven(source) || !proven(self))
    }

    /// Whether this request and `other` were made by one sign-up on its two
    /// channels: each names the other.
    pub fn paired_with(&self, other: &Request) -> bool {
        let named =
            |a: &Request, b: &Request| a.consent.as_ref().and_then(|c| c.together) == Some(b.id);
        named(self, other) && named(other, self)
    }

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
    /// Confirmed: in the queue at the place it joined at. Only this
    /// sign-up: the address's others each get a confirmation of their own.
    Confirmed(Request),
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

/// A contact's opt-out: when and how it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OptOutRecord {
    /// When.
    pub at: Millis,
    /// How (`None`: recorded before restock kept it).
    pub via: Option<restock_core::OptOutVia>,
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
