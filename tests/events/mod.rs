//! Each `events/*.json` (the samples for `sam local invoke -e`) through the
//! real handler: HTTP events as Lambda's runtime hands them to the router,
//! the stream record to notify, the schedule to sweep.

use std::path::PathBuf;

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use restock_core::{Contact, Email, ListShare, RequestId, Sku};
use restock_e2e::*;
use restock_store::{NewRequest, WaveParams};
use serde_json::json;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../events")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A Function URL event, as lambda_http turns it into a request for the router.
fn http(name: &str) -> axum::http::Request<axum::body::Body> {
    let request =
        lambda_http::request::from_str(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    request.map(|body| axum::body::Body::from(body.to_vec()))
}

/// The sample request the link fixtures belong to: Della, offered a chair,
/// with the fixtures' reserve and opt-out secrets (and a manage secret the
/// fixtures do not use).
async fn della_offered(w: &World) {
    let contact = Contact::Email(Email::try_from("della@example.com").unwrap());
    let pepper = pepper();
    let new = NewRequest {
        id: RequestId::from_random([1; 16]),
        sku: Sku::try_from(CHAIR).unwrap(),
        name: "Della".try_into().unwrap(),
        contact_key: contact.key(&pepper),
        contact,
        now: T0 - MIN,
        shards: 2,
        lifetime_ms: 90 * 86_400_000,
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: None,
        consent: None,
    };
    w.store.join(new).await.unwrap();
    assert_eq!(w.shopify(Some(1), "seed").await.status, 200);
    let mut secrets = [[2u8; 16], [3u8; 16], [5u8; 16]].into_iter();
    let mut random = move || secrets.next().expect("three secrets");
    let params = WaveParams {
        share: ListShare::ALL,
        offer_window: restock_core::Window::from_mins(15),
        shards: 2,
        max_offers: 10,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    };
    let wave = w
        .store
        .create_offers(&Sku::try_from(CHAIR).unwrap(), &params, T0, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 1);
}

#[tokio::test]
async fn capture_notify_me() {
    let (w, _) = World::memory().await;
    let reply = w.call(Api::Capture, http("capture-notify-me.json")).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.json()["position"], 1);
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some("https://loomandlast.co.uk")
    );
}

#[tokio::test]
async fn capture_reserve_page_and_hold() {
    let (w, _) = World::memory().await;
    della_offered(&w).await;
    let page = w
        .call(Api::Capture, http("capture-reserve-page.json"))
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Reserve your Walnut dining chair"));
    let held = w.call(Api::Capture, http("capture-reserve.json")).await;
    assert_eq!(held.status, 303, "{}", held.body);
    assert!(
        held.header("location")
            .unwrap()
            .starts_with("https://loomandlast.co.uk/cart/4242:1?attributes[hold]=")
    );
}

#[tokio::test]
async fn capture_one_click_opt_out() {
    let (w, _) = World::memory().await;
    della_offered(&w).await;
    let reply = w.call(Api::Capture, http("capture-opt-out.json")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let della = w
        .store
        .request(&RequestId::from_random([1; 16]))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(della.state, restock_core::RequestState::OptedOut);
}

#[tokio::test]
async fn detect_shopify() {
    let (w, _) = World::memory().await;
    let reply = w.call(Api::Detect, http("detect-shopify.json")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["results"][0]["outcome"]["outcome"], "restock");
}

#[tokio::test]
async fn detect_woocommerce() {
    let (w, _) = World::memory().await;
    let reply = w.call(Api::Detect, http("detect-woocommerce.json")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["results"][0]["sku"], "THROW-OAT");
}

#[tokio::test]
async fn detect_stock_sums_locations() {
    let (w, _) = World::memory().await;
    let reply = w.call(Api::Detect, http("detect-stock.json")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        w.store
            .snapshot(&Sku::try_from(CHAIR).unwrap())
            .await
            .unwrap()
            .counters
            .level,
        4
    );
}

#[tokio::test]
async fn notify_restock_record() {
    let (w, outbox) = World::memory().await;
    assert_eq!(w.join("Della").await.status, 201);
    assert_eq!(w.shopify(Some(1), "seed").await.status, 200);
    let event: StreamEvent = serde_json::from_str(&fixture("notify-restock-record.json")).unwrap();
    let response = restock_aws::stream::handle(&w.services, event).await;
    assert!(response.batch_item_failures.is_empty());
    assert_eq!(outbox.sent().len(), 1);
    assert_eq!(outbox.sent()[0].to(), w.email("Della"));
}

#[tokio::test]
async fn notify_changes_record() {
    let (w, _) = World::memory().await;
    let event: StreamEvent = serde_json::from_str(&fixture("notify-changes-record.json")).unwrap();
    let response = restock_aws::stream::handle(&w.services, event).await;
    assert!(response.batch_item_failures.is_empty());
    let published = w.events.published.lock().unwrap().clone();
    let kinds: Vec<_> = published.iter().map(|e| e.detail_type).collect();
    assert_eq!(kinds, ["Hold created", "Sending paused"]);
    let hold = &published[0].detail;
    assert_eq!(hold["id"], "8a1f0e2d3c4b5a69788796a5b4c3d2e1-0");
    assert_eq!(
        (&hold["sku"], &hold["restock"], &hold["contact"]),
        (&json!("CHAIR-WAL"), &json!(1), &json!("d***@example.com")),
        "{hold}"
    );
    // The bus refuses: both records come back to be delivered again.
    let (w, _) = World::memory().await;
    w.events
        .refusing
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let event: StreamEvent = serde_json::from_str(&fixture("notify-changes-record.json")).unwrap();
    let response = restock_aws::stream::handle(&w.services, event).await;
    let again: Vec<_> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.clone().unwrap())
        .collect();
    assert_eq!(
        again,
        ["111100000000000000000002", "111100000000000000000003"]
    );
}

#[tokio::test]
async fn sweep_schedule() {
    let (w, _) = World::memory().await;
    assert_eq!(w.join("Della").await.status, 201);
    assert_eq!(w.shopify(Some(1), "seed").await.status, 200);
    w.pump().await;
    w.advance(16 * MIN);
    let _event: EventBridgeEvent<serde_json::Value> =
        serde_json::from_str(&fixture("sweep-schedule.json")).unwrap();
    let report = restock_app::sweep::run(&w.services, restock_app::sweep::DEFAULT_LIMIT)
        .await
        .unwrap();
    assert_eq!(report.lapsed, 1);
}

#[tokio::test]
async fn detect_shopify_and_woocommerce_orders() {
    // Verified and read; the fixtures' hold is not live here, so nothing changes.
    for name in ["detect-shopify-order.json", "detect-woocommerce-order.json"] {
        let (w, _) = World::memory().await;
        let reply = w.call(Api::Detect, http(name)).await;
        assert_eq!(reply.status, 202, "{name}: {}", reply.body);
        assert_eq!(
            reply.json()["status"],
            "no live hold with that id",
            "{name}"
        );
    }
}

#[tokio::test]
async fn capture_confirm() {
    // Della signed up with double opt-in; notify claimed her confirmation
    // with the fixture's link secret ([6; 16]).
    let (w, _) = World::memory().await;
    let contact = Contact::Email(Email::try_from("della@example.com").unwrap());
    let pepper = pepper();
    let sku = Sku::try_from(CHAIR).unwrap();
    let id = RequestId::from_random([1; 16]);
    let new = NewRequest {
        id,
        sku: sku.clone(),
        name: "Della".try_into().unwrap(),
        contact_key: contact.key(&pepper),
        contact,
        now: T0 - MIN,
        shards: 2,
        lifetime_ms: 90 * 86_400_000,
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: Some(48 * 60 * MIN),
        consent: None,
    };
    let joined = w.store.join(new).await.unwrap();
    let restock_store::JoinOutcome::Joined(della) = joined else {
        panic!("{joined:?}")
    };
    let link = |secret: u8| restock_core::LinkToken::new(sku.clone(), id, [secret; 16]);
    let links = restock_store::ConfirmLinks {
        confirm: link(6).secret_hash(),
        manage: link(7).secret_hash(),
        optout: link(8).secret_hash(),
    };
    w.store
        .claim_confirmation(&sku, &id, &links, &della.contact_key, della.key.joined_ms)
        .await
        .unwrap();
    let reply = w.call(Api::Capture, http("capture-confirm.json")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.body.contains("number 1 in line"), "{}", reply.body);
    let della = w.store.request(&id).await.unwrap().unwrap();
    assert_eq!(della.state, restock_core::RequestState::Waiting);
}

#[tokio::test]
async fn sweep_erasure() {
    // The fixture's keyed hashes are the sample shopper's (the test
    // pepper): her offered request is erased, its unit passed on.
    let (w, _) = World::memory().await;
    della_offered(&w).await;
    let event: EventBridgeEvent<restock_app::privacy::Erasure> =
        serde_json::from_str(&fixture("sweep-erasure.json")).unwrap();
    assert_eq!(event.source, restock_aws::ERASURE_SOURCE);
    let della = Contact::Email(Email::try_from("della@example.com").unwrap());
    assert_eq!(event.detail.contact_keys[0], della.key(&pepper()));
    let erased = restock_app::privacy::erase(&w.services, &event.detail)
        .await
        .unwrap();
    assert_eq!(erased, 1);
    assert!(
        w.store
            .request(&RequestId::from_random([1; 16]))
            .await
            .unwrap()
            .is_none()
    );
    let alert = w.alerts.all().pop().unwrap();
    assert!(
        alert.subject.contains("customer 191167 is erased"),
        "{alert:?}"
    );
}

#[tokio::test]
async fn sweep_inbound_text() {
    // The sample reply ("Unsubscribe me please", from the fixtures' number)
    // as SNS hands it to the sweep: the number is opted out for good and
    // its live request ends.
    let (w, _) = World::memory().await;
    let number = Contact::Sms(restock_core::Phone::parse("+447911123456").unwrap());
    let joined = w
        .capture_json(
            "POST",
            "/requests",
            json!({ "sku": CHAIR, "name": "Della", "phone": "+447911123456", "consent": true }),
        )
        .await;
    assert_eq!(joined.status, 201, "{}", joined.body);
    let event: aws_lambda_events::event::sns::SnsEvent =
        serde_json::from_str(&fixture("sweep-inbound-text.json")).unwrap();
    let messages: Vec<String> = event.records.into_iter().map(|r| r.sns.message).collect();
    let outcomes = restock_app::inbound::read(&w.services, &messages)
        .await
        .unwrap();
    assert_eq!(
        outcomes,
        [restock_app::inbound::InboundOutcome::OptedOut { ended: 1 }]
    );
    let record = w
        .store
        .opt_out_record(&number.key(&pepper()))
        .await
        .unwrap();
    assert_eq!(
        record.map(|r| r.via),
        Some(Some(restock_core::OptOutVia::Reply)),
        "recorded with how it came"
    );
    let again = w
        .capture_json(
            "POST",
            "/requests",
            json!({ "sku": CHAIR, "name": "Della", "phone": "+447911123456", "consent": true }),
        )
        .await;
    assert_eq!(again.status, 409, "for good: {}", again.body);
}
