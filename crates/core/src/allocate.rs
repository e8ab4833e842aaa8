//! Allocation: who is offered the free units, oldest first, never more
//! offers than units (DESIGN I1, I2).

use serde::{Deserialize, Serialize};

use crate::queue::{JoinKey, Queued};

/// A SKU's unit accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counters {
    /// Units the shop last reported (0 when untracked).
    pub level: u32,
    /// Live reserve links.
    pub offered: u32,
    /// Clicked holds waiting for checkout.
    pub held: u32,
}

/// The share of the level offered to the queue, in (0, 1].
/// Serialised as a plain number; deserialising checks the range.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct ListShare(f64);

/// Why a list share was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("list_share is a fraction greater than 0 and at most 1")]
pub struct ListShareError;

impl ListShare {
    /// All of the level goes to the queue.
    pub const ALL: Self = Self(1.0);

    /// # Errors
    /// [`ListShareError`] outside (0, 1].
    pub fn new(share: f64) -> Result<Self, ListShareError> {
        if share > 0.0 && share <= 1.0 {
            Ok(Self(share))
        } else {
            Err(ListShareError)
        }
    }

    /// The fraction.
    pub fn get(self) -> f64 {
        self.0
    }

    /// The units of `level` the queue may have: rounded down, never above `level`.
    pub fn cap(self, level: u32) -> u32 {
        if self.0 >= 1.0 {
            level
        } else {
            ((f64::from(level) * self.0).floor() as u32).min(level)
        }
    }
}

impl Default for ListShare {
    fn default() -> Self {
        Self::ALL
    }
}

impl Counters {
    /// Units free for the queue: `min(level, cap) - offered - held`, never negative.
    pub fn free(&self, share: ListShare) -> u32 {
        share
            .cap(self.level)
            .saturating_sub(self.offered)
            .saturating_sub(self.held)
    }

    /// Whether a click can become a hold: `held + 1 <= level`. Offers beyond
    /// that (the shop sold some elsewhere) are "sold out again".
    pub fn can_hold(&self) -> bool {
        self.held < self.level
    }
}

/// A waiting request as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<R> {
    /// The caller's handle on the request.
    pub request: R,
    /// Its place in the queue.
    pub key: JoinKey,
    /// When it goes stale (fixed when it joined).
    pub stale_at_ms: crate::Millis,
    /// Its contact has opted out since joining.
    pub opted_out: bool,
    /// The restock it was last offered in, if any.
    pub last_offered_episode: Option<u32>,
    /// Inside its quiet hours until then ([`crate::quiet::Sleepers`]):
    /// passed over, its place kept.
    pub asleep_until: Option<crate::Millis>,
}

impl<R> Queued for Candidate<R> {
    fn join_key(&self) -> JoinKey {
        self.key
    }
}

/// Why a waiting request was passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Its contact opted out.
    OptedOut,
    /// It has waited longer than the request lifetime.
    Stale,
    /// It was already offered in this restock (once per restock, I3).
    AlreadyOffered,
}

/// The batch of offers for one wave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<R> {
    /// Requests to offer, oldest first; never more than the free units.
    pub offers: Vec<Candidate<R>>,
    /// Requests passed over on the way, with reasons, to be recorded.
    pub skipped: Vec<(Candidate<R>, SkipReason)>,
    /// Requests passed over in their quiet hours (nothing recorded: each
    /// keeps its place).
    pub asleep: u32,
    /// When units are left over and someone was passed over asleep: when
    /// the first of them wakes, for the wave that offers them the units
    /// still free then.
    pub wake_at: Option<crate::Millis>,
}

/// Plans one wave at `now_ms`: walks the oldest-first `waiting` sequence,
/// skipping opted-out, stale and already-offered requests and passing over
/// those asleep, until `free` offers are chosen. Reads only as far into the
/// queue as it needs.
pub fn plan_offers<R>(
    free: u32,
    episode: u32,
    now_ms: crate::Millis,
    waiting: impl IntoIterator<Item = Candidate<R>>,
) -> Plan<R> {
    let mut plan = Plan {
        offers: Vec::with_capacity(free.min(10_000) as usize),
        skipped: Vec::new(),
        asleep: 0,
        wake_at: None,
    };
    let mut first_awake: Option<crate::Millis> = None;
    if free == 0 {
        return plan;
    }
    let mut last: Option<JoinKey> = None;
    for candidate in waiting {
        debug_assert!(
            last.is_none_or(|k| k < candidate.key),
            "waiting requests must arrive oldest first"
        );
        last = Some(candidate.key);
        let reason = if candidate.opted_out {
            Some(SkipReason::OptedOut)
        } else if candidate.stale_at_ms <= now_ms {
            Some(SkipReason::Stale)
        } else if candidate.last_offered_episode == Some(episode) {
            Some(SkipReason::AlreadyOffered)
        } else {
            None
        };
        match (reason, candidate.asleep_until) {
            (Some(reason), _) => plan.skipped.push((candidate, reason)),
            (None, Some(wakes)) if wakes > now_ms => {
                plan.asleep += 1;
                first_awake = Some(first_awake.map_or(wakes, |w| w.min(wakes)));
            }
            (None, _) => {
                plan.offers.push(candidate);
                if plan.offers.len() as u32 == free {
                    return plan;
                }
            }
        }
    }
    plan.wake_at = first_awake;
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn waiting(n: usize) -> Vec<Candidate<usize>> {
        (0..n)
            .map(|i| Candidate {
                request: i,
                key: JoinKey {
                    joined_ms: 1_000 + i as i64,
                    tie: 0,
                },
                stale_at_ms: i64::MAX,
                opted_out: false,
                last_offered_episode: None,
                asleep_until: None,
            })
            .collect()
    }

    #[test]
    fn della_is_told_fourth_after_three_leave_the_line() {
        // Thirteen joined; Della is seventh (index 6). The first went stale,
        // the second cancelled (no longer waiting), the third opted out.
        let mut queue = waiting(13);
        queue.remove(1);
        queue[0].stale_at_ms = 100;
        queue[1].opted_out = true;
        let counters = Counters {
            level: 4,
            offered: 0,
            held: 0,
        };
        let plan = plan_offers(counters.free(ListShare::ALL), 1, 100, queue);
        let told: Vec<usize> = plan.offers.iter().map(|c| c.request).collect();
        assert_eq!(told, vec![3, 4, 5, 6], "Della is fourth; Marcus (7) waits");
        let skipped: Vec<_> = plan.skipped.iter().map(|(c, r)| (c.request, *r)).collect();
        assert_eq!(
            skipped,
            vec![(0, SkipReason::Stale), (2, SkipReason::OptedOut)]
        );
    }

    #[test]
    fn the_list_share_caps_what_the_queue_gets() {
        let share = ListShare::new(0.5).unwrap();
        assert_eq!(
            Counters {
                level: 5,
                offered: 0,
                held: 0
            }
            .free(share),
            2
        );
        assert_eq!(
            Counters {
                level: 5,
                offered: 1,
                held: 1
            }
            .free(share),
            0
        );
        assert_eq!(
            Counters {
                level: 3,
                offered: 4,
                held: 0
            }
            .free(ListShare::ALL),
            0,
            "never negative"
        );
        assert!(
            ListShare::new(0.0).is_err()
                && ListShare::new(1.5).is_err()
                && ListShare::new(f64::NAN).is_err()
        );
        // The settings file keeps the fraction as given.
        assert_eq!(ListShare::new(0.25).unwrap().get(), 0.25);
    }

    #[test]
    fn holds_are_refused_beyond_the_level() {
        assert!(
            Counters {
                level: 2,
                offered: 2,
                held: 1
            }
            .can_hold()
        );
        assert!(
            !Counters {
                level: 2,
                offered: 1,
                held: 2
            }
            .can_hold()
        );
    }

    #[test]
    fn sleepers_keep_their_place_and_the_wave_says_when_they_wake() {
        // Ana (0) sleeps until 5,000 and Ben (2) until 4,000; Cai (1) and
        // Dee (3) are awake.
        let mut queue = waiting(4);
        queue[0].asleep_until = Some(5_000);
        queue[2].asleep_until = Some(4_000);
        let plan = plan_offers(1, 1, 100, queue.clone());
        let offered: Vec<usize> = plan.offers.iter().map(|c| c.request).collect();
        assert_eq!(offered, [1], "the first awake is offered the one unit");
        assert_eq!((plan.asleep, plan.wake_at), (1, None), "no unit left over");
        let plan = plan_offers(5, 1, 100, queue.clone());
        let offered: Vec<usize> = plan.offers.iter().map(|c| c.request).collect();
        assert_eq!(offered, [1, 3]);
        assert_eq!((plan.asleep, plan.wake_at), (2, Some(4_000)));
        assert!(plan.skipped.is_empty(), "nothing recorded for a sleeper");
        // At 5,000 both are awake, and first again.
        let plan = plan_offers(2, 1, 5_000, queue);
        let offered: Vec<usize> = plan.offers.iter().map(|c| c.request).collect();
        assert_eq!(offered, [0, 1]);
    }

    #[test]
    fn planning_stops_reading_once_the_batch_is_full() {
        let mut pulled = 0;
        let source = waiting(1_000).into_iter().inspect(|_| pulled += 1);
        let plan = plan_offers(3, 1, 0, source);
        assert_eq!(plan.offers.len(), 3);
        assert_eq!(pulled, 3);
    }

    proptest! {
        /// I1 and I2: offers are the oldest eligible requests, a prefix of the
        /// eligible sequence, and never more than the free units.
        #[test]
        fn offers_are_an_oldest_first_prefix_within_the_free_units(
            flags in proptest::collection::vec((any::<bool>(), any::<bool>(), proptest::option::of(0u32..3), proptest::option::of(9_000i64..12_000)), 0..200),
            level in 0u32..50, offered in 0u32..20, held in 0u32..20, episode in 0u32..3,
        ) {
            let queue: Vec<Candidate<usize>> = flags.iter().enumerate().map(|(i, (opted, stale, last, asleep))| Candidate {
                request: i,
                key: JoinKey { joined_ms: i as i64, tie: i as u64 },
                stale_at_ms: if *stale { 9_999 } else { 20_000 },
                opted_out: *opted,
                last_offered_episode: *last,
                // Quiet hours that ended at or before now are no quiet hours.
                asleep_until: *asleep,
            }).collect();
            let mut sorted = queue.clone();
            sorted.sort_by_key(|c| c.key);
            let counters = Counters { level, offered, held };
            let free = counters.free(ListShare::ALL);
            let plan = plan_offers(free, episode, 9_999, sorted.clone());
            prop_assert!(plan.offers.len() as u32 <= free);
            prop_assert!(offered + held + plan.offers.len() as u32 <= level.max(offered + held));
            let unskipped = |c: &&Candidate<usize>| !c.opted_out && c.stale_at_ms > 9_999 && c.last_offered_episode != Some(episode);
            let asleep = |c: &&Candidate<usize>| c.asleep_until.is_some_and(|w| w > 9_999);
            let eligible: Vec<usize> = sorted.iter()
                .filter(|c| unskipped(c) && !asleep(c))
                .map(|c| c.request).collect();
            let chosen: Vec<usize> = plan.offers.iter().map(|c| c.request).collect();
            prop_assert_eq!(&chosen[..], &eligible[..chosen.len()]);
            prop_assert_eq!(chosen.len(), eligible.len().min(free as usize));
            // Units left over: the wave says when the first sleeper wakes.
            let first_awake = sorted.iter().filter(|c| unskipped(c) && asleep(c)).filter_map(|c| c.asleep_until).min();
            if (chosen.len() as u32) < free {
                prop_assert_eq!(plan.wake_at, first_awake);
            } else {
                prop_assert_eq!(plan.wake_at, None);
            }
        }
    }
}
