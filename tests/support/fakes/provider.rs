//! A local HTTP server that speaks SES v2 and SNS on the wire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;

/// How the provider fake answers a send to one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderAnswer {
    /// SES v2 refuses `SendEmail` with this HTTP status, error code and message.
    Ses(u16, &'static str, &'static str),
    /// SNS refuses `Publish` with this HTTP status, error code and message.
    Sns(u16, &'static str, &'static str),
    /// SNS's `CheckIfPhoneNumberIsOptedOut` says the number opted out.
    OptedOut,
    /// SNS refuses `CheckIfPhoneNumberIsOptedOut` with this status, code and message.
    SnsCheck(u16, &'static str, &'static str),
    /// Answers only after this long (past the SDK's attempt timeout).
    Slow(Duration),
}

/// A local HTTP server that speaks the two send APIs restock uses, as the
/// SDK sees them on the wire: SES v2 `SendEmail` (REST-JSON, errors named
/// by `x-amzn-ErrorType`) and SNS `CheckIfPhoneNumberIsOptedOut` and
/// `Publish` (the query protocol, XML errors). moto refuses only an
/// unverified sender; this refuses whatever a recipient is given in
/// [`ProviderFake::answer`], and delivers the rest. A `Publish` to a topic
/// (the team's alerts) is recorded.
#[derive(Clone)]
pub struct ProviderFake {
    /// Its base URL (`AWS_ENDPOINT_URL_SESV2`, `AWS_ENDPOINT_URL_SNS`).
    pub url: String,
    answers: Arc<Mutex<HashMap<String, ProviderAnswer>>>,
    /// Recipients a notice was accepted for.
    pub delivered: Arc<Mutex<Vec<String>>>,
    /// Subjects of alerts published to a topic.
    pub alerts: Arc<Mutex<Vec<String>>>,
}

impl ProviderFake {
    /// Starts the fake on a free loopback port.
    pub async fn start() -> Self {
        use axum::extract::State;
        use axum::response::IntoResponse;
        let fake = Self {
            url: String::new(),
            answers: Arc::default(),
            delivered: Arc::default(),
            alerts: Arc::default(),
        };
        const SNS_NS: &str = "http://sns.amazonaws.com/doc/2010-03-31/";
        fn xml(status: u16, body: String) -> axum::response::Response {
            (
                StatusCode::from_u16(status).expect("status"),
                [("content-type", "text/xml")],
                body,
            )
                .into_response()
        }
        async fn ses(State(fake): State<ProviderFake>, body: String) -> axum::response::Response {
            let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let Some(to) = request["Destination"]["ToAddresses"][0].as_str() else {
                return (
                    StatusCode::BAD_REQUEST,
                    [("x-amzn-ErrorType", "BadRequestException")],
                    r#"{"message":"not a SendEmail request"}"#,
                )
                    .into_response();
            };
            match fake.answer_for(to) {
                Some(ProviderAnswer::Ses(status, code, message)) => (
                    StatusCode::from_u16(status).expect("status"),
                    [
                        ("x-amzn-ErrorType", code),
                        ("content-type", "application/json"),
                    ],
                    serde_json::json!({ "message": message }).to_string(),
                )
                    .into_response(),
                Some(ProviderAnswer::Slow(d)) => {
                    tokio::time::sleep(d).await;
                    axum::Json(serde_json::json!({"MessageId": "late"})).into_response()
                }
                _ => {
                    fake.delivered.lock().expect("lock").push(to.to_owned());
                    axum::Json(serde_json::json!({"MessageId": "fake-ses-message"})).into_response()
                }
            }
        }
        async fn sns(
            State(fake): State<ProviderFake>,
            axum::extract::Form(form): axum::extract::Form<HashMap<String, String>>,
        ) -> axum::response::Response {
            let action = form.get("Action").map(String::as_str).unwrap_or_default();
            let phone = form.get("PhoneNumber").or(form.get("phoneNumber"));
            let answer = phone.and_then(|p| fake.answer_for(p));
            let refusal = |status: u16, code: &str, message: &str| {
                xml(
                    status,
                    format!(
                        "<ErrorResponse xmlns=\"{SNS_NS}\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}</Message></Error><RequestId>r-2</RequestId></ErrorResponse>"
                    ),
                )
            };
            match action {
                "CheckIfPhoneNumberIsOptedOut" => {
                    if let Some(ProviderAnswer::SnsCheck(status, code, message)) = answer {
                        return refusal(status, code, message);
                    }
                    xml(
                        200,
                        format!(
                            "<CheckIfPhoneNumberIsOptedOutResponse xmlns=\"{SNS_NS}\"><CheckIfPhoneNumberIsOptedOutResult><isOptedOut>{}</isOptedOut></CheckIfPhoneNumberIsOptedOutResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></CheckIfPhoneNumberIsOptedOutResponse>",
                            answer == Some(ProviderAnswer::OptedOut)
                        ),
                    )
                }
                "Publish" => {
                    if form.contains_key("TopicArn") {
                        let subject = form.get("Subject").cloned().unwrap_or_default();
                        fake.alerts.lock().expect("lock").push(subject);
                    } else if let Some(ProviderAnswer::Sns(status, code, message)) = answer {
                        return refusal(status, code, message);
                    } else if let Some(ProviderAnswer::Slow(d)) = answer {
                        tokio::time::sleep(d).await;
                    } else if let Some(p) = phone {
                        fake.delivered.lock().expect("lock").push(p.clone());
                    }
                    xml(
                        200,
                        format!(
                            "<PublishResponse xmlns=\"{SNS_NS}\"><PublishResult><MessageId>fake-sns-message</MessageId></PublishResult><ResponseMetadata><RequestId>r-3</RequestId></ResponseMetadata></PublishResponse>"
                        ),
                    )
                }
                other => refusal(
                    400,
                    "InvalidAction",
                    &format!("the fake does not speak {other}"),
                ),
            }
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let fake = Self {
            url: format!("http://{}", listener.local_addr().expect("addr")),
            ..fake
        };
        let app = Router::new()
            .route("/v2/email/outbound-emails", axum::routing::post(ses))
            .route("/", axum::routing::post(sns))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.expect("fake serves") });
        fake
    }

    /// Sends to `recipient` (an address or E.164 number) get `answer`.
    pub fn answer(&self, recipient: &str, answer: ProviderAnswer) {
        self.answers
            .lock()
            .expect("lock")
            .insert(recipient.to_owned(), answer);
    }

    /// Every recipient is delivered to from now on.
    pub fn clear(&self) {
        self.answers.lock().expect("lock").clear();
    }

    fn answer_for(&self, recipient: &str) -> Option<ProviderAnswer> {
        self.answers.lock().expect("lock").get(recipient).cloned()
    }
}
