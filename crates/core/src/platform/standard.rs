//! The generic stock and order formats, signed per the Standard Webhooks spec.
//!
//! Headers: `webhook-id`, `webhook-timestamp` (Unix seconds) and
//! `webhook-signature`, a space-separated list of `v1,<base64>` signatures
//! over `{id}.{timestamp}.{body}`. Keys are `whsec_` followed by base64.
//! A timestamp more than five minutes from `now` is refused, so a captured
//! delivery cannot be replayed later; within the window the id dedups it.
//!
//! Stock body: `{"sku", "level", "at", "location"?}` or a list of those
//! (`level` null means untracked). Order body: `{"hold", "order_id"?, "at"?,
//! "currency"?, "line_items"?: [{"sku", "price"?}]}`: the line items, when
//! given, name the items the order sold (a hold whose item is not among them
//! is left alone) and, with `currency`, what each unit cost.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use serde::Deserialize;
use time::OffsetDateTime;

use crate::ids::{HoldId, Sku};
use crate::stock::Level;
use crate::webhook::{
    Headers, ItemRef, Keys, LineItem, OrderEvent, StockEvent, WebhookError, hmac_b64, lines_in,
    required, verify_b64,
};
use crate::webhook::{
    Platform, SignError, SignedDelivery, TestEvent, json_headers, needs, rfc3339,
};

/// The delivery id header.
pub const ID: &str = "webhook-id";
/// The Unix-seconds timestamp header.
pub const TIMESTAMP: &str = "webhook-timestamp";
/// The signature list header.
pub const SIGNATURE: &str = "webhook-signature";
/// How far a timestamp may be from now, either way.
pub const TOLERANCE_SECS: i64 = 300;
/// The most entries one stock delivery may carry.
pub const MAX_BATCH: usize = 500;

/// Decodes a `whsec_...` key.
///
/// # Errors
/// [`WebhookError::Malformed`] (without the key in the message).
pub fn decode_key(key: &str) -> Result<Vec<u8>, WebhookError> {
    key.strip_prefix("whsec_")
        .and_then(|b64| B64.decode(b64).ok())
        .filter(|k| !k.is_empty())
        .ok_or_else(|| {
            WebhookError::Malformed("a stock key is not whsec_ followed by base64".into())
        })
}

/// The `webhook-signature` value for a delivery (for tests and the CLI).
pub fn sign(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let ts = timestamp.to_string();
    format!(
        "v1,{}",
        hmac_b64(key, &[id.as_bytes(), b".", ts.as_bytes(), b".", body])
    )
}

/// Checks the signature and the timestamp window; gives the delivery id.
///
/// # Errors
/// Missing headers, [`WebhookError::BadSignature`], [`WebhookError::Timestamp`].
pub fn verify<'h>(
    keys: &Keys,
    headers: &'h (impl Headers + ?Sized),
    body: &[u8],
    now: OffsetDateTime,
) -> Result<&'h str, WebhookError> {
    let id = required(headers, ID)?;
    let ts_text = required(headers, TIMESTAMP)?;
    let signatures = required(headers, SIGNATURE)?;
    let ts: i64 = ts_text
        .trim()
        .parse()
        .map_err(|_| WebhookError::Malformed("webhook-timestamp is not Unix seconds".into()))?;
    let signed_ok = signatures
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .any(|sig| {
            verify_b64(
                keys,
                &[id.as_bytes(), b".", ts_text.trim().as_bytes(), b".", body],
                sig,
            )
            .is_ok()
        });
    if !signed_ok {
        return Err(WebhookError::BadSignature);
    }
    if (now.unix_timestamp() - ts).abs() > TOLERANCE_SECS {
        return Err(WebhookError::Timestamp);
    }
    Ok(id)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StockLine {
    sku: String,
    level: Option<i64>,
    #[serde(with = "time::serde::rfc3339")]
    at: OffsetDateTime,
    location: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum StockBody {
    One(StockLine),
    Many(Vec<StockLine>),
}

/// Verifies and parses a stock delivery. Each entry of a list gets the
/// delivery id with its index (`id#2`), so each is deduplicated on its own.
///
/// # Errors
/// As [`verify`], then [`WebhookError::Malformed`] naming the entry at fault.
pub fn parse_stock(
    keys: &Keys,
    headers: &(impl Headers + ?Sized),
    body: &[u8],
    now: OffsetDateTime,
) -> Result<Vec<StockEvent>, WebhookError> {
    let id = verify(keys, headers, body, now)?.trim().to_owned();
    let parsed: StockBody = serde_json::from_slice(body).map_err(|e| {
        WebhookError::Malformed(format!(
            "expected {{\"sku\", \"level\", \"at\", \"location\"?}} or a list of them ({e})"
        ))
    })?;
    let (lines, batch) = match parsed {
        StockBody::One(line) => (vec![line], false),
        StockBody::Many(lines) => (lines, true),
    };
    if lines.is_empty() || lines.len() > MAX_BATCH {
        return Err(WebhookError::Malformed(format!(
            "a delivery carries 1 to {MAX_BATCH} entries"
        )));
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let at_entry = |what: String| {
                WebhookError::Malformed(if batch {
                    format!("entry {i}: {what}")
                } else {
                    what
                })
            };
            let sku =
                Sku::try_from(line.sku.as_str()).map_err(|e| at_entry(format!("sku: {e}")))?;
            if line.level.is_some_and(|l| l < 0) {
                return Err(at_entry(
                    "level must be 0 or more, or null when untracked".into(),
                ));
            }
            let location = match line.location {
                Some(l) if !l.trim().is_empty() && l.len() <= 64 => l.trim().to_owned(),
                Some(_) => return Err(at_entry("location is 1 to 64 characters".into())),
                None => "default".to_owned(),
            };
            Ok(StockEvent {
                delivery_id: if batch {
                    format!("{id}#{i}")
                } else {
                    id.clone()
                },
                item: ItemRef::Sku { sku },
                location,
                level: Level::from_reported(line.level),
                at: line.at,
                untimed: false,
            })
        })
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OrderBody {
    hold: String,
    order_id: Option<String>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    at: Option<OffsetDateTime>,
    /// The ISO 4217 code the line items' prices are in.
    #[serde(default)]
    currency: Option<String>,
    /// What the order sold, when the shop lists it.
    #[serde(default)]
    line_items: Option<Vec<LineItem>>,
}

/// Verifies and parses an order delivery.
///
/// # Errors
/// As [`verify`], then [`WebhookError::Malformed`].
pub fn parse_order(
    keys: &Keys,
    headers: &(impl Headers + ?Sized),
    body: &[u8],
    now: OffsetDateTime,
) -> Result<OrderEvent, WebhookError> {
    let id = verify(keys, headers, body, now)?.trim().to_owned();
    let order: OrderBody = serde_json::from_slice(body).map_err(|e| {
        WebhookError::Malformed(format!(
            "expected {{\"hold\", \"order_id\"?, \"at\"?, \"currency\"?, \"line_items\"?: [{{\"sku\", \"price\"?}}]}} ({e})"
        ))
    })?;
    let (skus, prices) = match order.line_items {
        Some(items) => {
            let (skus, prices) = lines_in(items, order.currency.as_deref());
            (Some(skus), prices)
        }
        None => (None, std::collections::BTreeMap::new()),
    };
    let hold: HoldId = order
        .hold
        .parse()
        .map_err(|_| WebhookError::Malformed("hold is not a hold id".into()))?;
    Ok(OrderEvent {
        delivery_id: id,
        hold,
        order_id: order.order_id,
        skus,
        prices,
        placed_at: order.at,
    })
}

/// A signed test delivery: a stock level for a SKU, or a purchase that
/// used a hold.
pub(crate) fn test_delivery(
    event: &TestEvent,
    key: &[u8],
    id: &str,
    now: i64,
) -> Result<SignedDelivery, SignError> {
    let (route, body) = match event {
        TestEvent::Stock {
            sku,
            level,
            location,
            ..
        } => {
            let sku = sku
                .as_deref()
                .ok_or_else(|| needs("sku", Platform::Standard))?;
            let mut entry = serde_json::json!({ "sku": sku, "level": level, "at": rfc3339(now) });
            if let Some(location) = location {
                entry["location"] = serde_json::json!(location);
            }
            (0, entry)
        }
        TestEvent::Order { hold, sku } => {
            let mut order = serde_json::json!({ "hold": hold });
            if let Some(sku) = sku {
                order["line_items"] = serde_json::json!([{ "sku": sku }]);
            }
            (1, order)
        }
    };
    let body = body.to_string();
    Ok(SignedDelivery {
        path: Platform::Standard.routes()[route],
        headers: json_headers(vec![
            (ID, id.to_owned()),
            (TIMESTAMP, now.to_string()),
            (SIGNATURE, sign(key, id, now, body.as_bytes())),
        ]),
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-11-29 03:00 UTC);
    const KEY_TEXT: &str = "whsec_cmVzdG9jay10ZXN0LXN0b2NrLWtleQ==";

    fn keys() -> Keys {
        Keys::raw([decode_key(KEY_TEXT).unwrap()])
    }

    fn headers(id: &str, ts: i64, sig: String) -> Vec<(&'static str, String)> {
        vec![
            (ID, id.to_owned()),
            (TIMESTAMP, ts.to_string()),
            (SIGNATURE, sig),
        ]
    }

    fn signed(id: &str, ts: i64, body: &[u8]) -> Vec<(&'static str, String)> {
        headers(id, ts, sign(&decode_key(KEY_TEXT).unwrap(), id, ts, body))
    }

    #[test]
    fn one_level_and_a_list_parse() {
        let body = br#"{"sku":"CHAIR-WAL","level":4,"at":"2026-11-29T02:59:00Z"}"#;
        let events = parse_stock(
            &keys(),
            &signed("msg_1", NOW.unix_timestamp(), body),
            body,
            NOW,
        )
        .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].delivery_id, "msg_1");
        assert_eq!(events[0].level, Level::Tracked(4));
        let body = br#"[{"sku":"A","level":1,"at":"2026-11-29T02:59:00Z","location":"shop"},{"sku":"B","level":null,"at":"2026-11-29T02:59:00Z"}]"#;
        let events = parse_stock(
            &keys(),
            &signed("msg_2", NOW.unix_timestamp(), body),
            body,
            NOW,
        )
        .unwrap();
        assert_eq!(events[1].delivery_id, "msg_2#1");
        assert_eq!(events[0].location, "shop");
        assert_eq!(events[1].level, Level::Untracked);
    }

    #[test]
    fn several_signatures_are_accepted_if_any_matches() {
        let body = br#"{"sku":"A","level":1,"at":"2026-11-29T02:59:00Z"}"#;
        let good = sign(
            &decode_key(KEY_TEXT).unwrap(),
            "m",
            NOW.unix_timestamp(),
            body,
        );
        let h = headers("m", NOW.unix_timestamp(), format!("v1,AAAA {good} v2,zzz"));
        assert!(parse_stock(&keys(), &h, body, NOW).is_ok());
    }

    #[test]
    fn replays_outside_five_minutes_are_refused() {
        let body = br#"{"sku":"A","level":1,"at":"2026-11-29T02:59:00Z"}"#;
        for skew in [-301, 301] {
            let ts = NOW.unix_timestamp() + skew;
            assert_eq!(
                parse_stock(&keys(), &signed("m", ts, body), body, NOW),
                Err(WebhookError::Timestamp)
            );
        }
        let ts = NOW.unix_timestamp() - 300;
        assert!(parse_stock(&keys(), &signed("m", ts, body), body, NOW).is_ok());
    }

    const LINE: &str = r#"{"sku":"A","level":0,"at":"2026-11-29T02:59:00Z"}"#;

    #[test]
    fn the_edges_of_a_delivery_are_accepted() {
        // A full batch, a level of 0, a location of 64 characters.
        let full = format!("[{}]", vec![LINE; MAX_BATCH].join(","));
        let body = full.as_bytes();
        let events =
            parse_stock(&keys(), &signed("m", NOW.unix_timestamp(), body), body, NOW).unwrap();
        assert_eq!(events.len(), MAX_BATCH);
        assert_eq!(events[0].level, Level::Tracked(0));
        let long = format!(
            r#"{{"sku":"A","level":1,"at":"2026-11-29T02:59:00Z","location":" {} "}}"#,
            "x".repeat(62)
        );
        let body = long.as_bytes();
        let events =
            parse_stock(&keys(), &signed("m", NOW.unix_timestamp(), body), body, NOW).unwrap();
        assert_eq!(events[0].location, "x".repeat(62), "trimmed");
    }

    #[test]
    fn malformed_bodies_name_what_is_wrong() {
        for body in [
            &br#"{"sku":"A","level":-1,"at":"2026-11-29T02:59:00Z"}"#[..],
            br#"{"sku":"A b","level":1,"at":"2026-11-29T02:59:00Z"}"#,
            br#"{"sku":"A","level":1,"at":"yesterday"}"#,
            br#"[]"#,
            br#"{"sku":"A","level":1,"at":"2026-11-29T02:59:00Z","extra":1}"#,
            br#"{"sku":"A","level":1,"at":"2026-11-29T02:59:00Z","location":"  "}"#,
            format!(
                r#"{{"sku":"A","level":1,"at":"2026-11-29T02:59:00Z","location":"{}"}}"#,
                "x".repeat(65)
            )
            .leak()
            .as_bytes(),
            format!("[{}]", vec![LINE; MAX_BATCH + 1].join(","))
                .leak()
                .as_bytes(),
        ] {
            let err = parse_stock(&keys(), &signed("m", NOW.unix_timestamp(), body), body, NOW)
                .unwrap_err();
            assert!(matches!(err, WebhookError::Malformed(_)), "{err:?}");
        }
    }

    #[test]
    fn an_order_names_its_hold() {
        let hold = HoldId::from_random([4; 16]);
        let body = format!(r#"{{"hold":"{hold}","order_id":"1001"}}"#);
        let order = parse_order(
            &keys(),
            &signed("o1", NOW.unix_timestamp(), body.as_bytes()),
            body.as_bytes(),
            NOW,
        )
        .unwrap();
        assert_eq!(order.hold, hold);
        assert_eq!(order.order_id.as_deref(), Some("1001"));
        assert_eq!(order.skus, None, "no line items: any hold's item");
        assert!(order.prices.is_empty());
    }

    #[test]
    fn an_order_may_list_its_items_and_their_prices() {
        let hold = HoldId::from_random([4; 16]);
        let parsed = |body: String| {
            parse_order(
                &keys(),
                &signed("o2", NOW.unix_timestamp(), body.as_bytes()),
                body.as_bytes(),
                NOW,
            )
        };
        let order = parsed(format!(
            r#"{{"hold":"{hold}","currency":"EUR","line_items":[{{"sku":"CHAIR-WAL","price":"199.00"}},{{"sku":"LAMP-BRASS","price":16.5289}},{{"sku":"RUG","price":"free"}},{{"price":"1.00"}}]}}"#
        ))
        .unwrap();
        assert_eq!(
            order.skus,
            Some(vec!["CHAIR-WAL".into(), "LAMP-BRASS".into(), "RUG".into()])
        );
        let milli = |sku: &str| {
            order
                .prices
                .get(sku)
                .map(|m| (m.currency.as_str(), m.milli))
        };
        assert_eq!(milli("CHAIR-WAL"), Some(("EUR", 199_000)));
        assert_eq!(milli("LAMP-BRASS"), Some(("EUR", 16_529)));
        assert_eq!(
            milli("RUG"),
            None,
            "not an amount: no price, the item still listed"
        );
        // Prices without a currency are not money.
        let order = parsed(format!(
            r#"{{"hold":"{hold}","line_items":[{{"sku":"CHAIR-WAL","price":"199.00"}}]}}"#
        ))
        .unwrap();
        assert_eq!(order.skus, Some(vec!["CHAIR-WAL".into()]));
        assert!(order.prices.is_empty());
        let err = parsed(format!(r#"{{"hold":"{hold}","line_items":"CHAIR-WAL"}}"#)).unwrap_err();
        assert!(
            matches!(&err, WebhookError::Malformed(m) if m.contains("line_items")),
            "{err:?}"
        );
    }

    proptest! {
        /// Any one-byte change of body, id or timestamp breaks the signature.
        #[test]
        fn any_one_byte_change_fails(pos in 0usize..200, flip in 1u8..=255, which in 0u8..3) {
            let body = br#"{"sku":"CHAIR-WAL","level":4,"at":"2026-11-29T02:59:00Z","location":"warehouse-north-1"}"#.to_vec();
            let ts = NOW.unix_timestamp();
            let sig = sign(&decode_key(KEY_TEXT).unwrap(), "msg_abc", ts, &body);
            let (mut id, mut ts_text, mut body2) = (b"msg_abc".to_vec(), ts.to_string().into_bytes(), body.clone());
            let target = match which { 0 => &mut body2, 1 => &mut id, _ => &mut ts_text };
            let i = pos % target.len();
            target[i] ^= flip;
            let h = vec![
                (ID, String::from_utf8_lossy(&id).into_owned()),
                (TIMESTAMP, String::from_utf8_lossy(&ts_text).into_owned()),
                (SIGNATURE, sig),
            ];
            prop_assert!(verify(&keys(), &h, &body2, NOW).is_err());
        }

        #[test]
        fn a_valid_signature_always_verifies(body in proptest::collection::vec(any::<u8>(), 0..512), id in "[a-z0-9_]{1,30}") {
            let ts = NOW.unix_timestamp();
            let h = signed(&id, ts, &body);
            prop_assert_eq!(verify(&keys(), &h, &body, NOW), Ok(id.as_str()));
        }
    }
}
