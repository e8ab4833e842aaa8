//! The circuit breaker for sender-side failures: an account in the SES
//! sandbox (or paused, or out of quota) refuses every notice alike, so
//! restock stops sending instead of ending each shopper's request in turn.
//! Every request keeps its place, the team is told once, and sending
//! resumes by itself after the back-off or at `restock resume`.

use restock_app::admin::{Admin, Command};
use restock_app::notify::SENDER_BACKOFF;
use restock_app::ports::Clock;
use restock_core::{RequestState, Sku};
use restock_e2e::*;
use restock_store::prelude::*;
use std::time::Duration;

const SANDBOX: &str = "SES: MessageRejected: Email address is not verified. The following identities failed the check in region EU-WEST-2: shopper@example.com";

fn chair() -> Sku {
    Sku::try_from(CHAIR).unwrap()
}

fn paused_alerts(w: &World) -> usize {
    w.alerts
        .all()
        .iter()
        .filter(|a| a.subject.contains("sending paused"))
        .count()
}

async fn states(w: &World) -> Vec<RequestState> {
    w.store
        .queue(&chair(), 2, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.state)
        .collect()
}

#[tokio::test]
async fn a_sandboxed_account_pauses_sending_keeps_every_place_and_alerts_once() {
    let (w, outbox) = World::memory().await;
    let names = ["Ann", "Bea", "Cal", "Dov", "Eli"];
    for name in names {
        assert_eq!(w.join(name).await.status, 201);
        w.advance(1_000);
    }
    *outbox.sender_refused.lock().unwrap() = Some(SANDBOX.into());
    assert_eq!(w.shopify(Some(5), "d-1").await.status, 200);

    let reports = w.pump().await;
    assert!(reports.iter().any(|r| r.paused), "{reports:?}");
    assert!(outbox.sent().is_empty());
    assert_eq!(paused_alerts(&w), 1, "the team is told once");
    let pause = w.store.sender_pause().await.unwrap().expect("paused");
    assert!(pause.reason.contains("not verified"), "{pause:?}");
    // SES's sandbox names the recipient: masked before it is kept, shown
    // or sent to the team.
    assert!(
        pause.reason.contains("s***@example.com") && !pause.reason.contains("shopper@"),
        "{}",
        pause.reason
    );
    for alert in w.alerts.all() {
        assert!(
            !alert.body.contains("shopper@") && !alert.subject.contains("shopper@"),
            "{alert:?}"
        );
    }
    // Nobody was blamed: five live offers, none ended as undeliverable.
    let stats = w.store.stats(&chair(), 2).await.unwrap();
    assert_eq!((stats.offered, stats.lapsed), (5, 0), "{stats:?}");
    assert!(
        states(&w).await.is_empty(),
        "nobody fell back into the queue or out of it"
    );

    // Redeliveries and new wakes while paused send nothing and say nothing more.
    w.store
        .wake_again(&chair(), 1, w.clock.now_ms())
        .await
        .unwrap();
    w.pump().await;
    assert!(outbox.sent().is_empty());
    assert_eq!(paused_alerts(&w), 1);

    // The account is fixed; the sweep resumes once the back-off is over.
    *outbox.sender_refused.lock().unwrap() = None;
    w.advance(MIN);
    assert!(!w.sweep().await.resumed, "not before the back-off");
    w.advance(SENDER_BACKOFF.as_millis());
    assert!(w.sweep().await.resumed);
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    let expected: Vec<String> = names.iter().map(|n| w.email(n)).collect();
    assert_eq!(told, expected, "everyone told, oldest first, once");
    assert_eq!(paused_alerts(&w), 1);
    w.assert_never_oversold().await;
}

#[tokio::test]
async fn restock_resume_sends_at_once_and_a_recipient_failure_still_ends_only_its_request() {
    let (w, outbox) = World::memory().await;
    assert_eq!(w.join("Ann").await.status, 201);
    assert_eq!(w.join("Bea").await.status, 201);
    *outbox.sender_refused.lock().unwrap() = Some(SANDBOX.into());
    assert_eq!(w.shopify(Some(2), "d-1").await.status, 200);
    w.pump().await;
    assert!(outbox.sent().is_empty());

    *outbox.sender_refused.lock().unwrap() = None;
    // Ann's address bounces for good: that is about Ann only.
    outbox.fail_permanently.lock().unwrap().push(w.email("Ann"));
    let admin = Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let out = admin
        .run(Command::Resume { sku: None }, w.clock.now_ms())
        .await
        .unwrap();
    assert_eq!(out.json["resumed"], true, "{}", out.message);
    assert_eq!(out.json["woken"], serde_json::json!([CHAIR]));
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(told, [w.email("Bea")]);
    assert!(
        w.store.sender_pause().await.unwrap().is_none(),
        "a recipient failure does not pause"
    );
    let again = admin
        .run(Command::Resume { sku: None }, w.clock.now_ms())
        .await
        .unwrap();
    assert_eq!(again.json["resumed"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_binaries_an_unverified_sender_pauses_instead_of_burning_the_queue() {
    // moto's SES refuses a sender address that was never verified, as SES
    // does for an account in the sandbox.
    let mut settings = settings();
    settings.email_from = "Loom & Last <unverified-sender@sandboxed-shop.example>".into();
    let d = Deployment::create(settings).await;
    let (outcome, _) = crate::binaries::run(
        &d,
        "capture",
        &crate::binaries::fixture("capture-notify-me.json"),
    )
    .await;
    assert!(matches!(outcome, Outcome::Response(_)));
    crate::binaries::run(
        &d,
        "detect",
        &crate::binaries::fixture("detect-shopify.json"),
    )
    .await;
    let record = crate::binaries::fixture("notify-restock-record.json");
    let (outcome, logs) = crate::binaries::run(&d, "notify", &record).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    assert!(logs.contains("sending paused"), "{logs}");
    let pause = d.store.sender_pause().await.unwrap().expect("paused");
    assert!(pause.reason.contains("not verified"), "{pause:?}");
    let c = d.store.snapshot(&chair()).await.unwrap().counters;
    assert_eq!(
        c.offered, 1,
        "Della's offer stays live: not ended as undeliverable"
    );
    // The stream redelivers: still paused, nothing sent, nobody ended.
    let (_, logs) = crate::binaries::run(&d, "notify", &record).await;
    assert!(logs.contains("sending paused"), "{logs}");
    assert_eq!(
        d.store.snapshot(&chair()).await.unwrap().counters.offered,
        1
    );
    assert!(
        ses_messages(&d.endpoint)
            .await
            .iter()
            .all(|m| m.0 != "della@example.com" || !m.1.is_empty()),
        "no notice reached SES from the unverified sender"
    );
}

/// What restock should make of a provider's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Classed {
    /// About the sender: sending pauses, the offer stays live, one alert.
    Sender,
    /// About this recipient: only this request ends (undeliverable).
    Recipient,
    /// The number opted out at SNS: an opt-out for good.
    OptedOut,
    /// A passing provider failure: the claim is given back for a retry.
    Transient,
    /// No answer in time: maybe delivered, so never resent.
    Unknown,
}

const DELLA_PHONE: &str = "+447911123456";

/// Every SES v2 and SNS error class restock meets, as the provider sends it
/// on the wire, and how it is classed.
fn provider_errors() -> Vec<(bool, ProviderAnswer, Classed)> {
    use ProviderAnswer::{OptedOut, Ses, Slow, Sns, SnsCheck};
    let email = false;
    let sms = true;
    vec![
        (
            email,
            Ses(
                400,
                "AccountSuspendedException",
                "Your account has been suspended",
            ),
            Classed::Sender,
        ),
        (
            email,
            Ses(
                400,
                "SendingPausedException",
                "Sending is paused for this account",
            ),
            Classed::Sender,
        ),
        (
            email,
            Ses(
                400,
                "MailFromDomainNotVerifiedException",
                "The MAIL FROM domain is not verified",
            ),
            Classed::Sender,
        ),
        (
            email,
            Ses(
                400,
                "LimitExceededException",
                "Maximum sending quota exceeded",
            ),
            Classed::Sender,
        ),
        (
            email,
            Ses(
                429,
                "TooManyRequestsException",
                "Maximum sending rate exceeded",
            ),
            Classed::Sender,
        ),
        (
            email,
            Ses(
                400,
                "MessageRejected",
                "Email address is not verified. The following identities failed the check in region EU-WEST-2: della@example.com",
            ),
            Classed::Sender,
        ),
        (
            email,
            Ses(
                404,
                "NotFoundException",
                "Configuration set <restock-notices> does not exist",
            ),
            Classed::Sender,
        ),
        (
            email,
            Ses(400, "MessageRejected", "Illegal address"),
            Classed::Recipient,
        ),
        (
            email,
            Ses(400, "BadRequestException", "Missing final '@domain'"),
            Classed::Recipient,
        ),
        (
            email,
            Ses(500, "InternalFailure", "We encountered an internal error"),
            Classed::Transient,
        ),
        (email, Slow(Duration::from_secs(7)), Classed::Unknown),
        (
            sms,
            Sns(
                403,
                "AuthorizationError",
                "User is not authorized to perform SNS:Publish",
            ),
            Classed::Sender,
        ),
        (
            sms,
            Sns(400, "KMSThrottling", "KMS request rate exceeded"),
            Classed::Sender,
        ),
        (
            sms,
            Sns(400, "Throttling", "Rate exceeded"),
            Classed::Sender,
        ),
        (
            sms,
            Sns(
                400,
                "InvalidParameter",
                "Invalid parameter: PhoneNumber Reason: +447911123456 is not valid to publish to",
            ),
            Classed::Recipient,
        ),
        (
            sms,
            Sns(
                400,
                "ParameterValueInvalid",
                "Invalid parameter: Message too long",
            ),
            Classed::Recipient,
        ),
        (sms, OptedOut, Classed::OptedOut),
        (
            sms,
            SnsCheck(400, "Throttled", "Rate exceeded"),
            Classed::Sender,
        ),
        (
            sms,
            SnsCheck(
                403,
                "AuthorizationError",
                "User is not authorized to perform SNS:CheckIfPhoneNumberIsOptedOut",
            ),
            Classed::Sender,
        ),
        (
            sms,
            SnsCheck(400, "InvalidParameter", "Invalid parameter: PhoneNumber"),
            Classed::Recipient,
        ),
        (
            sms,
            Sns(500, "InternalError", "Internal error"),
            Classed::Transient,
        ),
    ]
}

/// Della joins (by email or text) through the capture binary, the restock
/// comes through detect's, and notify's runs against the provider fake
/// answering `answer`: what became of her request, the pause, the alerts.
async fn through_the_binaries(
    sms: bool,
    answer: ProviderAnswer,
) -> (RequestState, bool, Vec<String>, usize) {
    let d = Deployment::create(settings()).await;
    let fake = ProviderFake::start().await;
    let mut join: serde_json::Value =
        serde_json::from_str(&crate::binaries::fixture("capture-notify-me.json")).unwrap();
    let contact = if sms {
        serde_json::json!({"sku": CHAIR, "name": "Della", "phone": DELLA_PHONE, "consent": true})
    } else {
        serde_json::json!({"sku": CHAIR, "name": "Della", "email": "della@example.com", "consent": true})
    };
    join["body"] = contact.to_string().into();
    let (outcome, logs) = crate::binaries::run(&d, "capture", &join.to_string()).await;
    let Outcome::Response(body) = outcome else {
        panic!("capture failed: {outcome:?}\n{logs}")
    };
    let response: serde_json::Value = serde_json::from_str(&body).unwrap();
    let joined: serde_json::Value =
        serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
    let id: restock_core::RequestId = joined["request_id"].as_str().unwrap().parse().unwrap();
    fake.answer(
        if sms {
            DELLA_PHONE
        } else {
            "della@example.com"
        },
        answer,
    );
    crate::binaries::run(
        &d,
        "detect",
        &crate::binaries::fixture("detect-shopify.json"),
    )
    .await;
    let env = [
        ("AWS_ENDPOINT_URL_SESV2", fake.url.as_str()),
        ("AWS_ENDPOINT_URL_SNS", fake.url.as_str()),
    ];
    let record = crate::binaries::fixture("notify-restock-record.json");
    let (outcome, logs) = crate::binaries::run_with(&d, "notify", &record, &env).await;
    assert!(
        matches!(outcome, Outcome::Response(_)),
        "{outcome:?}\n{logs}"
    );
    let state = d.store.request(&id).await.unwrap().unwrap().state;
    let paused = d.store.sender_pause().await.unwrap().is_some();
    let alerts = fake.alerts.lock().unwrap().clone();
    assert!(fake.delivered.lock().unwrap().is_empty());
    // The provider is well again and the stream delivers the record again:
    // only a claim given back (a transient failure) is sent now.
    fake.clear();
    crate::binaries::run_with(&d, "notify", &record, &env).await;
    let resent = fake.delivered.lock().unwrap().len();
    (state, paused, alerts, resent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_binaries_every_provider_error_class_is_classed_as_documented() {
    let cases = provider_errors();
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(4));
    let mut runs = tokio::task::JoinSet::new();
    for (i, (sms, answer, classed)) in cases.into_iter().enumerate() {
        let limit = limit.clone();
        runs.spawn(async move {
            let _turn = limit.acquire().await.unwrap();
            let seen = through_the_binaries(sms, answer.clone()).await;
            (i, answer, classed, seen)
        });
    }
    let mut wrong = Vec::new();
    while let Some(run) = runs.join_next().await {
        let (i, answer, classed, (state, paused, alerts, resent)) = run.unwrap();
        let paused_alerts = alerts
            .iter()
            .filter(|a| a.contains("sending paused"))
            .count();
        let offered = matches!(state, RequestState::Offered { .. });
        let as_expected = match classed {
            // Still paused (the back-off is 5 minutes): nothing sent yet.
            Classed::Sender => {
                paused && offered && paused_alerts == 1 && alerts.len() == 1 && resent == 0
            }
            Classed::Recipient => {
                !paused && state == RequestState::Undeliverable && alerts.len() == 1 && resent == 0
            }
            Classed::OptedOut => {
                !paused && state == RequestState::OptedOut && alerts.is_empty() && resent == 0
            }
            Classed::Transient => !paused && offered && alerts.is_empty() && resent == 1,
            Classed::Unknown => !paused && offered && alerts.is_empty() && resent == 0,
        };
        if !as_expected {
            wrong.push(format!(
                "case {i} {answer:?}: expected {classed:?}; request {state:?}, paused {paused}, alerts {alerts:?}, sent on the retry {resent}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
