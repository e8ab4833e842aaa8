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
    let out = admin.run(Command::Resume, w.clock.now_ms()).await.unwrap();
    assert_eq!(out.json["resumed"], true, "{}", out.message);
    assert_eq!(out.json["woken"], serde_json::json!([CHAIR]));
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(told, [w.email("Bea")]);
    assert!(
        w.store.sender_pause().await.unwrap().is_none(),
        "a recipient failure does not pause"
    );
    let again = admin.run(Command::Resume, w.clock.now_ms()).await.unwrap();
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
