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

use std::net::IpAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Extension, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use restock_core::client::{client_address, limited_network};
use restock_core::join::{FieldError, JoinForm, JoinInput, MAX_BODY_BYTES};
use restock_core::lang::arg;
use restock_core::{
    Contact, HoldId, HoldRefused, LinkToken, RequestId, RequestState, Settings, Sku, Texts,
};
use restock_store::{
    CancelOutcome, ConfirmOutcome, HoldOutcome, JoinOutcome, NewRequest, OptOutOutcome,
    RateDecision,
};
use serde_json::json;

use crate::metrics::{self, Metric};
use crate::pages::{button, note, page, text};
use crate::{AppError, Services, alerts};

mod links;
use links::{
    confirm, confirm_page, manage_leave, manage_page, optout, optout_page, rejoin, reserve,
    reserve_page,
};

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

/// Why a body could not be read as a notify-me form.
enum BodyError {
    Malformed(String),
    UnsupportedType,
}

impl BodyError {
    fn answer(self, t: &Texts) -> Response {
        match self {
            Self::Malformed(message) => field_errors(
                t,
                vec![FieldError {
                    field: "body".into(),
                    message,
                }],
            ),
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

async fn join(
    State(s): Shared,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = match parse_form(&headers, &body) {
        Ok(form) => form,
        Err(e) => return e.answer(&caller_words(&s, None, &headers).await),
    };
    let new = match form.parse() {
        Ok(JoinInput::Request(new)) => new,
        Ok(JoinInput::Honeypot) => {
            tracing::info!("honeypot filled: answered and stored nothing");
            let fake = RequestId::from_random(s.random());
            let sku = form.sku.unwrap_or_default();
            // Shaped like a real 201, manage token and all; it manages nothing.
            let token = Sku::try_from(sku.as_str())
                .map(|valid| LinkToken::new(valid, fake, s.random()).to_string())
                .unwrap_or_else(|_| format!("{sku}~{fake}.{}", RequestId::from_random(s.random())));
            return (
                StatusCode::CREATED,
                Json(json!({ "request_id": fake, "sku": sku, "position": 1, "status": "waiting", "manage_token": token })),
            )
                .into_response();
        }
        Err(errors) => {
            let t = caller_words(&s, form.language.as_deref(), &headers).await;
            return field_errors(&t, errors);
        }
    };
    match join_request(&s, new, client.map(|Extension(c)| c), &headers).await {
        Ok(response) => response,
        Err(e) => unavailable_in(
            &caller_words(&s, form.language.as_deref(), &headers).await,
            &e,
        ),
    }
}

/// What `GET /widget` answers, under the name the widget looks up: each
/// `widget-*` message, and the page titles it shares.
const WIDGET_WORDS: &[(&str, &str)] = &[
    ("check-title", "join-check-title"),
    ("on-list-title", "page-on-list-title"),
    ("leave", "page-leave-button"),
    ("left-title", "page-left-title"),
];

#[derive(serde::Deserialize)]
struct WidgetQuery {
    language: Option<String>,
}

/// The widget's words in the closest language the shop offers to the one
/// its page declares (else the browser's): every message it shows before a
/// sign-up reaches capture. `{product}` and `{position}` stay for the
/// widget to fill in. Cached by browsers and CDNs for five minutes.
async fn widget_words(
    State(s): Shared,
    axum::extract::Query(q): axum::extract::Query<WidgetQuery>,
    headers: HeaderMap,
) -> Response {
    let t = caller_words(&s, q.language.as_deref(), &headers).await;
    let placeholders = [
        arg("product", "{product}"),
        arg("position", "{position}"),
        arg("when", "{when}"),
    ];
    let mut words = serde_json::Map::new();
    for (id, _) in restock_core::lang::MESSAGES {
        if let Some(name) = id.strip_prefix("widget-") {
            words.insert(name.to_owned(), json!(t.get(id, &placeholders)));
        }
    }
    for (name, id) in WIDGET_WORDS {
        words.insert((*name).to_owned(), json!(t.word(id)));
    }
    let language = t.language();
    let mut r = Json(json!({
        "language": language.to_string(),
        "dir": language.dir(),
        "words": words,
    }))
    .into_response();
    let h = r.headers_mut();
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    h.insert(header::VARY, HeaderValue::from_static("Accept-Language"));
    r
}

/// What the widget shows of an item before a sign-up: whether it is sold
/// at all (an ended item takes no sign-ups) and its launch, if one is
/// scheduled and still to come (the widget says when, on the shopper's
/// own clock). Cached for a minute.
async fn item(State(s): Shared, Path(sku): Path<String>) -> Response {
    let entry = match restock_core::Sku::try_from(sku.as_str()) {
        Ok(sku) => s.store.catalogue_entry(&sku).await,
        Err(_) => Ok(None),
    };
    let entry = match entry {
        Ok(Some(entry)) => entry,
        Ok(None) => return error(StatusCode::NOT_FOUND, "no such item"),
        Err(e) => return unavailable(&e.into()),
    };
    let now = s.clock.now_ms();
    let mut r = Json(json!({
        "sku": entry.sku,
        "ended": entry.ended.is_some(),
        "launch_at_ms": entry.launch_at.filter(|at| *at > now),
    }))
    .into_response();
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=60"),
    );
    r
}

/// The words for a caller of the JSON API: the language its sign-up asks
/// for, else its browser's; English as shipped when the settings cannot
/// be read.
async fn caller_words(s: &Services, asked: Option<&str>, headers: &HeaderMap) -> Texts {
    let Ok(settings) = s.settings().await else {
        return Texts::english();
    };
    match asked.and_then(|a| a.trim().parse::<restock_core::Language>().ok()) {
        Some(language) => settings.texts(&settings.language_for(Some(&language))),
        None => visitor_words(&settings, headers),
    }
}

/// Counts a new sign-up per item and window (one counter per queue shard, so
/// a hyped item's count is no hot key) and tells the team, once per window,
/// when an item's sign-ups burst past `signup_burst`.
async fn note_signup(
    s: &Services,
    entry: &restock_core::CatalogueEntry,
    request: &restock_store::Request,
    settings: &restock_core::Settings,
    now: restock_core::Millis,
) -> Result<(), AppError> {
    let limits = settings.limits;
    let per_shard = limits.signup_burst.div_ceil(u32::from(entry.shards.max(1)));
    let window = limits.window.as_millis();
    let counted = s
        .store
        .rate_limit(
            &format!("signups:{}:{}", entry.sku, request.shard),
            per_shard,
            window,
            now,
        )
        .await?;
    // Once per shard and window, then once per item: every sign-up past
    // the burst writing one item-wide key would make it a hot partition.
    if counted.is_limited()
        && !s
            .store
            .rate_limit(
                &format!("signups-alerted:{}:{}", entry.sku, request.shard),
                1,
                window,
                now,
            )
            .await?
            .is_limited()
        && !s
            .store
            .rate_limit(&format!("signups-alerted:{}", entry.sku), 1, window, now)
            .await?
            .is_limited()
    {
        tracing::warn!(sku = %entry.sku, burst = limits.signup_burst, window = %limits.window, "sign-up burst");
        s.alert(alerts::signup_burst(
            entry,
            limits.signup_burst,
            limits.window,
        ))
        .await;
    }
    Ok(())
}

async fn join_request(
    s: &Services,
    new: restock_core::join::JoinDetails,
    client: Option<ClientAddr>,
    headers: &HeaderMap,
) -> Result<Response, AppError> {
    let now = s.clock.now_ms();
    let settings = s.settings().await?;
    let t = settings.texts(&settings.language_for(new.language.as_ref()));
    let limits = settings.limits;
    if let RateDecision::Limited { retry_after_ms } = s
        .store
        .rate_limit(
            &client_key(client, headers, &settings),
            limits.joins_per_ip,
            limits.window.as_millis(),
            now,
        )
        .await?
    {
        return Ok(too_many(&t, retry_after_ms));
    }
    let Some(entry) = s.store.catalogue_entry(&new.sku).await? else {
        return Ok(said(&t, StatusCode::NOT_FOUND, "error-unknown-item"));
    };
    if entry.ended.is_some() {
        return Ok(said(&t, StatusCode::GONE, "error-item-ended"));
    }
    if let Contact::Sms(phone) = &new.contact
        && let Err(refusal) = phone.sms_allowed(&settings.sms_countries)
    {
        return Ok(field_errors(
            &t,
            vec![FieldError {
                field: "phone".into(),
                message: refusal.to_string(),
            }],
        ));
    }
    let secrets = s.keyring.keys().await?;
    let contact_key = new.contact.key(&secrets.contact_pepper);
    // An opt-out recorded before addresses were canonical (an
    // internationalised domain keyed as typed) holds for good: it is
    // carried over to the canonical key and the sign-up refused.
    if let Some(former) = new.contact.former_key(&secrets.contact_pepper)
        && s.store.is_opted_out(&former).await?
    {
        s.store.opt_out_contact(&contact_key, now).await?;
        return Ok(said(&t, StatusCode::CONFLICT, "error-opted-out"));
    }
    if let RateDecision::Limited { retry_after_ms } = s
        .store
        .rate_limit(
            &format!("contact:{contact_key}"),
            limits.joins_per_contact,
            limits.window.as_millis(),
            now,
        )
        .await?
    {
        return Ok(too_many(&t, retry_after_ms));
    }
    let id = RequestId::from_random(s.random());
    // Given once, to this browser only: it is what reads or leaves the request.
    let manage = LinkToken::new(new.sku.clone(), id, s.random());
    let consent_source = restock_core::contact::source_key(
        &secrets.contact_pepper,
        &consent_source(client, headers, &settings),
    );
    let request = Joining {
        id,
        contact_key,
        manage: &manage,
        consent_source,
        shards: entry.shards,
        now,
    }
    .request(new, &settings);
    let (status, stored) = match s.store.join(request).await? {
        JoinOutcome::Joined(r) => {
            metrics::count(Metric::SignUps, 1);
            (StatusCode::CREATED, r)
        }
        JoinOutcome::AlreadyWaiting(r) => (StatusCode::OK, r),
        JoinOutcome::OptedOut => {
            return Ok(said(&t, StatusCode::CONFLICT, "error-opted-out"));
        }
    };
    // The sign-up is saved: from here on a failure is logged, never
    // answered as "nothing was saved".
    if status == StatusCode::CREATED
        && let Err(e) = note_signup(s, &entry, &stored, &settings, now).await
    {
        tracing::warn!(error = %e, sku = %stored.sku, "the sign-up burst count was not kept");
    }
    let position = s
        .store
        .position(&stored, entry.shards)
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, sku = %stored.sku, "saved; its position could not be read");
            None
        });
    tracing::info!(sku = %stored.sku, contact = %stored.contact.masked(), new = status == StatusCode::CREATED, ?position, "notify-me");
    Ok(join_answer(
        headers, &settings, &entry, &stored, position, status, &manage,
    ))
}

/// A new sign-up's own parts, beside what the shopper typed.
struct Joining<'a> {
    id: RequestId,
    contact_key: restock_core::ContactKey,
    manage: &'a LinkToken,
    consent_source: String,
    shards: u16,
    now: restock_core::Millis,
}

impl Joining<'_> {
    /// The request to store: its lifetime and confirmation window from the
    /// settings, and the consent on record.
    fn request(self, new: restock_core::join::JoinDetails, settings: &Settings) -> NewRequest {
        NewRequest {
            id: self.id,
            sku: new.sku,
            name: new.name,
            contact: new.contact,
            contact_key: self.contact_key,
            now: self.now,
            shards: self.shards,
            lifetime_ms: settings.request_lifetime.as_millis(),
            manage_hash: Some(self.manage.secret_hash()),
            language: Some(settings.language_for(new.language.as_ref())),
            zone: new.zone,
            confirm_window_ms: settings
                .confirm
                .then(|| settings.confirm_window.as_millis()),
            consent: Some(restock_store::Consent {
                version: settings.consent_version.clone(),
                at: self.now,
                source: self.consent_source,
                confirmed_at: None,
            }),
        }
    }
}

/// What the shopper is told after joining: a page for a form post, JSON
/// for the widget (the manage token only to the browser that created the
/// place; a repeat tap learns the place in line and nothing more).
fn join_answer(
    headers: &HeaderMap,
    settings: &Settings,
    entry: &restock_core::CatalogueEntry,
    stored: &restock_store::Request,
    position: Option<usize>,
    status: StatusCode,
    manage: &LinkToken,
) -> Response {
    let unconfirmed = stored.state == RequestState::Unconfirmed;
    let t = words(settings, stored);
    let (contact, window) = (stored.contact.masked(), t.window(settings.confirm_window));
    if wants_html(headers) {
        let body = match position {
            Some(p) if unconfirmed => text(&t.get(
                "join-check",
                &[
                    arg("contact", &contact),
                    arg("window", &window),
                    ("position", p.into()),
                    arg("product", &entry.name),
                ],
            )),
            Some(p) => text(&t.get(
                "page-position-told-once",
                &[("position", p.into()), arg("product", &entry.name)],
            )),
            None => text(&t.get("page-on-list", &[arg("product", &entry.name)])),
        };
        let title = if unconfirmed {
            t.word("join-check-title")
        } else {
            t.word("page-on-list-title")
        };
        return page(&t, status, &title, &body);
    }
    let mut body = status_json(stored, position);
    if unconfirmed {
        body["confirm_by_ms"] = json!(stored.stale_at);
        body["message"] = json!(t.get(
            "join-check-short",
            &[arg("contact", &contact), arg("window", &window)]
        ));
    }
    if status == StatusCode::CREATED {
        body["manage_token"] = json!(manage.to_string());
    } else {
        // A repeat tap proves only that the caller knows an address: the place
        // in line, but nothing that reads or changes the request.
        if let Some(fields) = body.as_object_mut() {
            fields.remove("request_id");
            fields.remove("expires_at_ms");
        }
    }
    (status, Json(body)).into_response()
}

/// The request the caller may manage: `id` from the path, and the manage
/// token the joining browser was given (`Authorization: Bearer <token>`).
/// Unknown ids, missing and wrong tokens all answer the same 404.
async fn managed(
    s: &Services,
    id: &str,
    headers: &HeaderMap,
) -> Result<Option<restock_store::Request>, AppError> {
    let Ok(id) = id.parse::<RequestId>() else {
        return Ok(None);
    };
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|t| t.trim().parse::<LinkToken>().ok());
    let Some(token) = token.filter(|t| t.request() == id) else {
        return Ok(None);
    };
    Ok(s.store
        .request(&id)
        .await?
        .filter(|r| r.manage_link_is(&token)))
}

/// A stored request's status as capture answers it (`Request` here is
/// axum's HTTP request, so the store's record goes by its path).
fn status_json(r: &restock_store::Request, position: Option<usize>) -> serde_json::Value {
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

async fn status(State(s): Shared, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let result = async {
        let Some(r) = managed(&s, &id, &headers).await? else {
            let t = caller_words(&s, None, &headers).await;
            return Ok(said(&t, StatusCode::NOT_FOUND, "error-no-request"));
        };
        let shards = s
            .store
            .catalogue_entry(&r.sku)
            .await?
            .map_or(1, |e| e.shards);
        let position = s.store.position(&r, shards).await?;
        Ok::<_, AppError>(Json(status_json(&r, position)).into_response())
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

async fn cancel(State(s): Shared, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let r = match managed(&s, &id, &headers).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            let t = caller_words(&s, None, &headers).await;
            return said(&t, StatusCode::NOT_FOUND, "error-no-request");
        }
        Err(e) => return unavailable(&e),
    };
    let id = r.id;
    match s.store.cancel(&id, s.clock.now_ms()).await {
        Ok(CancelOutcome::Cancelled) => Json(json!({ "request_id": id, "status": "cancelled" })).into_response(),
        Ok(CancelOutcome::NotLive(status)) => (
            StatusCode::CONFLICT,
            Json(json!({ "request_id": id, "status": status, "error": format!("this request is already {status}") })),
        )
            .into_response(),
        Ok(CancelOutcome::NotFound) => {
            let t = caller_words(&s, None, &headers).await;
            said(&t, StatusCode::NOT_FOUND, "error-no-request")
        }
        Err(e) => unavailable(&e.into()),
    }
}
