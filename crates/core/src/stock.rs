//! Restock detection: the per-SKU stock state machine of DESIGN §3.
//!
//! The shop reports a level per location; the SKU's level is their sum. A
//! restock starts when that level crosses from below the threshold to at or
//! above it; while the SKU stays in stock, increases are top-ups of the same
//! restock (its *episode*); the SKU re-arms only when the level falls below the
//! threshold again. Each location keeps the newest reading it has seen, so
//! late or duplicated events change nothing. A jump larger than the escalation
//! rules allow pauses the restock until the team releases it.

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
}

impl Reading {
    /// Whether `self` should replace `current`: a newer reading wins; at the
    /// same instant the lower level wins, so the outcome never depends on the
    /// order deliveries arrive in and never promises more than the shop has.
    fn supersedes(&self, current: &Reading) -> bool {
        (self.at_ms, std::cmp::Reverse(self.level))
            > (current.at_ms, std::cmp::Reverse(current.level))
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
        Level::Tracked(tracked.fold(0u32, u32::saturating_add))
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
        let escalation = if level > rules.max_level {
            Some(Escalation::AbsurdLevel)
        } else if jump > rules.max_jump {
            Some(Escalation::Jump)
        } else {
            None
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const RULES: Rules = Rules {
        threshold: 1,
        max_jump: 500,
        max_level: 100_000,
    };

    fn at(level: u32, at_ms: i64) -> Reading {
        Reading {
            level: Level::Tracked(level),
            at_ms,
        }
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
        let (s, _) = s.apply(
            "popup",
            Reading {
                level: Level::Untracked,
                at_ms: 3,
            },
            &RULES,
        );
        assert_eq!(s.level(), Level::Tracked(5));
        let only_untracked = StockState::default()
            .apply(
                "popup",
                Reading {
                    level: Level::Untracked,
                    at_ms: 3,
                },
                &RULES,
            )
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
}
