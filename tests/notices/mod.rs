//! What a notice says, and when none goes: a notice that could not go out at
//! once (a throttled provider, a retried batch) states the time actually
//! left on its offer, and an offer that ran out before its notice could go
//! is never sent — a dead link helps nobody (I8: the unit passes on).

use restock_app::notify;
use restock_app::ports::Sent;
use restock_core::Sku;
use restock_e2e::*;

const MIN: i64 = 60_000;

fn text(sent: &Sent) -> String {
    match sent {
        Sent::Email { notice, .. } => notice.text.clone(),
        Sent::Sms { notice, .. } => notice.text.clone(),
    }
}

#[tokio::test]
async fn a_late_notice_states_the_time_actually_left() {
    let (w, outbox) = World::memory().await;
    assert_eq!(w.join("Ann").await.status, 201);
    outbox.fail_transiently.lock().unwrap().push(w.email("Ann"));
    w.shopify(Some(1), "s-1").await;
    let first = w.pump().await;
    assert_eq!(first[0].transient, 1, "{first:?}");
    assert!(outbox.sent().is_empty());

    // The stream retries the batch five and a half minutes later.
    outbox.fail_transiently.lock().unwrap().clear();
    w.advance(5 * MIN + 30_000);
    let retry = notify::notify_sku(&w.services, &Sku::try_from(CHAIR).unwrap())
        .await
        .unwrap();
    assert_eq!(retry.sent, 1, "{retry:?}");
    let said = text(&outbox.sent()[0]);
    assert!(said.contains("within 9 minutes"), "{said}");
    assert!(!said.contains("15 minutes"), "{said}");
}

#[tokio::test]
async fn an_offer_that_ran_out_before_its_notice_is_never_sent() {
    let (w, outbox) = World::memory().await;
    assert_eq!(w.join("Ann").await.status, 201);
    outbox.fail_transiently.lock().unwrap().push(w.email("Ann"));
    w.shopify(Some(1), "s-1").await;
    w.pump().await;
    outbox.fail_transiently.lock().unwrap().clear();

    // The retry comes after the offer's window.
    w.advance(16 * MIN);
    let retry = notify::notify_sku(&w.services, &Sku::try_from(CHAIR).unwrap())
        .await
        .unwrap();
    assert_eq!((retry.sent, retry.expired), (0, 1), "{retry:?}");
    assert!(outbox.sent().is_empty(), "a dead link is never sent");

    // Ann never heard: the sweep puts her back in the queue with her place
    // (not lapsed), and the freed unit is offered to her again, with a live link.
    let swept = w.sweep().await;
    assert_eq!((swept.requeued, swept.lapsed), (1, 0), "{swept:?}");
    w.assert_never_oversold().await;
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1, "told once, now");
    let said = text(&outbox.sent()[0]);
    assert!(said.contains("within 15 minutes"), "{said}");
}

#[tokio::test]
async fn a_restock_larger_than_one_wave_is_offered_in_full() {
    let (w, outbox) = World::memory().await;
    let mut settings = settings();
    settings.escalation.max_jump = 10_000;
    w.store.put_settings(&settings).await.unwrap();
    let sku = Sku::try_from(CHAIR).unwrap();
    // 1,500 waiting (joined through the store: capture's limits are not the point here).
    for i in 0..1_500u32 {
        let contact = restock_core::Contact::Email(
            restock_core::Email::try_from(format!("fan{i}@example.com").as_str()).unwrap(),
        );
        let mut bytes = [0u8; 16];
        bytes[..4].copy_from_slice(&i.to_be_bytes());
        bytes[15] = 1;
        w.store
            .join(restock_store::NewRequest {
                id: restock_core::RequestId::from_random(bytes),
                sku: sku.clone(),
                name: "Fan".try_into().unwrap(),
                contact_key: contact.key(b"restock-test-contact-pepper-0123456789"),
                contact,
                now: T0 + i64::from(i),
                shards: 2,
                lifetime_ms: 90 * 86_400_000,
                manage_hash: None,
                language: None,
                zone: None,
                confirm_window_ms: None,
                consent: None,
            })
            .await
            .unwrap();
    }
    w.shopify(Some(1_500), "s-1500").await;
    // Run every pass the stream would start, until none is left.
    let mut passes = Vec::new();
    loop {
        let reports = w.pump().await;
        if reports.is_empty() {
            break;
        }
        passes.extend(reports);
    }
    let offered: usize = passes.iter().map(|r| r.offers).sum();
    assert_eq!(offered, 1_500, "{passes:?}");
    assert_eq!(outbox.sent().len(), 1_500);
    assert!(
        passes[0].handed_on,
        "the first pass stopped at its cap and handed on"
    );
    assert_eq!(
        w.store.snapshot(&sku).await.unwrap().counters.offered,
        1_500,
        "every unit offered, none waiting for a lapse"
    );
}

#[tokio::test]
async fn a_pass_near_its_deadline_hands_the_rest_on_instead_of_sending_past_it() {
    use std::time::{Duration, Instant};
    let (w, outbox) = World::memory().await;
    for name in ["Ann", "Bea", "Cal"] {
        assert_eq!(w.join(name).await.status, 201);
        w.advance(1_000);
    }
    w.shopify(Some(3), "s-1").await;
    let chair = Sku::try_from(CHAIR).unwrap();
    // Twenty seconds left: less than the margin a pass keeps before its deadline.
    let report = notify::notify_sku_until(
        &w.services,
        &chair,
        Instant::now() + Duration::from_secs(20),
    )
    .await
    .unwrap();
    assert_eq!(
        (report.offers, report.sent, report.handed_on),
        (3, 0, true),
        "{report:?}"
    );
    assert!(outbox.sent().is_empty());
    let wakes = w.store.wakes(&chair).await.unwrap();
    assert!(
        wakes
            .iter()
            .any(|w| w.kind == restock_store::WakeKind::Continue)
    );
    // The next pass re-arms the three unsent offers and sends them.
    let next = notify::notify_sku(&w.services, &chair).await.unwrap();
    assert_eq!(next.sent, 3, "{next:?}");
    assert_eq!(outbox.sent().len(), 3);
}

#[tokio::test]
async fn concurrent_passes_share_one_send_schedule() {
    let (w, outbox) = World::memory().await;
    let mut settings = settings();
    settings.sends_per_second = 10;
    w.store.put_settings(&settings).await.unwrap();
    for i in 0..4 {
        assert_eq!(w.join(&format!("Chair{i}")).await.status, 201);
        let reply = w
            .capture_json(
                "POST",
                "/requests",
                serde_json::json!({ "sku": "THROW-OAT", "name": format!("Throw{i}"), "email": w.email(&format!("throw{i}")), "consent": true }),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        w.advance(1_000);
    }
    w.shopify(Some(4), "s-1").await;
    let body = r#"{"sku":"THROW-OAT","level":4,"at":"2026-11-29T08:59:00Z"}"#;
    assert_eq!(
        w.call(Api::Detect, w.stock_request("throw-4", body))
            .await
            .status,
        200
    );
    let (chair, throw) = (
        Sku::try_from(CHAIR).unwrap(),
        Sku::try_from("THROW-OAT").unwrap(),
    );
    // The schedule is kept in real time: take one slot now to mark where it stands.
    let wall = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    };
    let before = w.store.reserve_sends(1, 100, wall()).await.unwrap();
    let (a, b) = tokio::join!(
        notify::notify_sku(&w.services, &chair),
        notify::notify_sku(&w.services, &throw),
    );
    assert_eq!((a.unwrap().sent, b.unwrap().sent), (4, 4));
    assert_eq!(outbox.sent().len(), 8);
    // The two passes took eight slots 100 ms apart from the one schedule,
    // after the marker's: the next free slot is at least 900 ms on (were each
    // pass paced on its own, the two would have sent side by side).
    let after = w.store.reserve_sends(1, 100, 0).await.unwrap();
    assert!(after - before >= 900, "{}", after - before);
}
