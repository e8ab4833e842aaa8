//! The stock pull and the webhook-silence check: against a local fake of
//! the Shopify Admin GraphQL and WooCommerce REST APIs, through the
//! production adapter (`restock_aws::platforms::HttpPlatforms`), and through
//! the real sweep binary.

use std::sync::Arc;

use restock_app::pull;
use restock_core::Sku;
use restock_e2e::*;
use restock_store::prelude::*;

const HOUR: i64 = 3_600_000;

async fn pulling_world() -> (World, Arc<restock_app::ports::Outbox>, PlatformFake) {
    let fake = PlatformFake::start().await;
    let (w, outbox) = World::memory_with_secret(&fake.secrets_json()).await;
    (w, outbox, fake)
}

/// `name` waits for the linen throw (a WooCommerce product).
async fn join_throw(w: &World, name: &str) {
    let reply = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({ "sku": "THROW-OAT", "name": name, "email": w.email(name), "consent": true }),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
}

fn chair() -> Sku {
    Sku::try_from(CHAIR).unwrap()
}

#[tokio::test]
async fn a_restock_no_webhook_reported_is_found_by_the_pull_and_offered() {
    let (w, outbox, fake) = pulling_world().await;
    assert_eq!(w.join("Della").await.status, 201);
    w.advance(1_000);
    assert_eq!(w.join("Marcus").await.status, 201);
    // The chair came back at two locations; the webhook never arrived.
    fake.shopify
        .lock()
        .unwrap()
        .insert(CHAIR_SHOPIFY_ID, vec![(24_826_418, 1), (55_000_001, 1)]);

    let report = pull::run(&w.services).await.unwrap();
    assert_eq!(
        (report.pulled, report.missed_restocks, report.failed),
        (1, 1, 0),
        "{report:?}"
    );
    let snapshot = w.store.snapshot(&chair()).await.unwrap();
    assert_eq!(snapshot.counters.level, 2, "the locations are summed");
    let alerts = w.alerts.all();
    assert!(
        alerts
            .iter()
            .any(|a| a.subject.contains("restock found by the stock pull")),
        "{alerts:?}"
    );
    // The same decision as a webhook: notify tells the two, oldest first.
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(told, [w.email("Della"), w.email("Marcus")]);

    // Ike joins; pulled again, unchanged: nothing new, no second alert.
    assert_eq!(w.join("Ike").await.status, 201);
    let again = pull::run(&w.services).await.unwrap();
    assert_eq!(
        (again.pulled, again.missed_restocks, again.differed),
        (1, 0, 0)
    );
    assert_eq!(w.alerts.all().len(), alerts.len());
}

/// A shop set up since 2026 has a Dev Dashboard app: the pull gets its
/// Admin API tokens through the client credentials grant, keeps one while
/// it lasts, renews it before it runs out, and asks again when Shopify
/// refuses one early (revoked, the app reinstalled).
#[tokio::test]
async fn a_dev_dashboard_app_s_tokens_are_granted_cached_and_renewed() {
    let fake = PlatformFake::start().await;
    let (w, _) = World::memory_with_secret(&fake.app_secrets_json()).await;
    assert_eq!(w.join("Della").await.status, 201);
    fake.shopify
        .lock()
        .unwrap()
        .insert(CHAIR_SHOPIFY_ID, vec![(24_826_418, 0)]);
    let pulled = |w: &World| {
        let services = w.services.clone();
        async move {
            let report = pull::run(&services).await.unwrap();
            (report.pulled, report.failed)
        }
    };
    // A day's token: granted once, used by both pulls.
    assert_eq!(pulled(&w).await, (1, 0));
    assert_eq!(pulled(&w).await, (1, 0));
    assert_eq!((fake.count("shopify-token"), fake.count("shopify")), (1, 2));
    // Shopify stops taking it early: refused once, one new grant, and the
    // read goes on.
    fake.granted.lock().unwrap().clear();
    assert_eq!(pulled(&w).await, (1, 0));
    let counts = || {
        (
            fake.count("shopify-refused"),
            fake.count("shopify-token"),
            fake.count("shopify"),
        )
    };
    assert_eq!(counts(), (1, 2, 3));
    // Refused once, then THROTTLED twice: one new grant, not one per
    // retry.
    fake.granted.lock().unwrap().clear();
    *fake.throttle.lock().unwrap() = 2;
    assert_eq!(pulled(&w).await, (1, 0));
    assert_eq!(
        (fake.count("shopify-refused"), fake.count("shopify-token")),
        (2, 3),
        "one grant for the one refusal"
    );
    let (refused, tokens, reads) = counts();
    // Tokens that run out within restock's five-minute margin: each is
    // renewed before it is used, so no call is refused for one.
    *fake.expires_in.lock().unwrap() = 60;
    fake.granted.lock().unwrap().clear();
    for _ in 0..3 {
        assert_eq!(pulled(&w).await, (1, 0));
    }
    assert_eq!(
        counts(),
        (refused + 1, tokens + 3, reads + 3),
        "one refusal (the cleared day's token), then a grant before each read"
    );

    // A wrong client secret: the read fails with a message that says what
    // to check, and names no secret.
    use restock_app::ports::Platforms;
    let access = serde_json::json!({
        "shop": fake.url, "client_id": SHOPIFY_APP.0, "client_secret": "shpss_wrong",
    });
    let e = restock_aws::platforms::HttpPlatforms::new()
        .levels(restock_core::Platform::Shopify, &access, CHAIR_SHOPIFY_ID)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("invalid_client") && e.contains("`client_secret`"),
        "{e}"
    );
    assert!(
        !e.contains("shpss_wrong") && !e.contains(SHOPIFY_APP.1),
        "{e}"
    );
}

#[tokio::test]
async fn woocommerce_products_are_pulled_over_rest() {
    let (w, outbox, fake) = pulling_world().await;
    join_throw(&w, "Ann").await;
    fake.woocommerce.lock().unwrap().insert(812, Some(3));
    let report = pull::run(&w.services).await.unwrap();
    assert_eq!(
        (report.pulled, report.missed_restocks),
        (1, 1),
        "{report:?}"
    );
    assert_eq!(
        *fake.calls.lock().unwrap(),
        ["woocommerce"],
        "only the item with someone waiting"
    );
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1);
}

#[tokio::test]
async fn the_pull_asks_only_about_items_people_wait_for_and_survives_a_refusing_api() {
    let fake = PlatformFake::start().await;
    let (w, _) = World::memory_with_secret(&fake.secrets_json()).await;
    let report = pull::run(&w.services).await.unwrap();
    assert_eq!(report.pulled, 0);
    assert!(
        fake.calls.lock().unwrap().is_empty(),
        "nobody waits: no API call"
    );

    // A revoked token: counted and logged, nothing applied, no error.
    let mut secret: serde_json::Value = serde_json::from_str(&fake.secrets_json()).unwrap();
    secret["shopify_admin"]["access_token"] = "shpat_revoked".into();
    let (w, _) = World::memory_with_secret(&secret.to_string()).await;
    assert_eq!(w.join("Della").await.status, 201);
    fake.shopify
        .lock()
        .unwrap()
        .insert(CHAIR_SHOPIFY_ID, vec![(24_826_418, 5)]);
    let report = pull::run(&w.services).await.unwrap();
    assert_eq!((report.pulled, report.failed), (0, 1), "{report:?}");
    assert_eq!(w.store.snapshot(&chair()).await.unwrap().counters.level, 0);

    // Without API access in the secret the item is simply not pullable.
    let (w, _) = World::memory().await;
    assert_eq!(w.join("Della").await.status, 201);
    let report = pull::run(&w.services).await.unwrap();
    assert_eq!((report.pulled, report.not_pullable), (0, 1));
}

#[tokio::test]
async fn a_pulled_jump_too_large_to_trust_waits_for_the_team_like_a_webhook() {
    let (w, outbox, fake) = pulling_world().await;
    assert_eq!(w.join("Della").await.status, 201);
    fake.shopify
        .lock()
        .unwrap()
        .insert(CHAIR_SHOPIFY_ID, vec![(24_826_418, 100_000)]);
    pull::run(&w.services).await.unwrap();
    let snapshot = w.store.snapshot(&chair()).await.unwrap();
    assert!(
        snapshot.stock.paused,
        "escalated, as the same level by webhook would be"
    );
    w.pump().await;
    assert!(outbox.sent().is_empty());
}

#[tokio::test]
async fn a_platform_silent_for_a_day_while_people_wait_is_reported_once_per_silence() {
    let (w, _outbox, _fake) = pulling_world().await;
    assert_eq!(w.shopify(Some(0), "level-zero").await.status, 200);
    assert_eq!(w.join("Della").await.status, 201);
    let silence_alerts = |w: &World| {
        w.alerts
            .all()
            .into_iter()
            .filter(|a| a.subject.contains("no shopify stock webhook"))
            .count()
    };
    w.advance(23 * HOUR);
    assert!(pull::run(&w.services).await.unwrap().silent.is_empty());
    w.advance(2 * HOUR);
    let report = pull::run(&w.services).await.unwrap();
    // (The fixture's chair is a WooCommerce product too, and WooCommerce
    // has never delivered: reported as well.)
    assert_eq!(report.silent, ["woocommerce", "shopify"]);
    let alert = w.alerts.all().into_iter().last().unwrap();
    assert_eq!(alert.subject, "restock: no shopify stock webhook for 25h");
    assert!(alert.body.contains("1 of its items"), "{}", alert.body);
    // Once per silence.
    w.advance(HOUR);
    assert!(pull::run(&w.services).await.unwrap().silent.is_empty());
    assert_eq!(silence_alerts(&w), 1);
    // It delivers again, then goes quiet again: a new silence, a new alert.
    assert_eq!(w.shopify(Some(0), "level-zero-again").await.status, 200);
    w.advance(25 * HOUR);
    assert_eq!(pull::run(&w.services).await.unwrap().silent, ["shopify"]);
    assert_eq!(silence_alerts(&w), 2);
}

/// A platform that has never delivered (a webhook never subscribed, or
/// signed with another key from day one) is reported like one that went
/// quiet: once people have waited on its items longer than
/// `webhook_silence`, and weekly while it stays so.
#[tokio::test]
async fn a_platform_that_never_delivered_while_people_wait_is_reported() {
    let (w, _outbox, _fake) = pulling_world().await;
    // WooCommerce delivers; Shopify never has.
    let throw = r#"{"id":812,"sku":"THROW-OAT","manage_stock":true,"stock_quantity":0,"date_modified_gmt":"2026-12-04T00:00:00"}"#;
    let reply = w
        .call(Api::Detect, w.woocommerce_request(throw, "w-1"))
        .await;
    assert!(reply.status.is_success(), "{}", reply.body);
    assert_eq!(w.join("Della").await.status, 201);
    let never = |w: &World| {
        w.alerts
            .all()
            .into_iter()
            .filter(|a| a.subject.contains("has never delivered"))
            .collect::<Vec<_>>()
    };
    w.advance(23 * HOUR);
    assert!(pull::run(&w.services).await.unwrap().silent.is_empty());
    let reply = w
        .call(Api::Detect, w.woocommerce_request(throw, "w-2"))
        .await;
    assert!(reply.status.is_success(), "{}", reply.body);
    w.advance(2 * HOUR);
    let report = pull::run(&w.services).await.unwrap();
    assert_eq!(
        report.silent,
        ["shopify"],
        "not WooCommerce, which delivers"
    );
    let alerts = never(&w);
    assert_eq!(alerts.len(), 1);
    assert_eq!(
        alerts[0].subject,
        "restock: shopify has never delivered a stock webhook"
    );
    assert!(
        alerts[0]
            .body
            .contains("waited 25h on 1 of shopify's items")
            && alerts[0].body.contains("WebhooksRefused"),
        "{}",
        alerts[0].body
    );
    // Not every pull: weekly.
    w.advance(HOUR);
    assert!(pull::run(&w.services).await.unwrap().silent.is_empty());
    w.advance(7 * 24 * HOUR);
    let reply = w
        .call(Api::Detect, w.woocommerce_request(throw, "w-3"))
        .await;
    assert!(reply.status.is_success(), "{}", reply.body);
    assert_eq!(pull::run(&w.services).await.unwrap().silent, ["shopify"]);
    assert_eq!(never(&w).len(), 2);
    // Once it delivers, it is watched like any other.
    assert_eq!(w.shopify(Some(0), "at-last").await.status, 200);
    w.advance(HOUR);
    assert!(pull::run(&w.services).await.unwrap().silent.is_empty());
}

#[tokio::test]
async fn silence_is_not_reported_while_nobody_waits() {
    let (w, _outbox, _fake) = pulling_world().await;
    assert_eq!(w.shopify(Some(0), "level-zero").await.status, 200);
    w.advance(48 * HOUR);
    assert!(pull::run(&w.services).await.unwrap().silent.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_binary_runs_the_pull_on_its_rule_input() {
    let fake = PlatformFake::start().await;
    fake.shopify
        .lock()
        .unwrap()
        .insert(CHAIR_SHOPIFY_ID, vec![(24_826_418, 2)]);
    let d = Deployment::create_with_secret(settings(), &fake.secrets_json()).await;
    let (outcome, logs) = crate::binaries::run(
        &d,
        "capture",
        &crate::binaries::fixture("capture-notify-me.json"),
    )
    .await;
    assert!(matches!(outcome, Outcome::Response(_)), "{logs}");
    let (outcome, logs) = crate::binaries::run(
        &d,
        "sweep",
        &crate::binaries::fixture("sweep-stock-pull.json"),
    )
    .await;
    let Outcome::Response(report) = outcome else {
        panic!("the pull failed: {outcome:?}\n{logs}")
    };
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["missed_restocks"], 1, "{report}\n{logs}");
    // The level, and the shop's locations (whether each sells online).
    assert_eq!(
        *fake.calls.lock().unwrap(),
        ["shopify", "shopify-locations"]
    );
    let c = d.store.snapshot(&chair()).await.unwrap().counters;
    assert_eq!(c.level, 2);
    // The minute's scheduled event still runs the sweep.
    let (outcome, _) = crate::binaries::run(
        &d,
        "sweep",
        &crate::binaries::fixture("sweep-schedule.json"),
    )
    .await;
    let Outcome::Response(report) = outcome else {
        panic!("sweep failed: {outcome:?}")
    };
    assert!(serde_json::from_str::<serde_json::Value>(&report).unwrap()["lapsed"].is_number());
}

/// WooCommerce dates are whole seconds: a restock in the same second as the
/// sell-out ties with it. The lower level stands (never oversell) and the
/// shop is asked for the item now, through the stock pull's code path, so
/// the restock is told at once rather than at the next scheduled pull.
#[tokio::test]
async fn a_woocommerce_restock_in_the_sell_out_s_second_is_settled_by_asking_the_shop() {
    let (w, outbox, fake) = pulling_world().await;
    join_throw(&w, "Ann").await;
    let product = |qty: u32| {
        format!(
            r#"{{"id":812,"sku":"THROW-OAT","manage_stock":true,"stock_quantity":{qty},"date_modified_gmt":"2026-12-04T00:00:05"}}"#
        )
    };
    let sold_out = w
        .call(Api::Detect, w.woocommerce_request(&product(0), "w-1"))
        .await;
    assert_eq!(sold_out.status, 200, "{}", sold_out.body);
    // The shop has 3 again, and says so in the same second.
    fake.woocommerce.lock().unwrap().insert(812, Some(3));
    let restock = w
        .call(Api::Detect, w.woocommerce_request(&product(3), "w-2"))
        .await;
    assert_eq!(restock.status, 200, "{}", restock.body);
    let throw = Sku::try_from("THROW-OAT").unwrap();
    assert_eq!(w.store.snapshot(&throw).await.unwrap().counters.level, 3);
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(told, [w.email("Ann")]);
}

/// A WooCommerce site whose proxy drops `X-WP-TotalPages` still lists every
/// product: pages are read on while they come back full (before, the first
/// page was taken for all, and every product past it looked unlisted).
#[tokio::test]
async fn a_woocommerce_listing_without_its_page_count_is_read_to_the_end() {
    let fake = PlatformFake::start().await;
    *fake.woo_products.lock().unwrap() = (0..250)
        .map(|i| {
            serde_json::json!({
                "id": 1000 + i, "name": format!("Mug {i}"), "type": "simple",
                "sku": format!("MUG-{i}"), "permalink": format!("https://shop.example/product/mug-{i}/"),
            })
        })
        .collect();
    fake.woo_no_paging_headers
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let platforms = restock_aws::platforms::HttpPlatforms::new();
    let access = serde_json::json!({
        "url": fake.url, "consumer_key": WOO_API_KEY.0, "consumer_secret": WOO_API_KEY.1,
    });
    let listed = platforms
        .woocommerce(&access)
        .unwrap()
        .products()
        .await
        .unwrap();
    assert_eq!(listed.len(), 250, "every product, over three pages");
    let calls = fake.calls.lock().unwrap();
    assert_eq!(
        calls.iter().filter(|c| **c == "woocommerce-list").count(),
        3
    );
}

/// The keys secret with a platform's access in a wrong shape (a token
/// where the object belongs, an easy misreading; a list; a field of the
/// wrong type): the pull reads nothing for those items, and neither its
/// logs nor what it tells the team quote the credential.
#[test]
fn a_credential_in_the_wrong_shape_is_never_quoted_by_the_pull() {
    let token = "shpat_0123456789abcdef0123";
    let woo = "ck_fedcba9876543210fedcba";
    let shapes = [
        (serde_json::json!(token), serde_json::json!(woo)),
        (serde_json::json!([token]), serde_json::json!({"url": woo})),
        (
            serde_json::json!({"shop": "s.myshopify.com", "access_token": [token]}),
            serde_json::json!({"url": "https://w.example", "consumer_key": 7, "consumer_secret": woo}),
        ),
    ];
    for (shopify, woocommerce) in shapes {
        let (told, logs) = logged(async {
            let mut secret: serde_json::Value = serde_json::from_str(&secrets_json()).unwrap();
            secret["shopify_admin"] = shopify.clone();
            secret["woocommerce_api"] = woocommerce.clone();
            let (w, _) = World::memory_with_secret(&secret.to_string()).await;
            assert_eq!(w.join("Della").await.status, 201);
            join_throw(&w, "Marcus").await;
            let report = pull::run(&w.services).await.unwrap();
            assert_eq!((report.pulled, report.failed), (0, 2), "{report:?}");
            format!("{:?} {:?}", report, w.alerts.all())
        });
        assert!(
            logs.contains("keys secret"),
            "the failure is logged: {logs}"
        );
        for said in [&logs, &told] {
            assert!(
                !said.contains(token) && !said.contains(woo) && !said.contains("0123456789"),
                "{said}"
            );
        }
    }
}

/// A signed Shopify `inventory_levels/update` for the chair at `location`.
fn chair_at(
    location: u64,
    available: i64,
    webhook_id: &str,
) -> axum::http::Request<axum::body::Body> {
    let body = serde_json::json!({
        "inventory_item_id": CHAIR_SHOPIFY_ID,
        "location_id": location,
        "available": available,
        "updated_at": "2026-12-01T09:00:00Z",
    })
    .to_string();
    shopify_delivery("inventory_levels/update", webhook_id, &body)
}

/// The shop counter (Shopify POS: `fulfillsOnlineOrders` false) and the
/// warehouse that ships online orders.
const COUNTER: u64 = 70_000_001;
const WAREHOUSE: u64 = 24_826_418;

/// Units at a shop counter cannot be bought from a reserve link: a restock
/// there tells nobody, the same units at the warehouse do, and the pull
/// counts only the warehouse's.
async fn only_stock_sold_online_is_offered(
    w: World,
    outbox: Arc<restock_app::ports::Outbox>,
    fake: PlatformFake,
) {
    fake.retail_only.lock().unwrap().insert(COUNTER);
    assert_eq!(w.join("Della").await.status, 201);
    // A delivery for an item restock does not sell asks the shop nothing.
    let other = serde_json::json!({
        "inventory_item_id": 999, "location_id": WAREHOUSE,
        "available": 5, "updated_at": "2026-12-01T09:00:00Z",
    });
    let other = shopify_delivery("inventory_levels/update", "s-0", &other.to_string());
    let other = w.call(Api::Detect, other).await;
    assert_eq!(other.status, 202, "{}", other.body);
    assert_eq!(fake.count("shopify-locations"), 0);
    let counter = w.call(Api::Detect, chair_at(COUNTER, 5, "s-1")).await;
    assert_eq!(counter.status, 200, "{}", counter.body);
    w.settle().await;
    w.pump().await;
    assert!(outbox.sent().is_empty(), "{:?}", outbox.sent());
    assert_eq!(w.store.snapshot(&chair()).await.unwrap().counters.level, 0);
    assert_eq!(fake.count("shopify-locations"), 1);

    let warehouse = w.call(Api::Detect, chair_at(WAREHOUSE, 5, "s-2")).await;
    assert_eq!(warehouse.status, 200, "{}", warehouse.body);
    w.settle().await;
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(told, [w.email("Della")]);
    assert_eq!(w.store.snapshot(&chair()).await.unwrap().counters.level, 5);
    assert_eq!(
        fake.count("shopify-locations"),
        1,
        "the locations are kept a while"
    );

    // The pull reads both; only the warehouse's units count.
    fake.shopify
        .lock()
        .unwrap()
        .insert(CHAIR_SHOPIFY_ID, vec![(COUNTER, 7), (WAREHOUSE, 5)]);
    pull::run(&w.services).await.unwrap();
    assert_eq!(w.store.snapshot(&chair()).await.unwrap().counters.level, 5);
}

#[tokio::test]
async fn a_restock_at_a_shop_counter_tells_nobody_in_memory() {
    let (w, outbox, fake) = pulling_world().await;
    only_stock_sold_online_is_offered(w, outbox, fake).await;
}

#[tokio::test]
async fn a_restock_at_a_shop_counter_tells_nobody_on_dynamodb() {
    let fake = PlatformFake::start().await;
    let outbox = Arc::new(restock_app::ports::Outbox::default());
    let w = World::new(
        Arc::new(restock_store_dynamo::testing::dynamo_store().await),
        outbox.clone(),
        Arc::new(restock_app::ports::FixedPhraser(Ok("It is back.".into()))),
        Arc::new(restock_app::ports::StaticKeyring(Arc::new(
            restock_app::ports::Secrets::from_json(&fake.secrets_json()).unwrap(),
        ))),
    )
    .await
    .lagging(IndexLag::Dynamo(restock_store_dynamo::testing::index_lag()));
    only_stock_sold_online_is_offered(w, outbox, fake).await;
}

#[tokio::test]
async fn a_location_the_settings_include_counts_whatever_the_platform_says() {
    let (w, outbox, fake) = pulling_world().await;
    fake.retail_only.lock().unwrap().insert(COUNTER);
    let mut settings = settings();
    settings.locations.include = vec![COUNTER.to_string()];
    w.store.put_settings(&settings).await.unwrap();
    assert_eq!(w.join("Della").await.status, 201);
    let counter = w.call(Api::Detect, chair_at(COUNTER, 5, "s-1")).await;
    assert_eq!(counter.status, 200, "{}", counter.body);
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1, "told of the counter's units");
    assert_eq!(w.store.snapshot(&chair()).await.unwrap().counters.level, 5);
}
