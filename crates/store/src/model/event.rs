//! The events a write can be, for the rest of a shop's stack (published by
//! notify from the table's stream).

use restock_core::{Millis, Sku};

use crate::Request;

/// Something a shop may care about, read from the store's record of
/// changes (the DynamoDB table's stream): each is published to the shop's
/// event bus (`restock_app::events`, `docs/EVENTS.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A sign-up now waits in line: confirmed from the inbox, or saved
    /// waiting (double opt-in off, or imported).
    SignUpConfirmed {
        /// The request as it is now.
        request: Box<Request>,
    },
    /// The provider accepted a notice.
    NoticeSent {
        /// The request as it is now.
        request: Box<Request>,
        /// The restock the notice was for.
        episode: u32,
    },
    /// A reserve click took a unit.
    HoldCreated {
        /// The request as it is now.
        request: Box<Request>,
        /// The restock the unit belongs to.
        episode: u32,
    },
    /// An order ended a hold as bought.
    HoldBought {
        /// The request as it is now.
        request: Box<Request>,
    },
    /// An offer ran out unclaimed (its unit passes on).
    OfferLapsed {
        /// The request as it is now.
        request: Box<Request>,
        /// The restock the offer belonged to.
        episode: u32,
    },
    /// An item came back and its restock is being offered (a restock the
    /// team released counts when released).
    RestockDetected {
        /// The item.
        sku: Sku,
        /// The restock.
        episode: u32,
        /// The level now.
        level: u32,
    },
    /// A rise too large to trust waits for the team (`restock release`).
    RestockEscalated {
        /// The item.
        sku: Sku,
        /// The restock that waits.
        episode: u32,
        /// The level now.
        level: u32,
    },
    /// A sender-side refusal paused all sending.
    SendingPaused {
        /// The provider's reason.
        reason: String,
        /// When sending resumes by itself.
        until: Millis,
    },
    /// The team paused an item's notices (`restock pause --sku`).
    ItemPaused {
        /// The item.
        sku: Sku,
        /// Why, as the team said it.
        reason: String,
    },
    /// The team resumed an item's notices.
    ItemResumed {
        /// The item.
        sku: Sku,
    },
}

impl Event {
    /// The request the event is about, for those about one shopper.
    pub fn request(&self) -> Option<&Request> {
        match self {
            Self::SignUpConfirmed { request }
            | Self::NoticeSent { request, .. }
            | Self::HoldCreated { request, .. }
            | Self::HoldBought { request }
            | Self::OfferLapsed { request, .. } => Some(request),
            Self::RestockDetected { .. }
            | Self::RestockEscalated { .. }
            | Self::SendingPaused { .. }
            | Self::ItemPaused { .. }
            | Self::ItemResumed { .. } => None,
        }
    }
}
