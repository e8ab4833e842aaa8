//! A local HTTP server that speaks Klaviyo's Events API as its reference
//! describes it: `POST /api/events` with the private key in
//! `Authorization: Klaviyo-API-Key …`, a `revision` header, a JSON:API
//! document (`data.type` `event`, the metric and profile as related
//! documents); 202 with no body when accepted, JSON:API `errors` when not,
//! and 429 with `Retry-After` when asked to.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The private key the fake accepts.
pub const KLAVIYO_KEY: &str = "pk_test_0123456789abcdef0123456789abcdef01";

/// A scripted answer, taken before the fake's own.
#[derive(Debug, Clone)]
pub enum KlaviyoAnswer {
    /// 429 with `Retry-After: N`.
    RateLimited(u64),
    /// 503.
    Unavailable,
}

/// One accepted event.
#[derive(Debug, Clone)]
pub struct KlaviyoEvent {
    /// The `revision` header.
    pub revision: String,
    /// The document.
    pub body: Value,
}

/// A local HTTP server that speaks Klaviyo's Events API.
pub struct KlaviyoFake {
    /// Its base URL (the keys secret's `klaviyo.api`).
    pub url: String,
    /// Every event accepted (202), in order.
    pub accepted: Arc<Mutex<Vec<KlaviyoEvent>>>,
    /// Answers to give first, in order.
    pub script: Arc<Mutex<VecDeque<KlaviyoAnswer>>>,
    /// Every request's status, in order.
    pub answered: Arc<Mutex<Vec<u16>>>,
}

fn errors(status: StatusCode, code: &str, title: &str, detail: &str, pointer: &str) -> Response {
    (
        status,
        [("content-type", "application/vnd.api+json")],
        json!({"errors": [{
            "id": "9c4e1b53-2c5c-4b6e-9f0a-1d2e3f4a5b6c", "status": status.as_u16(),
            "code": code, "title": title, "detail": detail, "source": {"pointer": pointer},
        }]})
        .to_string(),
    )
        .into_response()
}

/// What is wrong with a Create Event document, as Klaviyo would point at it.
fn invalid(body: &Value) -> Option<(&'static str, &'static str)> {
    let a = &body["data"]["attributes"];
    if body["data"]["type"] != "event" {
        return Some(("/data/type", "`type` must be `event`"));
    }
    if a["metric"]["data"]["type"] != "metric"
        || !a["metric"]["data"]["attributes"]["name"].is_string()
    {
        return Some(("/data/attributes/metric", "a metric needs a name"));
    }
    let p = &a["profile"]["data"]["attributes"];
    if a["profile"]["data"]["type"] != "profile"
        || !(p["email"].is_string() || p["phone_number"].is_string())
    {
        return Some((
            "/data/attributes/profile",
            "a profile needs an email or a phone_number",
        ));
    }
    if !a["properties"].is_object() {
        return Some((
            "/data/attributes/properties",
            "properties must be an object",
        ));
    }
    None
}

impl KlaviyoFake {
    /// Starts the fake on a free loopback port.
    pub async fn start() -> Self {
        use axum::extract::State;
        type Shared = (
            Arc<Mutex<Vec<KlaviyoEvent>>>,
            Arc<Mutex<VecDeque<KlaviyoAnswer>>>,
            Arc<Mutex<Vec<u16>>>,
        );
        async fn create_event(
            State((accepted, script, answered)): State<Shared>,
            headers: HeaderMap,
            body: String,
        ) -> Response {
            let header = |n: &str| {
                headers
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            let response = if header("authorization") != format!("Klaviyo-API-Key {KLAVIYO_KEY}") {
                errors(
                    StatusCode::UNAUTHORIZED,
                    "not_authenticated",
                    "Authentication credentials were not provided.",
                    "Missing or invalid private key.",
                    "/",
                )
            } else if !header("revision")
                .chars()
                .take(10)
                .all(|c| c.is_ascii_digit() || c == '-')
                || header("revision").len() < 10
            {
                errors(
                    StatusCode::BAD_REQUEST,
                    "invalid",
                    "Invalid input.",
                    "Missing or invalid revision header.",
                    "/",
                )
            } else if !header("content-type").starts_with("application/vnd.api+json")
                && !header("content-type").starts_with("application/json")
            {
                errors(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "Unsupported media type.",
                    "",
                    "/",
                )
            } else if let Some(answer) = script.lock().expect("lock").pop_front() {
                match answer {
                    KlaviyoAnswer::RateLimited(seconds) => (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("retry-after", seconds.to_string())],
                        json!({"errors": [{"status": 429, "code": "throttled", "title": "Request was throttled.", "detail": format!("Request was throttled. Expected available in {seconds} seconds.")}]}).to_string(),
                    )
                        .into_response(),
                    KlaviyoAnswer::Unavailable => StatusCode::SERVICE_UNAVAILABLE.into_response(),
                }
            } else {
                match serde_json::from_str::<Value>(&body) {
                    Err(_) => errors(
                        StatusCode::BAD_REQUEST,
                        "parse_error",
                        "Malformed JSON.",
                        "",
                        "/",
                    ),
                    Ok(doc) => match invalid(&doc) {
                        Some((pointer, detail)) => errors(
                            StatusCode::BAD_REQUEST,
                            "invalid",
                            "Invalid input.",
                            detail,
                            pointer,
                        ),
                        None => {
                            accepted.lock().expect("lock").push(KlaviyoEvent {
                                revision: header("revision"),
                                body: doc,
                            });
                            StatusCode::ACCEPTED.into_response()
                        }
                    },
                }
            };
            answered
                .lock()
                .expect("lock")
                .push(response.status().as_u16());
            response
        }
        async fn get_accounts(headers: HeaderMap) -> Response {
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            if auth != format!("Klaviyo-API-Key {KLAVIYO_KEY}") {
                return errors(
                    StatusCode::UNAUTHORIZED,
                    "not_authenticated",
                    "Authentication credentials were not provided.",
                    "Missing or invalid private key.",
                    "/",
                );
            }
            (
                StatusCode::OK,
                [("content-type", "application/vnd.api+json")],
                json!({"data": [{"type": "account", "id": "AbC123",
                    "attributes": {"contact_information": {"organization_name": "Loom & Last"}}}]})
                .to_string(),
            )
                .into_response()
        }
        let accepted = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::new()));
        let answered = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new()
            .route("/api/events", axum::routing::post(create_event))
            .route("/api/accounts", axum::routing::get(get_accounts))
            .with_state((accepted.clone(), script.clone(), answered.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            url,
            accepted,
            script,
            answered,
        }
    }

    /// The keys secret's `klaviyo` for this fake, with `key`.
    pub fn access(&self, key: &str) -> Value {
        json!({ "private_key": key, "api": self.url })
    }

    /// The events accepted so far.
    pub fn accepted(&self) -> Vec<KlaviyoEvent> {
        self.accepted.lock().expect("lock").clone()
    }

    /// Every status answered so far.
    pub fn answered(&self) -> Vec<u16> {
        self.answered.lock().expect("lock").clone()
    }
}
