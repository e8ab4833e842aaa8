//! The team's figures: per item (`SkuStats`, `Counted`), per day and per
//! restock (`ItemHistory`), and the sign-up rate limits' decisions.

use restock_core::{Counters, Millis, RequestState};
use serde::Serialize;

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
