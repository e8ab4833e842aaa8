//! What restock counts for the team's CloudWatch dashboard
//! (`restock_app::metrics`), through the real routers and handlers: each
//! thing a shopper, the shop or a pass does is counted once, and a repeat
//! (a second tap, a redelivered webhook) is not counted again. The Lambda
//! binaries write the same counts as embedded-metric-format lines
//! (`binaries::the_four_binaries_serve_a_restock_end_to_end`).
//!
//! Each test records into its own thread-local recorder: the handlers run
//! on the test's single-threaded runtime, so other tests' counts stay out.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::Request;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use restock_core::Sku;
use restock_e2e::*;

/// What a recorder has counted since the test began (each snapshot takes
/// what was counted since the last).
struct Tally {
    snapshotter: Snapshotter,
    /// Each counter by name (and `Class` where split).
    counters: BTreeMap<String, u64>,
    /// How many pass durations were recorded.
    passes: usize,
}

impl Tally {
    fn new(recorder: &DebuggingRecorder) -> Self {
        Self {
            snapshotter: recorder.snapshotter(),
            counters: BTreeMap::new(),
            passes: 0,
        }
    }

    /// The counters so far (those above zero).
    fn counters(&mut self) -> BTreeMap<String, u64> {
        for (key, _, _, value) in self.snapshotter.snapshot().into_vec() {
            let key = key.key();
            let mut name = key.name().to_owned();
            for label in key.labels() {
                name += &format!("{{{}={}}}", label.key(), label.value());
            }
            match value {
                DebugValue::Counter(n) => *self.counters.entry(name).or_default() += n,
                DebugValue::Histogram(values) if name == "PassDuration" => {
                    self.passes += values.len()
                }
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
        self.counters.retain(|_, n| *n > 0);
        self.counters.clone()
    }
}

fn expect(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

async fn post(w: &World, path: &str) -> Reply {
    w.call(
        Api::Capture,
        Request::post(path).body(Body::empty()).unwrap(),
    )
    .await
}

#[tokio::test]
async fn a_restock_is_counted_step_by_step_and_repeats_are_not() {
    let recorder = DebuggingRecorder::new();
    let mut tally = Tally::new(&recorder);
    let _recording = metrics::set_default_local_recorder(&recorder);
    let (w, outbox) = World::memory().await;
    for name in ["Ann", "Bea", "Cat", "Dee"] {
        assert_eq!(w.join(name).await.status, 201);
    }
    assert_eq!(w.join("Ann").await.status, 200, "a repeat tap");
    outbox.fail_permanently.lock().unwrap().push(w.email("dee"));
    assert_eq!(w.shopify(Some(4), "s-1").await.status, 200);
    assert_eq!(w.shopify(Some(4), "s-1").await.status, 200, "redelivered");
    w.pump().await;
    assert_eq!(
        tally.counters(),
        expect(&[
            ("SignUps", 4),
            ("Restocks", 1),
            ("NoticesSent", 3),
            ("SendFailures{Class=permanent}", 1),
        ])
    );
    assert_eq!(tally.passes, 1, "one pass timed");

    // Ann holds and buys; Bea holds twice (one hold) and never buys; Cat
    // never clicks.
    let link = |to: String| {
        outbox
            .sent()
            .iter()
            .find(|s| s.to() == to)
            .and_then(|s| s.reserve_link())
            .map(|l| path_of(&l))
            .unwrap()
    };
    let ann = post(&w, &link(w.email("ann"))).await;
    let hold = hold_in(ann.header("location").unwrap());
    let bea = link(w.email("bea"));
    post(&w, &bea).await;
    post(&w, &bea).await;
    let paid = format!(
        r#"{{"id": 1, "financial_status": "paid", "note_attributes": [{{"name": "hold", "value": "{hold}"}}], "line_items": [{{"sku": "{CHAIR}", "quantity": 1}}]}}"#
    );
    for _ in 0..2 {
        let bought = w
            .call(Api::Detect, shopify_delivery("orders/paid", "o-1", &paid))
            .await;
        assert_eq!(bought.status, 200, "{}", bought.body);
    }

    // Eve joins while the sender is refused; the sweep frees Bea's and
    // Cat's units, and the pass that would tell Eve pauses sending.
    assert_eq!(w.join("Eve").await.status, 201);
    *outbox.sender_refused.lock().unwrap() = Some("account in the sandbox".into());
    w.advance(20 * MIN);
    let swept = w.sweep().await;
    assert_eq!((swept.lapsed, swept.released), (1, 1), "{swept:?}");
    w.pump().await;
    assert_eq!(
        tally.counters(),
        expect(&[
            ("SignUps", 5),
            ("Restocks", 1),
            ("NoticesSent", 3),
            ("SendFailures{Class=permanent}", 1),
            ("SendFailures{Class=sender}", 1),
            ("SendingPaused", 1),
            ("Holds", 2),
            ("Purchases", 1),
            ("OffersLapsed", 1),
            ("HoldsReleased", 1),
        ])
    );

    // Sign-ups past the address's limit are answered 429, each counted.
    let mut refused = 0;
    for i in 0..40 {
        if w.join(&format!("Fan{i}")).await.status == 429 {
            refused += 1;
        }
    }
    assert!(refused > 0);
    assert_eq!(tally.counters()["TooManyRequests"], refused);
    let stats = w.store.stats(&Sku::try_from(CHAIR).unwrap(), 2).await;
    assert_eq!(stats.unwrap().bought, 1);
}

#[tokio::test]
async fn a_confirmation_is_counted_when_sent_and_when_tapped() {
    let recorder = DebuggingRecorder::new();
    let mut tally = Tally::new(&recorder);
    let _recording = metrics::set_default_local_recorder(&recorder);
    let (w, outbox) = World::memory().await;
    let mut settings = settings();
    settings.confirm = true;
    w.store.put_settings(&settings).await.unwrap();
    assert_eq!(w.join("Ann").await.status, 201);
    w.pump().await;
    let confirm = outbox.sent()[0].link("c").map(|l| path_of(&l)).unwrap();
    assert_eq!(post(&w, &confirm).await.status, 200);
    assert_eq!(post(&w, &confirm).await.status, 200, "tapped twice");
    assert_eq!(
        tally.counters(),
        expect(&[
            ("SignUps", 1),
            ("ConfirmationsSent", 1),
            ("Confirmations", 1)
        ])
    );
}

#[tokio::test]
async fn a_pass_that_hands_on_the_503s_answered_and_an_escalation_are_counted() {
    use crate::reliability::faults::{Backend, Fault, rig};
    use std::time::{Duration, Instant};
    let recorder = DebuggingRecorder::new();
    let mut tally = Tally::new(&recorder);
    let _recording = metrics::set_default_local_recorder(&recorder);
    // Twenty seconds before its deadline a pass sends nothing and hands on.
    let rig = rig(Backend::Memory).await;
    let w = &rig.world;
    assert_eq!(w.join("Ann").await.status, 201);
    assert_eq!(w.shopify(Some(1), "s-1").await.status, 200);
    let chair = Sku::try_from(CHAIR).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let report = restock_app::notify::notify_sku_until(&w.services, &chair, deadline).await;
    assert!(report.unwrap().handed_on);
    // The store fails at the next call: capture and detect answer 503.
    rig.plan.arm(1, Some(Fault::FailBefore));
    assert_eq!(w.join("Bea").await.status, 503);
    rig.plan.arm(1, Some(Fault::FailBefore));
    assert_eq!(w.shopify(Some(2), "s-2").await.status, 503);
    // Sent again once the store is back, a jump too large to trust waits
    // for the team.
    rig.plan.disarm();
    w.advance(MIN);
    let jump = w.shopify(Some(1_000), "s-2").await;
    assert_eq!(jump.json()["results"][0]["outcome"]["outcome"], "escalated");
    assert_eq!(
        tally.counters(),
        expect(&[
            ("SignUps", 1),
            ("Restocks", 1),
            ("RestocksEscalated", 1),
            ("HandedOn", 1),
            ("Unavailable", 2),
        ])
    );
}

#[tokio::test]
async fn refused_webhooks_are_counted_by_reason_and_unsigned_ones_by_platform() {
    let recorder = DebuggingRecorder::new();
    let mut tally = Tally::new(&recorder);
    let _recording = metrics::set_default_local_recorder(&recorder);
    let (w, _) = World::memory().await;
    let mut unsigned = w.shopify_request(Some(4), "x-1");
    unsigned.headers_mut().insert(
        restock_core::platform::shopify::SIGNATURE,
        "AAAA".parse().unwrap(),
    );
    assert_eq!(w.call(Api::Detect, unsigned).await.status, 401);
    let malformed = w.stock_request("x-2", "{\"sku\": 4}");
    assert_eq!(w.call(Api::Detect, malformed).await.status, 400);
    let future = format!(r#"{{"sku":"{CHAIR}","level":4,"at":"2099-01-01T00:00:00Z"}}"#);
    let future = w.stock_request("x-3", &future);
    assert_eq!(w.call(Api::Detect, future).await.status, 422);
    assert_eq!(
        tally.counters(),
        expect(&[
            ("WebhooksRefused{Reason=signature}", 1),
            ("WebhooksRefused{Reason=malformed}", 1),
            ("WebhooksRefused{Reason=future}", 1),
            ("WebhooksUnauthorized{Platform=shopify}", 1),
        ])
    );
}

/// What used to be only log lines is counted: a stock pull read the
/// platform refused (by platform), a notice phrased in the fixed wording
/// because the model failed (by reason), and a confirmation the provider
/// did not take.
#[tokio::test]
async fn pull_errors_model_fallbacks_and_failed_confirmations_are_counted() {
    use std::sync::Arc;
    let recorder = DebuggingRecorder::new();
    let mut tally = Tally::new(&recorder);
    let _recording = metrics::set_default_local_recorder(&recorder);

    // A revoked Shopify token: the pull's read of the chair fails.
    let fake = PlatformFake::start().await;
    let mut secret: serde_json::Value = serde_json::from_str(&fake.secrets_json()).unwrap();
    secret["shopify_admin"]["access_token"] = "shpat_revoked".into();
    let (w, _) = World::memory_with_secret(&secret.to_string()).await;
    assert_eq!(w.join("Della").await.status, 201);
    let report = restock_app::pull::run(&w.services).await.unwrap();
    assert_eq!(report.failed, 1);
    assert_eq!(
        tally.counters(),
        expect(&[("SignUps", 1), ("PullErrors{Platform=shopify}", 1)])
    );

    // The model fails: the notice goes out in the fixed wording.
    let outbox = Arc::new(restock_app::ports::Outbox::default());
    let w = World::new(
        Arc::new(restock_store_memory::MemoryStore::new()),
        outbox.clone(),
        Arc::new(restock_app::ports::FixedPhraser(Err(
            restock_app::ports::PhraseError("AccessDeniedException".into()),
        ))),
        Arc::new(restock_app::ports::StaticKeyring(Arc::new(
            restock_app::ports::Secrets::from_json(&secrets_json()).unwrap(),
        ))),
    )
    .await;
    assert_eq!(w.join("Ann").await.status, 201);
    assert_eq!(w.shopify(Some(1), "s-1").await.status, 200);
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1);
    // A confirmation to an address that bounces for good.
    let (w, outbox) = World::memory().await;
    let mut settings = settings();
    settings.confirm = true;
    w.store.put_settings(&settings).await.unwrap();
    outbox.fail_permanently.lock().unwrap().push(w.email("Bea"));
    assert_eq!(w.join("Bea").await.status, 201);
    w.pump().await;
    let counted = tally.counters();
    for (name, n) in [
        ("PhraseFallbacks{Reason=unavailable}", 1),
        ("ConfirmationsFailed", 1),
        ("SendFailures{Class=permanent}", 1),
    ] {
        assert_eq!(counted.get(name), Some(&n), "{name}: {counted:?}");
    }
}
