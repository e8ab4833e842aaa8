//! How an opt-out came, recorded with it: the team reads it in
//! `restock show`.

use serde::{Deserialize, Serialize};

/// How an opt-out came: recorded with it, the first way kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptOutVia {
    /// The opt-out link in a message, or its page.
    Link,
    /// A text sent back ("STOP", "unsubscribe"… in any words).
    Reply,
    /// The carrier's or SNS's opt-out list.
    Carrier,
    /// An email marked as spam.
    Complaint,
    /// An address or number that can never be delivered to.
    Undeliverable,
    /// The shop's team (`restock optout`, the dashboard).
    Team,
    /// Carried over from an earlier spelling of the contact.
    Earlier,
}

impl OptOutVia {
    /// Every way, in order.
    pub const ALL: [Self; 7] = [
        Self::Link,
        Self::Reply,
        Self::Carrier,
        Self::Complaint,
        Self::Undeliverable,
        Self::Team,
        Self::Earlier,
    ];

    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Link => "link",
            Self::Reply => "reply",
            Self::Carrier => "carrier",
            Self::Complaint => "complaint",
            Self::Undeliverable => "undeliverable",
            Self::Team => "team",
            Self::Earlier => "earlier",
        }
    }

    /// Reads a stored way; `None` for one this version does not know.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether the person said it, so it ends their sign-up on every
    /// channel: an undeliverable address says nothing of its owner's
    /// other channel, nor does a carried-over spelling.
    pub fn ends_every_channel(self) -> bool {
        !matches!(self, Self::Undeliverable | Self::Earlier)
    }

    /// For people: "by a text sent back".
    pub fn said(self) -> &'static str {
        match self {
            Self::Link => "by the opt-out link",
            Self::Reply => "by a text sent back",
            Self::Carrier => "on the carrier's opt-out list",
            Self::Complaint => "by marking a message as spam",
            Self::Undeliverable => "as undeliverable",
            Self::Team => "by the shop's team",
            Self::Earlier => "under an earlier spelling",
        }
    }
}
