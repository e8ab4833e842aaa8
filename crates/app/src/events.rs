//! restock's events for the rest of a shop's stack (its CRM, Klaviyo, a
//! Slack channel): each change a shop may care about, published once to
//! the stack's EventBridge bus as a documented, versioned event
//! (`docs/EVENTS.md`).
//!
//! The table's stream is the source of truth: notify's second stream
//! subscription hands over the records of the items whose writes can be
//! events, the store reads which [`Event`]s each write was
//! (`restock_store_dynamo::events`), and [`publish`] puts them on the bus.
//! A record whose events the bus did not take is answered as a batch item
//! failure, so Lambda delivers it again: at least once, even when the
//! function dies half-way. Each event's `id` is the same on every delivery,
//! for consumers to deduplicate on.

use restock_core::{Millis, rfc3339};
use restock_store::{Event, Request};
use serde::Serialize;
use serde_json::{Value, json};

use crate::Services;

/// The `source` of every event.
pub const SOURCE: &str = "restock";

/// The schema's version, in every event's `detail.version`: a field is only
/// ever added within a version.
pub const VERSION: u32 = 1;

/// Every `detail-type`, in the order `docs/EVENTS.md` lists them.
pub const DETAIL_TYPES: [&str; 10] = [
    "Sign-up confirmed",
    "Notice sent",
    "Hold created",
    "Hold bought",
    "Offer lapsed",
    "Restock detected",
    "Restock escalated",
    "Sending paused",
    "Item paused",
    "Item resumed",
];

/// One event as it goes on the bus.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Published {
    /// Its `detail-type`.
    pub detail_type: &'static str,
    /// When it happened (ms since the epoch): the bus event's `time`.
    pub at_ms: Millis,
    /// Its `detail`: `version`, `id`, `at`, then what it names.
    pub detail: Value,
    /// The request an event about a shopper is about, as the write left
    /// it, for a hand-off that needs the shopper's own address (Klaviyo's
    /// profile); never on the bus.
    #[serde(skip)]
    pub request: Option<Request>,
}

/// One stream record's worth of events.
#[derive(Debug, Clone)]
pub struct Changed {
    /// The record's id in the stream: the same on every delivery.
    pub record: String,
    /// Its sequence number, to answer Lambda with if it must come again.
    pub sequence: String,
    /// When the write happened (ms since the epoch).
    pub at_ms: Millis,
    /// What the write was.
    pub events: Vec<Event>,
}

/// The `detail-type` of `event`.
pub fn detail_type(event: &Event) -> &'static str {
    DETAIL_TYPES[match event {
        Event::SignUpConfirmed { .. } => 0,
        Event::NoticeSent { .. } => 1,
        Event::HoldCreated { .. } => 2,
        Event::HoldBought { .. } => 3,
        Event::OfferLapsed { .. } => 4,
        Event::RestockDetected { .. } => 5,
        Event::RestockEscalated { .. } => 6,
        Event::SendingPaused { .. } => 7,
        Event::ItemPaused { .. } => 8,
        Event::ItemResumed { .. } => 9,
    }]
}

/// What an event says of a shopper: the request, its item and channel, the
/// contact's keyed hash, and the address and first name only if the shop
/// turned them on (else the address masked).
fn shopper(r: &Request, include_contact: bool) -> Value {
    let mut v = json!({
        "request": r.id.to_string(),
        "channel": r.contact.channel().as_str(),
        "contact_hash": r.contact_key.as_str(),
    });
    if include_contact {
        v["contact"] = json!(r.contact.address());
        v["name"] = json!(r.name.as_str());
    } else {
        v["contact"] = json!(r.contact.masked());
    }
    v
}

/// `event` as published: `id` names it for deduplication (the stream
/// record's id and its place among the record's events).
pub fn published(event: &Event, id: &str, at_ms: Millis, include_contact: bool) -> Published {
    let mut detail = json!({ "version": VERSION, "id": id, "at": rfc3339(at_ms) });
    let about = |r: &Request| {
        let mut v = shopper(r, include_contact);
        v["sku"] = json!(r.sku.as_str());
        v
    };
    let fields = match event {
        Event::SignUpConfirmed { request } | Event::HoldBought { request } => about(request),
        Event::NoticeSent { request, episode }
        | Event::HoldCreated { request, episode }
        | Event::OfferLapsed { request, episode } => {
            let mut v = about(request);
            v["restock"] = json!(episode);
            v
        }
        Event::RestockDetected {
            sku,
            episode,
            level,
        }
        | Event::RestockEscalated {
            sku,
            episode,
            level,
        } => json!({ "sku": sku.as_str(), "restock": episode, "level": level }),
        Event::SendingPaused { reason, until } => {
            json!({ "reason": reason, "until": rfc3339(*until) })
        }
        Event::ItemPaused { sku, reason } => json!({ "sku": sku.as_str(), "reason": reason }),
        Event::ItemResumed { sku } => json!({ "sku": sku.as_str() }),
    };
    for (k, v) in fields.as_object().into_iter().flatten() {
        detail[k] = v.clone();
    }
    let request = match event {
        Event::SignUpConfirmed { request }
        | Event::HoldBought { request }
        | Event::NoticeSent { request, .. }
        | Event::HoldCreated { request, .. }
        | Event::OfferLapsed { request, .. } => Some((**request).clone()),
        _ => None,
    };
    Published {
        detail_type: detail_type(event),
        at_ms,
        detail,
        request,
    }
}

/// Publishes each record's events to the bus; answers the sequence numbers
/// of the records to deliver again (the bus refused one of their events, or
/// nothing could be published).
pub async fn publish(s: &Services, changed: Vec<Changed>) -> Vec<String> {
    let include_contact = match s.settings().await {
        Ok(settings) => settings.events_include_contact,
        Err(e) => {
            tracing::error!(error = %e, "events not published: no settings");
            return changed.into_iter().map(|c| c.sequence).collect();
        }
    };
    let mut owners = Vec::new();
    let mut events = Vec::new();
    for (i, c) in changed.iter().enumerate() {
        for (n, event) in c.events.iter().enumerate() {
            let id = format!("{}-{n}", c.record);
            events.push(published(event, &id, c.at_ms, include_contact));
            owners.push(i);
        }
    }
    if events.is_empty() {
        return Vec::new();
    }
    let taken = match s.events.publish(&events).await {
        Ok(taken) => taken,
        Err(e) => {
            tracing::error!(error = %e, events = events.len(), "events not published; the stream delivers them again");
            vec![false; events.len()]
        }
    };
    let mut again = vec![false; changed.len()];
    let taken = taken.into_iter().chain(std::iter::repeat(false));
    for ((owner, ok), e) in owners.iter().zip(taken).zip(&events) {
        if ok {
            tracing::info!(detail_type = e.detail_type, id = %e.detail["id"], "event published");
        } else {
            again[*owner] = true;
        }
    }
    changed
        .into_iter()
        .zip(again)
        .filter(|(_, again)| *again)
        .map(|(c, _)| c.sequence)
        .collect()
}
