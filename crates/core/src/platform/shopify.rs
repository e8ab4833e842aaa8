//! Shopify's `inventory_levels/update` webhook, the order webhooks that
//! end a hold as bought (`orders/paid`, or `orders/create` for an order that
//! is already paid), and the privacy (compliance) topics every app takes:
//! `customers/redact`, `customers/data_request` and `shop/redact`.
//!
//! Shopify signs the raw body: `X-Shopify-Hmac-Sha256` is the base64
//! HMAC-SHA256 with the app's secret. `X-Shopify-Webhook-Id` is the same on
//! every retry of one delivery, so it is the dedup key. Ids are 64-bit and
//! exceed 2^53, so they are read as `u64`, never as floats.
//!
//! Shopify retries failed deliveries for hours with the original headers, so
//! a replayed delivery is caught by its webhook id, not by a time window; the
//! payload's `updated_at` orders levels (newest wins).

use serde::Deserialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::stock::Level;
use crate::webhook::{
    Headers, ItemRef, Keys, OrderDelivery, PaidOrder, StockEvent, WebhookError, hmac_b64, required,
    verify_b64,
};
use crate::webhook::{
    Platform, PrivacyRequest, SignError, SignedDelivery, TestEvent, json_headers, needs,
    order_number, rfc3339,
};

/// The signature header.
pub const SIGNATURE: &str = "X-Shopify-Hmac-Sha256";
/// The delivery id header.
pub const WEBHOOK_ID: &str = "X-Shopify-Webhook-Id";
/// The topic header.
pub const TOPIC: &str = "X-Shopify-Topic";

#[derive(Deserialize)]
struct InventoryLevel {
    inventory_item_id: u64,
    location_id: u64,
    available: Option<i64>,
    updated_at: String,
}

#[derive(Deserialize)]
struct NoteAttribute {
    name: String,
    #[serde(default)]
    value: serde_json::Value,
}

#[derive(Deserialize)]
struct Order {
    id: u64,
    /// When the order was placed: Shopify takes the stock at creation.
    #[serde(default, with = "time::serde::rfc3339::option")]
    created_at: Option<OffsetDateTime>,
    #[serde(default)]
    financial_status: Option<String>,
    #[serde(default)]
    note_attributes: Vec<NoteAttribute>,
    #[serde(default)]
    line_items: Vec<crate::webhook::LineItem>,
    /// The shop's currency, which the line items' prices are in.
    #[serde(default)]
    currency: Option<String>,
    /// The buyer's addresses and numbers, as the order gives them.
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    contact_email: Option<String>,
    #[serde(default)]
    phone: Option<String>,
    #[serde(default)]
    customer: Option<Customer>,
}

/// An order's customer, as far as their contacts go.
#[derive(Deserialize)]
struct Customer {
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    phone: Option<String>,
}

/// Whether a delivery's topic is an order topic (`orders/...`).
pub fn is_order(headers: &(impl Headers + ?Sized)) -> bool {
    headers
        .header(TOPIC)
        .is_some_and(|t| t.starts_with("orders/"))
}

/// Verifies and parses an order delivery.
///
/// # Errors
/// [`WebhookError::BadSignature`] before anything else is read; then missing
/// headers, a topic other than `orders/paid` or `orders/create`, or a
/// malformed payload. A `hold` attribute that is not a hold id is ignored
/// (a purchase without a hold changes nothing).
pub fn parse_order(
    keys: &Keys,
    headers: &(impl Headers + ?Sized),
    body: &[u8],
) -> Result<OrderDelivery, WebhookError> {
    verify_b64(keys, &[body], required(headers, SIGNATURE)?)?;
    let delivery_id = required(headers, WEBHOOK_ID)?.trim().to_owned();
    let topic = required(headers, TOPIC)?;
    if topic != "orders/paid" && topic != "orders/create" {
        return Err(WebhookError::Topic(topic.to_owned()));
    }
    let order: Order = serde_json::from_slice(body).map_err(WebhookError::malformed)?;
    if topic == "orders/create" && order.financial_status.as_deref() != Some("paid") {
        return Ok(OrderDelivery::NotPaid);
    }
    let holds = crate::webhook::holds_in(
        order
            .note_attributes
            .iter()
            .map(|a| (a.name.as_str(), &a.value)),
    );
    let customer = order.customer.as_ref();
    let buyers = crate::webhook::buyers_in(
        [
            order.email.as_deref(),
            order.contact_email.as_deref(),
            customer.and_then(|c| c.email.as_deref()),
        ],
        [
            order.phone.as_deref(),
            customer.and_then(|c| c.phone.as_deref()),
        ],
    );
    let (skus, prices) = crate::webhook::lines_in(order.line_items, order.currency.as_deref());
    Ok(OrderDelivery::Paid(PaidOrder {
        delivery_id,
        order_id: order.id,
        holds,
        buyers,
        skus,
        prices,
        placed_at: order.created_at,
    }))
}

/// The privacy topics Shopify sends every app.
pub const PRIVACY_TOPICS: [&str; 3] = ["customers/redact", "customers/data_request", "shop/redact"];

/// Whether a delivery's topic is a privacy topic.
pub fn is_privacy(headers: &(impl Headers + ?Sized)) -> bool {
    headers
        .header(TOPIC)
        .is_some_and(|t| PRIVACY_TOPICS.contains(&t))
}

/// A privacy delivery's payload, as Shopify documents it.
#[derive(Deserialize)]
struct PrivacyPayload {
    #[serde(default)]
    shop_domain: String,
    #[serde(default)]
    customer: Option<PrivacyCustomer>,
    #[serde(default)]
    data_request: Option<DataRequest>,
}

#[derive(Deserialize)]
struct PrivacyCustomer {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    phone: Option<String>,
}

#[derive(Deserialize)]
struct DataRequest {
    #[serde(default)]
    id: Option<u64>,
}

/// Verifies and parses a privacy delivery.
///
/// # Errors
/// [`WebhookError::BadSignature`] before anything else is read; then
/// missing headers or a malformed payload.
pub fn parse_privacy(
    keys: &Keys,
    headers: &(impl Headers + ?Sized),
    body: &[u8],
) -> Result<PrivacyRequest, WebhookError> {
    verify_b64(keys, &[body], required(headers, SIGNATURE)?)?;
    let topic = required(headers, TOPIC)?;
    let payload: PrivacyPayload = serde_json::from_slice(body).map_err(WebhookError::malformed)?;
    if topic == "shop/redact" {
        return Ok(PrivacyRequest::Shop {
            domain: payload.shop_domain,
        });
    }
    let customer = payload
        .customer
        .ok_or_else(|| WebhookError::Malformed("no customer".into()))?;
    let contacts =
        crate::webhook::buyers_in([customer.email.as_deref()], [customer.phone.as_deref()]);
    Ok(if topic == "customers/redact" {
        PrivacyRequest::Erase {
            customer: contacts,
            customer_id: customer.id,
        }
    } else {
        PrivacyRequest::Report {
            customer: contacts,
            customer_id: customer.id,
            request_id: payload.data_request.and_then(|r| r.id),
        }
    })
}

/// Computes the signature header's value (for tests and the CLI's `sign-webhook`).
pub fn sign(key: &[u8], body: &[u8]) -> String {
    hmac_b64(key, &[body])
}

/// Verifies and parses one delivery.
///
/// # Errors
/// [`WebhookError::BadSignature`] before anything else is read; then missing
/// headers, an unexpected topic, or a malformed payload.
pub fn parse(
    keys: &Keys,
    headers: &(impl Headers + ?Sized),
    body: &[u8],
) -> Result<StockEvent, WebhookError> {
    verify_b64(keys, &[body], required(headers, SIGNATURE)?)?;
    let delivery_id = required(headers, WEBHOOK_ID)?.trim().to_owned();
    if let Some(topic) = headers.header(TOPIC)
        && topic != "inventory_levels/update"
    {
        return Err(WebhookError::Topic(topic.to_owned()));
    }
    let level: InventoryLevel = serde_json::from_slice(body).map_err(WebhookError::malformed)?;
    let at = OffsetDateTime::parse(&level.updated_at, &Rfc3339)
        .map_err(|_| WebhookError::Malformed("updated_at is not an RFC 3339 time".into()))?;
    Ok(StockEvent {
        delivery_id,
        item: ItemRef::Platform {
            platform: Platform::Shopify,
            id: level.inventory_item_id,
            sku: None,
        },
        location: level.location_id.to_string(),
        level: Level::from_reported(level.available),
        at,
        untimed: false,
    })
}

/// A signed test delivery: `inventory_levels/update`, or `orders/paid` for
/// an order that used a hold.
pub(crate) fn test_delivery(
    event: &TestEvent,
    key: &[u8],
    id: &str,
    now: i64,
) -> Result<SignedDelivery, SignError> {
    let (topic, body) = match event {
        TestEvent::Stock {
            id: item,
            level,
            location,
            ..
        } => {
            let item =
                item.ok_or_else(|| needs("id (the inventory item id)", Platform::Shopify))?;
            let location: u64 = location
                .as_deref()
                .unwrap_or("1")
                .parse()
                .map_err(|_| SignError("--location must be a number for shopify".into()))?;
            let body = serde_json::json!({
                "inventory_item_id": item, "location_id": location,
                "available": level, "updated_at": rfc3339(now),
            });
            ("inventory_levels/update", body)
        }
        TestEvent::Order { hold, sku } => {
            let body = serde_json::json!({
                "id": order_number(id), "financial_status": "paid",
                "note_attributes": [{ "name": "hold", "value": hold }],
                "line_items": [{ "sku": sku, "quantity": 1 }],
            });
            ("orders/paid", body)
        }
    };
    let body = body.to_string();
    Ok(SignedDelivery {
        path: Platform::Shopify.routes()[0],
        headers: json_headers(vec![
            ("x-shopify-topic", topic.into()),
            ("x-shopify-webhook-id", id.to_owned()),
            ("x-shopify-hmac-sha256", sign(key, body.as_bytes())),
        ]),
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order_headers(body: &str, topic: &str) -> Vec<(&'static str, String)> {
        vec![
            ("X-Shopify-Hmac-Sha256", sign(KEY, body.as_bytes())),
            (
                "X-Shopify-Webhook-Id",
                "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043".to_owned(),
            ),
            ("X-Shopify-Topic", topic.to_owned()),
        ]
    }

    /// The privacy topics as Shopify documents their payloads: the
    /// customer's contacts read, the shop's domain for `shop/redact`, a
    /// payload without its customer refused, the signature checked first.
    #[test]
    fn the_privacy_topics_read_as_shopify_sends_them() {
        let keys = Keys::raw([KEY]);
        let redact = r#"{"shop_id": 954889, "shop_domain": "s.myshopify.com", "customer": {"id": 191167, "email": "john@example.com", "phone": "555-625-1199"}, "orders_to_redact": [299938]}"#;
        let headers = order_headers(redact, "customers/redact");
        assert!(is_privacy(&headers) && !is_order(&headers));
        let PrivacyRequest::Erase {
            customer,
            customer_id,
        } = parse_privacy(&keys, &headers, redact.as_bytes()).unwrap()
        else {
            panic!("an erasure")
        };
        assert_eq!(customer_id, Some(191_167));
        assert_eq!(
            customer
                .iter()
                .map(|c| c.address().to_owned())
                .collect::<Vec<_>>(),
            ["john@example.com"],
            "a number that is not E.164 names nobody"
        );
        let asked = r#"{"shop_id": 954889, "shop_domain": "s.myshopify.com", "orders_requested": [299938], "customer": {"id": 191167, "email": "john@example.com", "phone": "+447911123456"}, "data_request": {"id": 9999}}"#;
        let parsed = parse_privacy(
            &keys,
            &order_headers(asked, "customers/data_request"),
            asked.as_bytes(),
        );
        assert!(
            matches!(&parsed, Ok(PrivacyRequest::Report { customer, request_id: Some(9999), .. }) if customer.len() == 2),
            "{parsed:?}"
        );
        let shop = r#"{"shop_id": 954889, "shop_domain": "s.myshopify.com"}"#;
        assert_eq!(
            parse_privacy(&keys, &order_headers(shop, "shop/redact"), shop.as_bytes()),
            Ok(PrivacyRequest::Shop {
                domain: "s.myshopify.com".into()
            })
        );
        let no_customer = order_headers(shop, "customers/redact");
        assert!(matches!(
            parse_privacy(&keys, &no_customer, shop.as_bytes()),
            Err(WebhookError::Malformed(_))
        ));
        let mut forged = order_headers(redact, "customers/redact");
        forged[0].1 = sign(b"other", redact.as_bytes());
        assert_eq!(
            parse_privacy(&keys, &forged, redact.as_bytes()),
            Err(WebhookError::BadSignature)
        );
    }

    #[test]
    fn a_paid_order_carries_its_holds_and_skus() {
        let hold = crate::ids::HoldId::from_random([3; 16]);
        let body = format!(
            r#"{{"id": 820982911946154508, "financial_status": "paid", "note_attributes": [{{"name": "gift", "value": "no"}}, {{"name": "hold", "value": "{hold}"}}], "currency": "EUR", "line_items": [{{"sku": "CHAIR-WAL", "quantity": 1, "price": "199.00"}}, {{"sku": null, "price": "5.00"}}]}}"#
        );
        let keys = Keys::raw([KEY]);
        let parsed =
            parse_order(&keys, &order_headers(&body, "orders/paid"), body.as_bytes()).unwrap();
        let OrderDelivery::Paid(order) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!(order.order_id, 820_982_911_946_154_508);
        assert_eq!(order.holds, vec![hold]);
        assert_eq!(order.skus, vec!["CHAIR-WAL".to_owned()]);
        assert_eq!(
            order.prices.get("CHAIR-WAL"),
            crate::Money::parse("EUR", "199").as_ref(),
            "the unit price, in the shop's currency"
        );
        assert_eq!(order.prices.len(), 1, "a line without a SKU has none");
        assert!(order.buyers.is_empty(), "no email or phone in this body");
        let with_buyer = body.replace(
            r#""currency""#,
            r#""email": "della@example.com", "customer": {"email": "DELLA@example.com", "phone": "+44 7911 123456"}, "currency""#,
        );
        let Ok(OrderDelivery::Paid(order)) = parse_order(
            &keys,
            &order_headers(&with_buyer, "orders/paid"),
            with_buyer.as_bytes(),
        ) else {
            panic!("a paid order")
        };
        let buyers: Vec<&str> = order.buyers.iter().map(|c| c.address()).collect();
        assert_eq!(buyers, ["della@example.com", "+447911123456"], "each once");
        assert!(is_order(&order_headers(&body, "orders/paid")));
        assert!(!is_order(&order_headers(&body, "inventory_levels/update")));
        // orders/paid is paid whatever the status field says.
        let unstated = body.replace(r#""financial_status": "paid", "#, "");
        assert!(matches!(
            parse_order(
                &keys,
                &order_headers(&unstated, "orders/paid"),
                unstated.as_bytes()
            ),
            Ok(OrderDelivery::Paid(_))
        ));
        // orders/create counts only once paid; other topics are not orders we read.
        let pending = body.replace("\"paid\"", "\"pending\"");
        assert_eq!(
            parse_order(
                &keys,
                &order_headers(&pending, "orders/create"),
                pending.as_bytes()
            ),
            Ok(OrderDelivery::NotPaid)
        );
        assert!(matches!(
            parse_order(
                &keys,
                &order_headers(&body, "orders/cancelled"),
                body.as_bytes()
            ),
            Err(WebhookError::Topic(_))
        ));
        // A forged order is refused before it is read.
        let mut forged = order_headers(&body, "orders/paid");
        forged[0].1 = sign(b"not the key", body.as_bytes());
        assert_eq!(
            parse_order(&keys, &forged, body.as_bytes()),
            Err(WebhookError::BadSignature)
        );
    }

    const KEY: &[u8] = b"shpss_restock_test_key";
    const BODY: &str = include_str!("../../tests/fixtures/shopify_inventory_levels_update.json");

    fn headers(sig: &str) -> Vec<(&'static str, String)> {
        vec![
            ("x-shopify-hmac-sha256", sig.to_owned()),
            (
                "X-Shopify-Webhook-Id",
                "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043".to_owned(),
            ),
            ("X-Shopify-Topic", "inventory_levels/update".to_owned()),
        ]
    }

    #[test]
    fn a_signed_delivery_parses_with_ids_beyond_two_to_the_53() {
        let event = parse(
            &Keys::raw([KEY]),
            &headers(&sign(KEY, BODY.as_bytes())),
            BODY.as_bytes(),
        )
        .unwrap();
        assert_eq!(
            event.item,
            ItemRef::Platform {
                platform: Platform::Shopify,
                id: 271_878_346_596_884_015,
                sku: None,
            }
        );
        assert_eq!(event.location, "24826418");
        assert_eq!(event.level, Level::Tracked(4));
        assert_eq!(event.delivery_id, "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043");
    }

    #[test]
    fn a_rotated_key_still_verifies() {
        let keys = Keys::raw([b"new-key".as_slice(), KEY]);
        assert!(
            parse(
                &keys,
                &headers(&sign(KEY, BODY.as_bytes())),
                BODY.as_bytes()
            )
            .is_ok()
        );
    }

    #[test]
    fn a_wrong_signature_is_refused_before_parsing() {
        let err = parse(&Keys::raw([KEY]), &headers(&sign(b"other", b"{}")), b"{}").unwrap_err();
        assert_eq!(err, WebhookError::BadSignature);
        let err = parse(&Keys::raw([KEY]), &headers("not base64!"), BODY.as_bytes()).unwrap_err();
        assert_eq!(err, WebhookError::BadSignature);
        let none: Vec<(&str, &str)> = vec![];
        assert_eq!(
            parse(&Keys::raw([KEY]), &none, BODY.as_bytes()),
            Err(WebhookError::MissingHeader(SIGNATURE))
        );
    }

    #[test]
    fn null_available_is_untracked() {
        let body = br#"{"inventory_item_id":1,"location_id":2,"available":null,"updated_at":"2026-11-29T03:00:00-05:00"}"#;
        let event = parse(&Keys::raw([KEY]), &headers(&sign(KEY, body)), body).unwrap();
        assert_eq!(event.level, Level::Untracked);
    }

    #[test]
    fn a_float_id_is_malformed_not_rounded() {
        let body = br#"{"inventory_item_id":2.7187834659688e17,"location_id":2,"available":1,"updated_at":"2026-11-29T03:00:00Z"}"#;
        assert!(matches!(
            parse(&Keys::raw([KEY]), &headers(&sign(KEY, body)), body),
            Err(WebhookError::Malformed(_))
        ));
    }
}
