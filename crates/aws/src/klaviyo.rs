//! restock's events handed to Klaviyo, where the shop's flows use them: a
//! notice sent, a hold created, a hold bought and an offer lapsed become
//! events of four metrics on the shopper's profile, through Klaviyo's
//! Events API (`POST /api/events`, a JSON:API document, the private key in
//! `Authorization: Klaviyo-API-Key`, the `revision` header).
//!
//! [`KlaviyoSink`] wraps the bus: an event is taken only when the bus took
//! it and, if Klaviyo wants it, Klaviyo accepted it (202). A 429 is waited
//! out as its `Retry-After` says (up to [`MAX_WAIT`]), a 5xx or a lost
//! connection tried again; whatever is still not accepted goes back to the
//! stream with its record, which delivers it again and, in the end, to the
//! dead-letter queue, as the events endpoint's deliveries do. Each event's
//! `unique_id` is its `detail.id`, so Klaviyo keeps one event however often
//! it is delivered.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use restock_app::events::Published;
use restock_app::ports::{EventSink, Keyring, PublishError};
use serde_json::{Value, json};

/// Klaviyo's API.
pub const API: &str = "https://a.klaviyo.com";

/// The API revision restock speaks (Klaviyo's `revision` header).
pub const REVISION: &str = "2026-10-15";

/// restock's events that go to Klaviyo, and the metric each becomes.
pub const METRICS: [(&str, &str); 4] = [
    ("Notice sent", "Restock Told"),
    ("Hold created", "Restock Held"),
    ("Hold bought", "Restock Bought"),
    ("Offer lapsed", "Restock Lapsed"),
];

/// The longest `Retry-After` waited out in the function; a longer one
/// leaves the event to the stream's next delivery.
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// Tries per event within one delivery.
const ATTEMPTS: u32 = 3;

/// Events posted side by side (Klaviyo allows 350 a second).
const IN_FLIGHT: usize = 8;

/// The Events API document for `event`, or `None` when Klaviyo is not
/// handed that kind of event (or it names no shopper).
pub fn document(event: &Published) -> Option<Value> {
    let (_, metric) = METRICS.iter().find(|(t, _)| *t == event.detail_type)?;
    let r = event.request.as_ref()?;
    let mut profile = json!({ "first_name": r.name.as_str() });
    match &r.contact {
        restock_core::Contact::Email(e) => profile["email"] = json!(e.as_str()),
        restock_core::Contact::Sms(p) => profile["phone_number"] = json!(p.as_str()),
    }
    let d = &event.detail;
    let mut properties = json!({
        "sku": r.sku.as_str(),
        "request": r.id.to_string(),
        "channel": r.contact.channel().as_str(),
    });
    if let Some(restock) = d.get("restock") {
        properties["restock"] = restock.clone();
    }
    Some(json!({
        "data": {
            "type": "event",
            "attributes": {
                "properties": properties,
                "time": d["at"],
                "unique_id": d["id"],
                "metric": { "data": { "type": "metric", "attributes": { "name": metric } } },
                "profile": { "data": { "type": "profile", "attributes": profile } },
            }
        }
    }))
}

/// Whether Klaviyo takes `key`: `Ok(None)` when it answers for the account
/// (`GET /api/accounts`), `Ok(Some(note))` when the key is good but may not
/// read the account (403: a key limited to `events:write` is enough), an
/// error when Klaviyo refuses it (401) or cannot be reached.
///
/// # Errors
/// What Klaviyo said, or why it could not be asked.
pub async fn check_key(key: &str, api: Option<&str>) -> Result<Option<String>, KeyCheckFailed> {
    let api = api.unwrap_or(API).trim_end_matches('/');
    let response = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| KeyCheckFailed::Unreachable(e.to_string()))?
        .get(format!("{api}/api/accounts"))
        .header("Authorization", format!("Klaviyo-API-Key {key}"))
        .header("revision", REVISION)
        .header("accept", "application/vnd.api+json")
        .send()
        .await
        .map_err(|e| KeyCheckFailed::Unreachable(format!("Klaviyo could not be reached: {e}")))?;
    let status = response.status();
    let said = refusal(status, &response.text().await.unwrap_or_default());
    match status.as_u16() {
        200..=299 => Ok(None),
        403 => Ok(Some(format!(
            "the key may not read the account ({said}); it needs the events:write scope"
        ))),
        429 | 500..=599 => Err(KeyCheckFailed::Unreachable(format!(
            "Klaviyo cannot answer now: {said}"
        ))),
        _ => Err(KeyCheckFailed::Refused(format!(
            "Klaviyo refused the key: {said}"
        ))),
    }
}

/// Why a key could not be checked with Klaviyo.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyCheckFailed {
    /// Klaviyo could not be reached, or cannot answer now: try again.
    #[error("{0}")]
    Unreachable(String),
    /// Klaviyo refused the key.
    #[error("{0}")]
    Refused(String),
}

/// Klaviyo's API access, as the keys secret holds it under `klaviyo`.
struct Access {
    key: String,
    api: String,
}

fn access(secret: Option<&Value>) -> Result<Access, String> {
    let secret = secret.ok_or(
        "KlaviyoEvents is on but the keys secret has no `klaviyo`: `restock connect klaviyo --stack <StackName>` puts the private key there",
    )?;
    let key = secret["private_key"]
        .as_str()
        .filter(|k| !k.trim().is_empty())
        .ok_or("the keys secret's `klaviyo` has no `private_key`")?;
    Ok(Access {
        key: key.to_owned(),
        api: secret["api"]
            .as_str()
            .unwrap_or(API)
            .trim_end_matches('/')
            .to_owned(),
    })
}

/// What one post came to.
enum Posted {
    Accepted,
    Again(Duration, String),
    Refused(String),
}

/// How long a 429 asks to wait (`Retry-After` in seconds; a second if it
/// says nothing usable).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Duration {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(Duration::from_secs(1), Duration::from_secs)
}

/// What Klaviyo said of a refusal: its JSON:API errors' titles and details.
fn refusal(status: reqwest::StatusCode, body: &str) -> String {
    let said: Vec<String> = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["errors"].as_array().cloned())
        .into_iter()
        .flatten()
        .map(|e| {
            let (title, detail) = (
                e["title"].as_str().unwrap_or_default(),
                e["detail"].as_str().unwrap_or_default(),
            );
            restock_core::contact::mask_personal(format!("{title} {detail}").trim())
        })
        .collect();
    if said.is_empty() {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {}", said.join("; "))
    }
}

/// The bus, and Klaviyo for the events it wants.
pub struct KlaviyoSink {
    bus: Arc<dyn EventSink>,
    keyring: Arc<dyn Keyring>,
    client: reqwest::Client,
}

impl KlaviyoSink {
    /// Hands events to `bus`, and to Klaviyo with the access the keys
    /// secret (`keyring`) holds.
    pub fn new(bus: Arc<dyn EventSink>, keyring: Arc<dyn Keyring>) -> Self {
        Self {
            bus,
            keyring,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .expect("an HTTP client"),
        }
    }

    async fn post_once(&self, access: &Access, document: &Value) -> Posted {
        let answer = self
            .client
            .post(format!("{}/api/events", access.api))
            .header("Authorization", format!("Klaviyo-API-Key {}", access.key))
            .header("revision", REVISION)
            .header("accept", "application/vnd.api+json")
            .header("content-type", "application/vnd.api+json")
            .body(document.to_string())
            .send()
            .await;
        let response = match answer {
            Ok(r) => r,
            Err(e) => return Posted::Again(Duration::from_millis(200), e.to_string()),
        };
        let status = response.status();
        if status.is_success() {
            return Posted::Accepted;
        }
        let wait = retry_after(response.headers());
        let said = refusal(status, &response.text().await.unwrap_or_default());
        if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            Posted::Again(wait, said)
        } else if status.is_server_error() {
            Posted::Again(Duration::from_millis(200), said)
        } else {
            Posted::Refused(said)
        }
    }

    /// Posts one event, trying again as Klaviyo asks; whether it was
    /// accepted.
    async fn post(&self, access: &Access, document: &Value) -> bool {
        let metric = &document["data"]["attributes"]["metric"]["data"]["attributes"]["name"];
        let id = &document["data"]["attributes"]["unique_id"];
        for attempt in 1..=ATTEMPTS {
            match self.post_once(access, document).await {
                Posted::Accepted => {
                    tracing::info!(%metric, %id, "event handed to Klaviyo");
                    return true;
                }
                Posted::Again(wait, said) if attempt < ATTEMPTS && wait <= MAX_WAIT => {
                    tracing::warn!(%metric, %id, reason = %said, wait_ms = wait.as_millis() as u64, "Klaviyo asked to try again");
                    tokio::time::sleep(wait).await;
                }
                Posted::Again(_, said) | Posted::Refused(said) => {
                    tracing::error!(%metric, %id, reason = %said, "Klaviyo did not take the event; the stream delivers it again");
                    return false;
                }
            }
        }
        false
    }
}

#[async_trait]
impl EventSink for KlaviyoSink {
    async fn publish(&self, events: &[Published]) -> Result<Vec<bool>, PublishError> {
        use futures::StreamExt;
        let mut taken = self.bus.publish(events).await?;
        let wanted: Vec<(usize, Value)> = events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| document(e).map(|d| (i, d)))
            .collect();
        if wanted.is_empty() {
            return Ok(taken);
        }
        let keys = self
            .keyring
            .keys()
            .await
            .map_err(|e| PublishError(e.to_string()));
        let access = match keys.and_then(|k| access(k.klaviyo.as_ref()).map_err(PublishError)) {
            Ok(access) => access,
            Err(e) => {
                tracing::error!(error = %e, "events not handed to Klaviyo; the stream delivers them again");
                for (i, _) in &wanted {
                    taken[*i] = false;
                }
                return Ok(taken);
            }
        };
        let accepted: Vec<(usize, bool)> = futures::stream::iter(wanted)
            .map(|(i, d)| {
                let access = &access;
                async move { (i, self.post(access, &d).await) }
            })
            .buffered(IN_FLIGHT)
            .collect()
            .await;
        for (i, ok) in accepted {
            if let Some(t) = taken.get_mut(i) {
                *t &= ok;
            }
        }
        Ok(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use restock_core::{Contact, Phone, RequestId, Sku};
    use restock_store::{Event, NewRequest};

    fn texted() -> restock_store::Request {
        let contact = Contact::Sms(Phone::parse("+447911123456").unwrap());
        NewRequest {
            id: RequestId::from_random([4; 16]),
            sku: Sku::try_from("CHAIR-WAL").unwrap(),
            name: "Ann".try_into().unwrap(),
            contact_key: contact.key(b"pepper-pepper-pepper"),
            contact,
            now: 1_000,
            shards: 1,
            lifetime_ms: 1_000,
            manage_hash: None,
            language: None,
            zone: None,
            confirm_window_ms: None,
            consent: None,
        }
        .into_request()
    }

    #[test]
    fn a_texted_shopper_s_profile_is_their_number_and_only_four_events_go() {
        let request = Box::new(texted());
        let lapsed = restock_app::events::published(
            &Event::OfferLapsed {
                request: request.clone(),
                episode: 3,
            },
            "r-1",
            0,
            false,
        );
        let doc = document(&lapsed).unwrap();
        let a = &doc["data"]["attributes"];
        assert_eq!(a["metric"]["data"]["attributes"]["name"], "Restock Lapsed");
        assert_eq!(
            a["profile"]["data"]["attributes"],
            json!({"phone_number": "+447911123456", "first_name": "Ann"})
        );
        assert_eq!(a["properties"]["channel"], "sms");
        assert_eq!(a["properties"]["restock"], 3);
        let confirmed =
            restock_app::events::published(&Event::SignUpConfirmed { request }, "r-2", 0, false);
        assert_eq!(document(&confirmed), None, "not one of the four");
        let detected = restock_app::events::published(
            &Event::RestockDetected {
                sku: Sku::try_from("CHAIR-WAL").unwrap(),
                episode: 1,
                level: 2,
            },
            "r-3",
            0,
            false,
        );
        assert_eq!(document(&detected), None, "no shopper");
        for (detail_type, _) in METRICS {
            assert!(restock_app::events::DETAIL_TYPES.contains(&detail_type));
        }
    }

    #[test]
    fn retry_after_is_read_in_seconds_and_a_refusal_says_what_klaviyo_said_masked() {
        let mut headers = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&headers), Duration::from_secs(1));
        headers.insert(reqwest::header::RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&headers), Duration::from_secs(7));
        headers.insert(
            reqwest::header::RETRY_AFTER,
            "Wed, 21 Oct 2026 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), Duration::from_secs(1));
        let said = refusal(
            reqwest::StatusCode::BAD_REQUEST,
            r#"{"errors":[{"title":"Invalid input.","detail":"ann@example.com is not valid"}]}"#,
        );
        assert_eq!(
            said,
            "HTTP 400 Bad Request: Invalid input. a***@example.com is not valid"
        );
        assert_eq!(
            refusal(reqwest::StatusCode::BAD_GATEWAY, "<html>"),
            "HTTP 502 Bad Gateway"
        );
    }

    #[test]
    fn the_access_needs_a_private_key_and_defaults_to_klaviyo_s_api() {
        assert!(access(None).err().unwrap().contains("KlaviyoEvents is on"));
        assert!(
            access(Some(&json!({"private_key": " "})))
                .err()
                .unwrap()
                .contains("no `private_key`")
        );
        let a = access(Some(&json!({"private_key": "pk_1"}))).ok().unwrap();
        assert_eq!((a.key.as_str(), a.api.as_str()), ("pk_1", API));
        let a = access(Some(
            &json!({"private_key": "pk_1", "api": "http://127.0.0.1:9/"}),
        ))
        .ok()
        .unwrap();
        assert_eq!(a.api, "http://127.0.0.1:9");
    }
}
