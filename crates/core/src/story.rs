//! A request's story, kept for the team as it happens: what happened to it
//! and when, so "why was she not told?" has an answer without an export.
//!
//! The story is bounded whatever happens to a request: it keeps one chapter
//! per kind (joined, asked to confirm, confirmed, held, ended) and, for
//! what a restock repeats (offered, the notice's fate, sent back to the
//! queue), one per kind for each of the last [`RESTOCKS_KEPT`] restocks the
//! request was offered in. A chapter replaces the one in its slot, so a
//! request offered twice in one restock keeps the later offer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Millis;
use crate::ids::HoldId;
use crate::lifecycle::Status;

/// How many restocks' chapters a story keeps (the newest).
pub const RESTOCKS_KEPT: u32 = 4;

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum Event {
    /// Joined the queue (or, with double opt-in, signed up).
    Joined,
    /// The confirmation message was handed to the provider.
    Asked,
    /// Not asked yet: its address was sent a confirmation for another
    /// sign-up within the day (one a day), so this one's own goes at
    /// `until`, when that day ends.
    Covered {
        /// When its own confirmation may go.
        until: Millis,
    },
    /// Followed the confirmation link: in the queue from here.
    Confirmed,
    /// Offered a unit in restock `episode`, the reserve link good until
    /// `expires_ms`.
    Offered {
        /// The restock.
        episode: u32,
        /// When the link stops working.
        expires_ms: Millis,
    },
    /// The notice of restock `episode` was accepted by the provider.
    Sent {
        /// The restock.
        episode: u32,
        /// The provider's message id (SES or SNS).
        message_id: String,
    },
    /// The notice of restock `episode` could not be sent.
    NotSent {
        /// The restock.
        episode: u32,
        /// Why, as the provider said.
        reason: String,
    },
    /// The one reminder of restock `episode`'s offer was handed to the
    /// provider (the offer still unclaimed, `remind_before` its end).
    Reminded {
        /// The restock.
        episode: u32,
        /// The provider's message id (SES or SNS).
        message_id: String,
    },
    /// The reserve link was clicked: a unit held until `expires_ms` (once
    /// in a request's life: a hold ends it, bought or released).
    Held {
        /// The hold's id, as checkout and the order carry it.
        hold: HoldId,
        /// When the unit goes back.
        expires_ms: Millis,
    },
    /// The offer of restock `episode` ended before a click (the units sold
    /// elsewhere, or its notice never went out in time): back in the queue
    /// at the place it had.
    Back {
        /// The restock.
        episode: u32,
    },
    /// The request ended: bought, lapsed, released, cancelled, opted out,
    /// stale or undeliverable.
    Ended {
        /// How.
        status: Status,
    },
}

impl Event {
    /// The restock the event belongs to, for those a restock repeats.
    pub fn episode(&self) -> Option<u32> {
        match self {
            Self::Offered { episode, .. }
            | Self::Sent { episode, .. }
            | Self::NotSent { episode, .. }
            | Self::Reminded { episode, .. }
            | Self::Back { episode } => Some(*episode),
            Self::Joined
            | Self::Asked
            | Self::Covered { .. }
            | Self::Confirmed
            | Self::Held { .. }
            | Self::Ended { .. } => None,
        }
    }

    /// Its kind, as slots and the stored names use it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Joined => "joined",
            Self::Asked => "asked",
            Self::Covered { .. } => "covered",
            Self::Confirmed => "confirmed",
            Self::Offered { .. } => "offered",
            Self::Sent { .. } | Self::NotSent { .. } => "notice",
            Self::Reminded { .. } => "reminded",
            Self::Held { .. } => "held",
            Self::Back { .. } => "back",
            Self::Ended { .. } => "ended",
        }
    }

    /// The order of events of the same millisecond, as they can happen.
    fn rank(&self) -> u8 {
        match self {
            Self::Joined => 0,
            Self::Asked | Self::Covered { .. } => 1,
            Self::Confirmed => 2,
            Self::Back { .. } => 3,
            Self::Offered { .. } => 4,
            Self::Sent { .. } | Self::NotSent { .. } => 5,
            Self::Reminded { .. } => 6,
            Self::Held { .. } => 7,
            Self::Ended { .. } => 8,
        }
    }

    /// One line for people, without the contact.
    pub fn describe(&self) -> String {
        match self {
            Self::Joined => "joined the queue".into(),
            Self::Asked => "sent the confirmation message".into(),
            Self::Covered { until } => format!(
                "its address was sent a confirmation for another item within the day: this one's own goes at {}",
                crate::rfc3339(*until)
            ),
            Self::Confirmed => "confirmed: in the queue".into(),
            Self::Offered {
                episode,
                expires_ms,
            } => format!(
                "offered a unit in restock {episode}, reserve link good until {}",
                crate::rfc3339(*expires_ms)
            ),
            Self::Sent {
                episode,
                message_id,
            } => format!("notice of restock {episode} sent (provider message id {message_id})"),
            Self::NotSent { episode, reason } => {
                format!("notice of restock {episode} not sent: {reason}")
            }
            Self::Reminded {
                episode,
                message_id,
            } => format!(
                "reminded once that restock {episode}'s unit is still set aside (provider message id {message_id})"
            ),
            Self::Held { hold, expires_ms } => format!(
                "clicked: unit held (hold {hold}) until {}",
                crate::rfc3339(*expires_ms)
            ),
            Self::Back { episode } => format!(
                "back in the queue at the same place: restock {episode}'s unit went back before a click (sold elsewhere, or the notice never went out in time)"
            ),
            Self::Ended { status } => format!("ended: {status}"),
        }
    }
}

/// One chapter: an event and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chapter {
    /// When.
    pub at: Millis,
    /// What.
    #[serde(flatten)]
    pub event: Event,
}

impl Chapter {
    /// The slot the chapter is kept in: its kind, and for what a restock
    /// repeats, the restock modulo [`RESTOCKS_KEPT`] (`offered_2`).
    pub fn slot(&self) -> String {
        match self.event.episode() {
            Some(e) => format!("{}_{}", self.event.kind(), e % RESTOCKS_KEPT),
            None => self.event.kind().to_owned(),
        }
    }
}

/// A request's story: its chapters by slot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Story(BTreeMap<String, Chapter>);

impl Story {
    /// A story of one chapter.
    pub fn starting(at: Millis, event: Event) -> Self {
        let mut story = Self::default();
        story.tell(at, event);
        story
    }

    /// Keeps `event`, which happened `at`, in its slot.
    pub fn tell(&mut self, at: Millis, event: Event) {
        let chapter = Chapter { at, event };
        self.0.insert(chapter.slot(), chapter);
    }

    /// Every slot and its chapter, as stored.
    pub fn slots(&self) -> impl Iterator<Item = (&String, &Chapter)> {
        self.0.iter()
    }

    /// Builds a story from stored slots (a slot's name is not trusted: each
    /// chapter goes where it belongs).
    pub fn from_chapters(chapters: impl IntoIterator<Item = Chapter>) -> Self {
        let mut story = Self::default();
        for c in chapters {
            story.tell(c.at, c.event);
        }
        story
    }

    /// The chapters in time order. A slot's chapter from an older restock
    /// than the offer now in that slot is left out: a newer restock took
    /// its place.
    pub fn chapters(&self) -> Vec<&Chapter> {
        let offered_in = |slot: u32| {
            self.0.values().find_map(|c| match c.event {
                Event::Offered { episode, .. } if episode % RESTOCKS_KEPT == slot => Some(episode),
                _ => None,
            })
        };
        let mut out: Vec<&Chapter> = self
            .0
            .values()
            .filter(|c| match c.event.episode() {
                Some(e) => offered_in(e % RESTOCKS_KEPT).is_none_or(|o| o == e),
                None => true,
            })
            .collect();
        out.sort_by_key(|c| (c.at, c.event.rank(), c.event.episode()));
        out
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold() -> HoldId {
        HoldId::from_random([7; 16])
    }

    fn kinds(story: &Story) -> Vec<(Millis, String)> {
        story.chapters().iter().map(|c| (c.at, c.slot())).collect()
    }

    #[test]
    fn a_story_reads_in_time_order_with_ties_in_the_order_things_happen() {
        let mut s = Story::starting(10, Event::Joined);
        s.tell(
            50,
            Event::Held {
                hold: hold(),
                expires_ms: 99,
            },
        );
        s.tell(
            40,
            Event::Sent {
                episode: 1,
                message_id: "m".into(),
            },
        );
        s.tell(
            40,
            Event::Offered {
                episode: 1,
                expires_ms: 90,
            },
        );
        s.tell(
            50,
            Event::Ended {
                status: Status::Bought,
            },
        );
        s.tell(10, Event::Confirmed);
        assert_eq!(
            kinds(&s),
            [
                (10, "joined".into()),
                (10, "confirmed".into()),
                (40, "offered_1".into()),
                (40, "notice_1".into()),
                (50, "held".into()),
                (50, "ended".into()),
            ]
        );
    }

    #[test]
    fn a_story_stays_bounded_keeping_the_newest_restocks() {
        let mut s = Story::starting(0, Event::Joined);
        for e in 1..=100u32 {
            let at = i64::from(e) * 100;
            s.tell(
                at,
                Event::Offered {
                    episode: e,
                    expires_ms: at + 50,
                },
            );
            s.tell(
                at + 1,
                Event::Sent {
                    episode: e,
                    message_id: format!("m{e}"),
                },
            );
            s.tell(at + 2, Event::Back { episode: e });
        }
        // Joined, and offered/notice/back for each of the last four.
        assert_eq!(s.slots().count(), 1 + 3 * RESTOCKS_KEPT as usize);
        let episodes: Vec<_> = s
            .chapters()
            .iter()
            .filter_map(|c| c.event.episode())
            .collect();
        assert_eq!(
            episodes,
            [97, 97, 97, 98, 98, 98, 99, 99, 99, 100, 100, 100]
        );
        assert_eq!(s.chapters()[0].event, Event::Joined);
    }

    #[test]
    fn a_newer_offer_in_a_slot_hides_what_an_older_restock_left_there() {
        let mut s = Story::starting(0, Event::Joined);
        s.tell(
            10,
            Event::Offered {
                episode: 1,
                expires_ms: 20,
            },
        );
        s.tell(
            11,
            Event::Sent {
                episode: 1,
                message_id: "m1".into(),
            },
        );
        s.tell(12, Event::Back { episode: 1 });
        // Restock 5 shares restock 1's slot: offered, not yet sent.
        s.tell(
            50,
            Event::Offered {
                episode: 5,
                expires_ms: 60,
            },
        );
        assert_eq!(kinds(&s), [(0, "joined".into()), (50, "offered_1".into())]);
        // Another slot's chapters are kept.
        s.tell(70, Event::Back { episode: 6 });
        assert_eq!(kinds(&s).len(), 3, "no offer in slot 2 hides restock 6");
    }

    #[test]
    fn a_stored_story_reads_back_the_same_and_slots_are_not_trusted() {
        let mut s = Story::starting(1, Event::Joined);
        s.tell(
            2,
            Event::NotSent {
                episode: 3,
                reason: "bounced".into(),
            },
        );
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            json.contains(r#""notice_3":{"at":2,"what":"not_sent","episode":3"#),
            "{json}"
        );
        let back: Story = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        let rebuilt = Story::from_chapters(s.slots().map(|(_, c)| c.clone()));
        assert_eq!(rebuilt, s);
        assert!(!s.is_empty() && Story::default().is_empty());
    }

    #[test]
    fn each_event_reads_as_a_line_without_a_contact() {
        let lines = [
            Event::Joined,
            Event::Asked,
            Event::Covered { until: 0 },
            Event::Confirmed,
            Event::Offered {
                episode: 2,
                expires_ms: 0,
            },
            Event::Sent {
                episode: 2,
                message_id: "0100abc".into(),
            },
            Event::NotSent {
                episode: 2,
                reason: "bounced".into(),
            },
            Event::Held {
                hold: hold(),
                expires_ms: 0,
            },
            Event::Back { episode: 2 },
            Event::Ended {
                status: Status::Lapsed,
            },
        ]
        .map(|e| e.describe());
        assert_eq!(
            lines[4],
            "offered a unit in restock 2, reserve link good until 1970-01-01T00:00:00Z"
        );
        assert!(lines[5].contains("0100abc") && lines[6].ends_with("bounced"));
        assert_eq!(lines[9], "ended: lapsed");
        let unique: std::collections::BTreeSet<_> = lines.iter().collect();
        assert_eq!(unique.len(), lines.len());
    }
}
