//! POST /join: the notify-me form (JSON or a form post), its rate limits, the
//! request written, and the answer: the place, or "check your inbox".

use axum::body::Bytes;
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use restock_core::join::{FieldError, JoinForm, JoinInput};
use restock_core::lang::arg;
use restock_core::{Contact, LinkToken, RequestId, RequestState, Settings, Sku, Texts};
use restock_store::{JoinOutcome, NewRequest, RateDecision};
use serde_json::json;

use super::item::caller_words;
use super::status::status_json;
use super::{
    ClientAddr, Shared, client_key, consent_source, error, field_errors, said, too_many,
    unavailable_in, wants_html, words,
};
use crate::metrics::{self, Metric};
use crate::pages::{page, text};
use crate::{AppError, Services, alerts};

/// Why a body could not be read as a notify-me form.
pub(super) enum BodyError {
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

pub(super) fn parse_form(headers: &HeaderMap, body: &[u8]) -> Result<JoinForm, BodyError> {
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

pub(super) async fn join(
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
            let token = Sku::from_shop(&sku)
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

/// Counts a new sign-up per item and window (one counter per queue shard, so
/// a hyped item's count is no hot key) and tells the team, once per window,
/// when an item's sign-ups burst past `signup_burst`.
pub(super) async fn note_signup(
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

pub(super) async fn join_request(
    s: &Services,
    new: restock_core::join::JoinDetails,
    client: Option<ClientAddr>,
    headers: &HeaderMap,
) -> Result<Response, AppError> {
    let now = s.clock.now_ms();
    let settings = s.settings().await?;
    let t = settings.texts(&settings.language_for(new.language.as_ref()));
    let limits = settings.limits;
    let by_address = client_key(client, headers, &settings);
    if let Some(refused) = limited(s, &t, &by_address, limits.joins_per_ip, &limits, now).await? {
        return Ok(refused);
    }
    let Some(entry) = s.entry(&new.sku).await? else {
        return Ok(said(&t, StatusCode::NOT_FOUND, "error-unknown-item"));
    };
    if entry.ended.is_some() {
        return Ok(said(&t, StatusCode::GONE, "error-item-ended"));
    }
    if let Contact::Sms(phone) = &new.contact
        && let Err(refusal) = phone.sms_allowed(&settings.sms_countries)
    {
        let field = "phone".into();
        let message = refusal.to_string();
        return Ok(field_errors(&t, vec![FieldError { field, message }]));
    }
    let secrets = s.keyring.keys().await?;
    let contact_key = new.contact.key(&secrets.contact_pepper);
    // An opt-out recorded before addresses were canonical (an
    // internationalised domain keyed as typed) holds for good: it is
    // carried over to the canonical key and the sign-up refused.
    if let Some(former) = new.contact.former_key(&secrets.contact_pepper)
        && s.store.is_opted_out(&former).await?
    {
        s.opt_out(&contact_key, restock_core::OptOutVia::Earlier, now)
            .await?;
        return Ok(said(&t, StatusCode::CONFLICT, "error-opted-out"));
    }
    let by_contact = format!("contact:{contact_key}");
    if let Some(refused) =
        limited(s, &t, &by_contact, limits.joins_per_contact, &limits, now).await?
    {
        return Ok(refused);
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
    let position = after_saving(s, &entry, &stored, &settings, status, now).await;
    Ok(join_answer(
        headers, &settings, &entry, &stored, position, status, &manage,
    ))
}

/// What follows a sign-up saved (`status` 201 new, 200 existing): its
/// burst counted and its place read. A failure here is logged, never
/// answered as "nothing was saved".
async fn after_saving(
    s: &Services,
    entry: &restock_core::CatalogueEntry,
    stored: &restock_store::Request,
    settings: &Settings,
    status: StatusCode,
    now: restock_core::Millis,
) -> Option<usize> {
    if status == StatusCode::CREATED
        && let Err(e) = note_signup(s, entry, stored, settings, now).await
    {
        tracing::warn!(error = %e, sku = %stored.sku, "the sign-up burst count was not kept");
    }
    let position = s.store.position(stored, entry.shards).await;
    let position = position.unwrap_or_else(|e| {
        tracing::warn!(error = %e, sku = %stored.sku, "saved; its position could not be read");
        None
    });
    tracing::info!(sku = %stored.sku, contact = %stored.contact.masked(), new = status == StatusCode::CREATED, ?position, "notify-me");
    position
}

/// The 429 for a sign-up past `limit` on `key` in the settings' window, if
/// it is.
async fn limited(
    s: &Services,
    t: &Texts,
    key: &str,
    limit: u32,
    limits: &restock_core::settings::Limits,
    now: restock_core::Millis,
) -> Result<Option<Response>, AppError> {
    let window = limits.window.as_millis();
    Ok(match s.store.rate_limit(key, limit, window, now).await? {
        RateDecision::Limited { retry_after_ms } => Some(too_many(t, retry_after_ms)),
        RateDecision::Allowed => None,
    })
}

/// A new sign-up's own parts, beside what the shopper typed.
pub(super) struct Joining<'a> {
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
pub(super) fn join_answer(
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
