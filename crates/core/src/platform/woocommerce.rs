//! WooCommerce's `product.created` / `product.updated` webhooks.
//!
//! WooCommerce signs the raw body with `X-WC-Webhook-Signature` (base64
//! HMAC-SHA256 with the webhook's secret) and names the delivery in
//! `X-WC-Webhook-Delivery-ID`. Variations arrive as products of type
//! `variation` with their own SKU. When a webhook is created WooCommerce posts
//! an unsigned, form-encoded ping (`webhook_id=N`), which is answered and
//! otherwise ignored.
//!
//! Orders (`order.created`, `order.updated`) end the holds they carry once
//! paid (`processing` or `completed`): the hold is the order's `hold` meta
//! field, which the checkout snippet in docs/DEPLOY.md puts there.

use serde::Deserialize;
use sha2::{Digest, Sha256};
use time::{OffsetDateTime, PrimitiveDateTime, macros::format_description};

use crate::ids::{Sku, hex};
use crate::stock::Level;
use crate::webhook::{
    Headers, ItemRef, Keys, OrderDelivery, PaidOrder, StockEvent, WebhookError, hmac_b64, required,
    verify_b64,
};
use crate::webhook::{
    Platform, SignError, SignedDelivery, TestEvent, json_headers, needs, order_number, rfc3339,
};

/// The signature header.
pub const SIGNATURE: &str = "X-WC-Webhook-Signature";
/// The delivery id header.
pub const DELIVERY_ID: &str = "X-WC-Webhook-Delivery-ID";
/// The topic header.
pub const TOPIC: &str = "X-WC-Webhook-Topic";

/// What one delivery was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The ping sent when the webhook is created.
    Ping {
        /// WooCommerce's webhook id.
        webhook_id: u64,
    },
    /// A product's stock.
    Stock(StockEvent),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ManageStock {
    Flag(bool),
    /// `"parent"` on a variation whose stock the parent product manages:
    /// the parent's own delivery carries the count.
    Other(#[allow(dead_code)] String),
}

#[derive(Deserialize)]
struct Product {
    id: u64,
    #[serde(default)]
    sku: String,
    manage_stock: Option<ManageStock>,
    stock_quantity: Option<i64>,
    date_modified_gmt: Option<String>,
}

#[derive(Deserialize)]
struct MetaField {
    key: String,
    #[serde(default)]
    value: serde_json::Value,
}

#[derive(Deserialize)]
struct Order {
    id: u64,
    status: String,
    /// WooCommerce reduces stock when an order is paid (or created, for
    /// payment on delivery): the sale's time is the first of these present.
    #[serde(default)]
    date_paid_gmt: Option<String>,
    #[serde(default)]
    date_created_gmt: Option<String>,
    #[serde(default)]
    meta_data: Vec<MetaField>,
    #[serde(default)]
    line_items: Vec<crate::webhook::LineItem>,
    /// The order's currency, which the line items' prices are in.
    #[serde(default)]
    currency: Option<String>,
    /// The billing contact: the buyer's address and number.
    #[serde(default)]
    billing: Option<Billing>,
}

/// An order's billing details, as far as the buyer's contacts go.
#[derive(Deserialize)]
struct Billing {
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    phone: Option<String>,
}

/// Whether a delivery's topic is an order topic (`order.…`).
pub fn is_order(headers: &(impl Headers + ?Sized)) -> bool {
    headers
        .header(TOPIC)
        .is_some_and(|t| t.starts_with("order."))
}

/// Verifies and parses an order delivery (`order.created`, `order.updated`).
///
/// # Errors
/// [`WebhookError::BadSignature`] before anything else is read; then missing
/// headers, another topic, or a malformed payload.
pub fn parse_order(
    keys: &Keys,
    headers: &(impl Headers + ?Sized),
    body: &[u8],
) -> Result<OrderDelivery, WebhookError> {
    verify_b64(keys, &[body], required(headers, SIGNATURE)?)?;
    let topic = required(headers, TOPIC)?;
    if !matches!(topic, "order.created" | "order.updated") {
        return Err(WebhookError::Topic(topic.to_owned()));
    }
    let order: Order = serde_json::from_slice(body).map_err(WebhookError::malformed)?;
    if !matches!(order.status.as_str(), "processing" | "completed") {
        return Ok(OrderDelivery::NotPaid);
    }
    let delivery_id = headers
        .header(DELIVERY_ID)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map_or_else(
            || format!("body:{}", hex(&Sha256::digest(body))),
            str::to_owned,
        );
    let billing = order.billing.as_ref();
    let buyers = crate::webhook::buyers_in(
        [billing.and_then(|b| b.email.as_deref())],
        [billing.and_then(|b| b.phone.as_deref())],
    );
    let (skus, prices) = crate::webhook::lines_in(order.line_items, order.currency.as_deref());
    Ok(OrderDelivery::Paid(PaidOrder {
        delivery_id,
        order_id: order.id,
        holds: crate::webhook::holds_in(order.meta_data.iter().map(|m| (m.key.as_str(), &m.value))),
        buyers,
        skus,
        prices,
        placed_at: order
            .date_paid_gmt
            .or(order.date_created_gmt)
            .as_deref()
            .and_then(|t| gmt(t).ok()),
    }))
}

/// Computes the signature header's value (for tests and the CLI).
pub fn sign(key: &[u8], body: &[u8]) -> String {
    hmac_b64(key, &[body])
}

/// Verifies and parses one delivery; `now` stands in when the product carries
/// no modification time.
///
/// # Errors
/// [`WebhookError::BadSignature`] before anything else is read; then missing
/// headers, an unhandled topic, or a malformed payload.
pub fn parse(
    keys: &Keys,
    headers: &(impl Headers + ?Sized),
    body: &[u8],
    now: OffsetDateTime,
) -> Result<Delivery, WebhookError> {
    if headers.header(SIGNATURE).is_none()
        && let Some(webhook_id) = ping_id(body)
    {
        return Ok(Delivery::Ping { webhook_id });
    }
    verify_b64(keys, &[body], required(headers, SIGNATURE)?)?;
    if let Some(topic) = headers.header(TOPIC)
        && !matches!(topic, "product.updated" | "product.created")
    {
        return Err(WebhookError::Topic(topic.to_owned()));
    }
    let delivery_id = match headers
        .header(DELIVERY_ID)
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        Some(id) => id.to_owned(),
        // Older WooCommerce versions omit the id; the body's hash still dedups retries.
        None => format!("body:{}", hex(&Sha256::digest(body))),
    };
    let product: Product = serde_json::from_slice(body).map_err(WebhookError::malformed)?;
    let sku = match product.sku.trim() {
        "" => None,
        s => Some(Sku::from_shop(s).map_err(|e| WebhookError::Malformed(format!("sku: {e}")))?),
    };
    let level = match product.manage_stock {
        Some(ManageStock::Flag(true)) => Level::from_reported(product.stock_quantity),
        _ => Level::Untracked,
    };
    // Without the product's own time the reading is timed on arrival and
    // ranks below every timed one (a replay must not read as fresh).
    let (at, untimed) = match product.date_modified_gmt.as_deref() {
        Some(text) => (
            gmt(text).map_err(|_| {
                WebhookError::Malformed("date_modified_gmt is not YYYY-MM-DDTHH:MM:SS".into())
            })?,
            false,
        ),
        None => (now, true),
    };
    Ok(Delivery::Stock(StockEvent {
        delivery_id,
        item: ItemRef::Platform {
            platform: Platform::WooCommerce,
            id: product.id,
            sku,
        },
        location: "default".to_owned(),
        level,
        at,
        untimed,
    }))
}

/// WooCommerce's `*_gmt` dates: `YYYY-MM-DDTHH:MM:SS`, UTC, whole seconds.
fn gmt(text: &str) -> Result<OffsetDateTime, time::error::Parse> {
    let format = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
    PrimitiveDateTime::parse(text, format).map(PrimitiveDateTime::assume_utc)
}

fn ping_id(body: &[u8]) -> Option<u64> {
    let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(body).ok()?;
    match fields.as_slice() {
        [(name, id)] if name == "webhook_id" => id.parse().ok(),
        _ => None,
    }
}

/// A signed test delivery: `product.updated`, or `order.updated` (paid,
/// `processing`) for an order that used a hold.
pub(crate) fn test_delivery(
    event: &TestEvent,
    key: &[u8],
    id: &str,
    now: i64,
) -> Result<SignedDelivery, SignError> {
    let (topic, body) = match event {
        TestEvent::Stock {
            id: product,
            sku,
            level,
            ..
        } => {
            let product =
                product.ok_or_else(|| needs("id (the product id)", Platform::WooCommerce))?;
            let modified = rfc3339(now);
            let body = serde_json::json!({
                "id": product, "sku": sku.clone().unwrap_or_default(), "manage_stock": true,
                "stock_quantity": level, "stock_status": if *level > 0 { "instock" } else { "outofstock" },
                "date_modified_gmt": modified.trim_end_matches('Z'),
            });
            ("product.updated", body)
        }
        TestEvent::Order { hold, sku } => {
            let body = serde_json::json!({
                "id": order_number(id), "status": "processing",
                "meta_data": [{ "id": 1, "key": "hold", "value": hold }],
                "line_items": [{ "sku": sku, "quantity": 1 }],
            });
            ("order.updated", body)
        }
    };
    let body = body.to_string();
    Ok(SignedDelivery {
        path: Platform::WooCommerce.routes()[0],
        headers: json_headers(vec![
            ("x-wc-webhook-topic", topic.into()),
            ("x-wc-webhook-delivery-id", id.to_owned()),
            ("x-wc-webhook-signature", sign(key, body.as_bytes())),
        ]),
        body,
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_paid_order_names_its_buyer_from_its_billing_details() {
        let key: &[u8] = b"wc_restock_test_key";
        let body = r#"{"id": 728, "status": "completed", "billing": {"first_name": "Ana", "email": "Ana@Example.COM", "phone": "+44 7911 123456"}, "line_items": [{"sku": "CHAIR-WAL"}]}"#;
        let headers = vec![
            (SIGNATURE, sign(key, body.as_bytes())),
            (TOPIC, "order.updated".to_owned()),
            (DELIVERY_ID, "42".to_owned()),
        ];
        let parsed = parse_order(&Keys::raw([key]), &headers, body.as_bytes()).unwrap();
        let OrderDelivery::Paid(order) = parsed else {
            panic!("{parsed:?}")
        };
        let buyers: Vec<&str> = order.buyers.iter().map(|c| c.address()).collect();
        assert_eq!(buyers, ["ana@example.com", "+447911123456"]);
        assert!(order.holds.is_empty());
        // A phone field that is no number is left out.
        let odd = body.replace("+44 7911 123456", "ask at the desk");
        let headers = vec![
            (SIGNATURE, sign(key, odd.as_bytes())),
            (TOPIC, "order.updated".to_owned()),
        ];
        let Ok(OrderDelivery::Paid(order)) =
            parse_order(&Keys::raw([key]), &headers, odd.as_bytes())
        else {
            panic!("a paid order")
        };
        assert_eq!(order.buyers.len(), 1);
    }

    #[test]
    fn a_paid_order_carries_the_hold_from_its_meta_data() {
        let key: &[u8] = b"wc_restock_test_key";
        let hold = crate::ids::HoldId::from_random([5; 16]);
        let body = format!(
            r#"{{"id": 727, "status": "processing", "meta_data": [{{"id": 1, "key": "_wc_order_attribution", "value": "x"}}, {{"id": 2, "key": "hold", "value": "{hold}"}}], "currency": "EUR", "line_items": [{{"sku": "CHAIR-WAL", "price": 199.5, "total": "199.50"}}, {{"sku": "LAMP-BRASS", "price": 16.528925619834713}}]}}"#
        );
        let headers = |topic: &str, body: &str| {
            vec![
                (SIGNATURE, sign(key, body.as_bytes())),
                (TOPIC, topic.to_owned()),
                (DELIVERY_ID, "41".to_owned()),
            ]
        };
        let keys = Keys::raw([key]);
        let parsed = parse_order(&keys, &headers("order.updated", &body), body.as_bytes()).unwrap();
        let OrderDelivery::Paid(order) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!(
            (order.order_id, order.holds, order.skus),
            (
                727,
                vec![hold],
                vec!["CHAIR-WAL".to_owned(), "LAMP-BRASS".to_owned()]
            )
        );
        assert_eq!(order.delivery_id, "41");
        assert_eq!(
            order
                .prices
                .get("CHAIR-WAL")
                .map(|m| (m.currency.as_str(), m.milli)),
            Some(("EUR", 199_500)),
            "WooCommerce's price is a JSON number"
        );
        assert_eq!(
            order.prices.get("LAMP-BRASS").map(|m| m.milli),
            Some(16_529),
            "to the thousandth"
        );
        assert!(is_order(&headers("order.updated", &body)));
        assert!(!is_order(&headers("product.updated", &body)));
        // A blank delivery id: the body's hash stands in.
        let blank = vec![
            (SIGNATURE, sign(key, body.as_bytes())),
            (TOPIC, "order.updated".to_owned()),
            (DELIVERY_ID, "  ".to_owned()),
        ];
        let Ok(OrderDelivery::Paid(order)) = parse_order(&keys, &blank, body.as_bytes()) else {
            panic!("a paid order")
        };
        assert!(
            order.delivery_id.starts_with("body:"),
            "{}",
            order.delivery_id
        );
        let pending = body.replace("processing", "pending");
        assert_eq!(
            parse_order(
                &keys,
                &headers("order.created", &pending),
                pending.as_bytes()
            ),
            Ok(OrderDelivery::NotPaid)
        );
        assert!(matches!(
            parse_order(&keys, &headers("order.deleted", &body), body.as_bytes()),
            Err(WebhookError::Topic(_))
        ));
    }
    use super::*;
    use time::macros::datetime;

    const KEY: &[u8] = b"wc_restock_test_key";
    const SIMPLE: &str = include_str!("../../tests/fixtures/woocommerce_product_updated.json");
    const VARIATION: &str = include_str!("../../tests/fixtures/woocommerce_variation_updated.json");
    const NOW: OffsetDateTime = datetime!(2026-11-29 14:16 UTC);

    fn signed(body: &[u8]) -> Vec<(&'static str, String)> {
        vec![
            (SIGNATURE, sign(KEY, body)),
            (DELIVERY_ID, "6f0a3e7c".to_owned()),
            (TOPIC, "product.updated".to_owned()),
        ]
    }

    #[test]
    fn a_simple_product_update_parses() {
        let Delivery::Stock(e) = parse(
            &Keys::raw([KEY]),
            &signed(SIMPLE.as_bytes()),
            SIMPLE.as_bytes(),
            NOW,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            e.item,
            ItemRef::Platform {
                platform: Platform::WooCommerce,
                id: 799,
                sku: Some(Sku::try_from("CHAIR-WAL").unwrap()),
            }
        );
        assert_eq!(e.level, Level::Tracked(4));
        assert_eq!(e.at, datetime!(2026-11-29 14:15:02 UTC));
        assert_eq!(e.delivery_id, "6f0a3e7c");
    }

    #[test]
    fn a_variation_carries_its_own_sku() {
        let Delivery::Stock(e) = parse(
            &Keys::raw([KEY]),
            &signed(VARIATION.as_bytes()),
            VARIATION.as_bytes(),
            NOW,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            e.item,
            ItemRef::Platform {
                platform: Platform::WooCommerce,
                id: 812,
                sku: Some(Sku::try_from("THROW-OAT").unwrap()),
            }
        );
        assert_eq!(e.level, Level::Tracked(12));
        assert!(!e.untimed, "the product's own time");
    }

    #[test]
    fn unmanaged_stock_is_untracked() {
        for manage in ["false", "\"parent\""] {
            let body =
                format!(r#"{{"id":5,"sku":"","manage_stock":{manage},"stock_quantity":null}}"#);
            let Delivery::Stock(e) = parse(
                &Keys::raw([KEY]),
                &signed(body.as_bytes()),
                body.as_bytes(),
                NOW,
            )
            .unwrap() else {
                panic!()
            };
            assert_eq!(e.level, Level::Untracked);
            assert!(
                e.untimed,
                "no date_modified_gmt: timed on arrival, ranked below"
            );
            assert_eq!(e.at, NOW);
            assert_eq!(
                e.item,
                ItemRef::Platform {
                    platform: Platform::WooCommerce,
                    id: 5,
                    sku: None,
                }
            );
            assert_eq!(e.at, NOW);
        }
    }

    #[test]
    fn the_creation_ping_is_recognised_without_a_signature() {
        let none: Vec<(&str, &str)> = vec![];
        assert_eq!(
            parse(&Keys::raw([KEY]), &none, b"webhook_id=42", NOW),
            Ok(Delivery::Ping { webhook_id: 42 })
        );
        assert_eq!(
            parse(&Keys::raw([KEY]), &none, b"sku=X&level=1", NOW),
            Err(WebhookError::MissingHeader(SIGNATURE))
        );
        assert_eq!(
            parse(&Keys::raw([KEY]), &none, b"other_id=42", NOW),
            Err(WebhookError::MissingHeader(SIGNATURE)),
            "only webhook_id makes a ping"
        );
    }

    #[test]
    fn tampering_and_other_topics_are_refused() {
        let mut headers = signed(SIMPLE.as_bytes());
        let tampered = SIMPLE.replace("\"stock_quantity\":4", "\"stock_quantity\":400");
        assert_eq!(
            parse(&Keys::raw([KEY]), &headers, tampered.as_bytes(), NOW),
            Err(WebhookError::BadSignature)
        );
        headers[2].1 = "order.created".to_owned();
        assert!(matches!(
            parse(&Keys::raw([KEY]), &headers, SIMPLE.as_bytes(), NOW),
            Err(WebhookError::Topic(_))
        ));
    }
}
