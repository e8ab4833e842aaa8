//! Inventory webhooks' shared types: signature checks, the keys, and the
//! one event type every platform's delivery is parsed into. Each
//! platform's wire format is a module of [`crate::platform`], built on
//! these and never imported here:
//!
//! - [`crate::platform::shopify`]: `inventory_levels/update`, signed with `X-Shopify-Hmac-Sha256`.
//! - [`crate::platform::woocommerce`]: `product.updated` / `product.created`, signed with
//!   `X-WC-Webhook-Signature`, plus the unsigned creation ping.
//! - [`crate::platform::standard`]: the generic stock and order formats, signed per the
//!   Standard Webhooks spec.
//!
//! Every check compares in constant time and accepts any key of the list
//! (current key first) so keys can be rotated without dropping deliveries.

mod delivery;

pub use delivery::*;

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use time::OffsetDateTime;

use crate::ids::{HoldId, Sku};
use crate::stock::Level;

/// How a delivery names the item whose level changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum ItemRef {
    /// By the shop's SKU.
    Sku {
        /// The SKU.
        sku: Sku,
    },
    /// By a platform's id for it (Shopify's inventory item id,
    /// WooCommerce's product or variation id), with the SKU when the
    /// platform sends one: a catalogued SKU is looked up first.
    Platform {
        /// The platform.
        platform: Platform,
        /// Its id there.
        id: u64,
        /// The item's SKU, when the delivery has one.
        sku: Option<Sku>,
    },
}

impl fmt::Display for ItemRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sku { sku } => write!(f, "SKU {sku}"),
            Self::Platform { platform, id, sku } => {
                write!(f, "{} {} {id}", platform.label(), platform.id_noun())?;
                match sku {
                    Some(sku) => write!(f, " (SKU {sku})"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// One normalised stock-level report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StockEvent {
    /// The delivery's id (plus an index for batches): the dedup key.
    pub delivery_id: String,
    /// The item.
    pub item: ItemRef,
    /// The location the level is for (`default` when the format has none).
    pub location: String,
    /// The level there.
    pub level: Level,
    /// When the shop says the level was true.
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// The delivery carried no time of the platform's own: `at` is when it
    /// was received, and the reading never outranks a timed one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untimed: bool,
}

impl StockEvent {
    /// The location's reading this event reports, for the stock state machine.
    pub fn reading(&self) -> crate::stock::Reading {
        crate::stock::Reading {
            level: self.level,
            at_ms: (self.at.unix_timestamp_nanos() / 1_000_000) as i64,
            untimed: self.untimed,
        }
    }
}

/// A purchase that used a hold (generic signed format).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderEvent {
    /// The delivery's id: the dedup key.
    pub delivery_id: String,
    /// The hold the order used.
    pub hold: HoldId,
    /// The shop's order id, for the record.
    pub order_id: Option<String>,
    /// The SKUs of its line items, when the body lists them.
    pub skus: Option<Vec<String>>,
    /// The unit price of each listed item, where the body gives it and the
    /// order's currency.
    pub prices: std::collections::BTreeMap<String, crate::Money>,
    /// When the order was placed (`at`), if the body says.
    pub placed_at: Option<OffsetDateTime>,
}

/// Why a delivery was refused. The HTTP status follows from the variant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// A required header is missing (400).
    #[error("missing header {0}")]
    MissingHeader(&'static str),
    /// No key of the list produced the signature (401).
    #[error("the signature does not match the body")]
    BadSignature,
    /// The signed timestamp is outside the tolerance (401).
    #[error("the webhook timestamp is more than five minutes from now; replays are refused")]
    Timestamp,
    /// The body is not the format expected (400).
    #[error("malformed payload: {0}")]
    Malformed(String),
    /// A topic this endpoint does not handle (accepted and ignored).
    #[error("topic {0:?} is not handled here")]
    Topic(String),
    /// The body dates its reading or order after restock's clock by more
    /// than [`CLOCK_SKEW`] (422): stored, it would outrank every real
    /// reading after it.
    #[error(
        "{what} is dated {at}, more than five minutes after restock's clock ({now}): the shop's clock is wrong or the body is not the shop's; nothing was applied"
    )]
    FromTheFuture {
        /// Which time: `the reading` or `the order`.
        what: &'static str,
        /// The time the body gives (RFC 3339).
        at: String,
        /// restock's clock (RFC 3339).
        now: String,
    },
}

/// How far after restock's clock a body may date a reading or an order
/// (the shop's clock running ahead): the Standard Webhooks signature's
/// tolerance. Past it the delivery is refused, never stored as the newest.
pub const CLOCK_SKEW: time::Duration = time::Duration::minutes(5);

/// [`WebhookError::FromTheFuture`] when `at` is after `now` by more than
/// [`CLOCK_SKEW`].
///
/// # Errors
/// As above.
pub fn not_after(
    what: &'static str,
    at: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<(), WebhookError> {
    if at - now <= CLOCK_SKEW {
        return Ok(());
    }
    let text = |t: OffsetDateTime| {
        t.format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_else(|_| t.to_string())
    };
    Err(WebhookError::FromTheFuture {
        what,
        at: text(at),
        now: text(now),
    })
}

impl WebhookError {
    /// Whether the sender is at fault for authentication (401) rather than format (400).
    pub fn is_unauthorised(&self) -> bool {
        matches!(self, Self::BadSignature | Self::Timestamp)
    }

    pub(crate) fn malformed(e: impl fmt::Display) -> Self {
        Self::Malformed(e.to_string())
    }
}

/// A paid order, as far as holds are concerned (Shopify, WooCommerce).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaidOrder {
    /// The delivery's id.
    pub delivery_id: String,
    /// The order's id.
    pub order_id: u64,
    /// The holds the order carried (the checkout's `hold`: a Shopify note
    /// attribute, a WooCommerce order meta field).
    pub holds: Vec<crate::ids::HoldId>,
    /// The SKUs of its line items.
    pub skus: Vec<String>,
    /// Who bought: the order's email addresses and phone numbers that
    /// read as contacts (for assisted revenue: never stored).
    pub buyers: Vec<crate::Contact>,
    /// The unit price of each item, where the order says it and its
    /// currency (for the team's revenue figures).
    pub prices: std::collections::BTreeMap<String, crate::Money>,
    /// When the platform says the order was placed (the sale's time, which
    /// the shop's own stock report is compared with), if the payload says.
    pub placed_at: Option<OffsetDateTime>,
}

/// What an order delivery amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderDelivery {
    /// Paid: its holds are bought.
    Paid(PaidOrder),
    /// Not paid yet (created, pending, on hold): nothing to do until it is.
    NotPaid,
}

/// The hold ids among an order's `(name, value)` fields named `hold`; values
/// that are not hold ids are ignored.
pub(crate) fn holds_in<'a>(
    fields: impl Iterator<Item = (&'a str, &'a serde_json::Value)>,
) -> Vec<crate::ids::HoldId> {
    fields
        .filter(|(name, _)| name.eq_ignore_ascii_case("hold"))
        .filter_map(|(_, value)| value.as_str())
        .filter_map(|v| v.trim().parse().ok())
        .collect()
}

/// The contacts among an order's addresses and numbers (those that do not
/// read as one are left out), each once.
pub(crate) fn buyers_in<'a>(
    emails: impl IntoIterator<Item = Option<&'a str>>,
    phones: impl IntoIterator<Item = Option<&'a str>>,
) -> Vec<crate::Contact> {
    use crate::contact::{Channel, Contact};
    let mut buyers: Vec<Contact> = Vec::new();
    let found = emails
        .into_iter()
        .flatten()
        .filter_map(|e| Contact::on(Channel::Email, e).ok())
        .chain(
            phones
                .into_iter()
                .flatten()
                .filter_map(|p| Contact::on(Channel::Sms, p).ok()),
        );
    for contact in found {
        if !buyers.contains(&contact) {
            buyers.push(contact);
        }
    }
    buyers
}

/// An order's line item, as both platforms write it.
#[derive(Deserialize)]
pub(crate) struct LineItem {
    #[serde(default)]
    sku: Option<String>,
    /// The unit price: a decimal string (Shopify) or a number (WooCommerce).
    #[serde(default)]
    price: Option<serde_json::Value>,
}

/// The SKUs of an order's line items (items without one are left out), and
/// the unit price of each in `currency` where both are given.
pub(crate) fn lines_in(
    items: Vec<LineItem>,
    currency: Option<&str>,
) -> (
    Vec<String>,
    std::collections::BTreeMap<String, crate::Money>,
) {
    let mut prices = std::collections::BTreeMap::new();
    let mut skus = Vec::new();
    for line in items {
        let Some(sku) = line.sku else { continue };
        // Keyed as the catalogue keys it (`Sku::from_shop`).
        let sku = crate::Sku::from_shop(&sku).map_or(sku, String::from);
        let price = match &line.price {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            // WooCommerce's is a float, often with a long tail when the
            // shop's prices include tax (16.528925619834713): to the
            // thousandth.
            Some(serde_json::Value::Number(n)) => n.as_f64().map(|f| format!("{f:.3}")),
            _ => None,
        };
        if let Some(money) = currency
            .zip(price)
            .and_then(|(c, p)| crate::Money::parse(c, &p))
        {
            prices.entry(sku.clone()).or_insert(money);
        }
        skus.push(sku);
    }
    (skus, prices)
}

/// Signing keys for one source, current first. Never printed.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Keys(Vec<Vec<u8>>);

impl Keys {
    /// Keys used as raw bytes (Shopify, WooCommerce).
    pub fn raw<I, K>(keys: I) -> Self
    where
        I: IntoIterator<Item = K>,
        K: AsRef<[u8]>,
    {
        Self(keys.into_iter().map(|k| k.as_ref().to_vec()).collect())
    }

    /// Whether there is no key at all (every delivery will be refused).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.0.iter().map(Vec::as_slice)
    }

    /// The current key.
    pub(crate) fn first(&self) -> Option<&[u8]> {
        self.0.first().map(Vec::as_slice)
    }
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Keys({} redacted)", self.0.len())
    }
}

/// The webhook keys secret: one list per platform, under its
/// [`Platform::name`], current key first.
#[derive(Clone, Default)]
pub struct WebhookKeys(BTreeMap<Platform, Vec<String>>);

impl fmt::Debug for WebhookKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for platform in Platform::ALL {
            map.entry(&platform.name(), &self.listed(platform).len());
        }
        map.finish()
    }
}

impl WebhookKeys {
    /// Reads the secret's JSON value (other keys in it are left alone).
    ///
    /// # Errors
    /// [`WebhookError::Malformed`] for bad JSON, a list that is not of
    /// strings, or a generic-format key that is not `whsec_` followed by
    /// base64 (the message never contains a key).
    pub fn from_json(json: &str) -> Result<Self, WebhookError> {
        let secret: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json)
            .map_err(|e| {
                WebhookError::Malformed(format!("webhook keys secret: {}", e.classify_name()))
            })?;
        let mut keys = Self::default();
        for platform in Platform::ALL {
            let Some(listed) = secret.get(platform.name()) else {
                continue;
            };
            let listed: Vec<String> = serde_json::from_value(listed.clone()).map_err(|_| {
                WebhookError::Malformed(format!(
                    "webhook keys secret: `{}` must be a list of keys",
                    platform.name()
                ))
            })?;
            platform.decode_keys(&listed)?;
            keys.0.insert(platform, listed);
        }
        Ok(keys)
    }

    /// The keys listed for `platform`, as the secret has them.
    pub fn listed(&self, platform: Platform) -> &[String] {
        self.0.get(&platform).map_or(&[], Vec::as_slice)
    }

    /// Sets `platform`'s keys (local mode and tests).
    pub fn set(&mut self, platform: Platform, keys: Vec<String>) {
        self.0.insert(platform, keys);
    }
}

trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "unreadable",
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                "not valid JSON"
            }
            serde_json::error::Category::Data => "expected a JSON object",
        }
    }
}

/// base64(HMAC-SHA256(key, message)).
pub(crate) fn hmac_b64(key: &[u8], parts: &[&[u8]]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    for p in parts {
        mac.update(p);
    }
    B64.encode(mac.finalize().into_bytes())
}

/// Checks a base64 signature against every key in constant time.
pub(crate) fn verify_b64(
    keys: &Keys,
    parts: &[&[u8]],
    signature_b64: &str,
) -> Result<(), WebhookError> {
    let given = B64
        .decode(signature_b64.trim())
        .map_err(|_| WebhookError::BadSignature)?;
    for key in keys.iter() {
        let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
        for p in parts {
            mac.update(p);
        }
        if mac.verify_slice(&given).is_ok() {
            return Ok(());
        }
    }
    Err(WebhookError::BadSignature)
}

/// Header lookup by case-insensitive name, as a closure over the request's headers.
pub trait Headers {
    /// The first value of header `name`, if present and valid UTF-8.
    fn header(&self, name: &str) -> Option<&str>;
}

impl<S: AsRef<str>, T: AsRef<str>> Headers for [(S, T)] {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }
}

impl<S: AsRef<str>, T: AsRef<str>> Headers for Vec<(S, T)> {
    fn header(&self, name: &str) -> Option<&str> {
        self.as_slice().header(name)
    }
}

pub(crate) fn required<'h>(
    headers: &'h (impl Headers + ?Sized),
    name: &'static str,
) -> Result<&'h str, WebhookError> {
    headers
        .header(name)
        .filter(|v| !v.trim().is_empty())
        .ok_or(WebhookError::MissingHeader(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_up_to_five_minutes_ahead_is_taken_and_one_past_it_refused() {
        let now = OffsetDateTime::from_unix_timestamp(1_795_000_000).unwrap();
        let ms = time::Duration::milliseconds;
        for fine in [now - time::Duration::days(400), now, now + CLOCK_SKEW] {
            assert_eq!(not_after("the reading", fine, now), Ok(()), "{fine}");
        }
        let e = not_after("the order", now + CLOCK_SKEW + ms(1), now).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the order is dated 2026-11-18T11:11:40.001Z, more than five minutes after restock's clock (2026-11-18T11:06:40Z): the shop's clock is wrong or the body is not the shop's; nothing was applied"
        );
        assert!(!e.is_unauthorised());
    }

    #[test]
    fn keys_never_show_in_debug_or_errors() {
        let keys =
            WebhookKeys::from_json(r#"{"shopify":["shpss_topsecret"],"stock":["whsec_c2VjcmV0"]}"#)
                .unwrap();
        assert!(!format!("{keys:?}").contains("topsecret"));
        assert!(!format!("{:?}", Platform::Shopify.keys(&keys).unwrap()).contains("topsecret"));
        let err = WebhookKeys::from_json(r#"{"stock":["not-a-whsec-topsecret"]}"#).unwrap_err();
        assert!(!err.to_string().contains("topsecret"));
        assert!(WebhookKeys::from_json("[").is_err());
    }

    #[test]
    fn keys_are_read_per_platform_current_first_and_counted_not_shown() {
        let mut secret =
            WebhookKeys::from_json(r#"{"shopify":["new","old"],"unrelated":1}"#).unwrap();
        assert_eq!(secret.listed(Platform::Shopify), ["new", "old"]);
        assert!(secret.listed(Platform::WooCommerce).is_empty());
        secret.set(Platform::WooCommerce, vec!["wc".into()]);
        assert_eq!(secret.listed(Platform::WooCommerce), ["wc"]);
        assert_eq!(
            format!("{secret:?}"),
            r#"{"shopify": 2, "woocommerce": 1, "stock": 0}"#
        );
        let shopify = Platform::Shopify.keys(&secret).unwrap();
        assert!(!shopify.is_empty() && Keys::default().is_empty());
        assert_eq!(shopify.first(), Some(&b"new"[..]), "the current key signs");
        assert_eq!(format!("{shopify:?}"), "Keys(2 redacted)");
        let error = |json| WebhookKeys::from_json(json).unwrap_err().to_string();
        assert_eq!(
            error("{"),
            "malformed payload: webhook keys secret: not valid JSON"
        );
        assert_eq!(
            error("[]"),
            "malformed payload: webhook keys secret: expected a JSON object"
        );
    }

    #[test]
    fn a_reading_is_taken_at_the_event_s_millisecond() {
        let event = StockEvent {
            delivery_id: "d1".into(),
            item: ItemRef::Sku {
                sku: "CHAIR-WAL".parse().unwrap(),
            },
            location: "default".into(),
            level: Level::Tracked(4),
            at: OffsetDateTime::from_unix_timestamp_nanos(1_767_225_600_123_456_789).unwrap(),
            untimed: false,
        };
        assert_eq!(event.reading().at_ms, 1_767_225_600_123);
        assert_eq!(event.item.to_string(), "SKU CHAIR-WAL");
    }

    #[test]
    fn only_signature_and_timestamp_failures_are_unauthorised() {
        assert!(WebhookError::BadSignature.is_unauthorised());
        assert!(WebhookError::Timestamp.is_unauthorised());
        assert!(!WebhookError::malformed("no level").is_unauthorised());
    }
}
