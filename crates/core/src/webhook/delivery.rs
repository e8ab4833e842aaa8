//! What a delivery amounts to, whatever the platform: the [`Platform`]
//! it came from (its names, routes and catalogue column), one
//! [`Delivery`], an item's [`PlatformIds`], and a signed test delivery's
//! shape. Each platform's module (`crate::platform::*`) builds these from
//! its wire format; nothing here names a platform's module.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{OrderDelivery, StockEvent};
use crate::ids::HoldId;

/// A source of stock and order webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Shopify: `inventory_levels/update` and the order topics.
    Shopify,
    /// WooCommerce: `product.*` and `order.*`.
    #[serde(rename = "woocommerce")]
    WooCommerce,
    /// Any shop, through the generic formats signed per Standard Webhooks.
    #[serde(rename = "stock")]
    Standard,
}

/// What one verified delivery amounts to, whatever the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Stock levels (one, or a batch).
    Stock(Vec<StockEvent>),
    /// A paid order: its holds are bought.
    Paid(Purchase),
    /// An order not paid yet: nothing to do until it is.
    NotPaid,
    /// The platform checking the endpoint exists (WooCommerce's creation ping).
    Ping {
        /// The platform's webhook id.
        webhook_id: u64,
    },
    /// A privacy request the platform forwards (Shopify's compliance
    /// topics).
    Privacy(PrivacyRequest),
}

/// A privacy request a platform forwards for a customer or the shop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrivacyRequest {
    /// Erase what is held about a customer (`customers/redact`).
    Erase {
        /// The customer's addresses and numbers, as the platform has them.
        customer: Vec<crate::Contact>,
        /// The platform's id for the customer, for the record.
        customer_id: Option<u64>,
    },
    /// Tell the shop what is held about a customer
    /// (`customers/data_request`).
    Report {
        /// The customer's addresses and numbers, as the platform has them.
        customer: Vec<crate::Contact>,
        /// The platform's id for the customer.
        customer_id: Option<u64>,
        /// The platform's id for the request.
        request_id: Option<u64>,
    },
    /// Erase the shop's data (`shop/redact`, 48 hours after the app is
    /// uninstalled).
    Shop {
        /// The shop's domain.
        domain: String,
    },
}

/// A paid order, as far as holds are concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purchase {
    /// The delivery's id.
    pub delivery_id: String,
    /// The shop's order id, for the record.
    pub order_id: Option<String>,
    /// The holds the order used.
    pub holds: Vec<HoldId>,
    /// The SKUs of its line items, when the format lists them (a hold whose
    /// item is not among them is left alone).
    pub skus: Option<Vec<String>>,
    /// The unit price of each item, where the format says (the team's
    /// revenue figures).
    pub prices: std::collections::BTreeMap<String, crate::Money>,
    /// When the order was placed, if the payload says.
    pub placed_at: Option<OffsetDateTime>,
    /// Who bought, where the format says (Shopify's and WooCommerce's
    /// orders): for assisted revenue, never stored.
    pub buyers: Vec<crate::Contact>,
}

/// What a test delivery reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestEvent {
    /// A stock level.
    Stock {
        /// The platform's id for the item (Shopify, WooCommerce).
        id: Option<u64>,
        /// The SKU (the generic format; WooCommerce's product SKU).
        sku: Option<String>,
        /// The level.
        level: i64,
        /// The location (Shopify: a location id; the generic format: a name).
        location: Option<String>,
    },
    /// A paid order that used a hold.
    Order {
        /// The hold id from the checkout URL.
        hold: String,
        /// The item bought.
        sku: Option<String>,
    },
}

/// A signed delivery, ready to post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedDelivery {
    /// The path under the detect URL (`/webhooks/...`).
    pub path: &'static str,
    /// Headers, signature included.
    pub headers: Vec<(&'static str, String)>,
    /// The exact body that was signed.
    pub body: String,
}

/// Why a test delivery could not be signed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SignError(pub String);

impl Platform {
    /// Every platform.
    pub const ALL: [Self; 3] = [Self::Shopify, Self::WooCommerce, Self::Standard];

    /// The name its keys go under in the keys secret, and its route's last
    /// segment: `shopify`, `woocommerce`, `stock`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Shopify => "shopify",
            Self::WooCommerce => "woocommerce",
            Self::Standard => "stock",
        }
    }

    /// The platform a name (as [`Platform::name`] gives it) stands for.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// How people name it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Shopify => "Shopify",
            Self::WooCommerce => "WooCommerce",
            Self::Standard => "the generic format",
        }
    }

    /// The routes its deliveries arrive on.
    pub fn routes(self) -> &'static [&'static str] {
        match self {
            Self::Shopify => &["/webhooks/shopify"],
            Self::WooCommerce => &["/webhooks/woocommerce"],
            Self::Standard => &["/webhooks/stock", "/webhooks/orders"],
        }
    }

    /// The catalogue column with the platform's id for an item, when items
    /// have one there.
    pub fn id_column(self) -> Option<&'static str> {
        match self {
            Self::Shopify => Some("shopify_inventory_item_id"),
            Self::WooCommerce => Some("woocommerce_product_id"),
            Self::Standard => None,
        }
    }

    /// What the platform's id names, as people say it.
    pub fn id_noun(self) -> &'static str {
        match self {
            Self::Shopify => "inventory item",
            Self::WooCommerce => "product",
            Self::Standard => "item",
        }
    }

    /// The key in the keys secret holding its Admin API access (for the
    /// stock pull), when the platform has one.
    pub fn api_secret_key(self) -> Option<&'static str> {
        match self {
            Self::Shopify => Some("shopify_admin"),
            Self::WooCommerce => Some("woocommerce_api"),
            Self::Standard => None,
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<OrderDelivery> for Delivery {
    fn from(order: OrderDelivery) -> Self {
        match order {
            OrderDelivery::Paid(order) => Self::Paid(Purchase {
                delivery_id: order.delivery_id,
                order_id: Some(order.order_id.to_string()),
                holds: order.holds,
                skus: Some(order.skus),
                prices: order.prices,
                placed_at: order.placed_at,
                buyers: order.buyers,
            }),
            OrderDelivery::NotPaid => Self::NotPaid,
        }
    }
}

/// An item's id on each platform that has one: the catalogue's id columns.
/// Serialised as those columns (`shopify_inventory_item_id`, …), so a
/// catalogue entry reads as it always has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlatformIds(BTreeMap<Platform, u64>);

impl PlatformIds {
    /// The item's id on `platform`.
    pub fn get(&self, platform: Platform) -> Option<u64> {
        self.0.get(&platform).copied()
    }

    /// Sets (or, with `None`, clears) the item's id on `platform`.
    pub fn set(&mut self, platform: Platform, id: Option<u64>) {
        match id {
            Some(id) => self.0.insert(platform, id),
            None => self.0.remove(&platform),
        };
    }

    /// Each platform with its id, in the platforms' order.
    pub fn iter(&self) -> impl Iterator<Item = (Platform, u64)> + '_ {
        self.0.iter().map(|(p, id)| (*p, *id))
    }
}

impl Serialize for PlatformIds {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for platform in Platform::ALL {
            if let Some(column) = platform.id_column() {
                map.serialize_entry(column, &self.get(platform))?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for PlatformIds {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = BTreeMap::<String, serde_json::Value>::deserialize(deserializer)?;
        let mut ids = Self::default();
        for platform in Platform::ALL {
            let Some(value) = platform.id_column().and_then(|c| fields.get(c)) else {
                continue;
            };
            if value.is_null() {
                continue;
            }
            let id = value.as_u64().ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "{} is not a whole number",
                    platform.id_column().unwrap_or_default()
                ))
            })?;
            ids.set(platform, Some(id));
        }
        Ok(ids)
    }
}

/// A stand-in order number, stable for one delivery id (test deliveries).
pub(crate) fn order_number(id: &str) -> u64 {
    id.bytes().fold(1_000_u64, |n, b| {
        n.wrapping_mul(31).wrapping_add(u64::from(b))
    }) % 1_000_000_000
}

/// `now` (Unix seconds) as RFC 3339 (test deliveries).
pub(crate) fn rfc3339(unix: i64) -> String {
    crate::rfc3339(unix.saturating_mul(1000))
}

/// The headers every JSON delivery carries, then the platform's own.
pub(crate) fn json_headers(extra: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    let mut headers = vec![("content-type", "application/json".to_owned())];
    headers.extend(extra);
    headers
}

/// What a test event lacks for a platform.
pub(crate) fn needs(what: &str, platform: Platform) -> SignError {
    SignError(format!("--{what} is required for {}", platform.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for p in Platform::ALL {
            assert_eq!(Platform::from_name(p.name()), Some(p));
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        assert_eq!(Platform::from_name("bigcommerce"), None);
    }

    #[test]
    fn ids_read_and_write_the_catalogue_columns() {
        let mut ids = PlatformIds::default();
        ids.set(Platform::Shopify, Some(44_120_133_468_435));
        let json = serde_json::to_value(&ids).unwrap();
        assert_eq!(json["shopify_inventory_item_id"], 44_120_133_468_435_u64);
        assert!(json["woocommerce_product_id"].is_null());
        let back: PlatformIds = serde_json::from_value(json).unwrap();
        assert_eq!(back, ids);
        let bad = serde_json::json!({ "woocommerce_product_id": "x" });
        assert!(serde_json::from_value::<PlatformIds>(bad).is_err());
    }
}
