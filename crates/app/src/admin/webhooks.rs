//! Correctly signed test deliveries in each format detect accepts, for curl
//! (`restock sign-webhook`) and for the local demo's buttons.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use restock_core::webhook::{shopify, standard, woocommerce};
use serde_json::json;

/// A delivery ready to post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The path under the detect URL (`/webhooks/...`).
    pub path: &'static str,
    /// Headers, signature included.
    pub headers: Vec<(&'static str, String)>,
    /// The exact body that was signed.
    pub body: String,
}

impl Delivery {
    /// A curl command that posts it to `base` (the detect URL).
    pub fn curl(&self, base: &str) -> String {
        let mut out = format!(
            "curl -sS -X POST '{}{}'",
            base.trim_end_matches('/'),
            self.path
        );
        for (name, value) in &self.headers {
            out.push_str(&format!(" \\\n  -H '{name}: {value}'"));
        }
        out.push_str(&format!(
            " \\\n  --data-raw '{}'",
            self.body.replace('\'', r"'\''")
        ));
        out
    }
}

/// What to sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hook {
    /// Shopify `inventory_levels/update`.
    Shopify {
        /// The inventory item id.
        inventory_item_id: u64,
        /// The location.
        location_id: u64,
        /// Units available there.
        available: i64,
    },
    /// WooCommerce `product.updated`.
    WooCommerce {
        /// The product or variation id.
        product_id: u64,
        /// Its SKU, if any.
        sku: Option<String>,
        /// Stock quantity.
        stock: i64,
    },
    /// Standard Webhooks stock level.
    Stock {
        /// The SKU.
        sku: String,
        /// The level.
        level: i64,
        /// The location.
        location: Option<String>,
    },
    /// Shopify `orders/paid` for an order that used a hold.
    ShopifyOrder {
        /// The hold id from the checkout URL.
        hold: String,
        /// The item bought.
        sku: Option<String>,
    },
    /// WooCommerce `order.updated`, paid (`processing`), that used a hold.
    WooCommerceOrder {
        /// The hold id from the checkout URL.
        hold: String,
        /// The item bought.
        sku: Option<String>,
    },
    /// Standard Webhooks purchase that used a hold.
    Order {
        /// The hold id from the checkout URL.
        hold: String,
        /// The shop's order id.
        order_id: Option<String>,
    },
}

/// Why a delivery could not be signed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SignError(String);

fn rfc3339(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// Signs `hook` with `key` at `now` (Unix seconds); `id` is the delivery id.
///
/// # Errors
/// [`SignError`] when a Standard Webhooks key is not `whsec_` + base64.
pub fn sign(hook: &Hook, key: &str, id: &str, now: i64) -> Result<Delivery, SignError> {
    let json_headers = |extra: Vec<(&'static str, String)>| {
        let mut h = vec![("content-type", "application/json".to_owned())];
        h.extend(extra);
        h
    };
    Ok(match hook {
        Hook::Shopify {
            inventory_item_id,
            location_id,
            available,
        } => {
            let body = json!({
                "inventory_item_id": inventory_item_id, "location_id": location_id,
                "available": available, "updated_at": rfc3339(now),
            })
            .to_string();
            Delivery {
                path: "/webhooks/shopify",
                headers: json_headers(vec![
                    ("x-shopify-topic", "inventory_levels/update".into()),
                    ("x-shopify-webhook-id", id.to_owned()),
                    (
                        "x-shopify-hmac-sha256",
                        shopify::sign(key.as_bytes(), body.as_bytes()),
                    ),
                ]),
                body,
            }
        }
        Hook::WooCommerce {
            product_id,
            sku,
            stock,
        } => {
            let modified = rfc3339(now);
            let body = json!({
                "id": product_id, "sku": sku.clone().unwrap_or_default(), "manage_stock": true,
                "stock_quantity": stock, "stock_status": if *stock > 0 { "instock" } else { "outofstock" },
                "date_modified_gmt": modified.trim_end_matches('Z'),
            })
            .to_string();
            Delivery {
                path: "/webhooks/woocommerce",
                headers: json_headers(vec![
                    ("x-wc-webhook-topic", "product.updated".into()),
                    ("x-wc-webhook-delivery-id", id.to_owned()),
                    (
                        "x-wc-webhook-signature",
                        woocommerce::sign(key.as_bytes(), body.as_bytes()),
                    ),
                ]),
                body,
            }
        }
        Hook::ShopifyOrder { hold, sku } => {
            let body = json!({
                "id": order_number(id), "financial_status": "paid",
                "note_attributes": [{ "name": "hold", "value": hold }],
                "line_items": [{ "sku": sku, "quantity": 1 }],
            })
            .to_string();
            Delivery {
                path: "/webhooks/shopify",
                headers: json_headers(vec![
                    ("x-shopify-topic", "orders/paid".into()),
                    ("x-shopify-webhook-id", id.to_owned()),
                    (
                        "x-shopify-hmac-sha256",
                        shopify::sign(key.as_bytes(), body.as_bytes()),
                    ),
                ]),
                body,
            }
        }
        Hook::WooCommerceOrder { hold, sku } => {
            let body = json!({
                "id": order_number(id), "status": "processing",
                "meta_data": [{ "id": 1, "key": "hold", "value": hold }],
                "line_items": [{ "sku": sku, "quantity": 1 }],
            })
            .to_string();
            Delivery {
                path: "/webhooks/woocommerce",
                headers: json_headers(vec![
                    ("x-wc-webhook-topic", "order.updated".into()),
                    ("x-wc-webhook-delivery-id", id.to_owned()),
                    (
                        "x-wc-webhook-signature",
                        woocommerce::sign(key.as_bytes(), body.as_bytes()),
                    ),
                ]),
                body,
            }
        }
        Hook::Stock {
            sku,
            level,
            location,
        } => {
            let mut entry = json!({ "sku": sku, "level": level, "at": rfc3339(now) });
            if let Some(location) = location {
                entry["location"] = json!(location);
            }
            standard_delivery("/webhooks/stock", entry.to_string(), key, id, now)?
        }
        Hook::Order { hold, order_id } => {
            let mut body = json!({ "hold": hold });
            if let Some(order) = order_id {
                body["order_id"] = json!(order);
            }
            standard_delivery("/webhooks/orders", body.to_string(), key, id, now)?
        }
    })
}

/// A stand-in order number, stable for one delivery id.
fn order_number(id: &str) -> u64 {
    id.bytes().fold(1_000_u64, |n, b| {
        n.wrapping_mul(31).wrapping_add(u64::from(b))
    }) % 1_000_000_000
}

fn standard_delivery(
    path: &'static str,
    body: String,
    key: &str,
    id: &str,
    now: i64,
) -> Result<Delivery, SignError> {
    let raw = standard::decode_key(key).map_err(|e| {
        SignError(format!(
            "the stock key must be whsec_ followed by base64 ({e})"
        ))
    })?;
    let signature = standard::sign(&raw, id, now, body.as_bytes());
    Ok(Delivery {
        path,
        headers: vec![
            ("content-type", "application/json".to_owned()),
            ("webhook-id", id.to_owned()),
            ("webhook-timestamp", now.to_string()),
            ("webhook-signature", signature),
        ],
        body,
    })
}

/// A fresh delivery id from 12 random bytes.
pub fn delivery_id(random: [u8; 16]) -> String {
    format!(
        "msg_{}",
        STANDARD.encode(&random[..12]).replace(['+', '/'], "x")
    )
}
