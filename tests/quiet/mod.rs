//! Around the notice, through the real routers on both stores: quiet hours, launches, reminders and assisted revenue. A
//! restock at 09:00 in New York tells the people awake, keeps the places of
//! those asleep, and tells each sleeper when they wake if units remain —
//! the first of them first. Nobody is texted inside 21:00–08:00 of their
//! own clock.

use std::sync::Arc;

use restock_app::ports::{Clock, FixedPhraser, Outbox, Secrets, Sent, StaticKeyring};
use restock_core::Settings;
use restock_e2e::*;

const HOUR: i64 = 3_600_000;

fn settings_for_the_world() -> Settings {
    let mut settings = settings();
    settings.sms_countries = vec!["AU".into(), "US".into(), "GB".into()];
    settings.time_zone = restock_core::Zone::named("Europe/London").unwrap();
    settings.quiet_hours = restock_core::QuietHours::default();
    settings
}

async fn memory() -> (World, Arc<Outbox>) {
    World::memory().await
}

async fn dynamodb() -> (World, Arc<Outbox>) {
    let outbox = Arc::new(Outbox::default());
    let world = World::new(
        Arc::new(restock_store_dynamo::testing::dynamo_store().await),
        outbox.clone(),
        Arc::new(FixedPhraser(Ok("It is back.".into()))),
        Arc::new(StaticKeyring(Arc::new(
            Secrets::from_json(&secrets_json()).unwrap(),
        ))),
    )
    .await
    .lagging(IndexLag::Dynamo(restock_store_dynamo::testing::index_lag()));
    (world, outbox)
}

fn recipients(outbox: &Outbox) -> Vec<String> {
    outbox
        .sent()
        .iter()
        .map(|s| match s {
            Sent::Email { to, .. } | Sent::Sms { to, .. } => to.clone(),
        })
        .collect()
}

async fn join(w: &World, name: &str, contact: (&str, &str), zone: Option<&str>) {
    let mut body = serde_json::json!({ "sku": CHAIR, "name": name, "consent": true });
    body[contact.0] = contact.1.into();
    if let Some(zone) = zone {
        body["time_zone"] = zone.into();
    }
    let reply = w.capture_json("POST", "/requests", body).await;
    assert_eq!(reply.status, 201, "{name}: {}", reply.body);
    // One after another, so the line's order is the order they joined in.
    w.advance(1);
}

async fn a_restock_reaches_each_shopper_when_they_wake(w: World, outbox: Arc<Outbox>) {
    w.store
        .put_settings(&settings_for_the_world())
        .await
        .unwrap();
    // The world's clock is 09:00 UTC; 14:00 UTC is 09:00 in New York,
    // 01:00 tomorrow in Sydney, and 04:00 in Honolulu.
    w.advance(5 * HOUR);
    let ana = "+61412345671";
    let ben = "+18087365000";
    let cai = w.email("Cai");
    let dee = "+16467365000";
    join(&w, "Ana", ("phone", ana), Some("Australia/Sydney")).await;
    // A form post without the script: the number's area code (808, Hawaii).
    join(&w, "Ben", ("phone", ben), None).await;
    join(&w, "Cai", ("email", &cai), Some("Australia/Sydney")).await;
    join(&w, "Dee", ("phone", dee), Some("America/New_York")).await;

    w.shopify(Some(3), "s-1").await;
    let reports = w.pump().await;
    assert_eq!(reports[0].asleep, 2, "{reports:?}");
    assert_eq!(
        recipients(&outbox),
        [cai.clone(), dee.to_owned()],
        "email keeps no quiet hours; New York is awake"
    );
    w.assert_never_oversold().await;

    // 18:00 UTC: 08:00 in Honolulu, so Ben is awake. The units
    // Cai and Dee let lapse are free again; Ana still sleeps (05:00).
    w.advance(4 * HOUR);
    w.settle().await;
    let swept = w.sweep().await;
    assert_eq!((swept.awake, swept.lapsed), (1, 2), "{swept:?}");
    w.pump().await;
    assert_eq!(recipients(&outbox)[2..], [ben.to_owned()]);
    w.assert_never_oversold().await;

    // 21:00 UTC: 08:00 in Sydney. Ana, first in line, is told.
    w.advance(3 * HOUR);
    w.settle().await;
    let swept = w.sweep().await;
    assert_eq!(swept.awake, 1, "{swept:?}");
    w.pump().await;
    assert_eq!(recipients(&outbox)[3..], [ana.to_owned()]);
    assert_eq!(outbox.sent().len(), 4, "each told once");
    w.assert_never_oversold().await;
}

#[tokio::test]
async fn on_memory_a_restock_reaches_each_shopper_when_they_wake() {
    let (w, outbox) = memory().await;
    a_restock_reaches_each_shopper_when_they_wake(w, outbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_dynamodb_a_restock_reaches_each_shopper_when_they_wake() {
    let (w, outbox) = dynamodb().await;
    a_restock_reaches_each_shopper_when_they_wake(w, outbox).await;
}

/// A launch at 09:00 in New York: stock reported an hour before is held
/// back, capture says when the item comes, and at the launch the sweep
/// wakes the item and the first wave tells the people awake: New York and
/// London, not Sydney (01:00 there).
async fn a_launch_holds_its_stock_back_until_its_time(w: World, outbox: Arc<Outbox>) {
    w.store
        .put_settings(&settings_for_the_world())
        .await
        .unwrap();
    let chair = restock_core::Sku::try_from(CHAIR).unwrap();
    let launch_at = w.clock.now_ms() + 5 * HOUR; // 14:00 UTC
    let mut entry = w.store.catalogue_entry(&chair).await.unwrap().unwrap();
    entry.launch_at = Some(launch_at);
    w.store.put_catalogue_entry(&entry).await.unwrap();
    let item = w.capture("GET", &format!("/items/{CHAIR}")).await;
    assert_eq!(item.json()["launch_at_ms"], launch_at, "{}", item.body);

    let (ana, dee, eve) = ("+61412345671", "+16467365000", w.email("Eve"));
    join(&w, "Ana", ("phone", ana), Some("Australia/Sydney")).await;
    join(&w, "Dee", ("phone", dee), Some("America/New_York")).await;
    join(&w, "Eve", ("email", &eve), Some("Europe/London")).await;

    w.advance(4 * HOUR);
    w.shopify(Some(5), "s-early").await;
    let reports = w.pump().await;
    assert!(
        reports[0].before_launch && reports[0].offers == 0,
        "{reports:?}"
    );
    assert!(outbox.sent().is_empty(), "nothing before the launch");
    w.advance(HOUR - 60_000);
    w.settle().await;
    assert_eq!(w.sweep().await.awake, 0, "a minute early");
    w.advance(60_000);
    w.settle().await;
    assert_eq!(w.sweep().await.awake, 1, "woken at the launch");
    w.pump().await;
    assert_eq!(recipients(&outbox), [dee.to_owned(), eve.clone()]);
    let item = w.capture("GET", &format!("/items/{CHAIR}")).await;
    assert_eq!(
        item.json()["launch_at_ms"],
        serde_json::Value::Null,
        "launched"
    );
    w.assert_never_oversold().await;
}

#[tokio::test]
async fn on_memory_a_launch_holds_its_stock_back_until_its_time() {
    let (w, outbox) = memory().await;
    a_launch_holds_its_stock_back_until_its_time(w, outbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_dynamodb_a_launch_holds_its_stock_back_until_its_time() {
    let (w, outbox) = dynamodb().await;
    a_launch_holds_its_stock_back_until_its_time(w, outbox).await;
}

/// A launch moved earlier after its stock came in (the team imports the
/// catalogue again, as `restock catalogue import` does) goes at the new
/// time, not the old one.
async fn a_launch_moved_earlier_goes_at_the_new_time(w: World, outbox: Arc<Outbox>) {
    w.store
        .put_settings(&settings_for_the_world())
        .await
        .unwrap();
    let chair = restock_core::Sku::try_from(CHAIR).unwrap();
    let admin = restock_app::admin::Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let put = |launch_at: i64| {
        let (admin, store, chair) = (&admin, &w.store, &chair);
        async move {
            let mut entry = store.catalogue_entry(chair).await.unwrap().unwrap();
            entry.launch_at = Some(launch_at);
            let command = restock_app::admin::Command::CataloguePut {
                entries: vec![entry],
            };
            admin.run(command, 0).await.unwrap();
        }
    };
    let now = w.clock.now_ms(); // 09:00 UTC
    put(now + 6 * HOUR).await;
    let eve = w.email("Eve");
    join(&w, "Eve", ("email", &eve), Some("Europe/London")).await;
    w.shopify(Some(3), "s-in").await;
    let reports = w.pump().await;
    assert!(reports[0].before_launch, "{reports:?}");
    // The launch moves to an hour from now.
    put(now + HOUR).await;
    w.advance(HOUR);
    w.settle().await;
    assert_eq!(w.sweep().await.awake, 1, "woken at the new launch");
    w.pump().await;
    assert_eq!(recipients(&outbox), [eve], "told at the new launch");
}

#[tokio::test]
async fn on_memory_a_launch_moved_earlier_goes_at_the_new_time() {
    let (w, outbox) = memory().await;
    a_launch_moved_earlier_goes_at_the_new_time(w, outbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_dynamodb_a_launch_moved_earlier_goes_at_the_new_time() {
    let (w, outbox) = dynamodb().await;
    a_launch_moved_earlier_goes_at_the_new_time(w, outbox).await;
}

/// A confirmation is a message too: a text sign-up made at 22:00 in
/// Sydney (double opt-in) is not asked to confirm until 08:00 there, when
/// the sweep wakes the item.
async fn a_confirmation_waits_for_the_shopper_s_morning(w: World, outbox: Arc<Outbox>) {
    let mut settings = settings_for_the_world();
    settings.confirm = true;
    w.store.put_settings(&settings).await.unwrap();
    // The world's clock is 09:00 UTC: 11:00 UTC is 22:00 in Sydney.
    w.advance(2 * HOUR);
    let ana = "+61412345671";
    join(&w, "Ana", ("phone", ana), Some("Australia/Sydney")).await;
    let reports = w.pump().await;
    assert_eq!(reports[0].confirmations, 0, "{reports:?}");
    assert!(outbox.sent().is_empty(), "no text at 22:00 in Sydney");
    // 21:00 UTC is 08:00 in Sydney.
    w.advance(10 * HOUR - 60_000);
    w.settle().await;
    assert_eq!(w.sweep().await.awake, 0, "a minute early");
    w.advance(60_000);
    w.settle().await;
    assert_eq!(w.sweep().await.awake, 1, "woken at her morning");
    w.pump().await;
    assert_eq!(
        recipients(&outbox),
        [ana.to_owned()],
        "asked to confirm at 08:00"
    );
}

#[tokio::test]
async fn on_memory_a_confirmation_waits_for_the_shopper_s_morning() {
    let (w, outbox) = memory().await;
    a_confirmation_waits_for_the_shopper_s_morning(w, outbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_dynamodb_a_confirmation_waits_for_the_shopper_s_morning() {
    let (w, outbox) = dynamodb().await;
    a_confirmation_waits_for_the_shopper_s_morning(w, outbox).await;
}

/// Why a reminder due should not go: the gates a notice passes.
#[derive(Debug, Clone, Copy)]
enum Stop {
    ItemPaused,
    SendingPaused,
    ItemEnded,
    SenderRefused,
}

/// A reminder passes the gate a notice passes: an item the team paused, all
/// sending paused or an item the shop no longer sells sends none (its own
/// link would answer 410 there), and a sender's refusal of a reminder pauses
/// all sending as a notice's does.
async fn a_reminder_passes_the_gate_a_notice_passes(w: World, outbox: Arc<Outbox>, stop: Stop) {
    let mut settings = settings_for_the_world();
    settings.remind_before = Some(restock_core::Window::from_mins(5));
    w.store.put_settings(&settings).await.unwrap();
    w.advance(50 * 60_000); // 09:50 UTC
    let ana = w.email("Ana");
    join(&w, "Ana", ("email", &ana), Some("Europe/London")).await;
    w.shopify(Some(1), "s-1").await;
    w.pump().await;
    assert_eq!(
        recipients(&outbox),
        std::slice::from_ref(&ana),
        "the notice went"
    );
    let chair = restock_core::Sku::try_from(CHAIR).unwrap();
    let mut entry = w.store.catalogue_entry(&chair).await.unwrap().unwrap();
    let now = w.clock.now_ms();
    match stop {
        Stop::ItemPaused => {
            entry.paused = Some(restock_core::catalogue::ItemPause {
                reason: "wrong price".into(),
                since_ms: now,
            });
            w.store.put_catalogue_entry(&entry).await.unwrap();
        }
        Stop::SendingPaused => {
            let reason = format!("{}stocktake", restock_app::notify::TEAM_PAUSE_PREFIX);
            w.store
                .pause_sender(&reason, now + 24 * HOUR, &chair, now)
                .await
                .unwrap();
        }
        Stop::ItemEnded => {
            entry.ended = Some(now);
            w.store.put_catalogue_entry(&entry).await.unwrap();
        }
        Stop::SenderRefused => {
            *outbox.sender_refused.lock().unwrap() = Some("the account is in the sandbox".into());
        }
    }
    w.advance(10 * 60_000);
    w.settle().await;
    let swept = w.sweep().await;
    assert_eq!(swept.reminded, 0, "{stop:?}: {swept:?}");
    assert_eq!(recipients(&outbox), [ana], "{stop:?}: no reminder");
    if let Stop::SenderRefused = stop {
        let pause = w.store.sender_pause().await.unwrap();
        assert!(
            pause.is_some_and(|p| p.reason.contains("sandbox")),
            "a sender's refusal of a reminder pauses all sending"
        );
    }
}

#[tokio::test]
async fn on_memory_a_reminder_passes_the_gate_a_notice_passes() {
    for stop in [
        Stop::ItemPaused,
        Stop::SendingPaused,
        Stop::ItemEnded,
        Stop::SenderRefused,
    ] {
        let (w, outbox) = memory().await;
        a_reminder_passes_the_gate_a_notice_passes(w, outbox, stop).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_dynamodb_a_reminder_passes_the_gate_a_notice_passes() {
    for stop in [
        Stop::ItemPaused,
        Stop::SendingPaused,
        Stop::ItemEnded,
        Stop::SenderRefused,
    ] {
        let (w, outbox) = dynamodb().await;
        a_reminder_passes_the_gate_a_notice_passes(w, outbox, stop).await;
    }
}

/// One reminder before an offer runs out (`remind_before`), on the
/// channel the notice went on: Ana, in London, is reminded, and the
/// reminder's own link holds her unit; Ben, in Sydney, falls inside his
/// quiet hours by then, so his reminder is dropped and his offer lapses.
async fn an_unclaimed_offer_is_reminded_once_outside_quiet_hours(w: World, outbox: Arc<Outbox>) {
    let mut settings = settings_for_the_world();
    settings.remind_before = Some(restock_core::Window::from_mins(5));
    w.store.put_settings(&settings).await.unwrap();
    // 09:50 UTC: 20:50 in Sydney; the reminders are due at 10:00 UTC.
    w.advance(50 * 60_000);
    let (ana, ben) = (w.email("Ana"), "+61412345672");
    join(&w, "Ana", ("email", &ana), Some("Europe/London")).await;
    join(&w, "Ben", ("phone", ben), Some("Australia/Sydney")).await;
    w.shopify(Some(2), "s-1").await;
    w.pump().await;
    assert_eq!(recipients(&outbox), [ana.clone(), ben.to_owned()]);

    w.advance(10 * 60_000);
    w.settle().await;
    let swept = w.sweep().await;
    assert_eq!(swept.reminded, 1, "{swept:?}");
    let sent = outbox.sent();
    assert_eq!(
        &recipients(&outbox)[2..],
        std::slice::from_ref(&ana),
        "Ben is asleep (21:00 in Sydney)"
    );
    let Sent::Email { notice, .. } = &sent[2] else {
        panic!("by email, as the notice went")
    };
    assert!(
        notice.subject.starts_with("Still set aside for you"),
        "{}",
        notice.subject
    );
    assert!(notice.text.contains("within 5 minutes"), "{}", notice.text);
    let link = sent[2].reserve_link().expect("a reserve link of its own");
    assert_ne!(Some(link.clone()), sent[0].reserve_link());
    w.settle().await;
    assert_eq!(w.sweep().await.reminded, 0, "once");

    // The reminder's link holds the unit.
    let held = w.capture("POST", &path_of(&link)).await;
    assert!(
        held.status.is_redirection(),
        "{} {}",
        held.status,
        held.body
    );
    let chair = restock_core::Sku::try_from(CHAIR).unwrap();
    let history = w.store.item_history(&chair, "2026-12-01").await.unwrap();
    assert_eq!(
        (history.restocks[&1].reminded, history.restocks[&1].held),
        (1, 1)
    );

    // Ben's offer runs out unclaimed; nothing more is sent.
    w.advance(6 * 60_000);
    w.settle().await;
    assert_eq!(w.sweep().await.lapsed, 1);
    assert_eq!(outbox.sent().len(), 3);
    w.assert_never_oversold().await;
}

#[tokio::test]
async fn on_memory_an_unclaimed_offer_is_reminded_once_outside_quiet_hours() {
    let (w, outbox) = memory().await;
    an_unclaimed_offer_is_reminded_once_outside_quiet_hours(w, outbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_dynamodb_an_unclaimed_offer_is_reminded_once_outside_quiet_hours() {
    let (w, outbox) = dynamodb().await;
    an_unclaimed_offer_is_reminded_once_outside_quiet_hours(w, outbox).await;
}

/// Attribution: an order for the item without a hold, by a contact restock
/// told within the attribution window (matched by the order's email as
/// contacts are keyed, in any spelling), counts as assisted revenue, once
/// per order; the same from a stranger, or after the window, does not.
async fn an_order_by_a_contact_told_counts_as_assisted(w: World, outbox: Arc<Outbox>) {
    w.store
        .put_settings(&settings_for_the_world())
        .await
        .unwrap();
    let ana = w.email("Ana");
    join(&w, "Ana", ("email", &ana), Some("Europe/London")).await;
    w.shopify(Some(1), "s-1").await;
    w.pump().await;
    assert_eq!(recipients(&outbox), std::slice::from_ref(&ana));
    // She buys the chair from a fresh tab that afternoon: no hold.
    w.advance(5 * HOUR);
    let order = |id: u64, email: &str| {
        format!(
            r#"{{"id": {id}, "financial_status": "paid", "email": "{email}", "currency": "GBP", "note_attributes": [], "line_items": [{{"sku": "{CHAIR}", "quantity": 1, "price": "249.00"}}]}}"#
        )
    };
    let paid = order(7001, &ana.to_uppercase());
    for (delivery, status) in [("o-1", "assisted"), ("o-1-again", "duplicate")] {
        let reply = w
            .call(
                Api::Detect,
                shopify_delivery("orders/paid", delivery, &paid),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.json()["status"], status, "{}", reply.body);
    }
    let stranger = order(7002, "someone.else@example.com");
    let reply = w
        .call(
            Api::Detect,
            shopify_delivery("orders/paid", "o-2", &stranger),
        )
        .await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    let chair = restock_core::Sku::try_from(CHAIR).unwrap();
    let stats = w.store.stats(&chair, 2).await.unwrap();
    assert_eq!(stats.assisted, 1, "once per order, whatever the deliveries");
    assert_eq!(stats.assisted_revenue.get("GBP"), Some(&249_000));
    assert!(
        stats.revenue.is_empty(),
        "apart from revenue through a hold"
    );
    // The team's per-item export shows it apart from revenue through holds.
    let admin = restock_app::admin::Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let figures = admin
        .run(
            restock_app::admin::Command::Stats {
                skus: vec![chair.clone()],
            },
            w.clock.now_ms(),
        )
        .await
        .unwrap();
    let mut csv = Vec::new();
    restock_app::admin::export::write_items(&figures.json, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.lines().nth(1).unwrap().ends_with(",,1,GBP 249.00"),
        "{csv}"
    );
    // Eight days later, outside the 7-day window: not counted.
    w.advance(8 * 24 * HOUR);
    let late = order(7003, &ana);
    let reply = w
        .call(Api::Detect, shopify_delivery("orders/paid", "o-3", &late))
        .await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    assert_eq!(w.store.stats(&chair, 2).await.unwrap().assisted, 1);
}

#[tokio::test]
async fn on_memory_an_order_by_a_contact_told_counts_as_assisted() {
    let (w, outbox) = memory().await;
    an_order_by_a_contact_told_counts_as_assisted(w, outbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_dynamodb_an_order_by_a_contact_told_counts_as_assisted() {
    let (w, outbox) = dynamodb().await;
    an_order_by_a_contact_told_counts_as_assisted(w, outbox).await;
}
