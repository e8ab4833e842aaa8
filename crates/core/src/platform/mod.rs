//! The shop platforms restock hears from, as one type.
//!
//! Everything that differs between platforms is reached through
//! [`Platform`]: the name its keys go under in the keys secret, the routes
//! its webhooks arrive on, verifying and parsing a delivery into one
//! [`Delivery`], its item id in the catalogue ([`PlatformIds`]), and a
//! signed test delivery. Each platform's wire format is one module here
//! ([`shopify`], [`woocommerce`], [`standard`]), built on the shared types
//! of [`crate::webhook`] and never imported by them; reading its Admin API
//! for the stock pull is one module in `restock-aws`. Adding a platform is a variant here, its
//! webhook module and (when it has an API to pull from) its API module;
//! `docs/ARCHITECTURE.md` lists the steps.

pub mod shopify;
pub mod standard;
pub mod woocommerce;

use time::OffsetDateTime;

pub use crate::webhook::{
    Delivery, Platform, PlatformIds, Purchase, SignError, SignedDelivery, TestEvent,
};
use crate::webhook::{Headers, Keys, WebhookError, WebhookKeys};

impl Platform {
    /// Its signing keys, decoded, current first.
    ///
    /// # Errors
    /// [`WebhookError::Malformed`] when a generic-format key is not `whsec_`
    /// followed by base64 (never echoing the key).
    pub fn decode_keys(self, listed: &[String]) -> Result<Keys, WebhookError> {
        match self {
            Self::Shopify | Self::WooCommerce => Ok(Keys::raw(listed)),
            Self::Standard => listed
                .iter()
                .map(|k| standard::decode_key(k))
                .collect::<Result<Vec<_>, _>>()
                .map(Keys::raw),
        }
    }

    /// Its keys from the keys secret.
    ///
    /// # Errors
    /// As [`Platform::decode_keys`].
    pub fn keys(self, secret: &WebhookKeys) -> Result<Keys, WebhookError> {
        self.decode_keys(secret.listed(self))
    }

    /// Verifies a delivery that arrived on `route` (one of
    /// [`Platform::routes`]) and reads it. The signature is checked before
    /// anything else is read; a reading or an order dated after `now` by
    /// more than [`crate::webhook::CLOCK_SKEW`] is refused.
    ///
    /// # Errors
    /// [`WebhookError`]: its variant gives the HTTP status.
    pub fn parse(
        self,
        keys: &Keys,
        route: &str,
        headers: &dyn Headers,
        body: &[u8],
        now: OffsetDateTime,
    ) -> Result<Delivery, WebhookError> {
        let delivery = self.read(keys, route, headers, body, now)?;
        match &delivery {
            Delivery::Stock(events) => {
                for event in events {
                    crate::webhook::not_after("the reading", event.at, now)?;
                }
            }
            Delivery::Paid(purchase) => {
                if let Some(placed_at) = purchase.placed_at {
                    crate::webhook::not_after("the order", placed_at, now)?;
                }
            }
            Delivery::NotPaid | Delivery::Ping { .. } | Delivery::Privacy(_) => {}
        }
        Ok(delivery)
    }

    /// [`Platform::parse`] before the times are checked.
    fn read(
        self,
        keys: &Keys,
        route: &str,
        headers: &dyn Headers,
        body: &[u8],
        now: OffsetDateTime,
    ) -> Result<Delivery, WebhookError> {
        match self {
            Self::Shopify if shopify::is_privacy(headers) => {
                shopify::parse_privacy(keys, headers, body).map(Delivery::Privacy)
            }
            Self::Shopify if shopify::is_order(headers) => {
                shopify::parse_order(keys, headers, body).map(Delivery::from)
            }
            Self::Shopify => shopify::parse(keys, headers, body).map(|e| Delivery::Stock(vec![e])),
            Self::WooCommerce if woocommerce::is_order(headers) => {
                woocommerce::parse_order(keys, headers, body).map(Delivery::from)
            }
            Self::WooCommerce => woocommerce::parse(keys, headers, body, now).map(|d| match d {
                woocommerce::Delivery::Ping { webhook_id } => Delivery::Ping { webhook_id },
                woocommerce::Delivery::Stock(event) => Delivery::Stock(vec![event]),
            }),
            Self::Standard if route.ends_with("/orders") => {
                let order = standard::parse_order(keys, headers, body, now)?;
                Ok(Delivery::Paid(Purchase {
                    delivery_id: order.delivery_id,
                    order_id: order.order_id,
                    holds: vec![order.hold],
                    skus: order.skus,
                    prices: order.prices,
                    placed_at: order.placed_at,
                    buyers: Vec::new(),
                }))
            }
            Self::Standard => standard::parse_stock(keys, headers, body, now).map(Delivery::Stock),
        }
    }

    /// A correctly signed test delivery of `event` with `key` (as the keys
    /// secret lists it), delivery id `id`, at `now` (Unix seconds).
    ///
    /// # Errors
    /// [`SignError`] naming what the event lacks for this platform, or a key
    /// that is not in the platform's form.
    pub fn sign_test(
        self,
        event: &TestEvent,
        key: &str,
        id: &str,
        now: i64,
    ) -> Result<SignedDelivery, SignError> {
        let raw = self
            .decode_keys(&[key.to_owned()])
            .map_err(|e| SignError(format!("the {} key: {e}", self.name())))?;
        let key = raw.first().unwrap_or_default();
        match self {
            Self::Shopify => shopify::test_delivery(event, key, id, now),
            Self::WooCommerce => woocommerce::test_delivery(event, key, id, now),
            Self::Standard => standard::test_delivery(event, key, id, now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HoldId;
    use crate::webhook::{Delivery, TestEvent};

    #[test]
    fn every_format_says_what_an_order_sold() {
        let now = OffsetDateTime::from_unix_timestamp(1_795_000_000).unwrap();
        let hold = HoldId::from_random([7; 16]);
        for (platform, key) in [
            (Platform::Shopify, "shopify-test-secret"),
            (Platform::WooCommerce, "woo-test-secret"),
            (Platform::Standard, "whsec_cmVzdG9jay10ZXN0LXN0b2NrLWtleQ=="),
        ] {
            let event = TestEvent::Order {
                hold: hold.to_string(),
                sku: Some("CHAIR-WAL".into()),
            };
            let signed = platform
                .sign_test(&event, key, "msg_1", now.unix_timestamp())
                .unwrap();
            let keys = platform.decode_keys(&[key.to_owned()]).unwrap();
            let delivery = platform
                .parse(
                    &keys,
                    signed.path,
                    &signed.headers,
                    signed.body.as_bytes(),
                    now,
                )
                .unwrap();
            let Delivery::Paid(purchase) = delivery else {
                panic!("{platform}: {delivery:?}")
            };
            assert_eq!(purchase.holds, [hold], "{platform}");
            assert_eq!(
                purchase.skus,
                Some(vec!["CHAIR-WAL".to_owned()]),
                "{platform}"
            );
        }
    }
}
