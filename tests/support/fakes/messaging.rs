//! A local HTTP server that speaks AWS End User Messaging SMS's JSON
//! protocol (`awsJson1_0`, `X-Amz-Target: PinpointSMSVoiceV2.<Action>`) for
//! the two calls `restock doctor` makes: `DescribePhoneNumbers` (paged, as
//! documented: `MaxResults` up to 100, `NextToken`) and
//! `DescribeRegistrations`.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Value, json};

/// The account's numbers and registrations as End User Messaging holds them.
#[derive(Debug, Default)]
pub struct Numbers {
    /// `PhoneNumberInformation` objects.
    pub numbers: Vec<Value>,
    /// `RegistrationInformation` objects.
    pub registrations: Vec<Value>,
}

/// The fake.
pub struct MessagingFake {
    /// Its base URL.
    pub url: String,
    /// What the account holds.
    pub state: Arc<Mutex<Numbers>>,
}

/// A number as `DescribePhoneNumbers` lists it.
pub fn phone_number(
    number: &str,
    country: &str,
    kind: &str,
    status: &str,
    registration: Option<&str>,
) -> Value {
    let id = format!("phone-{}", number.trim_start_matches('+'));
    let mut n = json!({
        "PhoneNumberArn": format!("arn:aws:sms-voice:us-east-1:123456789012:phone-number/{id}"),
        "PhoneNumberId": id, "PhoneNumber": number, "Status": status,
        "IsoCountryCode": country, "MessageType": "TRANSACTIONAL",
        "NumberCapabilities": ["SMS"], "NumberType": kind, "MonthlyLeasingPrice": "2.00",
        "TwoWayEnabled": false, "SelfManagedOptOutsEnabled": false, "OptOutListName": "Default",
        "DeletionProtectionEnabled": false, "CreatedTimestamp": 1.7e9,
    });
    if let Some(r) = registration {
        n["RegistrationId"] = r.into();
    }
    n
}

/// A registration as `DescribeRegistrations` lists it.
pub fn registration(id: &str, kind: &str, status: &str) -> Value {
    json!({
        "RegistrationArn": format!("arn:aws:sms-voice:us-east-1:123456789012:registration/{id}"),
        "RegistrationId": id, "RegistrationType": kind, "RegistrationStatus": status,
        "CurrentVersionNumber": 1, "CreatedTimestamp": 1.7e9,
    })
}

fn error(kind: &str, message: &str) -> axum::response::Response {
    (
        StatusCode::BAD_REQUEST,
        [("content-type", "application/x-amz-json-1.0")],
        axum::Json(json!({"__type": kind, "Message": message})),
    )
        .into_response()
}

async fn call(
    axum::extract::State(state): axum::extract::State<Arc<Mutex<Numbers>>>,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    let target = headers
        .get("x-amz-target")
        .and_then(|t| t.to_str().ok())
        .unwrap_or_default();
    let json_body = headers
        .get("content-type")
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| t.starts_with("application/x-amz-json-1.0"));
    let Ok(input) = serde_json::from_str::<Value>(&body) else {
        return error("ValidationException", "the body is not JSON");
    };
    if !json_body {
        return error(
            "ValidationException",
            "Content-Type must be application/x-amz-json-1.0",
        );
    }
    let state = state.lock().expect("lock");
    let reply = match target {
        "PinpointSMSVoiceV2.DescribePhoneNumbers" => {
            let size = input["MaxResults"].as_u64().unwrap_or(100);
            if !(1..=100).contains(&size) {
                return error("ValidationException", "MaxResults must be 1 to 100");
            }
            let from: usize = input["NextToken"]
                .as_str()
                .map_or(0, |t| t.parse().unwrap_or(0));
            let page: Vec<Value> = state
                .numbers
                .iter()
                .skip(from)
                .take(size as usize)
                .cloned()
                .collect();
            let mut reply = json!({"PhoneNumbers": page});
            if from + (size as usize) < state.numbers.len() {
                reply["NextToken"] = (from + size as usize).to_string().into();
            }
            reply
        }
        "PinpointSMSVoiceV2.DescribeRegistrations" => {
            let ids: Vec<&str> = input["RegistrationIds"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if ids.len() > 5 {
                return error("ValidationException", "at most 5 RegistrationIds");
            }
            let found: Vec<Value> = state
                .registrations
                .iter()
                .filter(|r| {
                    ids.is_empty()
                        || ids.contains(&r["RegistrationId"].as_str().unwrap_or_default())
                })
                .cloned()
                .collect();
            if found.len() < ids.len() {
                return error("ResourceNotFoundException", "registration not found");
            }
            json!({"Registrations": found})
        }
        _ => return error("UnknownOperationException", target),
    };
    (
        [("content-type", "application/x-amz-json-1.0")],
        axum::Json(reply),
    )
        .into_response()
}

impl MessagingFake {
    /// Starts it on a free loopback port, holding `numbers`.
    pub async fn start(numbers: Numbers) -> Self {
        let state = Arc::new(Mutex::new(numbers));
        let app = Router::new()
            .route("/", axum::routing::post(call))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await.expect("fake serves") });
        Self { url, state }
    }
}
