//! detect: the store-facing Function URL. Every request is signature-checked
//! before anything else is read.
//!
//! | route | format |
//! |---|---|
//! | `POST /webhooks/shopify` | `inventory_levels/update`; `orders/paid` (or `orders/create` once paid) ends the holds the order carried; the privacy topics (`customers/redact` and `shop/redact` erased by the sweep, `customers/data_request` told to the team); `X-Shopify-Hmac-Sha256` |
//! | `POST /webhooks/woocommerce` | `product.updated` / `product.created`; `order.created` / `order.updated` once paid ends the order's hold; `X-WC-Webhook-Signature`; the creation ping |
//! | `POST /webhooks/stock` | the generic format, Standard Webhooks signature |
//! | `POST /webhooks/orders` | a purchase that used a hold, Standard Webhooks signature |
//!
//! Answers: 200 applied (or a duplicate, with no effect), 202 accepted but
//! not applied (unknown item: the team is told; an unhandled topic), 400
//! malformed, 401 bad signature or a timestamp outside ±5 minutes, 413 too
//! big, 503 when keys or the store are unreachable (the shop retries).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::post;
use restock_core::feedback::{MailDay, day_of};
use restock_core::webhook::{Headers, StockEvent, WebhookError};
use restock_core::{Delivery, Platform, Purchase, Sku, Status};
use restock_store::{ApplyOutcome, BuyOutcome, Order, RateDecision};
use serde_json::json;

use crate::metrics::{self, Metric};
use crate::{AppError, Services, alerts, levels};

/// The largest webhook body read.
pub const MAX_WEBHOOK_BYTES: usize = 256 * 1024;

/// The detect router: each platform's routes ([`Platform::routes`]).
pub fn router(services: Arc<Services>) -> Router {
    let mut router = Router::new();
    for platform in Platform::ALL {
        for &route in platform.routes() {
            let handler = move |State(s): Shared, headers: HeaderMap, body: Bytes| async move {
                hook(&s, platform, route, &headers, &body).await
            };
            router = router.route(route, post(handler));
        }
    }
    router
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                Json(json!({ "error": "no such endpoint" })),
            )
        })
        .layer(DefaultBodyLimit::max(MAX_WEBHOOK_BYTES))
        .layer(axum::middleware::map_response(metrics::count_refusals))
        .with_state(services)
}

type Shared = State<Arc<Services>>;

struct HeaderView<'a>(&'a HeaderMap);

impl Headers for HeaderView<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(|v| v.to_str().ok())
    }
}

fn refuse(platform: Platform, source: &str, e: &WebhookError) -> Response {
    let status = match e {
        WebhookError::BadSignature | WebhookError::Timestamp => StatusCode::UNAUTHORIZED,
        WebhookError::Topic(_) => StatusCode::ACCEPTED,
        WebhookError::MissingHeader(_) | WebhookError::Malformed(_) => StatusCode::BAD_REQUEST,
        WebhookError::FromTheFuture { .. } => StatusCode::UNPROCESSABLE_ENTITY,
    };
    metrics::webhook_refused(platform, e);
    tracing::warn!(source, status = status.as_u16(), reason = %e, "webhook refused");
    (status, Json(json!({ "error": e.to_string() }))).into_response()
}

fn unavailable(e: &AppError) -> Response {
    tracing::error!(error = %e, retryable = e.is_retryable(), "webhook could not be processed");
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(json!({ "error": "temporarily unavailable; please retry" })),
    )
        .into_response()
}

/// One delivery on `route`: verified with the platform's keys, then
/// applied (stock), bought (a paid order) or acknowledged.
async fn hook(
    s: &Services,
    platform: Platform,
    route: &'static str,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    // The route's last segment names the source in logs, alerts and dedup keys.
    let source = route.rsplit('/').next().unwrap_or(route);
    let keys = match s.keyring.keys().await.map(|k| platform.keys(&k.webhooks)) {
        Ok(Ok(k)) => k,
        Ok(Err(e)) => return refuse(platform, source, &e),
        Err(e) => return unavailable(&e.into()),
    };
    match platform.parse(&keys, route, &HeaderView(headers), body, s.clock.now()) {
        Ok(Delivery::Stock(events)) => apply(s, platform, source, events).await,
        Ok(Delivery::Paid(purchase)) => buy_order(s, source, purchase).await,
        Ok(Delivery::NotPaid) => (
            StatusCode::ACCEPTED,
            Json(json!({ "status": "not paid yet; the hold ends when it is" })),
        )
            .into_response(),
        Ok(Delivery::Privacy(request)) => crate::privacy::privacy(s, request).await,
        Ok(Delivery::Ping { webhook_id }) => {
            tracing::info!(webhook_id, platform = platform.name(), "webhook ping");
            Json(json!({ "status": "ok", "webhook_id": webhook_id })).into_response()
        }
        Err(e) => refuse(platform, source, &e),
    }
}

/// An order that used holds, as `buy` needs it.
struct Sale<'a> {
    order_id: Option<&'a str>,
    order: Order,
}

fn millis(at: time::OffsetDateTime) -> restock_core::Millis {
    (at.unix_timestamp_nanos() / 1_000_000) as restock_core::Millis
}

/// A paid order ends the holds it used.
async fn buy_order(s: &Services, source: &str, purchase: Purchase) -> Response {
    if purchase.holds.is_empty() {
        return match assisted(s, &purchase).await {
            Ok((skus, _)) if !skus.is_empty() => {
                tracing::info!(source, skus = ?skus, order = ?purchase.order_id, "an order by a contact told: assisted");
                Json(json!({ "status": "assisted", "skus": skus })).into_response()
            }
            Ok((_, true)) => Json(json!({ "status": "duplicate" })).into_response(),
            Ok(_) => (
                StatusCode::ACCEPTED,
                Json(json!({ "status": "no hold, and no buyer restock told about its items within the attribution window" })),
            )
                .into_response(),
            Err(e) => unavailable(&e),
        };
    }
    let placed_at = purchase.placed_at.unwrap_or_else(|| s.clock.now());
    let sale = Sale {
        order_id: purchase.order_id.as_deref(),
        order: Order {
            placed_at: millis(placed_at),
            // A format that lists line items: the hold's item must be one.
            items: purchase.skus,
            prices: purchase.prices,
        },
    };
    buy(s, source, &purchase.holds, &sale).await
}

/// An order without a hold: each of its catalogued items counts as
/// assisted revenue when the buyer (the order's addresses and numbers,
/// keyed as contacts are and never kept) was sent a notice for it within
/// the settings' `attribution_window`; once per order. The items counted
/// now, and whether any was counted before (a redelivery).
async fn assisted(s: &Services, purchase: &Purchase) -> Result<(Vec<Sku>, bool), AppError> {
    let Some(items) = &purchase.skus else {
        return Ok((Vec::new(), false));
    };
    if purchase.buyers.is_empty() {
        return Ok((Vec::new(), false));
    }
    let settings = s.settings().await?;
    let pepper = s.keyring.keys().await?.contact_pepper.clone();
    let keys: Vec<restock_core::ContactKey> = purchase
        .buyers
        .iter()
        .flat_map(|c| c.keys(&pepper))
        .collect();
    let now = s.clock.now_ms();
    let since = now - settings.attribution_window.as_millis();
    let order = purchase
        .order_id
        .clone()
        .unwrap_or_else(|| purchase.delivery_id.clone());
    let (mut counted, mut before) = (Vec::new(), false);
    for item in items {
        let Ok(sku) = Sku::try_from(item.as_str()) else {
            continue;
        };
        if s.store.catalogue_entry(&sku).await?.is_none() {
            continue;
        }
        let paid = purchase.prices.get(item);
        match s
            .store
            .assist(&sku, &keys, &order, paid, since, now)
            .await?
        {
            restock_store::Assist::Counted => counted.push(sku),
            restock_store::Assist::AlreadyCounted => before = true,
            restock_store::Assist::NotTold => {}
        }
    }
    Ok((counted, before))
}

/// Ends each hold an order used as bought (a redelivery is a no-op). A hold
/// whose item the order does not have is left alone and the team is told
/// (once per hold and order). A sale at the same instant as the item's
/// newest reading is settled by asking the platform for the level.
async fn buy(
    s: &Services,
    source: &str,
    holds: &[restock_core::HoldId],
    sale: &Sale<'_>,
) -> Response {
    let order_id = sale.order_id;
    let mut bought = Vec::new();
    let (mut duplicate, mut not_in_order) = (false, false);
    for hold in holds {
        let now = s.clock.now_ms();
        match s.store.mark_bought(hold, &sale.order, now).await {
            Ok(BuyOutcome::Bought { sku, tied }) => {
                metrics::count(Metric::Purchases, 1);
                tracing::info!(source, %sku, order = ?order_id, "hold bought");
                if tied && let Err(e) = levels::settle(s, &sku).await {
                    return unavailable(&e);
                }
                bought.push(sku);
            }
            Ok(BuyOutcome::AlreadyBought) => duplicate = true,
            Ok(BuyOutcome::NotHeld) => {}
            Ok(BuyOutcome::NotInOrder(sku)) => {
                not_in_order = true;
                tracing::warn!(source, %sku, order = ?order_id, "a hold was used on an order without its item; left alone");
                let once = format!("not-in-order:{hold}:{}", order_id.unwrap_or("-"));
                match s.store.first_time(&once, now).await {
                    Ok(true) => {
                        s.alert(alerts::hold_not_in_order(&sku, hold, source, order_id))
                            .await;
                    }
                    Ok(false) => {}
                    Err(e) => return unavailable(&e.into()),
                }
            }
            Err(e) => return unavailable(&e.into()),
        }
    }
    match (bought.as_slice(), duplicate) {
        ([sku], _) => Json(json!({ "status": Status::Bought, "sku": sku })).into_response(),
        ([], true) => Json(json!({ "status": "duplicate" })).into_response(),
        ([], false) if not_in_order => (
            StatusCode::ACCEPTED,
            Json(json!({ "status": "the order does not have the hold's item; the hold is left as it is and the team is told" })),
        )
            .into_response(),
        ([], false) => (
            StatusCode::ACCEPTED,
            Json(json!({ "status": "no live hold with that id" })),
        )
            .into_response(),
        (skus, _) => Json(json!({ "status": Status::Bought, "skus": skus })).into_response(),
    }
}

/// A delivery for an item not in the catalogue: a Shopify shop sends one
/// for every product's stock movement, and retries. Counted (the day's
/// figures and a metric, by the caller); the team is told once per item a
/// day, whatever the retries.
async fn unknown_item(
    s: &Services,
    source: &str,
    item: &restock_core::webhook::ItemRef,
    now: restock_core::Millis,
) -> Result<(), AppError> {
    const DAY_MS: restock_core::Millis = 24 * 60 * 60 * 1000;
    tracing::info!(source, %item, "webhook for an item not in the catalogue");
    let first_today = s
        .store
        .rate_limit(&format!("unknown-item:{source}:{item}"), 1, DAY_MS, now)
        .await?;
    if first_today == RateDecision::Allowed {
        s.alert(alerts::unknown_item(item, source)).await;
    }
    Ok(())
}

/// Applies each event: resolve the item, apply with the SKU's rules, tell the
/// team about unknown items and paused restocks.
async fn apply(
    s: &Services,
    platform: Platform,
    source: &str,
    events: Vec<StockEvent>,
) -> Response {
    let result = async {
        let settings = s.settings().await?;
        let now = s.clock.now_ms();
        // The shop's locations, read once an event is for an item restock
        // sells (cached per warm function).
        let mut online = None;
        // Verified: the platform still delivers (the silence check's evidence).
        s.store.heard(source, now).await?;
        let mut results = Vec::with_capacity(events.len());
        let (mut all_unknown, mut unknown) = (true, 0);
        let mut all_duplicate = true;
        for mut event in events {
            let Some(entry) = s.store.resolve_item(&event.item).await? else {
                unknown += 1;
                unknown_item(s, source, &event.item, now).await?;
                results.push(json!({ "item": event.item.to_string(), "outcome": "unknown_item" }));
                continue;
            };
            all_unknown = false;
            event.delivery_id = format!("{source}:{}", event.delivery_id);
            if online.is_none() {
                online = Some(levels::online_locations(s, &settings, platform).await?);
            }
            let sells_online = online
                .as_ref()
                .and_then(|o| o.get(&event.location).copied());
            event.level = levels::sold_from(&settings, &event.location, sells_online, event.level);
            let outcome = match levels::apply_one(s, &settings, source, &entry, &event, now).await?
            {
                ApplyOutcome::Duplicate => {
                    results.push(json!({ "sku": entry.sku, "outcome": "duplicate" }));
                    continue;
                }
                ApplyOutcome::Applied { outcome, tied } => {
                    if tied {
                        levels::settle(s, &entry.sku).await?;
                    }
                    outcome
                }
            };
            all_duplicate = false;
            results.push(json!({ "sku": entry.sku, "outcome": outcome }));
        }
        if unknown > 0 {
            let add = MailDay {
                unknown_items: unknown,
                ..MailDay::default()
            };
            s.store.count_mail(&day_of(now), add).await?;
            metrics::count(Metric::UnknownItems, unknown as usize);
        }
        let status = if all_unknown {
            StatusCode::ACCEPTED
        } else {
            StatusCode::OK
        };
        let summary = if all_duplicate && !all_unknown {
            "duplicate"
        } else {
            "ok"
        };
        Ok::<_, AppError>(
            (
                status,
                Json(json!({ "status": summary, "results": results })),
            )
                .into_response(),
        )
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}
