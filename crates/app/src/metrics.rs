//! What restock counts for the team's CloudWatch dashboard and alarms.
//!
//! Each figure is counted here, through the [`metrics`] facade, at the one
//! place the handlers decide it. The Lambda binaries install a recorder that
//! writes them as CloudWatch embedded-metric-format lines after each
//! invocation (`restock_aws::wiring::metrics`); where no recorder is installed (the
//! local server, most tests) counting costs nothing. `template.yaml`'s
//! dashboard and alarms name only metrics in [`Metric::ALL`] (checked by
//! `tests/template`).

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;
use restock_core::Platform;

use crate::ports::SendError;

/// A figure restock writes, each under its CloudWatch metric name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// New sign-ups saved (capture; a repeat tap is not one).
    SignUps,
    /// Sign-ups confirmed from the inbox (capture).
    Confirmations,
    /// Reserve clicks that took a unit (capture; a second tap is not one).
    Holds,
    /// Holds an order ended as bought (detect).
    Purchases,
    /// Stock readings that started a restock (detect).
    Restocks,
    /// Rises paused for the team to release (detect).
    RestocksEscalated,
    /// Notices the provider accepted (notify).
    NoticesSent,
    /// Confirmation messages the provider accepted (notify).
    ConfirmationsSent,
    /// Sends that failed, by `Class` (notify): `permanent`, `opted_out`,
    /// `transient`, `sender` (sending pauses) or `unknown`.
    SendFailures,
    /// Times sending was paused by a sender-side failure (notify).
    SendingPaused,
    /// Notify passes that handed the rest of an item to the next pass: the
    /// wave cap or the deadline (notify).
    HandedOn,
    /// How long one notify pass over one item took, in milliseconds.
    PassDuration,
    /// Offers that ran out unclaimed, their units passed on (sweep).
    OffersLapsed,
    /// Holds that ran out unbought, their units passed on (sweep).
    HoldsReleased,
    /// Requests answered 429 Too Many Requests (capture and detect).
    TooManyRequests,
    /// Requests answered 503 Service Unavailable (capture and detect).
    Unavailable,
    /// Stock deliveries for items not in the catalogue (detect): counted,
    /// the team told once per item a day.
    UnknownItems,
    /// Webhook deliveries refused, by `Reason` (detect): `signature`,
    /// `timestamp` (outside the replay window), `missing_header`,
    /// `malformed`, `topic` (not handled; accepted and ignored) or
    /// `future` (a reading or order dated after restock's clock).
    WebhooksRefused,
    /// Webhook deliveries refused as not signed by the platform's key, by
    /// `Platform` (`shopify`, `woocommerce`, `stock`): a bad signature, a
    /// missing signature header or a time outside the replay window. A
    /// wrong key refuses every delivery; each platform has an alarm.
    WebhooksUnauthorized,
    /// Stock pull reads that failed, by `Platform` (`shopify`,
    /// `woocommerce`): the platform's API refused or did not answer, so the
    /// pull, the silence check and tie settling cannot read it.
    PullErrors,
    /// Notices phrased with the fixed wording because the model's sentence
    /// could not be used, by `Reason`: `refused` (the sentence failed the
    /// checks), `unavailable` (the call failed: access, quota, region) or
    /// `slow` (past the phrase timeout).
    PhraseFallbacks,
    /// Confirmation messages the provider did not take, whatever the class
    /// (each is also one of `SendFailures`).
    ConfirmationsFailed,
    /// Notify passes held back because the team paused the item
    /// (`restock pause --sku`) or all sending (`restock pause`).
    HeldByTeam,
}

impl Metric {
    /// Every metric restock writes.
    pub const ALL: [Metric; 23] = [
        Metric::SignUps,
        Metric::Confirmations,
        Metric::Holds,
        Metric::Purchases,
        Metric::Restocks,
        Metric::RestocksEscalated,
        Metric::NoticesSent,
        Metric::ConfirmationsSent,
        Metric::SendFailures,
        Metric::SendingPaused,
        Metric::HandedOn,
        Metric::PassDuration,
        Metric::OffersLapsed,
        Metric::HoldsReleased,
        Metric::TooManyRequests,
        Metric::Unavailable,
        Metric::UnknownItems,
        Metric::WebhooksRefused,
        Metric::WebhooksUnauthorized,
        Metric::PullErrors,
        Metric::PhraseFallbacks,
        Metric::ConfirmationsFailed,
        Metric::HeldByTeam,
    ];

    /// Its CloudWatch metric name.
    pub fn name(self) -> &'static str {
        match self {
            Metric::SignUps => "SignUps",
            Metric::Confirmations => "Confirmations",
            Metric::Holds => "Holds",
            Metric::Purchases => "Purchases",
            Metric::Restocks => "Restocks",
            Metric::RestocksEscalated => "RestocksEscalated",
            Metric::NoticesSent => "NoticesSent",
            Metric::ConfirmationsSent => "ConfirmationsSent",
            Metric::SendFailures => "SendFailures",
            Metric::SendingPaused => "SendingPaused",
            Metric::HandedOn => "HandedOn",
            Metric::PassDuration => "PassDuration",
            Metric::OffersLapsed => "OffersLapsed",
            Metric::HoldsReleased => "HoldsReleased",
            Metric::TooManyRequests => "TooManyRequests",
            Metric::Unavailable => "Unavailable",
            Metric::UnknownItems => "UnknownItems",
            Metric::WebhooksRefused => "WebhooksRefused",
            Metric::WebhooksUnauthorized => "WebhooksUnauthorized",
            Metric::PullErrors => "PullErrors",
            Metric::PhraseFallbacks => "PhraseFallbacks",
            Metric::ConfirmationsFailed => "ConfirmationsFailed",
            Metric::HeldByTeam => "HeldByTeam",
        }
    }

    /// The dimension it is split by, if any, and every value that takes.
    pub fn dimension(self) -> Option<(&'static str, &'static [&'static str])> {
        match self {
            Metric::SendFailures => Some(("Class", &SEND_FAILURE_CLASSES)),
            Metric::WebhooksRefused => Some(("Reason", &REFUSAL_REASONS)),
            Metric::WebhooksUnauthorized => Some(("Platform", &PLATFORMS)),
            Metric::PullErrors => Some(("Platform", &PULLED_PLATFORMS)),
            Metric::PhraseFallbacks => Some(("Reason", &FALLBACK_REASONS)),
            _ => None,
        }
    }

    fn unit(self) -> metrics::Unit {
        match self {
            Metric::PassDuration => metrics::Unit::Milliseconds,
            _ => metrics::Unit::Count,
        }
    }
}

/// Every `Class` of [`Metric::SendFailures`].
pub const SEND_FAILURE_CLASSES: [&str; 5] =
    ["permanent", "opted_out", "transient", "sender", "unknown"];

fn class(e: &SendError) -> &'static str {
    match e {
        SendError::Permanent(_) => "permanent",
        SendError::OptedOut => "opted_out",
        SendError::Transient(_) => "transient",
        SendError::Sender(_) => "sender",
        SendError::Unknown(_) => "unknown",
    }
}

/// Gives each metric its unit: called once, after a recorder is installed.
pub fn describe() {
    for m in Metric::ALL {
        match m {
            Metric::PassDuration => metrics::describe_histogram!(m.name(), m.unit(), ""),
            _ => metrics::describe_counter!(m.name(), m.unit(), ""),
        }
    }
}

/// Counts `n` of `metric` (nothing when `n` is 0).
pub(crate) fn count(metric: Metric, n: usize) {
    if n > 0 {
        metrics::counter!(metric.name()).increment(n as u64);
    }
}

/// Counts one failed send under its class.
pub(crate) fn send_failed(e: &SendError) {
    metrics::counter!(Metric::SendFailures.name(), "Class" => class(e)).increment(1);
}

/// Every `Platform` of [`Metric::WebhooksUnauthorized`]: each platform's
/// name ([`Platform::name`]).
pub const PLATFORMS: [&str; 3] = [
    Platform::Shopify.name(),
    Platform::WooCommerce.name(),
    Platform::Standard.name(),
];

/// Every `Platform` of [`Metric::PullErrors`]: the platforms with an API
/// the pull reads.
pub const PULLED_PLATFORMS: [&str; 2] = [Platform::Shopify.name(), Platform::WooCommerce.name()];

/// Counts one failed stock pull read on `platform`.
pub(crate) fn pull_failed(platform: Platform) {
    metrics::counter!(Metric::PullErrors.name(), "Platform" => platform.name()).increment(1);
}

/// Every `Reason` of [`Metric::PhraseFallbacks`].
pub const FALLBACK_REASONS: [&str; 3] = ["refused", "unavailable", "slow"];

/// Counts one notice phrase that fell back to the fixed wording, and why
/// (one of [`FALLBACK_REASONS`]).
pub(crate) fn phrase_fell_back(reason: &'static str) {
    metrics::counter!(Metric::PhraseFallbacks.name(), "Reason" => reason).increment(1);
}

/// Every `Reason` of [`Metric::WebhooksRefused`].
pub const REFUSAL_REASONS: [&str; 6] = [
    "signature",
    "timestamp",
    "missing_header",
    "malformed",
    "topic",
    "future",
];

/// Counts one refused webhook delivery under its reason.
pub(crate) fn webhook_refused(
    platform: restock_core::Platform,
    e: &restock_core::webhook::WebhookError,
) {
    use restock_core::webhook::WebhookError;
    if matches!(
        e,
        WebhookError::BadSignature | WebhookError::Timestamp | WebhookError::MissingHeader(_)
    ) {
        metrics::counter!(Metric::WebhooksUnauthorized.name(), "Platform" => platform.name())
            .increment(1);
    }
    let reason = match e {
        WebhookError::BadSignature => "signature",
        WebhookError::Timestamp => "timestamp",
        WebhookError::MissingHeader(_) => "missing_header",
        WebhookError::Malformed(_) => "malformed",
        WebhookError::Topic(_) => "topic",
        WebhookError::FromTheFuture { .. } => "future",
    };
    metrics::counter!(Metric::WebhooksRefused.name(), "Reason" => reason).increment(1);
}

/// Records how long one notify pass took.
pub(crate) fn pass_took(took: Duration) {
    metrics::histogram!(Metric::PassDuration.name()).record(took.as_secs_f64() * 1000.0);
}

/// Counts the refusals a router answers (429 and 503): an axum
/// `map_response` layer on the capture and detect routers.
pub(crate) async fn count_refusals(response: Response) -> Response {
    match response.status() {
        StatusCode::TOO_MANY_REQUESTS => count(Metric::TooManyRequests, 1),
        StatusCode::SERVICE_UNAVAILABLE => count(Metric::Unavailable, 1),
        _ => {}
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_is_a_listed_dimension_value() {
        let names: Vec<_> = restock_core::Platform::ALL
            .iter()
            .map(|p| p.name())
            .collect();
        assert_eq!(names, PLATFORMS);
    }

    #[test]
    fn names_are_unique_and_every_send_error_has_a_listed_class() {
        let names: std::collections::BTreeSet<_> = Metric::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names.len(), Metric::ALL.len());
        for e in [
            SendError::Permanent(String::new()),
            SendError::OptedOut,
            SendError::Transient(String::new()),
            SendError::Sender(String::new()),
            SendError::Unknown(String::new()),
        ] {
            assert!(SEND_FAILURE_CLASSES.contains(&class(&e)), "{e:?}");
        }
    }
}
