//! # restock-core
//!
//! Every decision restock makes, with no I/O: no async, no clock reads, no
//! global randomness, no AWS or Lambda crates. Time (`now`) and random bytes
//! are arguments, so every function here is deterministic and tested as such.
//! The adapters (the store, the Lambda functions, the local server) call in
//! here and only move bytes.
//!
//! ## Layout
//! - [`ids`]: `Sku`, `RequestId`, `HoldId`, and the reserve/opt-out
//!   [`ids::LinkToken`]s whose secrets are stored only as hashes.
//! - [`contact`]: `Email`, `Phone` (E.164), `Contact` and its keyed hash,
//!   `ShopperName`, `Channel`.
//! - [`window`]: durations written `90s`, `15m`, `2h`, `90d`.
//! - [`queue`]: the join key's total order and the k-way merge of queue shards.
//! - [`stock`]: restock detection — threshold crossing, top-ups, re-arming,
//!   newest-wins, per-location sums, escalation.
//! - [`allocate`]: the unit accounting and the capped, oldest-first batch.
//! - [`allowance`]: the hold allowance split over slots, kept exact.
//! - [`lifecycle`]: the request's state machine.
//! - [`platform`]: the shop platforms as one type: their keys, routes, ids
//!   and deliveries.
//! - [`webhook`]: Shopify, WooCommerce and Standard Webhooks verification and
//!   parsing into one stock event type.
//! - [`settings`] and [`catalogue`]: the operator's documents.
//! - [`client`]: which address a caller has (the platform's, or the one
//!   trusted proxies report).
//! - [`notice`]: rendering notices and checking the model's sentence.
//! - [`message`]: a notice or confirmation rendered for its channel.
//! - [`join`]: capture's notify-me form.
//! - [`story`]: a request's story, kept bounded for the team.
#![warn(missing_docs)]

pub mod allocate;
pub mod allowance;
pub mod catalogue;
pub mod client;
pub mod confirm;
pub mod contact;
pub mod feedback;
pub mod ids;
pub mod inbound;
pub mod join;
pub mod lang;
pub mod lifecycle;
pub mod message;
pub mod money;
pub mod notice;
pub mod optout;
pub mod platform;
pub mod queue;
pub mod quiet;
pub mod settings;
pub mod stock;
pub mod story;
pub mod webhook;
pub mod window;

/// Milliseconds since the Unix epoch: every instant restock decides with
/// (join times, expiries, deadlines, readings), here and in the store.
pub type Millis = i64;

/// An instant as RFC 3339 in UTC (`2026-12-04T09:00:00Z`), as events, test
/// deliveries and the admin's answers write it; empty past the year 9999.
pub fn rfc3339(ms: Millis) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

pub use allocate::{Candidate, Counters, ListShare, Plan, SkipReason, plan_offers};
pub use catalogue::CatalogueEntry;
pub use contact::{Channel, Contact, ContactKey, Email, Phone, ShopperName, SmsRefusal};
pub use ids::{HoldId, LinkToken, OptOutToken, RequestId, ReserveToken, Sku, TokenHash};
pub use lang::{Language, Texts};
pub use lifecycle::{Freed, HoldRefused, HoldTaken, RequestState, Status, TransitionError};
pub use message::Message;
pub use money::Money;
pub use optout::OptOutVia;
pub use platform::{Delivery, Platform, PlatformIds, Purchase};
pub use queue::{JoinKey, merge_oldest_first};
pub use quiet::{QuietHours, Sleepers, Zone};
pub use settings::{Limits, Settings};
pub use stock::{Applied, Escalation, Level, Reading, Rules, Sale, StockOutcome, StockState};
pub use webhook::{ItemRef, OrderEvent, StockEvent, WebhookError};
pub use window::Window;

#[cfg(test)]
mod tests {
    #[test]
    fn instants_are_written_in_rfc3339_utc() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_796_374_860_000), "2026-12-04T09:01:00Z");
        assert_eq!(super::rfc3339(1_796_374_860_250), "2026-12-04T09:01:00.25Z");
        assert_eq!(super::rfc3339(i64::MAX), "", "past the year 9999");
    }
}
