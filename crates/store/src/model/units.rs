//! The units' side: clicks and holds, orders and what they bought, stock
//! reports applied, waves and their offers, wakes, due work for the sweep,
//! and the sending pauses.

use restock_core::lifecycle::HoldRefused;
use restock_core::{
    Counters, HoldId, Millis, RequestId, SkipReason, Sku, StockOutcome, StockState, TokenHash, Zone,
};
use serde::{Deserialize, Serialize};

use crate::Request;

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
    /// The address was sent a confirmation for another sign-up within the
    /// day and has not confirmed: send nothing now. The sign-up stays
    /// pending, left out of the list until `until` (the day's end), when
    /// its own confirmation goes: a tap confirms only what it was sent for.
    Covered {
        /// When the address's day ends.
        until: Millis,
    },
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
            asleep_until: sleepers.asleep_until(&r.contact, r.zone.as_ref()),
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
