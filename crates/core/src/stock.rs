//! Restock detection: the per-SKU stock state machine of DESIGN §3.
//!
//! The shop reports a level per location; the SKU's level is their sum. A
//! restock starts when that level crosses from below the threshold to at or
//! above it; while the SKU stays in stock, increases are top-ups of the same
//! restock (its *episode*); the SKU re-arms only when the level falls below the
//! threshold again. Each location keeps the newest reading it has seen, so
//! late or duplicated events change nothing. A jump larger than the escalation
//! rules allow pauses the restock until the team releases it.
//!
//! A sale (an order that ended a hold) lowers the level once, whichever of
//! the order and the shop's own stock report arrives first: a sale no reading
//! has counted yet is kept as *pending* and lowers the level until a reading
//! taken after it arrives; a sale older than the newest reading is already in
//! it. Readings or a sale at the very same instant as another reading with a
//! different level are a *tie*: the lower level stands (never oversell) and
//! the caller asks the platform for the item now ([`Applied::tied`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A stock level as a shop reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The shop does not count this item here: no unit can be promised from it.
    Untracked,
    /// A counted number of units (negative shop figures are read as 0).
    Tracked(u32),
}

impl Level {
    /// Reads a shop's figure: `None` is untracked, negatives (oversold) are 0.
    pub fn from_reported(value: Option<i64>) -> Self {
        match value {
            None => Self::Untracked,
            Some(n) => Self::Tracked(n.clamp(0, i64::from(u32::MAX)) as u32),
        }
    }

    /// Units that can be promised: 0 when untracked.
    pub fn units(self) -> u32 {
        match self {
            Self::Untracked => 0,
            Self::Tracked(n) => n,
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Untracked => f.write_str("not tracked"),
            Self::Tracked(1) => f.write_str("1 unit"),
            Self::Tracked(n) => write!(f, "{n} units"),
        }
    }
}

/// One location's newest reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    /// The level reported.
    pub level: Level,
    /// When the shop says the level was true, in ms since the epoch.
    pub at_ms: crate::Millis,
    /// The delivery carried no time of the platform's own (a WooCommerce
    /// body without `date_modified_gmt`), so `at_ms` is when restock
    /// received it: a replay would look fresh. It never outranks a timed
    /// reading ([`Self::supersedes`]). Absent from stored readings: timed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untimed: bool,
}

impl Reading {
    /// A reading the platform timed.
    pub fn timed(level: Level, at_ms: crate::Millis) -> Self {
        Self {
            level,
            at_ms,
            untimed: false,
        }
    }

    /// Whether `self` and `current` were taken at the same instant with
    /// different levels: the order cannot tell which is newer.
    fn ties(&self, current: &Reading) -> bool {
        self.rank() == current.rank() && self.level != current.level
    }

    /// Whether `self` should replace `current`: a timed reading outranks an
    /// untimed one; then a newer reading wins; at the same instant the
    /// lower level wins, so the outcome never depends on the order
    /// deliveries arrive in and never promises more than the shop has.
    fn supersedes(&self, current: &Reading) -> bool {
        (self.rank(), std::cmp::Reverse(self.level))
            > (current.rank(), std::cmp::Reverse(current.level))
    }

    /// The order readings are ranked in: timed before untimed, then by time.
    fn rank(&self) -> (bool, crate::Millis) {
        (!self.untimed, self.at_ms)
    }
}

/// The thresholds a SKU is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Units in stock that count as "back".
    pub threshold: u32,
    /// A rise larger than this waits for the team.
    pub max_jump: u32,
    /// A level above this waits for the team.
    pub max_level: u32,
}

/// Why a rise was put before the team instead of being offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Escalation {
    /// The level rose by more than `max_jump` at once.
    Jump,
    /// The level is above `max_level`.
    AbsurdLevel,
}

/// What applying a reading meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum StockOutcome {
    /// Older than the newest reading already applied for that location.
    Stale,
    /// Same as what was known.
    Unchanged,
    /// A genuine crossing: tell the queue.
    Restock {
        /// The restock this crossing starts.
        episode: u32,
        /// The SKU level now.
        level: u32,
    },
    /// More units while already in stock: offer them to the queue too.
    TopUp {
        /// The restock the units belong to.
        episode: u32,
        /// The SKU level now.
        level: u32,
        /// How many units were added.
        added: u32,
    },
    /// A rise too large to trust: paused until the team releases it.
    Escalated {
        /// The restock that waits.
        episode: u32,
        /// The SKU level now.
        level: u32,
        /// How far it rose.
        jump: u32,
        /// Which rule it broke.
        reason: Escalation,
    },
    /// The level fell below the threshold: the SKU is re-armed.
    SoldOut {
        /// The SKU level now.
        level: u32,
    },
    /// The level changed but there is nothing to tell anyone.
    Changed {
        /// The SKU level now.
        level: u32,
    },
}

impl std::fmt::Display for Escalation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Jump => "the rise is larger than escalation.max_jump",
            Self::AbsurdLevel => "the level is above escalation.max_level",
        })
    }
}

/// For people (the CLI, logs): what the reading meant, in a sentence.
impl std::fmt::Display for StockOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let units = |n: u32| Level::Tracked(n);
        match *self {
            Self::Stale => f.write_str("older than the newest reading; ignored"),
            Self::Unchanged => f.write_str("no change"),
            Self::Restock { episode, level } => {
                write!(f, "restock #{episode} at {}", units(level))
            }
            Self::TopUp {
                episode,
                level,
                added,
            } => write!(
                f,
                "{} added to restock #{episode}, now {}",
                units(added),
                units(level)
            ),
            Self::Escalated {
                episode,
                level,
                jump,
                reason,
            } => write!(
                f,
                "restock #{episode} at {} paused for the team: up {} at once, and {reason}",
                units(level),
                units(jump)
            ),
            Self::SoldOut { level } => write!(f, "sold out at {}; re-armed", units(level)),
            Self::Changed { level } => write!(f, "now {}", units(level)),
        }
    }
}

/// Why a paused restock could not be released.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the item has no paused restock to release")]
pub struct NotPaused;

/// A SKU's stock as the system knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StockState {
    /// The newest reading per location.
    pub locations: BTreeMap<String, Reading>,
    /// At or above the threshold since the last crossing (false = armed).
    pub in_stock: bool,
    /// How many restocks this SKU has had; offers belong to the current one.
    pub episode: u32,
    /// An escalated restock waits for the team: nothing is offered meanwhile.
    pub paused: bool,
    /// Sales no reading has counted yet, oldest first: each lowers the level
    /// until a reading taken after it arrives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sales: Vec<Sale>,
    /// The threshold the last reading was judged by: a sale that takes the
    /// level below it re-arms the SKU, as a reading would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
}

/// Units sold at one instant that no reading has counted yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sale {
    /// When the platform says the order was placed, in ms since the epoch.
    pub at_ms: crate::Millis,
    /// How many units.
    pub units: u32,
}

/// At most this many pending sale instants are kept; past it the two oldest
/// merge into the newer one, which keeps them pending longer (a lower level:
/// never more promised than the shop has).
pub const MAX_PENDING_SALES: usize = 64;

/// What applying a reading or a sale did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The state after.
    pub next: StockState,
    /// What it meant.
    pub outcome: StockOutcome,
    /// Another reading (or a sale) has the same instant and a different
    /// level: the lower one stands, and the platform should be asked for the
    /// item's level now to settle it.
    pub tied: bool,
}

impl StockState {
    /// The SKU level: the sum of its tracked locations, untracked when none is
    /// tracked.
    pub fn level(&self) -> Level {
        let mut tracked = self
            .locations
            .values()
            .filter_map(|r| match r.level {
                Level::Tracked(n) => Some(n),
                Level::Untracked => None,
            })
            .peekable();
        if tracked.peek().is_none() {
            return Level::Untracked;
        }
        let sold = self
            .sales
            .iter()
            .fold(0u32, |n, s| n.saturating_add(s.units));
        Level::Tracked(tracked.fold(0u32, u32::saturating_add).saturating_sub(sold))
    }

    /// The time of the newest reading of any location.
    fn newest_reading(&self) -> Option<crate::Millis> {
        self.locations.values().map(|r| r.at_ms).max()
    }

    /// Applies one location's reading, and says whether it tied with
    /// another at the same instant (see [`Applied::tied`]).
    pub fn apply_reading(&self, location: &str, reading: Reading, rules: &Rules) -> Applied {
        let tied = self
            .locations
            .get(location)
            .is_some_and(|current| reading.ties(current))
            || self.sales.iter().any(|s| s.at_ms == reading.at_ms);
        let (mut next, outcome) = self.apply(location, reading, rules);
        if outcome != StockOutcome::Stale {
            next.threshold = Some(rules.threshold);
        }
        Applied {
            next,
            outcome,
            tied,
        }
    }

    /// Records a sale the platform says happened at `at_ms`: the level falls
    /// by one unless a reading taken after the sale has already counted it.
    /// A fall below the threshold re-arms the SKU, as a reading would.
    pub fn sell(&self, at_ms: crate::Millis) -> Applied {
        let newest = self.newest_reading();
        if newest.is_some_and(|newest| newest > at_ms) {
            return Applied {
                next: self.clone(),
                outcome: StockOutcome::Unchanged,
                tied: false,
            };
        }
        let tied = newest == Some(at_ms);
        let before = self.level();
        let mut next = self.clone();
        match next.sales.binary_search_by_key(&at_ms, |s| s.at_ms) {
            Ok(i) => next.sales[i].units += 1,
            Err(i) => next.sales.insert(i, Sale { at_ms, units: 1 }),
        }
        if next.sales.len() > MAX_PENDING_SALES {
            let oldest = next.sales.remove(0);
            next.sales[0].units += oldest.units;
        }
        let after = next.level();
        let outcome = match after {
            _ if after == before => StockOutcome::Unchanged,
            Level::Untracked => StockOutcome::Changed { level: 0 },
            Level::Tracked(level) if level < self.threshold.unwrap_or(1) && next.in_stock => {
                next.in_stock = false;
                next.paused = false;
                StockOutcome::SoldOut { level }
            }
            Level::Tracked(level) => StockOutcome::Changed { level },
        };
        Applied {
            next,
            outcome,
            tied,
        }
    }

    /// Applies one location's reading and says what it meant.
    pub fn apply(
        &self,
        location: &str,
        reading: Reading,
        rules: &Rules,
    ) -> (StockState, StockOutcome) {
        if let Some(current) = self.locations.get(location)
            && !reading.supersedes(current)
        {
            let outcome = if reading == *current {
                StockOutcome::Unchanged
            } else {
                StockOutcome::Stale
            };
            return (self.clone(), outcome);
        }
        let before = self.level();
        let mut next = self.clone();
        next.locations.insert(location.to_owned(), reading);
        // Sales before this reading are in it; one at the same instant may
        // not be (a tie: it stays pending, the lower level).
        next.sales.retain(|s| s.at_ms >= reading.at_ms);
        let after = next.level();
        if before == after {
            return (next, StockOutcome::Unchanged);
        }
        let Level::Tracked(level) = after else {
            // Nothing can be promised from an untracked level, and nothing re-arms on it.
            return (next, StockOutcome::Changed { level: 0 });
        };
        let previous = before.units();
        if level < rules.threshold {
            let was_in_stock = next.in_stock;
            next.in_stock = false;
            next.paused = false;
            let outcome = if was_in_stock {
                StockOutcome::SoldOut { level }
            } else {
                StockOutcome::Changed { level }
            };
            return (next, outcome);
        }
        let jump = level.saturating_sub(previous);
        let escalation = escalation(level, jump, rules);
        // A crossing starts a new restock; while in stock, only a rise
        // (and no pause) is news.
        let crossing = !next.in_stock;
        if crossing {
            next.in_stock = true;
            next.episode += 1;
        } else if jump == 0 || next.paused {
            return (next, StockOutcome::Changed { level });
        }
        let episode = next.episode;
        if let Some(reason) = escalation {
            next.paused = true;
            return (
                next,
                StockOutcome::Escalated {
                    episode,
                    level,
                    jump,
                    reason,
                },
            );
        }
        let outcome = if crossing {
            StockOutcome::Restock { episode, level }
        } else {
            StockOutcome::TopUp {
                episode,
                level,
                added: jump,
            }
        };
        (next, outcome)
    }

    /// The team rejects a paused restock: the level it reported is not
    /// believed. Every location's reading keeps its time but counts as 0,
    /// so the item is sold out and re-armed: nothing is offered, a delivery
    /// older than the rejected one stays stale, and the next reading is
    /// judged afresh (the same jump is escalated again).
    ///
    /// # Errors
    /// [`NotPaused`] when nothing waits.
    pub fn reject(&self) -> Result<StockState, NotPaused> {
        if !self.paused {
            return Err(NotPaused);
        }
        let mut next = self.clone();
        next.paused = false;
        next.in_stock = false;
        for reading in next.locations.values_mut() {
            reading.level = Level::Tracked(0);
        }
        Ok(next)
    }

    /// The team releases a paused restock: it proceeds as a restock.
    ///
    /// # Errors
    /// [`NotPaused`] when nothing waits.
    pub fn release(&self) -> Result<(StockState, StockOutcome), NotPaused> {
        if !self.paused {
            return Err(NotPaused);
        }
        let mut next = self.clone();
        next.paused = false;
        let level = next.level().units();
        Ok((
            next,
            StockOutcome::Restock {
                episode: self.episode,
                level,
            },
        ))
    }
}

/// Why a rise to `level` (by `jump`) is one for the team to confirm
/// first, if it is: past the item's believable level, or a jump past the
/// largest the shop's rules expect.
fn escalation(level: u32, jump: u32, rules: &Rules) -> Option<Escalation> {
    if level > rules.max_level {
        Some(Escalation::AbsurdLevel)
    } else if jump > rules.max_jump {
        Some(Escalation::Jump)
    } else {
        None
    }
}

/// Which of the shop's locations count toward a SKU's level: units a
/// shopper cannot buy from the reserve link (a shop counter, a warehouse
/// that does not fulfil online orders) are no reason to tell anyone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Locations {
    /// Only locations the platform says fulfil online orders count
    /// (Shopify's `fulfillsOnlineOrders`); a location the platform says
    /// nothing of counts.
    pub online_only: bool,
    /// Locations that count whatever the platform says, by the id its stock
    /// webhooks name them with.
    pub include: Vec<String>,
    /// Locations that never count.
    pub exclude: Vec<String>,
}

impl Default for Locations {
    fn default() -> Self {
        Self {
            online_only: true,
            include: Vec::new(),
            exclude: Vec::new(),
        }
    }
}

impl Locations {
    /// Whether units at `location` count toward a SKU's level; `online` is
    /// whether the platform says the location fulfils online orders (`None`
    /// where it says nothing). An exclusion wins over an inclusion.
    pub fn counts(&self, location: &str, online: Option<bool>) -> bool {
        if self.exclude.iter().any(|l| l == location) {
            return false;
        }
        if self.include.iter().any(|l| l == location) {
            return true;
        }
        !(self.online_only && online == Some(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_locations_that_sell_online_count_unless_the_shop_says_otherwise() {
        let online_only = Locations::default();
        assert!(online_only.counts("1", Some(true)));
        assert!(
            !online_only.counts("2", Some(false)),
            "a shop counter's units"
        );
        assert!(
            online_only.counts("3", None),
            "a platform that says nothing"
        );
        let every = Locations {
            online_only: false,
            ..Locations::default()
        };
        assert!(every.counts("2", Some(false)));
        let named = Locations {
            online_only: true,
            include: vec!["2".into(), "4".into()],
            exclude: vec!["1".into(), "4".into()],
        };
        assert!(named.counts("2", Some(false)), "included: counted anyway");
        assert!(!named.counts("1", Some(true)), "excluded: never counted");
        assert!(!named.counts("4", Some(true)), "both: the exclusion wins");
        assert!(named.counts("3", Some(true)));
        assert!(
            !named.counts("5", Some(false)),
            "not named: as the platform says"
        );
        let read = crate::Settings::from_toml(
            "store_name = \"Loom\"\npublic_base_url = \"https://r.example\"\nemail_from = \"Loom <a@loom.example>\"\n[locations]\nonline_only = false\nexclude = [\"24826418\"]\n",
        )
        .unwrap();
        assert_eq!(
            read.locations,
            Locations {
                online_only: false,
                include: vec![],
                exclude: vec!["24826418".into()],
            }
        );
    }
    use proptest::prelude::*;

    const RULES: Rules = Rules {
        threshold: 1,
        max_jump: 500,
        max_level: 100_000,
    };

    fn at(level: u32, at_ms: i64) -> Reading {
        Reading::timed(Level::Tracked(level), at_ms)
    }

    fn untimed(level: u32, received_ms: i64) -> Reading {
        Reading {
            untimed: true,
            ..at(level, received_ms)
        }
    }

    #[test]
    fn a_reading_without_the_platform_s_time_never_outranks_a_timed_one() {
        let timed = StockState::default().apply("main", at(0, 10), &RULES).0;
        // Received later, but untimed (a replay would look just like it).
        let (s, outcome) = timed.apply("main", untimed(50, 99), &RULES);
        assert_eq!(outcome, StockOutcome::Stale);
        assert_eq!(s.level(), Level::Tracked(0));
        // Untimed readings order among themselves by when they came.
        let first = StockState::default().apply("main", untimed(3, 5), &RULES).0;
        assert_eq!(first.level(), Level::Tracked(3));
        let (later, _) = first.apply("main", untimed(4, 6), &RULES);
        assert_eq!(later.level(), Level::Tracked(4));
        let (older, outcome) = later.apply("main", untimed(9, 5), &RULES);
        assert_eq!(outcome, StockOutcome::Stale);
        assert_eq!(older.level(), Level::Tracked(4));
        // A timed reading, however old, outranks them.
        let (s, _) = later.apply("main", at(1, 1), &RULES);
        assert_eq!(s.level(), Level::Tracked(1));
        // Ties are at one rank: an untimed and a timed at one instant do not tie.
        assert!(!untimed(1, 7).ties(&at(2, 7)));
        assert!(at(1, 7).ties(&at(2, 7)));
        // Stored readings keep their shape: a timed one says nothing new.
        assert_eq!(
            serde_json::to_string(&at(1, 7)).unwrap(),
            r#"{"level":{"tracked":1},"at_ms":7}"#
        );
        let back: Reading = serde_json::from_str(r#"{"level":{"tracked":1},"at_ms":7}"#).unwrap();
        assert_eq!(back, at(1, 7));
    }

    fn run(levels: &[u32], rules: &Rules) -> (StockState, Vec<StockOutcome>) {
        let mut state = StockState::default();
        let mut outcomes = Vec::new();
        for (i, l) in levels.iter().enumerate() {
            let (next, outcome) = state.apply("main", at(*l, i as i64 + 1), rules);
            state = next;
            outcomes.push(outcome);
        }
        (state, outcomes)
    }

    #[test]
    fn a_tie_is_a_different_level_or_a_sale_at_the_same_instant() {
        let state = StockState::default()
            .apply_reading("main", at(3, 10), &RULES)
            .next;
        assert!(
            !state.apply_reading("main", at(3, 10), &RULES).tied,
            "the same reading"
        );
        assert!(
            !state.apply_reading("main", at(5, 11), &RULES).tied,
            "a newer one"
        );
        assert!(state.apply_reading("main", at(5, 10), &RULES).tied);
        let sold = state.sell(20).next;
        assert!(
            sold.apply_reading("main", at(2, 20), &RULES).tied,
            "at a sale's instant"
        );
        assert!(!sold.apply_reading("main", at(2, 21), &RULES).tied);
    }

    #[test]
    fn the_same_reading_again_is_no_change() {
        for level in [0, 4] {
            let state = StockState::default()
                .apply_reading("main", at(level, 10), &RULES)
                .next;
            assert_eq!(
                state.apply_reading("main", at(level, 10), &RULES).outcome,
                StockOutcome::Unchanged
            );
        }
    }

    #[test]
    fn a_stale_reading_keeps_the_threshold_it_was_judged_by() {
        let five = Rules {
            threshold: 5,
            ..RULES
        };
        let state = StockState::default()
            .apply_reading("main", at(3, 10), &RULES)
            .next;
        let stale = state.apply_reading("main", at(9, 5), &five);
        assert_eq!(stale.outcome, StockOutcome::Stale);
        assert_eq!(stale.next.threshold, Some(1));
        let newer = state.apply_reading("main", at(3, 11), &five);
        assert_eq!(newer.next.threshold, Some(5));
    }

    #[test]
    fn a_sale_at_nothing_left_changes_nothing_and_every_sale_counts() {
        let empty = StockState::default()
            .apply_reading("main", at(0, 10), &RULES)
            .next;
        assert_eq!(empty.sell(20).outcome, StockOutcome::Unchanged);
        // More sales than are kept one by one: the oldest are merged, none lost.
        let sales = MAX_PENDING_SALES as u32 + 6;
        let mut state = StockState::default()
            .apply_reading("main", at(100, 10), &RULES)
            .next;
        for i in 0..sales {
            state = state.sell(20 + i64::from(i)).next;
        }
        assert_eq!(state.level(), Level::Tracked(100 - sales));
        // Two sales in one millisecond are two units.
        let state = state.sell(500).next.sell(500).next;
        assert_eq!(state.level(), Level::Tracked(100 - sales - 2));
    }

    #[test]
    fn what_a_reading_meant_reads_as_a_sentence() {
        assert_eq!(Level::Tracked(1).to_string(), "1 unit");
        assert_eq!(Level::Tracked(4).to_string(), "4 units");
        assert_eq!(Level::Untracked.to_string(), "not tracked");
        assert_eq!(
            Escalation::Jump.to_string(),
            "the rise is larger than escalation.max_jump"
        );
        assert_eq!(StockOutcome::Unchanged.to_string(), "no change");
    }

    #[test]
    fn a_level_or_a_rise_exactly_at_its_limit_is_not_escalated() {
        let rules = Rules {
            threshold: 1,
            max_jump: 4,
            max_level: 10,
        };
        let (_, outcomes) = run(&[0, 4], &rules);
        assert_eq!(
            outcomes[1],
            StockOutcome::Restock {
                episode: 1,
                level: 4
            }
        );
        let (_, outcomes) = run(&[0, 4, 8, 10], &rules);
        assert_eq!(
            outcomes[3],
            StockOutcome::TopUp {
                episode: 1,
                level: 10,
                added: 2
            }
        );
    }

    #[test]
    fn the_chair_coming_back_at_four_is_one_restock() {
        let (state, outcomes) = run(&[0, 4], &RULES);
        assert_eq!(
            outcomes[1],
            StockOutcome::Restock {
                episode: 1,
                level: 4
            }
        );
        assert!(state.in_stock);
    }

    #[test]
    fn increases_while_in_stock_are_top_ups_and_decreases_are_quiet() {
        let (_, outcomes) = run(&[4, 6, 5, 5], &RULES);
        assert_eq!(
            outcomes[1],
            StockOutcome::TopUp {
                episode: 1,
                level: 6,
                added: 2
            }
        );
        assert_eq!(outcomes[2], StockOutcome::Changed { level: 5 });
        assert_eq!(outcomes[3], StockOutcome::Unchanged);
    }

    #[test]
    fn only_falling_below_the_threshold_re_arms() {
        let rules = Rules {
            threshold: 3,
            ..RULES
        };
        let (_, outcomes) = run(&[3, 2, 5, 3, 4, 0, 3], &rules);
        let restocks: Vec<_> = outcomes
            .iter()
            .filter(|o| matches!(o, StockOutcome::Restock { .. }))
            .collect();
        assert_eq!(restocks.len(), 3);
        assert_eq!(outcomes[1], StockOutcome::SoldOut { level: 2 });
        assert_eq!(
            outcomes[4],
            StockOutcome::TopUp {
                episode: 2,
                level: 4,
                added: 1
            }
        );
    }

    #[test]
    fn older_events_are_stale_and_duplicates_unchanged() {
        let (state, _) = StockState::default().apply("main", at(4, 100), &RULES);
        assert_eq!(
            state.apply("main", at(0, 50), &RULES).1,
            StockOutcome::Stale
        );
        assert_eq!(
            state.apply("main", at(4, 100), &RULES).1,
            StockOutcome::Unchanged
        );
    }

    #[test]
    fn locations_are_summed_and_untracked_ones_ignored() {
        let s = StockState::default();
        let (s, o) = s.apply("warehouse", at(2, 1), &RULES);
        assert_eq!(
            o,
            StockOutcome::Restock {
                episode: 1,
                level: 2
            }
        );
        let (s, o) = s.apply("shop", at(3, 2), &RULES);
        assert_eq!(
            o,
            StockOutcome::TopUp {
                episode: 1,
                level: 5,
                added: 3
            }
        );
        let (s, _) = s.apply("popup", Reading::timed(Level::Untracked, 3), &RULES);
        assert_eq!(s.level(), Level::Tracked(5));
        let only_untracked = StockState::default()
            .apply("popup", Reading::timed(Level::Untracked, 3), &RULES)
            .0;
        assert_eq!(only_untracked.level(), Level::Untracked);
    }

    #[test]
    fn a_thousand_at_once_waits_for_the_team_until_released() {
        let (state, outcomes) = run(&[0, 1_000], &RULES);
        assert_eq!(
            outcomes[1],
            StockOutcome::Escalated {
                episode: 1,
                level: 1_000,
                jump: 1_000,
                reason: Escalation::Jump
            }
        );
        assert!(state.paused);
        let (more, o) = state.apply("main", at(1_001, 10), &RULES);
        assert_eq!(
            o,
            StockOutcome::Changed { level: 1_001 },
            "nothing is offered while paused"
        );
        let (released, o) = more.release().unwrap();
        assert_eq!(
            o,
            StockOutcome::Restock {
                episode: 1,
                level: 1_001
            }
        );
        assert_eq!(released.release(), Err(NotPaused));
    }

    #[test]
    fn a_rejected_restock_is_sold_out_and_the_next_reading_is_judged_afresh() {
        let state = StockState::default();
        let (state, _) = state.apply("main", at(0, 1), &RULES);
        let (state, _) = state.apply("main", at(1_000, 2), &RULES);
        assert!(state.paused);
        assert_eq!(StockState::default().reject(), Err(NotPaused));
        let rejected = state.reject().unwrap();
        assert!(!rejected.paused && !rejected.in_stock);
        assert_eq!(rejected.level(), Level::Tracked(0));
        assert_eq!(rejected.episode, 1, "the restock it was stays counted");
        assert_eq!(rejected.locations["main"].at_ms, 2, "its time is kept");
        assert_eq!(rejected.reject(), Err(NotPaused));
        // A delivery older than the rejected reading changes nothing.
        let (same, o) = rejected.apply("main", at(3, 1), &RULES);
        assert_eq!((o, same.level()), (StockOutcome::Stale, Level::Tracked(0)));
        // The same jump again is escalated again; a believable level is a restock.
        let (_, o) = rejected.apply("main", at(1_000, 3), &RULES);
        assert!(
            matches!(o, StockOutcome::Escalated { episode: 2, .. }),
            "{o:?}"
        );
        let (_, o) = rejected.apply("main", at(4, 3), &RULES);
        assert_eq!(
            o,
            StockOutcome::Restock {
                episode: 2,
                level: 4
            }
        );
    }

    #[test]
    fn an_absurd_level_is_escalated_even_when_the_jump_is_allowed() {
        let rules = Rules {
            max_jump: u32::MAX,
            max_level: 100,
            ..RULES
        };
        let (_, outcomes) = run(&[0, 101], &rules);
        assert!(matches!(
            outcomes[1],
            StockOutcome::Escalated {
                reason: Escalation::AbsurdLevel,
                ..
            }
        ));
    }

    #[test]
    fn negative_shop_figures_read_as_zero() {
        assert_eq!(Level::from_reported(Some(-3)), Level::Tracked(0));
        assert_eq!(Level::from_reported(None), Level::Untracked);
    }

    proptest! {
        /// I3: exactly one restock (or paused restock) per genuine crossing, none without a re-arm.
        #[test]
        fn one_restock_per_crossing(levels in proptest::collection::vec(0u32..20, 1..60), threshold in 1u32..8) {
            let rules = Rules { threshold, max_jump: 10, max_level: 15 };
            let (_, outcomes) = run(&levels, &rules);
            let mut crossings = 0;
            let mut below = true;
            for l in &levels {
                if below && *l >= threshold { crossings += 1; }
                below = *l < threshold;
            }
            let starts = count_episode_starts(&outcomes);
            prop_assert_eq!(starts, crossings);
        }

        /// Newest wins: any order of the same readings ends in the same levels.
        #[test]
        fn any_shuffle_gives_the_same_levels(
            events in proptest::collection::vec((0usize..3, 0u32..10, 0i64..20), 1..40),
            seed in any::<u64>(),
        ) {
            let apply_all = |evs: &[(usize, u32, i64)]| {
                evs.iter().fold(StockState::default(), |s, (loc, l, t)| s.apply(&format!("loc{loc}"), at(*l, *t), &RULES).0)
            };
            let mut shuffled = events.clone();
            let mut x = seed | 1;
            for i in (1..shuffled.len()).rev() {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                shuffled.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let (a, b) = (apply_all(&events), apply_all(&shuffled));
            prop_assert_eq!(a.locations, b.locations);
        }
    }

    /// Episodes start at a Restock or an Escalated outcome whose episode is new.
    fn count_episode_starts(outcomes: &[StockOutcome]) -> usize {
        let mut last = 0;
        let mut starts = 0;
        for o in outcomes {
            let episode = match o {
                StockOutcome::Restock { episode, .. } | StockOutcome::Escalated { episode, .. } => {
                    *episode
                }
                _ => continue,
            };
            if episode > last {
                starts += 1;
                last = episode;
            }
        }
        starts
    }

    #[test]
    fn a_sale_lowers_the_level_once_whichever_report_comes_first() {
        let s = StockState::default()
            .apply_reading("default", at(3, 1_000), &RULES)
            .next;
        // The order (placed at 5 s) first, then the shop's report (at 6 s).
        let sold = s.sell(5_000);
        assert_eq!(sold.next.level(), Level::Tracked(2));
        let reported = sold.next.apply_reading("default", at(2, 6_000), &RULES);
        assert_eq!(reported.outcome, StockOutcome::Unchanged);
        assert_eq!(reported.next.level(), Level::Tracked(2));
        assert!(reported.next.sales.is_empty());
        // The report first: the order then changes nothing.
        let reported = s.apply_reading("default", at(2, 6_000), &RULES);
        let sold = reported.next.sell(5_000);
        assert_eq!(
            (sold.next.level(), sold.outcome, sold.tied),
            (Level::Tracked(2), StockOutcome::Unchanged, false)
        );
    }

    #[test]
    fn selling_the_last_unit_re_arms_and_a_tie_is_flagged() {
        let s = StockState::default()
            .apply_reading("default", at(1, 1_000), &RULES)
            .next;
        assert!(s.in_stock);
        let sold = s.sell(1_000);
        assert!(sold.tied, "a sale at the newest reading's instant is a tie");
        assert_eq!(sold.outcome, StockOutcome::SoldOut { level: 0 });
        assert!(!sold.next.in_stock);
        // Readings of one instant with different levels tie; the lower stands.
        let low = s.apply_reading("default", at(0, 2_000), &RULES).next;
        let high = low.apply_reading("default", at(4, 2_000), &RULES);
        assert!(high.tied);
        assert_eq!(high.outcome, StockOutcome::Stale);
        assert_eq!(high.next.level(), Level::Tracked(0));
    }

    #[test]
    fn pending_sales_stay_bounded_and_never_raise_the_level() {
        let mut s = StockState::default()
            .apply_reading("default", at(500, 1_000), &RULES)
            .next;
        for i in 0..200 {
            s = s.sell(2_000 + i).next;
        }
        assert_eq!(s.sales.len(), MAX_PENDING_SALES);
        assert_eq!(s.level(), Level::Tracked(300));
        // A reading after the oldest sales but before the merged one keeps
        // them pending: lower, never higher.
        let r = s.apply_reading("default", at(350, 2_100), &RULES).next;
        assert!(r.level().units() <= 350);
    }

    proptest! {
        /// Whatever order a reading taken after a sale and the sale arrive
        /// in, the state ends the same.
        #[test]
        fn a_sale_and_the_report_that_counts_it_commute(
            start in 1u32..20, sold_at in 2_000i64..3_000, gap in 1i64..1_000,
        ) {
            let s = StockState::default().apply_reading("default", at(start, 1_000), &RULES).next;
            let report = at(start - 1, sold_at + gap);
            let a = s.sell(sold_at).next.apply_reading("default", report, &RULES).next;
            let b = s.apply_reading("default", report, &RULES).next.sell(sold_at).next;
            prop_assert_eq!(a.level(), b.level());
            prop_assert_eq!(a.level(), Level::Tracked(start - 1));
            prop_assert_eq!(a.in_stock, b.in_stock);
        }
    }
}
