//! capture: the shopper-facing Function URL.
//!
//! | route | does |
//! |---|---|
//! | `POST /requests` | notify me (JSON or an HTML form): 201 new, 200 existing, 400 field errors, 404 unknown item, 409 opted out, 410 an item the shop no longer sells, 413 too big, 429 too many |
//! | `GET /requests/{id}` | status and position |
//! | `DELETE /requests/{id}` | leave the queue |
//! | `GET /r/{token}` | the reserve page: shows, changes nothing (mail scanners fetch links) |
//! | `POST /r/{token}` | takes the hold: 303 to checkout, or a page saying why not |
//! | `POST /r/{token}/rejoin` | one tap back into the queue from an expired or used link |
//! | `GET`/`POST /o/{token}` | opt out for good (the POST also serves one-click unsubscribe) |
//! | `GET /widget?language=` | the widget's words in the closest language the shop offers |
//!
//! One module per door: `join` (the form), `item` (what the widget reads
//! first), `status` (a request's own page), `links` (the links in the
//! messages); this module holds the router and what every route shares:
//! the answers for refusals, the caller's address, the CORS and the read
//! limits.

use std::net::IpAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use restock_core::client::{client_address, limited_network};
use restock_core::join::{FieldError, MAX_BODY_BYTES};
use restock_core::lang::arg;
use restock_core::{HoldId, HoldRefused, LinkToken, RequestId, RequestState, Settings, Texts};
use restock_store::{
    CancelOutcome, ConfirmOutcome, HoldOutcome, JoinOutcome, NewRequest, OptOutOutcome,
    RateDecision,
};
use serde_json::json;

use crate::metrics::{self, Metric};
use crate::pages::{button, note, page, text};
use crate::{AppError, Services};

mod item;
mod join;
mod links;
mod status;

use item::{item, widget_words};
use join::join;
use links::{
    confirm, confirm_page, manage_leave, manage_page, optout, optout_page, rejoin, reserve,
    reserve_page,
};
use status::{cancel, status};

/// The capture router.
pub fn router(services: Arc<Services>) -> Router {
    // Reads of a request and the link pages: limited per client address, so
    // a script can neither hammer a status nor walk guessed links.
    let reads = Router::new()
        .route("/requests/{id}", get(status).delete(cancel))
        .route("/items/{sku}", get(item))
        .route("/r/{token}", get(reserve_page).post(reserve))
        .route("/r/{token}/rejoin", post(rejoin))
        .route("/o/{token}", get(optout_page).post(optout))
        .route("/c/{token}", get(confirm_page).post(confirm))
        .route("/m/{token}", get(manage_page).post(manage_leave))
        .route_layer(middleware::from_fn_with_state(services.clone(), read_limit));
    Router::new()
        .route("/requests", post(join))
        .route("/widget", get(widget_words))
        .merge(reads)
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(services.clone(), cors))
        .layer(middleware::map_response(metrics::count_refusals))
        .with_state(services)
}

type Shared = State<Arc<Services>>;

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// An error in the caller's language: catalogue message `id`.
fn said(t: &Texts, status: StatusCode, id: &str) -> Response {
    error(status, &t.word(id))
}

/// 400 with what each field needs, in the caller's language (`message`),
/// and the exact reason for whoever builds a client (`detail`).
fn field_errors(t: &Texts, errors: Vec<FieldError>) -> Response {
    let errors: Vec<_> = errors
        .into_iter()
        .map(|e| {
            json!({
                "field": e.field,
                "message": t.word(&format!("field-{}", e.field)),
                "detail": e.message,
            })
        })
        .collect();
    (
        StatusCode::BAD_REQUEST,
        Json(json!({ "error": t.word("error-fields"), "errors": errors })),
    )
        .into_response()
}

fn unavailable(e: &AppError) -> Response {
    unavailable_in(&Texts::english(), e)
}

/// 503 with `Retry-After`: nothing was written. Too many at once on one
/// item: a second is enough; anything else: a few.
fn unavailable_in(t: &Texts, e: &AppError) -> Response {
    tracing::error!(error = %e, retryable = e.is_retryable(), "capture could not complete a request");
    let (id, secs) = match e {
        AppError::Store(restock_store::StoreError::Contention(_)) => ("error-busy", 1u32),
        _ => ("error-unavailable", 5),
    };
    let mut r = said(t, StatusCode::SERVICE_UNAVAILABLE, id);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    r
}

fn too_many(t: &Texts, retry_after_ms: i64) -> Response {
    let secs = (retry_after_ms + 999) / 1000;
    let mut r = said(t, StatusCode::TOO_MANY_REQUESTS, "error-too-many");
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    r
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such page")
}

/// The address the platform saw the request come from: the Function URL's
/// `requestContext.http.sourceIp` (`restock_aws::http` puts it here) or the
/// local server's socket peer. Never read from a header the caller writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

/// Who the caller is: the platform's address, or the one the operator's
/// trusted proxies report (`restock_core::client`). `None` without a
/// platform address.
fn caller(client: Option<ClientAddr>, headers: &HeaderMap, settings: &Settings) -> Option<IpAddr> {
    let ClientAddr(peer) = client?;
    let forwarded = headers.get("x-forwarded-for").and_then(|v| v.to_str().ok());
    Some(client_address(peer, forwarded, &settings.trusted_proxies))
}

/// The rate-limit key for the caller: its network (an IPv4 address, an
/// IPv6 address's `limits.ipv6_prefix`). A request that arrives without a
/// platform address shares one bucket.
fn client_key(client: Option<ClientAddr>, headers: &HeaderMap, settings: &Settings) -> String {
    match caller(client, headers, settings) {
        Some(ip) => format!("ip:{}", limited_network(ip, settings.limits.ipv6_prefix)),
        None => "ip:unknown".to_owned(),
    }
}

/// Where a sign-up came from, for its consent record: the caller's own
/// address.
fn consent_source(client: Option<ClientAddr>, headers: &HeaderMap, settings: &Settings) -> String {
    match caller(client, headers, settings) {
        Some(ip) => format!("ip:{ip}"),
        None => "ip:unknown".to_owned(),
    }
}

/// `reads_per_ip` per window for each client address; over it, 429 with
/// `Retry-After` (a page for the link pages, JSON for the API).
async fn read_limit(State(s): Shared, request: Request, next: Next) -> Response {
    let client = request.extensions().get::<ClientAddr>().copied();
    let headers = request.headers().clone();
    let api = request.uri().path().starts_with("/requests/");
    let decision = async {
        let settings = s.settings().await?;
        let key = format!("read:{}", client_key(client, &headers, &settings));
        let limits = settings.limits;
        let now = s.clock.now_ms();
        let decision = s
            .store
            .rate_limit(&key, limits.reads_per_ip, limits.window.as_millis(), now)
            .await?;
        Ok::<_, AppError>((decision, settings))
    };
    match decision.await {
        Ok((RateDecision::Allowed, _)) => next.run(request).await,
        Ok((RateDecision::Limited { retry_after_ms }, settings)) if api => {
            too_many(&visitor_words(&settings, &headers), retry_after_ms)
        }
        Ok((RateDecision::Limited { retry_after_ms }, settings)) => {
            let t = visitor_words(&settings, &headers);
            let minutes = (retry_after_ms + 59_999) / 60_000;
            let wait = t.window(restock_core::Window::from_mins(minutes.max(1) as u64));
            let mut r = page(
                &t,
                StatusCode::TOO_MANY_REQUESTS,
                &t.word("page-wait-title"),
                &text(&t.get("page-wait", &[arg("time", &wait)])),
            );
            r.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from((retry_after_ms + 999) / 1000),
            );
            r
        }
        Err(e) => unavailable(&e),
    }
}

/// The words for a shopper whose request is known: the language it joined
/// in, if the shop still offers it.
fn words(settings: &Settings, r: &restock_store::Request) -> Texts {
    settings.texts(&settings.language_for(r.language.as_ref()))
}

/// The words for a visitor known only by their browser (a link naming no
/// request we know): its `Accept-Language`.
fn visitor_words(settings: &Settings, headers: &HeaderMap) -> Texts {
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok());
    settings.texts(&settings.language_for_visitor(accept))
}

fn wants_html(headers: &HeaderMap) -> bool {
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("application/x-www-form-urlencoded"));
    let accepts_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    form && accepts_html
}

/// CORS for the storefront origins in the settings; preflights end here.
async fn cors(State(s): Shared, request: Request, next: Next) -> Response {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(str::to_owned);
    let allowed = match &origin {
        Some(o) => s
            .settings()
            .await
            .is_ok_and(|settings| settings.storefront_origins.iter().any(|a| a == o)),
        None => false,
    };
    let preflight = request.method() == Method::OPTIONS;
    let mut response = if preflight {
        if allowed {
            StatusCode::NO_CONTENT.into_response()
        } else {
            error(StatusCode::FORBIDDEN, "origin not allowed")
        }
    } else {
        next.run(request).await
    };
    // Whether the answer carries CORS headers depends on the caller's
    // origin, so every answer says so: a shared cache must not hand one
    // origin's cached answer (`/widget` is `public`) to another.
    response
        .headers_mut()
        .append(header::VARY, HeaderValue::from_static("Origin"));
    if allowed && let Some(origin) = origin.and_then(|o| HeaderValue::from_str(&o).ok()) {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        if preflight {
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, POST, DELETE"),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("content-type, authorization"),
            );
            h.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("600"),
            );
        }
    }
    response
}
