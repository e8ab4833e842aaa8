//! The request lifecycle as an explicit state machine.
//!
//! ```text
//! Unconfirmed ──confirm──▶ Waiting (its place kept)    └─expire─▶ Stale (forgotten)
//! Waiting ──offer──▶ Offered ──hold──▶ Held ──buy──▶ Bought
//!    │                 │ └─lapse─▶ Lapsed    └─release─▶ Released
//!    │                 ├─sold out again─▶ Waiting (same place)
//!    │                 └─undeliverable─▶ Undeliverable
//!    ├─cancel─▶ Cancelled   ├─opt out─▶ OptedOut   └─expire─▶ Stale
//! ```
//! Cancel and opt-out are allowed from any live state and free whatever unit
//! the request had. Every transition takes `now` (ms since the epoch) and
//! returns a typed error for an impossible move.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ids::HoldId;
use crate::window::Window;

/// A request's state, with what each state needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RequestState {
    /// Joined with double opt-in on: its place is kept, but it is offered
    /// nothing until the shopper follows the confirmation link.
    Unconfirmed,
    /// In the queue.
    Waiting,
    /// Told, with a live reserve link until `expires_ms`.
    Offered {
        /// The restock the offer belongs to.
        episode: u32,
        /// When the link stops working.
        expires_ms: crate::Millis,
    },
    /// A unit is held for checkout until `expires_ms`.
    Held {
        /// The restock the hold belongs to.
        episode: u32,
        /// The hold's id, given to checkout.
        hold: HoldId,
        /// When the unit goes back.
        expires_ms: crate::Millis,
    },
    /// Bought with the hold.
    Bought {
        /// The hold used.
        hold: HoldId,
    },
    /// The reserve link was not clicked in time.
    Lapsed,
    /// The hold was not bought in time.
    Released,
    /// The shopper left the queue.
    Cancelled,
    /// The contact opted out for good.
    OptedOut,
    /// Waited longer than the request lifetime.
    Stale,
    /// The notice could not be delivered.
    Undeliverable,
}

/// The state's name, as stored and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// See [`RequestState::Unconfirmed`].
    Unconfirmed,
    /// See [`RequestState::Waiting`].
    Waiting,
    /// See [`RequestState::Offered`].
    Offered,
    /// See [`RequestState::Held`].
    Held,
    /// See [`RequestState::Bought`].
    Bought,
    /// See [`RequestState::Lapsed`].
    Lapsed,
    /// See [`RequestState::Released`].
    Released,
    /// See [`RequestState::Cancelled`].
    Cancelled,
    /// See [`RequestState::OptedOut`].
    OptedOut,
    /// See [`RequestState::Stale`].
    Stale,
    /// See [`RequestState::Undeliverable`].
    Undeliverable,
}

impl Status {
    /// Every status, in lifecycle order.
    pub const ALL: [Status; 11] = [
        Self::Unconfirmed,
        Self::Waiting,
        Self::Offered,
        Self::Held,
        Self::Bought,
        Self::Lapsed,
        Self::Released,
        Self::Cancelled,
        Self::OptedOut,
        Self::Stale,
        Self::Undeliverable,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unconfirmed => "unconfirmed",
            Self::Waiting => "waiting",
            Self::Offered => "offered",
            Self::Held => "held",
            Self::Bought => "bought",
            Self::Lapsed => "lapsed",
            Self::Released => "released",
            Self::Cancelled => "cancelled",
            Self::OptedOut => "opted_out",
            Self::Stale => "stale",
            Self::Undeliverable => "undeliverable",
        }
    }

    /// Still in the line or holding a unit; the rest are final.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            Self::Unconfirmed | Self::Waiting | Self::Offered | Self::Held
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown stored status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown request status {0:?}")]
pub struct UnknownStatus(pub String);

impl FromStr for Status {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_owned()))
    }
}

/// What a transition did to the SKU's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Freed {
    /// No unit was attached.
    Nothing,
    /// A live offer ended: `offered` goes down by one.
    Offer,
    /// A hold ended: `held` goes down by one.
    Hold,
}

/// A move the lifecycle does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    /// The move is not possible from this state.
    #[error("cannot {action} a request that is {from}")]
    Invalid {
        /// Where the request was.
        from: Status,
        /// What was tried.
        action: &'static str,
    },
    /// The deadline has not passed yet.
    #[error("not due yet")]
    NotDue,
}

/// Why a click on a reserve link did not take a hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HoldRefused {
    /// The link's window has passed (or the offer lapsed).
    #[error("this reserve link has expired")]
    Expired,
    /// The hold was already used to buy.
    #[error("this reserve link has already been used")]
    Used,
    /// The request has no offer (waiting, cancelled, opted out...).
    #[error("this request has no live offer")]
    NotOffered,
}

/// A successful click.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldTaken {
    /// A new hold: `offered` down one, `held` up one.
    New(RequestState),
    /// A repeat click: the existing hold, nothing changes.
    Existing {
        /// The hold.
        hold: HoldId,
        /// When it ends unless bought.
        expires_ms: crate::Millis,
    },
}

impl RequestState {
    /// The state's name.
    pub fn status(&self) -> Status {
        match self {
            Self::Unconfirmed => Status::Unconfirmed,
            Self::Waiting => Status::Waiting,
            Self::Offered { .. } => Status::Offered,
            Self::Held { .. } => Status::Held,
            Self::Bought { .. } => Status::Bought,
            Self::Lapsed => Status::Lapsed,
            Self::Released => Status::Released,
            Self::Cancelled => Status::Cancelled,
            Self::OptedOut => Status::OptedOut,
            Self::Stale => Status::Stale,
            Self::Undeliverable => Status::Undeliverable,
        }
    }

    /// When the unit this request is offered or holds goes back, if it has
    /// one (offered or held).
    pub fn unit_expires(&self) -> Option<crate::Millis> {
        match self {
            Self::Offered { expires_ms, .. } | Self::Held { expires_ms, .. } => Some(*expires_ms),
            _ => None,
        }
    }

    /// When the sweep must look at this request next, if ever: the offer's or
    /// hold's expiry, or `stale_at_ms` (fixed when it joined) while waiting;
    /// while unconfirmed, `stale_at_ms` is the end of the confirmation window.
    pub fn due_ms(&self, stale_at_ms: crate::Millis) -> Option<crate::Millis> {
        match self {
            Self::Unconfirmed | Self::Waiting => Some(stale_at_ms),
            Self::Offered { expires_ms, .. } | Self::Held { expires_ms, .. } => Some(*expires_ms),
            _ => None,
        }
    }

    fn invalid(&self, action: &'static str) -> TransitionError {
        TransitionError::Invalid {
            from: self.status(),
            action,
        }
    }

    /// Waiting → Offered, with a link live for `window`.
    ///
    /// # Errors
    /// [`TransitionError::Invalid`] unless waiting.
    pub fn offer(
        self,
        episode: u32,
        now_ms: crate::Millis,
        window: Window,
    ) -> Result<Self, TransitionError> {
        match self {
            Self::Waiting => Ok(Self::Offered {
                episode,
                expires_ms: now_ms + window.as_millis(),
            }),
            _ => Err(self.invalid("offer")),
        }
    }

    /// The shopper followed the confirmation link: Unconfirmed → Waiting,
    /// with the place it joined at.
    ///
    /// # Errors
    /// [`TransitionError::Invalid`] unless unconfirmed.
    pub fn confirm(self) -> Result<Self, TransitionError> {
        match self {
            Self::Unconfirmed => Ok(Self::Waiting),
            _ => Err(self.invalid("confirm")),
        }
    }

    /// A click: Offered → Held for `window`, or the existing hold on a repeat.
    ///
    /// # Errors
    /// [`HoldRefused`] says whether the link expired, was used, or has no offer.
    pub fn hold(
        self,
        now_ms: crate::Millis,
        hold: HoldId,
        window: Window,
    ) -> Result<HoldTaken, HoldRefused> {
        match self {
            Self::Offered {
                episode,
                expires_ms,
            } if now_ms < expires_ms => Ok(HoldTaken::New(Self::Held {
                episode,
                hold,
                expires_ms: now_ms + window.as_millis(),
            })),
            Self::Offered { .. } | Self::Lapsed | Self::Released => Err(HoldRefused::Expired),
            Self::Held {
                hold, expires_ms, ..
            } if now_ms < expires_ms => Ok(HoldTaken::Existing { hold, expires_ms }),
            Self::Held { .. } => Err(HoldRefused::Expired),
            Self::Bought { .. } => Err(HoldRefused::Used),
            _ => Err(HoldRefused::NotOffered),
        }
    }

    /// A click that found the item sold out again: back to the front of the
    /// line with the original join key, eligible for the next freed unit.
    ///
    /// # Errors
    /// [`TransitionError::Invalid`] unless offered.
    pub fn sold_out_again(self) -> Result<(Self, Freed), TransitionError> {
        match self {
            Self::Offered { .. } => Ok((Self::Waiting, Freed::Offer)),
            _ => Err(self.invalid("return to the queue")),
        }
    }

    /// A purchase used the hold.
    ///
    /// # Errors
    /// [`TransitionError::Invalid`] unless held.
    pub fn buy(self) -> Result<(Self, Freed), TransitionError> {
        match self {
            Self::Held { hold, .. } => Ok((Self::Bought { hold }, Freed::Hold)),
            _ => Err(self.invalid("buy")),
        }
    }

    /// The sweep ends an offer, a hold or a wait whose time is up.
    ///
    /// # Errors
    /// [`TransitionError::NotDue`] before the deadline; `Invalid` for final states.
    pub fn expire(
        self,
        now_ms: crate::Millis,
        stale_at_ms: crate::Millis,
    ) -> Result<(Self, Freed), TransitionError> {
        let due = self
            .due_ms(stale_at_ms)
            .ok_or_else(|| self.invalid("expire"))?;
        if now_ms < due {
            return Err(TransitionError::NotDue);
        }
        Ok(match self {
            Self::Unconfirmed | Self::Waiting => (Self::Stale, Freed::Nothing),
            Self::Offered { .. } => (Self::Lapsed, Freed::Offer),
            Self::Held { .. } => (Self::Released, Freed::Hold),
            _ => unreachable!("due_ms is None for final states"),
        })
    }

    /// The notice could not be delivered: the offer ends and its unit passes on.
    ///
    /// # Errors
    /// [`TransitionError::Invalid`] unless offered.
    pub fn undeliverable(self) -> Result<(Self, Freed), TransitionError> {
        match self {
            Self::Offered { .. } => Ok((Self::Undeliverable, Freed::Offer)),
            _ => Err(self.invalid("mark undeliverable")),
        }
    }

    /// The shopper leaves the queue.
    ///
    /// # Errors
    /// [`TransitionError::Invalid`] from a final state.
    pub fn cancel(self) -> Result<(Self, Freed), TransitionError> {
        self.leave(Self::Cancelled, "cancel")
    }

    /// The contact opts out for good.
    ///
    /// # Errors
    /// [`TransitionError::Invalid`] from a final state.
    pub fn opt_out(self) -> Result<(Self, Freed), TransitionError> {
        self.leave(Self::OptedOut, "opt out")
    }

    fn leave(self, to: Self, action: &'static str) -> Result<(Self, Freed), TransitionError> {
        match self {
            Self::Unconfirmed | Self::Waiting => Ok((to, Freed::Nothing)),
            Self::Offered { .. } => Ok((to, Freed::Offer)),
            Self::Held { .. } => Ok((to, Freed::Hold)),
            _ => Err(self.invalid(action)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Window = Window::from_mins(15);
    const MIN: i64 = 60_000;

    fn hold_id() -> HoldId {
        HoldId::from_random([3; 16])
    }

    #[test]
    fn an_unconfirmed_request_is_confirmed_into_the_queue_or_ends_unoffered() {
        let u = RequestState::Unconfirmed;
        assert_eq!(u.confirm(), Ok(RequestState::Waiting));
        assert!(u.offer(1, 0, W).is_err(), "never offered unconfirmed");
        assert!(RequestState::Waiting.confirm().is_err());
        assert_eq!(u.due_ms(48 * 60 * MIN), Some(48 * 60 * MIN));
        assert_eq!(
            u.expire(48 * 60 * MIN - 1, 48 * 60 * MIN),
            Err(TransitionError::NotDue)
        );
        assert_eq!(
            u.expire(48 * 60 * MIN, 48 * 60 * MIN),
            Ok((RequestState::Stale, Freed::Nothing))
        );
        assert_eq!(u.cancel(), Ok((RequestState::Cancelled, Freed::Nothing)));
        assert_eq!(u.opt_out(), Ok((RequestState::OptedOut, Freed::Nothing)));
        assert!(Status::Unconfirmed.is_live());
        assert_eq!("unconfirmed".parse(), Ok(Status::Unconfirmed));
    }

    #[test]
    fn della_is_offered_holds_and_buys() {
        let offered = RequestState::Waiting.offer(1, 0, W).unwrap();
        assert_eq!(
            offered,
            RequestState::Offered {
                episode: 1,
                expires_ms: 15 * MIN
            }
        );
        let HoldTaken::New(held) = offered.hold(5 * MIN, hold_id(), W).unwrap() else {
            panic!()
        };
        assert_eq!(held.status(), Status::Held);
        assert_eq!(
            held.hold(6 * MIN, HoldId::from_random([9; 16]), W),
            Ok(HoldTaken::Existing {
                hold: hold_id(),
                expires_ms: 20 * MIN
            })
        );
        let (bought, freed) = held.buy().unwrap();
        assert_eq!(
            (bought, freed),
            (RequestState::Bought { hold: hold_id() }, Freed::Hold)
        );
        assert_eq!(bought.hold(7 * MIN, hold_id(), W), Err(HoldRefused::Used));
    }

    #[test]
    fn a_hold_past_its_window_is_not_given_again() {
        let offered = RequestState::Waiting.offer(1, 0, W).unwrap();
        let HoldTaken::New(held) = offered.hold(5 * MIN, hold_id(), W).unwrap() else {
            panic!()
        };
        // Held until 20 minutes: at 20 it has ended, as after.
        assert_eq!(held.hold(20 * MIN, hold_id(), W), Err(HoldRefused::Expired));
        assert_eq!(held.hold(30 * MIN, hold_id(), W), Err(HoldRefused::Expired));
        assert_eq!(
            held.cancel().unwrap(),
            (RequestState::Cancelled, Freed::Hold)
        );
    }

    #[test]
    fn an_unclicked_offer_lapses_and_frees_its_unit() {
        let offered = RequestState::Waiting.offer(1, 0, W).unwrap();
        assert_eq!(
            offered.expire(14 * MIN, i64::MAX),
            Err(TransitionError::NotDue)
        );
        assert_eq!(
            offered.expire(15 * MIN, i64::MAX),
            Ok((RequestState::Lapsed, Freed::Offer))
        );
        assert_eq!(
            offered.hold(15 * MIN, hold_id(), W),
            Err(HoldRefused::Expired)
        );
    }

    #[test]
    fn an_unbought_hold_is_released() {
        let HoldTaken::New(held) = RequestState::Waiting
            .offer(1, 0, W)
            .unwrap()
            .hold(MIN, hold_id(), W)
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(
            held.expire(16 * MIN, i64::MAX),
            Ok((RequestState::Released, Freed::Hold))
        );
    }

    #[test]
    fn sold_out_again_returns_to_waiting() {
        let offered = RequestState::Waiting.offer(1, 0, W).unwrap();
        assert_eq!(
            offered.sold_out_again(),
            Ok((RequestState::Waiting, Freed::Offer))
        );
        assert!(RequestState::Waiting.sold_out_again().is_err());
    }

    #[test]
    fn waiting_too_long_goes_stale() {
        let life = Window::from_secs(90 * 86_400);
        let stale_at = life.as_millis();
        assert_eq!(
            RequestState::Waiting.expire(stale_at - 1, stale_at),
            Err(TransitionError::NotDue)
        );
        assert_eq!(
            RequestState::Waiting.expire(stale_at, stale_at),
            Ok((RequestState::Stale, Freed::Nothing))
        );
    }

    #[test]
    fn only_an_offer_or_a_hold_has_a_unit_that_runs_out() {
        let offered = RequestState::Waiting.offer(1, 0, W).unwrap();
        assert_eq!(offered.unit_expires(), Some(15 * MIN));
        let HoldTaken::New(held) = offered.hold(MIN, hold_id(), W).unwrap() else {
            panic!("a new hold")
        };
        assert_eq!(held.unit_expires(), Some(16 * MIN));
        for s in [RequestState::Unconfirmed, RequestState::Waiting] {
            assert_eq!(s.unit_expires(), None, "{s:?} has no unit");
        }
    }

    #[test]
    fn final_states_refuse_every_move() {
        for s in [
            RequestState::Lapsed,
            RequestState::Cancelled,
            RequestState::OptedOut,
            RequestState::Stale,
        ] {
            assert!(s.offer(1, 0, W).is_err());
            assert!(s.cancel().is_err());
            assert!(s.opt_out().is_err());
            assert!(s.buy().is_err());
            assert!(s.expire(i64::MAX, 0).is_err());
            assert!(s.undeliverable().is_err());
            assert!(s.due_ms(0).is_none());
            assert!(s.unit_expires().is_none());
        }
        assert_eq!(
            RequestState::Cancelled.hold(0, hold_id(), W),
            Err(HoldRefused::NotOffered)
        );
    }

    #[test]
    fn leaving_frees_whatever_unit_was_attached() {
        let offered = RequestState::Waiting.offer(1, 0, W).unwrap();
        assert_eq!(RequestState::Waiting.cancel().unwrap().1, Freed::Nothing);
        assert_eq!(
            offered.opt_out().unwrap(),
            (RequestState::OptedOut, Freed::Offer)
        );
        assert_eq!(
            offered.undeliverable().unwrap(),
            (RequestState::Undeliverable, Freed::Offer)
        );
    }

    #[test]
    fn statuses_round_trip() {
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>().unwrap(), s);
        }
        assert!("gone".parse::<Status>().is_err());
        assert_eq!(Status::OptedOut.to_string(), "opted_out");
    }

    #[test]
    fn only_the_line_and_its_units_are_live() {
        let live: Vec<Status> = Status::ALL.into_iter().filter(|s| s.is_live()).collect();
        assert_eq!(
            live,
            [
                Status::Unconfirmed,
                Status::Waiting,
                Status::Offered,
                Status::Held
            ]
        );
    }
}
