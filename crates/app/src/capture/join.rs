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
    let secrets = s.keyring.keys().await?;
    // Every contact the sign-up names passes before anything is stored.
    let mut keys = Vec::new();
    for contact in std::iter::once(&new.contact).chain(&new.also) {
        match admitted(s, &t, &settings, contact, &secrets.contact_pepper, now).await? {
            Ok(key) => keys.push(key),
            Err(refused) => return Ok(refused),
        }
    }
    let consent_source = restock_core::contact::source_key(
        &secrets.contact_pepper,
        &consent_source(client, headers, &settings),
    );
    // Told on both channels: two requests, each naming the other.
    let ids: Vec<RequestId> = keys
        .iter()
        .map(|_| RequestId::from_random(s.random()))
        .collect();
    let mut answers = Vec::new();
    for (i, (contact, contact_key)) in std::iter::once(&new.contact)
        .chain(&new.also)
        .zip(keys)
        .enumerate()
    {
        let manage = LinkToken::new(new.sku.clone(), ids[i], s.random());
        let request = Joining {
            id: ids[i],
            contact_key,
            manage: &manage,
            consent_source: consent_source.clone(),
            together: (ids.len() == 2).then(|| ids[1 - i]),
            shards: entry.shards,
            // The number's request joins just behind the address's, in
            // every store's order alike.
            now: now + i as restock_core::Millis,
        }
        .request(&new, contact.clone(), &settings);
        let (status, stored) = match s.store.join(request).await? {
            JoinOutcome::Joined(r) => {
                metrics::count(Metric::SignUps, 1);
                (StatusCode::CREATED, r)
            }
            JoinOutcome::AlreadyWaiting(r) => (StatusCode::OK, r),
            // One channel's opt-out stands; the other is kept.
            JoinOutcome::OptedOut => continue,
        };
        let position = after_saving(s, &entry, &stored, &settings, status, now).await;
        answers.push(Answer {
            stored,
            position,
            status,
            manage,
        });
    }
    if answers.is_empty() {
        return Ok(said(&t, StatusCode::CONFLICT, "error-opted-out"));
    }
    Ok(join_answer(headers, &settings, &entry, answers))
}

/// Whether `contact` may sign up: texts allowed to its country, no opt-out
/// (one recorded under a former spelling is carried over), within its
/// per-contact limit. Its key, or the refusal.
async fn admitted(
    s: &Services,
    t: &Texts,
    settings: &Settings,
    contact: &Contact,
    pepper: &[u8],
    now: restock_core::Millis,
) -> Result<Result<restock_core::ContactKey, Response>, AppError> {
    if let Contact::Sms(phone) = contact
        && let Err(refusal) = phone.sms_allowed(&settings.sms_countries)
    {
        let field = "phone".into();
        let message = refusal.to_string();
        return Ok(Err(field_errors(t, vec![FieldError { field, message }])));
    }
    let contact_key = contact.key(pepper);
    // An opt-out recorded before addresses were canonical (an
    // internationalised domain keyed as typed) holds for good: it is
    // carried over to the canonical key and the sign-up refused.
    if let Some(former) = contact.former_key(pepper)
        && s.store.is_opted_out(&former).await?
    {
        s.opt_out(&contact_key, restock_core::OptOutVia::Earlier, now)
            .await?;
        return Ok(Err(said(t, StatusCode::CONFLICT, "error-opted-out")));
    }
    let limits = settings.limits;
    let by_contact = format!("contact:{contact_key}");
    if let Some(refused) =
        limited(s, t, &by_contact, limits.joins_per_contact, &limits, now).await?
    {
        return Ok(Err(refused));
    }
    Ok(Ok(contact_key))
}

/// One request a sign-up saved, and what its shopper is told of it.
struct Answer {
    stored: restock_store::Request,
    position: Option<usize>,
    status: StatusCode,
    manage: LinkToken,
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
    together: Option<RequestId>,
    shards: u16,
    now: restock_core::Millis,
}

impl Joining<'_> {
    /// The request to store: its lifetime and confirmation window from the
    /// settings, and the consent on record.
    fn request(
        self,
        new: &restock_core::join::JoinDetails,
        contact: Contact,
        settings: &Settings,
    ) -> NewRequest {
        NewRequest {
            id: self.id,
            sku: new.sku.clone(),
            name: new.name.clone(),
            contact,
            contact_key: self.contact_key,
            now: self.now,
            shards: self.shards,
            lifetime_ms: settings.request_lifetime.as_millis(),
            manage_hash: Some(self.manage.secret_hash()),
            language: Some(settings.language_for(new.language.as_ref())),
            zone: new.zone.clone(),
            confirm_window_ms: settings
                .confirm
                .then(|| settings.confirm_window.as_millis()),
            consent: Some(restock_store::Consent {
                version: settings.consent_version.clone(),
                at: self.now,
                source: self.consent_source,
                confirmed_at: None,
                together: self.together,
            }),
        }
    }
}

/// What the shopper is told after joining: a page for a form post, JSON
/// for the widget (the manage token only to the browser that created the
/// place; a repeat tap learns the place in line and nothing more). Told on
/// both channels, the number's request is answered under `also`; a channel
/// that opted out is left out and the other answers alone.
fn join_answer(
    headers: &HeaderMap,
    settings: &Settings,
    entry: &restock_core::CatalogueEntry,
    answers: Vec<Answer>,
) -> Response {
    let mut answers = answers.into_iter();
    let first = answers
        .next()
        .expect("a sign-up saves a request or refuses");
    if wants_html(headers) {
        return join_page(settings, entry, &first);
    }
    let mut body = answer_json(settings, &first);
    if let Some(also) = answers.next() {
        body["also"] = answer_json(settings, &also);
    }
    (first.status, Json(body)).into_response()
}

/// The page a form post is answered with.
fn join_page(settings: &Settings, entry: &restock_core::CatalogueEntry, a: &Answer) -> Response {
    let unconfirmed = a.stored.state == RequestState::Unconfirmed;
    let t = words(settings, &a.stored);
    let (contact, window) = (a.stored.contact.masked(), t.window(settings.confirm_window));
    let body = match a.position {
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
    page(&t, a.status, &title, &body)
}

/// One saved request as JSON.
fn answer_json(settings: &Settings, a: &Answer) -> serde_json::Value {
    let t = words(settings, &a.stored);
    let mut body = status_json(&a.stored, a.position);
    if a.stored.state == RequestState::Unconfirmed {
        let (contact, window) = (a.stored.contact.masked(), t.window(settings.confirm_window));
        body["confirm_by_ms"] = json!(a.stored.stale_at);
        body["message"] = json!(t.get(
            "join-check-short",
            &[arg("contact", &contact), arg("window", &window)]
        ));
    }
    if a.status == StatusCode::CREATED {
        body["manage_token"] = json!(a.manage.to_string());
    } else {
        // A repeat tap proves only that the caller knows an address: the place
        // in line, but nothing that reads or changes the request.
        if let Some(fields) = body.as_object_mut() {
            fields.remove("request_id");
            fields.remove("expires_at_ms");
        }
    }
    body
}
