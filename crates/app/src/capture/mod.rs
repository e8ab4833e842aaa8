//! capture: the shopper-facing Function URL.
//!
//! | route | does |
//! |---|---|
//! | `POST /requests` | notify me (JSON or an HTML form): 201 new, 200 existing, 400 field errors, 404 unknown item, 409 opted out, 413 too big, 429 too many |
//! | `GET /requests/{id}` | status and position |
//! | `DELETE /requests/{id}` | leave the queue |
//! | `GET /r/{token}` | the reserve page: shows, changes nothing (mail scanners fetch links) |
//! | `POST /r/{token}` | takes the hold: 303 to checkout, or a page saying why not |
//! | `POST /r/{token}/rejoin` | one tap back into the queue from an expired or used link |
//! | `GET`/`POST /o/{token}` | opt out for good (the POST also serves one-click unsubscribe) |

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use restock_core::join::{FieldError, JoinForm, JoinInput, MAX_BODY_BYTES};
use restock_core::{HoldId, HoldRefused, LinkToken, RequestId, RequestState};
use restock_store::{
    CancelOutcome, HoldOutcome, JoinOutcome, NewRequest, OptOutOutcome, RateDecision,
    Request as Stored,
};
use serde_json::json;

use crate::pages::{button, note, page, text, time_left};
use crate::{AppError, Services};

/// The capture router.
pub fn router(services: Arc<Services>) -> Router {
    Router::new()
        .route("/requests", post(join))
        .route("/requests/{id}", get(status).delete(cancel))
        .route("/r/{token}", get(reserve_page).post(reserve))
        .route("/r/{token}/rejoin", post(rejoin))
        .route("/o/{token}", get(optout_page).post(optout))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(services.clone(), cors))
        .with_state(services)
}

type Shared = State<Arc<Services>>;

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

fn field_errors(errors: Vec<FieldError>) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({ "error": "some fields need another look", "errors": errors })),
    )
        .into_response()
}

fn unavailable(e: &AppError) -> Response {
    tracing::error!(error = %e, retryable = e.is_retryable(), "capture could not complete a request");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "restock is unavailable for a moment; please try again shortly",
    )
}

fn too_many(retry_after_ms: i64) -> Response {
    let secs = (retry_after_ms + 999) / 1000;
    let mut r = error(
        StatusCode::TOO_MANY_REQUESTS,
        "too many requests; please wait a few minutes and try again",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    r
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such page")
}

/// The caller's IP as the Function URL (or a proxy) reports it.
fn source_ip(headers: &HeaderMap) -> String {
    headers
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(|ip| ip.trim().to_owned())
        .filter(|ip| !ip.is_empty() && ip.len() <= 45)
        .unwrap_or_else(|| "unknown".to_owned())
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
    if allowed && let Some(origin) = origin.and_then(|o| HeaderValue::from_str(&o).ok()) {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
        if preflight {
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, POST, DELETE"),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("content-type"),
            );
            h.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("600"),
            );
        }
    }
    response
}

/// Why a body could not be read as a notify-me form.
enum BodyError {
    Malformed(String),
    UnsupportedType,
}

impl IntoResponse for BodyError {
    fn into_response(self) -> Response {
        match self {
            Self::Malformed(message) => field_errors(vec![FieldError {
                field: "body".into(),
                message,
            }]),
            Self::UnsupportedType => error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send JSON (application/json) or a form post",
            ),
        }
    }
}

fn parse_form(headers: &HeaderMap, body: &[u8]) -> Result<JoinForm, BodyError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if content_type.starts_with("application/json") {
        serde_json::from_slice(body)
            .map_err(|e| BodyError::Malformed(format!("not the JSON expected: {e}")))
    } else if content_type.starts_with("application/x-www-form-urlencoded") {
        serde_urlencoded::from_bytes(body)
            .map_err(|e| BodyError::Malformed(format!("not a form post: {e}")))
    } else {
        Err(BodyError::UnsupportedType)
    }
}

async fn join(State(s): Shared, headers: HeaderMap, body: Bytes) -> Response {
    let form = match parse_form(&headers, &body) {
        Ok(form) => form,
        Err(e) => return e.into_response(),
    };
    let new = match form.parse() {
        Ok(JoinInput::Request(new)) => new,
        Ok(JoinInput::Honeypot) => {
            tracing::info!("honeypot filled: answered and stored nothing");
            let fake = RequestId::from_random(s.random());
            let sku = form.sku.unwrap_or_default();
            return (
                StatusCode::CREATED,
                Json(json!({ "request_id": fake, "sku": sku, "position": 1, "status": "waiting" })),
            )
                .into_response();
        }
        Err(errors) => return field_errors(errors),
    };
    match join_request(&s, new, &headers).await {
        Ok(response) => response,
        Err(e) => unavailable(&e),
    }
}

async fn join_request(
    s: &Services,
    new: restock_core::join::NewRequest,
    headers: &HeaderMap,
) -> Result<Response, AppError> {
    let now = s.clock.now_ms();
    let limits = s.limits;
    if let RateDecision::Limited { retry_after_ms } = s
        .store
        .rate_limit(
            &format!("ip:{}", source_ip(headers)),
            limits.per_ip,
            limits.window_ms,
            now,
        )
        .await?
    {
        return Ok(too_many(retry_after_ms));
    }
    let settings = s.settings().await?;
    let Some(entry) = s.store.catalog_entry(&new.sku).await? else {
        return Ok(error(
            StatusCode::NOT_FOUND,
            "this product is not one you can wait for here",
        ));
    };
    let secrets = s.keyring.keys().await?;
    let contact_key = new.contact.key(&secrets.contact_pepper);
    if let RateDecision::Limited { retry_after_ms } = s
        .store
        .rate_limit(
            &format!("contact:{contact_key}"),
            limits.per_contact,
            limits.window_ms,
            now,
        )
        .await?
    {
        return Ok(too_many(retry_after_ms));
    }
    let request = NewRequest {
        id: RequestId::from_random(s.random()),
        sku: new.sku,
        name: new.name,
        contact: new.contact,
        contact_key,
        now,
        shards: entry.shards,
        lifetime_ms: settings.request_lifetime.as_millis(),
    };
    let (status, stored) = match s.store.join(request).await? {
        JoinOutcome::Joined(r) => (StatusCode::CREATED, r),
        JoinOutcome::AlreadyWaiting(r) => (StatusCode::OK, r),
        JoinOutcome::OptedOut => {
            return Ok(error(
                StatusCode::CONFLICT,
                "this address asked not to be contacted; nothing was saved",
            ));
        }
    };
    let position = s.store.position(&stored, entry.shards).await?;
    tracing::info!(sku = %stored.sku, contact = %stored.contact.masked(), new = status == StatusCode::CREATED, ?position, "notify-me");
    if wants_html(headers) {
        let body = match position {
            Some(p) => text(&format!(
                "You're number {p} in line for {}. We'll tell you once, as soon as it's back.",
                entry.name
            )),
            None => text(&format!("You're already on the list for {}.", entry.name)),
        };
        return Ok(page(status, "You're on the list", &body));
    }
    Ok((status, Json(status_json(&stored, position))).into_response())
}

fn status_json(r: &Stored, position: Option<usize>) -> serde_json::Value {
    let mut value = json!({
        "request_id": r.id,
        "sku": r.sku,
        "status": r.state.status(),
        "position": position,
    });
    if let RequestState::Offered { expires_ms, .. } | RequestState::Held { expires_ms, .. } =
        r.state
    {
        value["expires_at_ms"] = json!(expires_ms);
    }
    value
}

async fn status(State(s): Shared, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<RequestId>() else {
        return error(StatusCode::NOT_FOUND, "no such request");
    };
    let result = async {
        let Some(r) = s.store.request(&id).await? else {
            return Ok(error(StatusCode::NOT_FOUND, "no such request"));
        };
        let shards = s.store.catalog_entry(&r.sku).await?.map_or(1, |e| e.shards);
        let position = s.store.position(&r, shards).await?;
        Ok::<_, AppError>(Json(status_json(&r, position)).into_response())
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

async fn cancel(State(s): Shared, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<RequestId>() else {
        return error(StatusCode::NOT_FOUND, "no such request");
    };
    match s.store.cancel(&id, s.clock.now_ms()).await {
        Ok(CancelOutcome::Cancelled) => Json(json!({ "request_id": id, "status": "cancelled" })).into_response(),
        Ok(CancelOutcome::NotLive(status)) => (
            StatusCode::CONFLICT,
            Json(json!({ "request_id": id, "status": status, "error": format!("this request is already {status}") })),
        )
            .into_response(),
        Ok(CancelOutcome::NotFound) => error(StatusCode::NOT_FOUND, "no such request"),
        Err(e) => unavailable(&e.into()),
    }
}

fn gone(token: &str, what: &str) -> Response {
    let body = text(what)
        + &button(
            &format!("/r/{token}/rejoin"),
            "Put me back in the queue",
            false,
        );
    page(StatusCode::GONE, "This reserve link has ended", &body)
}

/// The page for a link that has ended (or never existed: the two look alike).
fn ended_link(token_text: &str) -> Response {
    gone(
        token_text,
        "It was only live for a short while, and the unit has passed to the next person.",
    )
}

async fn reserve_page(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let expired = || ended_link(&token_text);
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return expired();
    };
    let result = async {
        let Some(r) = s.store.request(&token.request()).await? else {
            return Ok(expired());
        };
        if !r.reserve_link_is(&token) {
            return Ok(expired());
        }
        let name = s
            .store
            .catalog_entry(&r.sku)
            .await?
            .map_or_else(|| r.sku.to_string(), |e| e.name);
        let now = s.clock.now_ms();
        Ok::<_, AppError>(match r.state {
            RequestState::Offered { expires_ms, .. } if now < expires_ms => {
                let body = text(&format!("{name} is back, and one is waiting for you."))
                    + &note(&format!(
                        "This link holds one for {} more.",
                        time_left(expires_ms - now)
                    ))
                    + &button(
                        &format!("/r/{token_text}"),
                        "Hold mine and go to checkout",
                        false,
                    );
                page(StatusCode::OK, &format!("Reserve your {name}"), &body)
            }
            RequestState::Held { expires_ms, .. } if now < expires_ms => {
                let body = text(&format!(
                    "One {name} is held for you for {} more.",
                    time_left(expires_ms - now)
                )) + &button(&format!("/r/{token_text}"), "Go to checkout", false);
                page(StatusCode::OK, "It's held for you", &body)
            }
            RequestState::Bought { .. } => gone(&token_text, "This link was already used to buy."),
            _ => expired(),
        })
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

async fn reserve(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let expired = || ended_link(&token_text);
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return expired();
    };
    let result = async {
        let settings = s.settings().await?;
        let now = s.clock.now_ms();
        let outcome = s
            .store
            .take_hold(
                &token,
                HoldId::from_random(s.random()),
                now,
                settings.hold_window,
            )
            .await?;
        let entry = s.store.catalog_entry(token.sku()).await?;
        let name = entry
            .as_ref()
            .map_or_else(|| token.sku().to_string(), |e| e.name.clone());
        Ok::<_, AppError>(match outcome {
            HoldOutcome::Held { hold, expires } | HoldOutcome::AlreadyHeld { hold, expires } => {
                tracing::info!(sku = %token.sku(), "hold taken");
                match entry.as_ref().and_then(|e| e.checkout_for(&hold)) {
                    Some(url) => (StatusCode::SEE_OTHER, [(header::LOCATION, url)]).into_response(),
                    None => page(
                        StatusCode::OK,
                        "It's held for you",
                        &(text(&format!(
                            "One {name} is held for you for {}.",
                            time_left(expires - now)
                        )) + &note(&format!(
                            "Your hold number is {hold}. Quote it at checkout."
                        ))),
                    ),
                }
            }
            HoldOutcome::SoldOutAgain => page(
                StatusCode::CONFLICT,
                "Sold out again, sorry",
                &(text(&format!("The last {name} went moments before you tapped."))
                    + &note(
                        "You keep your place at the front of the line, and you'll be told first when another one frees up.",
                    )),
            ),
            HoldOutcome::Refused(HoldRefused::Used) => {
                gone(&token_text, "This link was already used to buy.")
            }
            HoldOutcome::Refused(HoldRefused::Expired | HoldRefused::NotOffered) => expired(),
        })
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

async fn rejoin(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let invalid = || {
        page(
            StatusCode::NOT_FOUND,
            "We couldn't do that",
            &text("This link is not valid any more. Please sign up again from the product page."),
        )
    };
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return invalid();
    };
    let result = async {
        let Some(r) = s.store.request(&token.request()).await? else {
            return Ok(invalid());
        };
        if !r.reserve_link_is(&token) && !r.optout_link_is(&token) {
            return Ok(invalid());
        }
        let settings = s.settings().await?;
        let Some(entry) = s.store.catalog_entry(&r.sku).await? else {
            return Ok(invalid());
        };
        let request = NewRequest {
            id: RequestId::from_random(s.random()),
            sku: r.sku.clone(),
            name: r.name.clone(),
            contact: r.contact.clone(),
            contact_key: r.contact_key.clone(),
            now: s.clock.now_ms(),
            shards: entry.shards,
            lifetime_ms: settings.request_lifetime.as_millis(),
        };
        let stored = match s.store.join(request).await? {
            JoinOutcome::Joined(r) | JoinOutcome::AlreadyWaiting(r) => r,
            JoinOutcome::OptedOut => {
                return Ok(page(
                    StatusCode::CONFLICT,
                    "You opted out",
                    &text("You asked us not to contact you, so we haven't added you."),
                ));
            }
        };
        let position = s.store.position(&stored, entry.shards).await?;
        let body = match position {
            Some(p) => text(&format!("You're number {p} in line for {}.", entry.name)),
            None => text(&format!("You're already on the list for {}.", entry.name)),
        };
        Ok::<_, AppError>(page(StatusCode::OK, "You're back in the queue", &body))
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

async fn optout_page(Path(token_text): Path<String>) -> Response {
    let body = text(
        "You won't get any more messages from us, about any product, on this address or number.",
    ) + &button(&format!("/o/{token_text}"), "Stop all messages", false);
    page(StatusCode::OK, "Stop messages?", &body)
}

async fn optout(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let invalid = || {
        page(
            StatusCode::NOT_FOUND,
            "We couldn't find that link",
            &text("If you keep getting messages, reply STOP to a text or contact the shop."),
        )
    };
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return invalid();
    };
    match s.store.opt_out(&token, s.clock.now_ms()).await {
        Ok(OptOutOutcome::OptedOut { ended }) => {
            tracing::info!(sku = %token.sku(), ended, "opted out");
            page(
                StatusCode::OK,
                "You're opted out",
                &text("You won't hear from us again."),
            )
        }
        Ok(OptOutOutcome::NotFound) => invalid(),
        Err(e) => unavailable(&e.into()),
    }
}
