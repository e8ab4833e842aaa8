//! The hold allowance of a hot SKU, split over slots so that concurrent
//! clicks do not all write one item.
//!
//! A click may become a hold while `held < level`. Kept as one counter, every
//! hold of a SKU writes the same item, and the day a hyped product comes back
//! thousands of clicks a minute serialise on it. So the allowance
//! `level - held` is kept as slots (one per queue shard) whose sum is the
//! allowance, exactly; a hold takes one from its own slot while that slot is
//! positive. Two rules keep that exact:
//!
//! - **No mixed signs.** The allowance goes negative only when the shop
//!   reports fewer units than are held; that debt sits in slot 0 and every
//!   other slot is then 0. So a slot is positive only while the sum is, and
//!   the holds the slots allow never exceed `level - held`.
//! - **Rebalanced when one runs dry.** A click whose slot is empty reads every
//!   slot, takes its unit from the fullest and moves half of what that one
//!   had into its own ([`refill`]); none positive is sold out.
//!
//! A freed hold gives its unit back to slot 0 (it may owe the debt). The
//! level moving by `delta` is spread by [`plan`]: a rise pays slot 0's debt
//! first and spreads the rest; a fall takes from the fullest slots first and
//! puts what is left as debt in slot 0. Every change carries the guard that
//! keeps it exact against clicks racing with it.

/// What a slot must have held for a change to apply (checked by the store's
/// conditional write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Nothing: adding to a slot that is not in debt cannot mix signs.
    None,
    /// At least this much (a click may have taken some meanwhile).
    AtLeast(i64),
    /// Exactly this (debt is being written: every slot must be as read).
    Exactly(i64),
}

impl Guard {
    /// Whether a slot holding `value` passes.
    pub fn admits(self, value: i64) -> bool {
        match self {
            Self::None => true,
            Self::AtLeast(min) => value >= min,
            Self::Exactly(v) => value == v,
        }
    }
}

/// One slot's change: add `add`, if its value passes `guard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotChange {
    /// The slot (0-based).
    pub slot: usize,
    /// What to add (negative to take).
    pub add: i64,
    /// What the slot must hold for the change to apply.
    pub guard: Guard,
}

/// Whether `slots` keep the rules: no positive slot beside a negative one,
/// and debt only in slot 0.
pub fn is_valid(slots: &[i64]) -> bool {
    slots.iter().skip(1).all(|v| *v >= 0)
        && (slots.first().is_none_or(|v| *v >= 0) || slots.iter().skip(1).all(|v| *v == 0))
}

/// The changes that move `slots` (as read; valid) by `delta` in total. An
/// empty plan when `delta` is 0. Slots beyond `slots.len()` are not used.
pub fn plan(slots: &[i64], delta: i64) -> Vec<SlotChange> {
    let n = slots.len();
    if n == 0 || delta == 0 {
        return Vec::new();
    }
    let mut adds = vec![0i64; n];
    let mut guards = vec![Guard::None; n];
    if delta > 0 {
        // Pay slot 0's debt first, then spread the rest evenly.
        let debt = (-slots[0]).max(0);
        let paid = delta.min(debt);
        adds[0] = paid;
        let rest = delta - paid;
        let each = rest / n as i64;
        let extra = (rest % n as i64) as usize;
        for (i, add) in adds.iter_mut().enumerate() {
            *add += each + i64::from(i < extra);
        }
        if rest > 0 && debt > 0 {
            // Others turn positive only if slot 0 leaves debt: it had no
            // more than was read (only a freed hold, +1, can race).
            guards[0] = Guard::AtLeast(slots[0]);
        }
    } else {
        // Take from the fullest first; what is left becomes slot 0's debt.
        let mut need = -delta;
        let mut order: Vec<usize> = (0..n).filter(|&i| slots[i] > 0).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(slots[i]), i));
        for i in order {
            if need == 0 {
                break;
            }
            let take = need.min(slots[i]);
            adds[i] = -take;
            guards[i] = Guard::AtLeast(take);
            need -= take;
        }
        if need > 0 {
            // Fewer units than holds: every slot must be exactly as read,
            // so no click or rebalance left a positive one beside the debt.
            adds[0] -= need;
            for (i, guard) in guards.iter_mut().enumerate() {
                *guard = Guard::Exactly(slots[i]);
            }
        }
    }
    (0..n)
        .filter(|&i| adds[i] != 0 || guards[i] != Guard::None)
        .map(|i| SlotChange {
            slot: i,
            add: adds[i],
            guard: guards[i],
        })
        .collect()
}

/// A click whose own slot ran dry: the slot to take from (the fullest, its
/// value as read) and how many to move out of it (one for the hold, the rest
/// into the click's own slot). `None` when no slot is positive: sold out.
pub fn refill(slots: &[i64], own: usize) -> Option<Refill> {
    let (from, &value) = slots
        .iter()
        .enumerate()
        .filter(|(_, v)| **v > 0)
        .max_by_key(|(i, v)| (**v, std::cmp::Reverse(*i)))?;
    let take = if from == own { 1 } else { (value + 1) / 2 };
    Some(Refill { from, take })
}

/// See [`refill`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refill {
    /// The slot to take from.
    pub from: usize,
    /// How many to take from it (guarded: at least this many): one is the
    /// click's hold, `take - 1` go to the click's own slot.
    pub take: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn apply(slots: &mut [i64], changes: &[SlotChange]) -> bool {
        if !changes.iter().all(|c| c.guard.admits(slots[c.slot])) {
            return false;
        }
        for c in changes {
            slots[c.slot] += c.add;
        }
        true
    }

    #[test]
    fn valid_slots_never_mix_signs_and_keep_debt_in_slot_0() {
        assert!(is_valid(&[]) && is_valid(&[3, 0, 1]) && is_valid(&[-2, 0, 0]));
        assert!(!is_valid(&[-1, 1]), "a positive slot beside the debt");
        assert!(!is_valid(&[1, -1]), "debt outside slot 0");
    }

    #[test]
    fn a_rise_pays_the_debt_then_spreads_unguarded_unless_debt_stays_behind() {
        assert!(plan(&[], 3).is_empty(), "no slots, nothing to plan");
        let change = |slot, add, guard| SlotChange { slot, add, guard };
        // No debt: spread evenly, nothing to guard.
        assert_eq!(
            plan(&[2, 3], 4),
            [change(0, 2, Guard::None), change(1, 2, Guard::None)]
        );
        // The debt paid exactly: nothing turns positive beside it.
        assert_eq!(plan(&[-3, 0], 3), [change(0, 3, Guard::None)]);
        // More than the debt: slot 0 must still owe no more than was read.
        assert_eq!(
            plan(&[-1, 0], 3),
            [change(0, 2, Guard::AtLeast(-1)), change(1, 1, Guard::None)]
        );
    }

    /// A valid set of slots: all non-negative, or debt in slot 0 and zeros.
    fn slots() -> impl Strategy<Value = Vec<i64>> {
        prop_oneof![
            prop::collection::vec(0i64..20, 1..17),
            (1usize..17, -30i64..0).prop_map(|(n, debt)| {
                let mut v = vec![0; n];
                v[0] = debt;
                v
            }),
        ]
    }

    /// How many holds the slots can grant, one click at a time, each from
    /// its own slot or by refill.
    fn holds_granted(mut slots: Vec<i64>, clicks: &[usize]) -> i64 {
        let n = slots.len();
        let mut granted = 0;
        for own in clicks.iter().map(|c| c % n) {
            if slots[own] > 0 {
                slots[own] -= 1;
            } else if let Some(r) = refill(&slots, own) {
                slots[r.from] -= r.take;
                slots[own] += r.take - 1;
            } else {
                continue;
            }
            granted += 1;
            assert!(is_valid(&slots), "{slots:?}");
        }
        granted
    }

    #[test]
    fn a_rise_pays_the_debt_first() {
        assert_eq!(
            plan(&[-3, 0, 0], 5),
            vec![
                SlotChange {
                    slot: 0,
                    add: 4,
                    guard: Guard::AtLeast(-3)
                },
                SlotChange {
                    slot: 1,
                    add: 1,
                    guard: Guard::None
                },
            ]
        );
    }

    #[test]
    fn a_fall_below_the_holds_is_debt_in_slot_0_with_every_slot_exact() {
        let changes = plan(&[1, 2, 0], -5);
        let mut slots = [1, 2, 0];
        assert!(apply(&mut slots, &changes));
        assert_eq!(slots, [-2, 0, 0]);
        assert!(changes.iter().all(|c| matches!(c.guard, Guard::Exactly(_))));
        assert_eq!(changes.len(), 3);
    }

    #[test]
    fn a_sale_takes_one_from_the_fullest_slot() {
        assert_eq!(
            plan(&[2, 5, 5], -1),
            vec![SlotChange {
                slot: 1,
                add: -1,
                guard: Guard::AtLeast(1)
            }]
        );
    }

    #[test]
    fn a_dry_click_takes_half_of_the_fullest() {
        assert_eq!(refill(&[0, 7, 3], 0), Some(Refill { from: 1, take: 4 }));
        assert_eq!(refill(&[0, 1, 0], 2), Some(Refill { from: 1, take: 1 }));
        assert_eq!(refill(&[-2, 0, 0], 1), None);
        assert_eq!(refill(&[0, 0], 1), None);
    }

    proptest! {
        #[test]
        fn a_plan_moves_the_sum_by_delta_and_keeps_the_rules(
            slots in slots(), delta in -60i64..60,
        ) {
            let mut after = slots.clone();
            let changes = plan(&slots, delta);
            prop_assert!(apply(&mut after, &changes), "guards admit the slots read");
            prop_assert_eq!(after.iter().sum::<i64>(), slots.iter().sum::<i64>() + delta);
            prop_assert!(is_valid(&after), "{:?} -> {:?}", slots, after);
        }

        /// The heart of it: however the allowance is split, the holds the
        /// slots grant are exactly `max(0, sum)`, as one counter's would be.
        #[test]
        fn slots_grant_exactly_the_allowance(
            slots in slots(),
            delta in -40i64..40,
            clicks in prop::collection::vec(0usize..64, 0..120),
        ) {
            let mut after = slots.clone();
            prop_assert!(apply(&mut after, &plan(&slots, delta)));
            let allowance = after.iter().sum::<i64>().max(0);
            let granted = holds_granted(after, &clicks);
            prop_assert_eq!(granted, allowance.min(clicks.len() as i64));
        }

        /// A click racing with a plan (between its read and its write) makes
        /// the plan's guard refuse it, or leaves the rules kept.
        #[test]
        fn a_click_racing_a_plan_never_breaks_the_rules(
            slots in slots(), delta in -40i64..40, own in 0usize..16,
        ) {
            let changes = plan(&slots, delta);
            let mut raced = slots.clone();
            let own = own % raced.len();
            if raced[own] > 0 {
                raced[own] -= 1;
            } else if let Some(r) = refill(&raced, own) {
                raced[r.from] -= r.take;
                raced[own] += r.take - 1;
            }
            let before = raced.clone();
            if apply(&mut raced, &changes) {
                prop_assert!(is_valid(&raced), "{:?} then {:?} -> {:?}", before, changes, raced);
            }
        }

        /// A freed hold's unit back in slot 0 keeps the rules.
        #[test]
        fn a_freed_unit_back_in_slot_0_keeps_the_rules(slots in slots()) {
            let mut after = slots.clone();
            after[0] += 1;
            prop_assert!(is_valid(&after));
        }
    }
}
