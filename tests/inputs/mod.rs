//! Every route's bad input gets the right status and a message a person can
//! act on, and changes nothing. Runs on the in-memory world: the handlers are
//! the same ones Lambda runs.

use axum::body::Body;
use axum::http::Request;
use restock_app::capture::ClientAddr;
use restock_app::ports::Clock;
use restock_core::Sku;
use restock_e2e::*;
use serde_json::json;

fn chair() -> Sku {
    Sku::try_from(CHAIR).unwrap()
}

async fn untouched(w: &World) {
    let stats = w.store.stats(&chair(), 2).await.unwrap();
    assert_eq!(
        (stats.waiting, stats.offered, stats.held),
        (0, 0, 0),
        "state changed: {stats:?}"
    );
    assert!(
        w.store.wakes(&chair()).await.unwrap().is_empty(),
        "a wake was recorded"
    );
    assert_eq!(w.store.snapshot(&chair()).await.unwrap().counters.level, 0);
}

#[tokio::test]
async fn malformed_notify_me_posts_are_refused_with_field_errors() {
    let (w, _) = World::memory().await;
    let raw = |content_type: &str, body: &str| {
        Request::builder()
            .method("POST")
            .uri("/requests")
            .header("content-type", content_type)
            .body(Body::from(body.to_owned()))
            .unwrap()
    };
    let reply = w
        .call(Api::Capture, raw("application/json", "{\"sku\": "))
        .await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["errors"][0]["field"], "body");
    let reply = w
        .call(Api::Capture, raw("text/plain", "sku=CHAIR-WAL"))
        .await;
    assert_eq!(reply.status, 415);
    let reply = w
        .capture_json(
            "POST",
            "/requests",
            json!({"sku": " / ! ", "name": "", "email": "nope", "consent": false}),
        )
        .await;
    assert_eq!(reply.status, 400);
    let fields: Vec<_> = reply.json()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(fields, ["sku", "name", "email", "consent"]);
    let name = "Ann\u{202E}gnp.exe";
    let reply = w
        .capture_json(
            "POST",
            "/requests",
            json!({"sku": CHAIR, "name": name, "email": "a@example.com", "consent": true}),
        )
        .await;
    assert_eq!(reply.status, 400, "direction overrides are refused");
    untouched(&w).await;
}

#[tokio::test]
async fn an_oversized_body_is_refused_with_413() {
    let (w, _) = World::memory().await;
    let big = json!({"sku": CHAIR, "name": "x".repeat(17 * 1024), "email": "a@example.com", "consent": true});
    assert_eq!(w.capture_json("POST", "/requests", big).await.status, 413);
    let mut request = w.stock_request("big", &" ".repeat(300 * 1024));
    request
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    assert_eq!(w.call(Api::Detect, request).await.status, 413);
    untouched(&w).await;
}

#[tokio::test]
async fn unknown_products_and_opted_out_contacts_are_refused() {
    let (w, _) = World::memory().await;
    let reply = w
        .capture_json(
            "POST",
            "/requests",
            json!({"sku": "NOT-SOLD", "name": "Ann", "email": w.email("ann"), "consent": true}),
        )
        .await;
    assert_eq!(reply.status, 404);
    assert!(
        reply.json()["error"]
            .as_str()
            .unwrap()
            .contains("not one you can wait for"),
        "{}",
        reply.body
    );
    let pepper = restock_app::ports::Secrets::from_json(&secrets_json())
        .unwrap()
        .contact_pepper;
    let contact = restock_core::Contact::Email(
        restock_core::Email::try_from(w.email("bea").as_str()).unwrap(),
    );
    w.store
        .opt_out_contact(&contact.key(&pepper), restock_core::OptOutVia::Team, T0)
        .await
        .unwrap();
    let reply = w.join("Bea").await;
    assert_eq!(reply.status, 409);
    untouched(&w).await;
}

/// An opt-out recorded before addresses were canonical, when an address
/// on an internationalised domain was keyed as typed (lower-cased Unicode),
/// still holds however the shopper types the address now; the admin
/// commands find it too.
#[tokio::test]
async fn an_opt_out_kept_under_an_address_s_former_key_still_holds() {
    let (w, _) = World::memory().await;
    let pepper = restock_app::ports::Secrets::from_json(&secrets_json())
        .unwrap()
        .contact_pepper;
    // The key as it was computed then: HMAC of "email:" and the address
    // as typed, lower-cased.
    let former = {
        use hmac::Mac;
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&pepper).unwrap();
        mac.update("email:della@bücher.example".as_bytes());
        base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            mac.finalize().into_bytes(),
        )
    };
    let contact = restock_core::Contact::Email(
        restock_core::Email::try_from("della@bücher.example").unwrap(),
    );
    let former_key = contact.former_key(&pepper).unwrap();
    assert_eq!(
        former_key.as_str(),
        former,
        "the key as it was computed then"
    );
    w.store
        .opt_out_contact(&former_key, restock_core::OptOutVia::Team, T0)
        .await
        .unwrap();
    for typed in ["Della@Bücher.example", "della@XN--BCHER-KVA.example."] {
        let reply = w
            .capture_json(
                "POST",
                "/requests",
                json!({"sku": CHAIR, "name": "Della", "email": typed, "consent": true}),
            )
            .await;
        assert_eq!(reply.status, 409, "{typed}: {}", reply.body);
    }
    untouched(&w).await;
    assert!(
        w.store.is_opted_out(&contact.key(&pepper)).await.unwrap(),
        "carried over to the canonical key"
    );
    // `restock optout remove` lifts it under both keys: she may join again.
    use restock_app::admin::{Admin, Command};
    let admin = Admin {
        store: w.store.clone(),
        pepper: Some(pepper.clone()),
    };
    let out = admin
        .run(
            Command::OptOutRemove {
                contact: "Della@Bücher.example".into(),
            },
            w.clock.now_ms(),
        )
        .await
        .unwrap();
    assert_eq!(out.json["removed"], true, "{}", out.message);
    assert!(!w.store.is_opted_out(&former_key).await.unwrap());
    let reply = w
        .capture_json(
            "POST",
            "/requests",
            json!({"sku": CHAIR, "name": "Della", "email": "della@bücher.example", "consent": true}),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
}

#[tokio::test]
async fn a_filled_honeypot_looks_accepted_and_stores_nothing() {
    let (w, _) = World::memory().await;
    let reply = w
        .capture_json("POST", "/requests", json!({"sku": CHAIR, "name": "Bot", "email": "bot@example.com", "consent": true, "website": "http://spam.example"}))
        .await;
    assert_eq!(reply.status, 201);
    assert!(reply.json()["request_id"].is_string());
    let id = reply.json()["request_id"].as_str().unwrap().to_owned();
    assert_eq!(
        w.capture("GET", &format!("/requests/{id}")).await.status,
        404
    );
    untouched(&w).await;
}

#[tokio::test]
async fn too_many_taps_get_429_with_retry_after() {
    let (w, _) = World::memory().await;
    let mut last = None;
    for i in 0..31 {
        last = Some(w.join(&format!("Fan{i}")).await);
    }
    let reply = last.unwrap();
    assert_eq!(reply.status, 429, "{}", reply.body);
    let retry: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=600).contains(&retry));
    // The same person tapping over and over is limited too, from any address.
    let (w, _) = World::memory().await;
    let statuses: Vec<u16> = {
        let mut v = Vec::new();
        for i in 0..6 {
            let request = Request::builder()
                .method("POST")
                .uri("/requests")
                .header("content-type", "application/json")
                .extension(ClientAddr(format!("198.51.100.{i}").parse().unwrap()))
                .body(Body::from(
                    json!({"sku": CHAIR, "name": "Ann", "email": w.email("ann"), "consent": true})
                        .to_string(),
                ))
                .unwrap();
            v.push(w.call(Api::Capture, request).await.status.as_u16());
        }
        v
    };
    assert_eq!(statuses, [201, 200, 200, 200, 200, 429]);
}

#[tokio::test]
async fn hostile_names_are_stored_as_typed_and_escaped_everywhere() {
    let (w, outbox) = World::memory().await;
    let name = "<img src=x onerror=alert(1)>\"Della\"";
    let reply = w
        .capture_json(
            "POST",
            "/requests",
            json!({"sku": CHAIR, "name": name, "email": w.email("della"), "consent": true}),
        )
        .await;
    assert_eq!(reply.status, 201);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    w.pump().await;
    let sent = outbox.sent();
    let restock_app::ports::Sent::Email { notice, .. } = &sent[0] else {
        panic!("an email")
    };
    assert!(
        notice
            .html
            .contains("&lt;img src=x onerror=alert(1)&gt;&quot;Della&quot;")
    );
    assert!(!notice.html.contains("<img"));
    let page = w
        .capture("GET", &path_of(&sent[0].reserve_link().unwrap()))
        .await;
    assert_eq!(page.status, 200);
    assert!(!page.body.contains("<img"));
}

#[tokio::test]
async fn unknown_guessed_and_malformed_links_look_expired() {
    let (w, _) = World::memory().await;
    let id = w.join("Ann").await.json()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let guessed = format!("/r/{CHAIR}~{id}.AAAAAAAAAAAAAAAAAAAAAA");
    for path in ["/r/garbage", "/r/CHAIR-WAL~x.y", guessed.as_str()] {
        for method in ["GET", "POST"] {
            let reply = w.capture(method, path).await;
            assert_eq!(reply.status, 410, "{method} {path}");
            assert!(reply.body.contains("This reserve link has ended"));
        }
    }
    assert_eq!(w.capture("POST", "/o/garbage").await.status, 404);
    assert_eq!(w.capture("GET", "/requests/not-an-id").await.status, 404);
    assert_eq!(
        w.capture("DELETE", "/requests/AAAAAAAAAAAAAAAAAAAAAA")
            .await
            .status,
        404
    );
    assert_eq!(w.capture("GET", "/nowhere").await.status, 404);
    assert_eq!(w.store.stats(&chair(), 2).await.unwrap().waiting, 1);
}

#[tokio::test]
async fn cors_answers_only_the_storefront() {
    let (w, _) = World::memory().await;
    let preflight = |origin: &str| {
        Request::builder()
            .method("OPTIONS")
            .uri("/requests")
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .body(Body::empty())
            .unwrap()
    };
    let ok = w
        .call(Api::Capture, preflight("https://loomandlast.co.uk"))
        .await;
    assert_eq!(ok.status, 204);
    assert_eq!(
        ok.header("access-control-allow-origin"),
        Some("https://loomandlast.co.uk")
    );
    let other = w
        .call(Api::Capture, preflight("https://evil.example"))
        .await;
    assert_eq!(other.status, 403);
    assert_eq!(other.header("access-control-allow-origin"), None);
}

#[tokio::test]
async fn unsigned_tampered_and_replayed_webhooks_change_nothing() {
    let (w, _) = World::memory().await;
    let mut tampered = w.shopify_request(Some(4), "x-1");
    tampered.headers_mut().insert(
        restock_core::platform::shopify::SIGNATURE,
        "AAAA".parse().unwrap(),
    );
    assert_eq!(w.call(Api::Detect, tampered).await.status, 401);
    let mut unsigned = w.shopify_request(Some(4), "x-2");
    unsigned
        .headers_mut()
        .remove(restock_core::platform::shopify::SIGNATURE);
    let reply = w.call(Api::Detect, unsigned).await;
    assert_eq!(reply.status, 400);
    assert!(
        reply.json()["error"]
            .as_str()
            .unwrap()
            .contains("X-Shopify-Hmac-Sha256")
    );

    let body = format!(r#"{{"sku":"{CHAIR}","level":4,"at":"2026-11-29T08:59:00Z"}}"#);
    let replay = w.stock_request("msg-1", &body);
    w.advance(6 * MIN);
    let reply = w.call(Api::Detect, replay).await;
    assert_eq!(reply.status, 401, "a capture replayed later is refused");
    assert!(
        reply.json()["error"]
            .as_str()
            .unwrap()
            .contains("five minutes")
    );
    let malformed = w.stock_request("msg-2", "{\"sku\": 4}");
    assert_eq!(w.call(Api::Detect, malformed).await.status, 400);
    let topic = |topic: &str, id: &str| {
        let mut r = w.shopify_request(Some(4), id);
        r.headers_mut().insert(
            restock_core::platform::shopify::TOPIC,
            topic.parse().unwrap(),
        );
        r
    };
    // A topic detect does not handle is accepted and ignored.
    assert_eq!(
        w.call(Api::Detect, topic("products/update", "x-3"))
            .await
            .status,
        202
    );
    // An order topic whose body is not an order is malformed.
    assert_eq!(
        w.call(Api::Detect, topic("orders/paid", "x-4"))
            .await
            .status,
        400
    );
    untouched(&w).await;
}

/// A body that dates its reading or order in the future would, stored, be
/// the newest reading for good: every real one after it would be stale.
/// Each platform's own time field past restock's clock by more than five
/// minutes is refused (422, saying so) and changes nothing; within the
/// tolerance it is taken.
#[tokio::test]
async fn readings_and_orders_dated_in_the_future_are_refused_and_wedge_nothing() {
    let (w, _) = World::memory().await;
    let rfc3339 = |ms: i64| {
        time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
            .unwrap()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let now = w.clock.now_ms();
    let refused = |reply: Reply, what: &str| {
        assert_eq!(reply.status, 422, "{what}: {}", reply.body);
        let error = reply.json()["error"].as_str().unwrap().to_owned();
        assert!(
            error.contains("more than five minutes after restock's clock"),
            "{what}: {error}"
        );
    };
    // The generic format's `at`, a year ahead.
    let body = format!(
        r#"{{"sku":"{CHAIR}","level":9,"at":"{}"}}"#,
        rfc3339(now + 365 * 24 * 60 * MIN)
    );
    refused(
        w.call(Api::Detect, w.stock_request("future-1", &body))
            .await,
        "generic",
    );
    // Shopify's `updated_at`, an hour ahead.
    let request = w.shopify_request_at(Some(9), "future-2", now + 60 * MIN);
    refused(w.call(Api::Detect, request).await, "shopify");
    // WooCommerce's `date_modified_gmt`, in 2099.
    let product = r#"{"id":812,"sku":"THROW-OAT","manage_stock":true,"stock_quantity":9,"date_modified_gmt":"2099-01-01T00:00:00"}"#;
    refused(
        w.call(Api::Detect, w.woocommerce_request(product, "future-3"))
            .await,
        "woocommerce",
    );
    // An order placed (the generic `at`) a day ahead.
    let order = format!(
        r#"{{"hold":"AAAAAAAAAAAAAAAAAAAAAA","at":"{}"}}"#,
        rfc3339(now + 24 * 60 * MIN)
    );
    refused(
        w.call(
            Api::Detect,
            w.signed_request("/webhooks/orders", "future-4", &order),
        )
        .await,
        "order",
    );
    untouched(&w).await;
    // A clock a few minutes ahead is within the tolerance, and a real
    // reading after the refused ones is the newest.
    let body = format!(
        r#"{{"sku":"{CHAIR}","level":2,"at":"{}"}}"#,
        rfc3339(now + 4 * MIN)
    );
    let reply = w.call(Api::Detect, w.stock_request("ahead-1", &body)).await;
    assert!(reply.status.is_success(), "{}", reply.body);
    assert_eq!(w.store.snapshot(&chair()).await.unwrap().counters.level, 2);
}

/// A WooCommerce body without `date_modified_gmt` is timed on arrival, so
/// a signed body replayed under a fresh delivery id would look fresh: it
/// never outranks a reading the platform timed. Nobody is told of the
/// replayed stock.
#[tokio::test]
async fn a_replayed_body_without_the_platform_s_time_never_outranks_a_timed_reading() {
    let (w, outbox) = World::memory().await;
    let throw = Sku::try_from("THROW-OAT").unwrap();
    let signed_up = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({ "sku": "THROW-OAT", "name": "Ann", "email": w.email("Ann"), "consent": true }),
        )
        .await;
    assert_eq!(signed_up.status, 201, "{}", signed_up.body);
    let sold_out = r#"{"id":812,"sku":"THROW-OAT","manage_stock":true,"stock_quantity":0,"date_modified_gmt":"2026-12-04T00:00:00"}"#;
    let reply = w
        .call(Api::Detect, w.woocommerce_request(sold_out, "timed-1"))
        .await;
    assert!(reply.status.is_success(), "{}", reply.body);
    w.advance(10 * MIN);
    // An old body with 50 in stock and no time, replayed under new ids.
    let replayed = r#"{"id":812,"sku":"THROW-OAT","manage_stock":true,"stock_quantity":50}"#;
    for delivery in ["replay-1", "replay-2"] {
        let reply = w
            .call(Api::Detect, w.woocommerce_request(replayed, delivery))
            .await;
        assert!(reply.status.is_success(), "{}", reply.body);
        w.advance(MIN);
    }
    assert_eq!(w.store.snapshot(&throw).await.unwrap().counters.level, 0);
    w.pump().await;
    assert!(
        outbox.sent().iter().all(|s| s.reserve_link().is_none()),
        "nobody told of replayed stock: {:?}",
        outbox.sent()
    );
    // A real, timed reading still moves the level.
    let back = r#"{"id":812,"sku":"THROW-OAT","manage_stock":true,"stock_quantity":2,"date_modified_gmt":"2026-12-04T00:05:00"}"#;
    let reply = w
        .call(Api::Detect, w.woocommerce_request(back, "timed-2"))
        .await;
    assert!(reply.status.is_success(), "{}", reply.body);
    assert_eq!(w.store.snapshot(&throw).await.unwrap().counters.level, 2);
}

#[tokio::test]
async fn an_unknown_item_is_accepted_and_put_before_the_team() {
    let (w, _) = World::memory().await;
    let body = r#"{"sku":"MYSTERY-1","level":40,"at":"2026-11-29T08:59:00Z"}"#;
    let reply = w.call(Api::Detect, w.stock_request("m-1", body)).await;
    assert_eq!(reply.status, 202);
    let alerts = w.alerts.all();
    assert_eq!(alerts.len(), 1);
    assert!(
        alerts[0].body.contains("MYSTERY-1") && alerts[0].body.contains("restock catalogue import")
    );
}

/// A Shopify shop sends `inventory_levels/update` for every product, and
/// retries: a shop that catalogues a few items must not get an alert for
/// each stock movement of the rest. Each delivery is counted; the team is
/// told once per item a day.
#[tokio::test]
async fn deliveries_for_items_not_in_the_catalogue_are_counted_and_alerted_once_a_day() {
    use restock_app::admin::{Admin, Command};
    let (w, _) = World::memory().await;
    let at = "2026-11-29T08:59:00Z";
    // One item's movements, each retried; another item's; a batch of both.
    for i in 0..6 {
        let body = format!(r#"{{"sku":"MYSTERY-1","level":{i},"at":"{at}"}}"#);
        for retry in 0..2 {
            let reply = w
                .call(
                    Api::Detect,
                    w.stock_request(&format!("m-{i}-{retry}"), &body),
                )
                .await;
            assert_eq!(reply.status, 202, "{}", reply.body);
        }
    }
    let batch = format!(
        r#"[{{"sku":"MYSTERY-2","level":1,"at":"{at}"}},{{"sku":"MYSTERY-1","level":2,"at":"{at}"}},{{"sku":"MYSTERY-2","level":3,"at":"{at}"}}]"#
    );
    let reply = w
        .call(Api::Detect, w.stock_request("m-batch", &batch))
        .await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    let subjects: Vec<String> = w.alerts.all().into_iter().map(|a| a.subject).collect();
    assert_eq!(subjects.len(), 2, "one alert per item: {subjects:?}");
    assert!(
        subjects.iter().any(|s| s.contains("MYSTERY-1")),
        "{subjects:?}"
    );
    assert!(
        subjects.iter().any(|s| s.contains("MYSTERY-2")),
        "{subjects:?}"
    );
    let admin = Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let stats = admin
        .run(Command::Stats { skus: vec![] }, w.clock.now_ms())
        .await
        .unwrap();
    assert_eq!(stats.json["mail"]["unknown_item_deliveries"], 15);
    assert!(
        stats.message.contains(
            "for items not in the catalogue: 15 (the team is alerted once per item a day)"
        ),
        "{}",
        stats.message
    );
    // The next day, the item still unknown: told once more.
    w.advance(24 * 60 * MIN);
    let body = r#"{"sku":"MYSTERY-1","level":7,"at":"2026-11-30T08:59:00Z"}"#;
    let reply = w
        .call(Api::Detect, w.stock_request("m-next-day", body))
        .await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    assert_eq!(w.alerts.all().len(), 3);
}

#[tokio::test]
async fn a_suspicious_restock_waits_for_the_team_with_the_release_command() {
    let (w, outbox) = World::memory().await;
    assert_eq!(w.join("Ann").await.status, 201);
    let reply = w.shopify(Some(1_000), "huge").await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json()["results"][0]["outcome"]["outcome"],
        "escalated"
    );
    w.pump().await;
    assert!(outbox.sent().is_empty(), "nobody is told");
    let alert = &w.alerts.all()[0];
    assert!(
        alert.body.contains("restock release CHAIR-WAL") && alert.body.contains("1 waiting"),
        "{}",
        alert.body
    );
}

#[tokio::test]
async fn woocommerce_pings_and_rotated_keys_and_orders_work() {
    let (w, _) = World::memory().await;
    let ping = Request::builder()
        .method("POST")
        .uri("/webhooks/woocommerce")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from("webhook_id=17"))
        .unwrap();
    assert_eq!(w.call(Api::Detect, ping).await.status, 200);
    let product = r#"{"id":799,"sku":"","manage_stock":true,"stock_quantity":3,"date_modified_gmt":"2026-11-29T08:59:00"}"#;
    let reply = w
        .call(Api::Detect, w.woocommerce_request(product, "wc-1"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.json()["results"][0]["sku"],
        CHAIR,
        "mapped by product id"
    );
    // The Shopify secret lists a new key first; deliveries signed with the old one still verify.
    assert_eq!(w.shopify(Some(3), "s-1").await.status, 200);

    // A purchase that used a hold.
    let (w, outbox) = World::memory().await;
    w.join("Ann").await;
    w.shopify(Some(1), "s-2").await;
    w.pump().await;
    let held = w
        .capture("POST", &path_of(&outbox.sent()[0].reserve_link().unwrap()))
        .await;
    let location = held.header("location").unwrap().to_owned();
    let hold = hold_in(&location);
    let order = format!(r#"{{"hold":"{hold}","order_id":"1001"}}"#);
    let mut request = w.stock_request("o-1", &order);
    *request.uri_mut() = "/webhooks/orders".parse().unwrap();
    assert_eq!(
        w.call(Api::Detect, request).await.json()["status"],
        "bought"
    );
    let unknown = r#"{"hold":"AAAAAAAAAAAAAAAAAAAAAA"}"#;
    let mut request = w.stock_request("o-2", unknown);
    *request.uri_mut() = "/webhooks/orders".parse().unwrap();
    assert_eq!(w.call(Api::Detect, request).await.status, 202);
}

#[tokio::test]
async fn a_product_url_alone_still_hands_the_hold_to_the_shop() {
    // THROW-OAT has a product URL and no checkout URL template.
    let (w, outbox) = World::memory().await;
    let joined = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({ "sku": "THROW-OAT", "name": "Ann", "email": w.email("Ann"), "consent": true }),
        )
        .await;
    assert_eq!(joined.status, 201, "{}", joined.body);
    let at = w
        .clock
        .now()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let body = format!(r#"{{"sku":"THROW-OAT","level":1,"at":"{at}"}}"#);
    assert_eq!(
        w.call(Api::Detect, w.stock_request("throw-1", &body))
            .await
            .status,
        200
    );
    w.pump().await;
    let held = w
        .capture("POST", &path_of(&outbox.sent()[0].reserve_link().unwrap()))
        .await;
    assert_eq!(held.status, 303, "{}", held.body);
    let location = held.header("location").unwrap();
    assert!(
        location.starts_with("https://loomandlast.co.uk/products/linen-throw?hold="),
        "the hold id is in the product URL: {location}"
    );
    assert_eq!(hold_in(location).len(), 22, "a whole hold id: {location}");
}

/// A notify-me post from `platform` (the address the Function URL saw),
/// carrying whatever `X-Forwarded-For` the caller chose to write.
fn join_from(w: &World, platform: &str, forwarded: &str, name: &str) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri("/requests")
        .header("content-type", "application/json")
        .header("x-forwarded-for", forwarded)
        .extension(ClientAddr(platform.parse().unwrap()))
        .body(Body::from(
            json!({"sku": CHAIR, "name": name, "email": w.email(name), "consent": true})
                .to_string(),
        ))
        .unwrap()
}

#[tokio::test]
async fn a_forged_forwarded_for_header_buys_no_new_address() {
    // One source address, forty sign-ups, each claiming another address.
    let (w, _) = World::memory().await;
    let mut statuses = Vec::new();
    for i in 0..40 {
        let forged = format!("198.51.{}.{}", i / 250, i % 250 + 1);
        let reply = w
            .call(
                Api::Capture,
                join_from(&w, "203.0.113.7", &forged, &format!("Bot{i}")),
            )
            .await;
        statuses.push(reply.status.as_u16());
    }
    let accepted = statuses.iter().filter(|s| **s == 201).count();
    assert_eq!(accepted, 30, "the per-address limit holds: {statuses:?}");
    assert!(statuses[30..].iter().all(|s| *s == 429), "{statuses:?}");
    // Another real address is not held back by the first one's limit.
    let other = w
        .call(
            Api::Capture,
            join_from(&w, "198.51.100.20", "203.0.113.7", "Dee"),
        )
        .await;
    assert_eq!(other.status, 201, "{}", other.body);
}

#[tokio::test]
async fn one_ipv6_network_is_one_client_however_many_addresses_it_uses() {
    // One /64, forty sign-ups, each from another of its 2^64 addresses.
    let (w, _) = World::memory().await;
    let mut statuses = Vec::new();
    for i in 0..40 {
        let address = format!("2001:db8:7:9:{i:x}::{:x}", i * 7 + 1);
        let reply = w
            .call(
                Api::Capture,
                join_from(&w, &address, "", &format!("Bot{i}")),
            )
            .await;
        statuses.push(reply.status.as_u16());
    }
    let accepted = statuses.iter().filter(|s| **s == 201).count();
    assert_eq!(accepted, 30, "the /64 is one client: {statuses:?}");
    assert!(statuses[30..].iter().all(|s| *s == 429), "{statuses:?}");
    // The next /64, and an IPv4 client, are clients of their own.
    for (address, name) in [("2001:db8:7:a::1", "Dee"), ("203.0.113.9", "Eve")] {
        let reply = w.call(Api::Capture, join_from(&w, address, "", name)).await;
        assert_eq!(reply.status, 201, "{address}: {}", reply.body);
    }
    // A shop whose shoppers share a /64 (a campus) counts each /128.
    let (w, _) = World::memory().await;
    let mut settings = settings();
    settings.limits.ipv6_prefix = 128;
    w.store.put_settings(&settings).await.unwrap();
    for i in 0..40 {
        let address = format!("2001:db8:7:9::{:x}", i + 1);
        let reply = w
            .call(
                Api::Capture,
                join_from(&w, &address, "", &format!("Fay{i}")),
            )
            .await;
        assert_eq!(reply.status, 201, "{address}: {}", reply.body);
    }
}

#[tokio::test]
async fn behind_trusted_proxies_the_client_is_read_from_the_right() {
    let (w, _) = World::memory().await;
    let mut settings = settings();
    settings.trusted_proxies = vec!["130.176.0.0/16".parse().unwrap()];
    w.store.put_settings(&settings).await.unwrap();
    // Through the proxy, each real client (appended by the proxy) counts on
    // its own; what the client wrote to the left is ignored.
    for i in 0..35 {
        let chain = format!("6.6.6.6, 203.0.113.{}", i + 1);
        let reply = w
            .call(
                Api::Capture,
                join_from(&w, "130.176.0.9", &chain, &format!("Fan{i}")),
            )
            .await;
        assert_eq!(reply.status, 201, "client {i}: {}", reply.body);
    }
    // One real client behind the proxy is still one address.
    let mut last = 0;
    for i in 0..31 {
        let chain = format!("10.{i}.0.1, 198.51.100.77");
        last = w
            .call(
                Api::Capture,
                join_from(&w, "130.176.0.9", &chain, &format!("Same{i}")),
            )
            .await
            .status
            .as_u16();
    }
    assert_eq!(last, 429);
}

#[tokio::test]
async fn knowing_an_address_gives_no_power_over_its_request() {
    let (w, _) = World::memory().await;
    let ann = w.join("Ann").await;
    assert_eq!(ann.status, 201);
    let ann = ann.json();
    let (id, token) = (
        ann["request_id"].as_str().unwrap().to_owned(),
        ann["manage_token"].as_str().unwrap().to_owned(),
    );
    // Someone else taps with Ann's address: told the place, handed nothing.
    let repeat = w.join("Ann").await;
    assert_eq!(repeat.status, 200);
    let repeat = repeat.json();
    assert_eq!(repeat["position"], 1);
    assert!(repeat.get("request_id").is_none(), "{repeat}");
    assert!(repeat.get("manage_token").is_none(), "{repeat}");
    // Even with Ann's id (leaked, guessed), no token or a made-up one reads
    // and changes nothing, and answers exactly like an unknown request.
    let forged = format!("{CHAIR}~{id}.AAAAAAAAAAAAAAAAAAAAAA");
    for attempt in [
        w.capture("GET", &format!("/requests/{id}")).await,
        w.capture("DELETE", &format!("/requests/{id}")).await,
        w.manage("GET", &forged).await,
        w.manage("DELETE", &forged).await,
    ] {
        assert_eq!(attempt.status, 404, "{}", attempt.body);
        assert_eq!(
            attempt.json()["error"],
            "We couldn't find that sign-up. It may have ended already."
        );
    }
    // Ann's own browser, with the token it was given, can.
    let mine = w.manage("GET", &token).await;
    assert_eq!(
        (mine.status.as_u16(), mine.json()["status"].as_str()),
        (200, Some("waiting"))
    );
    assert_eq!(w.manage("DELETE", &token).await.status, 200);
    assert_eq!(w.manage("GET", &token).await.json()["status"], "cancelled");
}

/// A bodiless request to capture from `platform`.
fn read_from(platform: &str, method: &str, path: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(path)
        .extension(ClientAddr(platform.parse().unwrap()))
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn reads_and_link_pages_are_limited_per_address_and_say_when_to_come_back() {
    let (w, _) = World::memory().await;
    let mut settings = settings();
    settings.limits.reads_per_ip = 5;
    w.store.put_settings(&settings).await.unwrap();
    let guessed = format!("/r/{CHAIR}~AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA");
    for _ in 0..5 {
        let reply = w
            .call(Api::Capture, read_from("203.0.113.7", "GET", &guessed))
            .await;
        assert_eq!(reply.status, 410, "{}", reply.body);
    }
    // Walking guessed links (or hammering a status) stops here, with a page
    // that says when to come back.
    let page = w
        .call(Api::Capture, read_from("203.0.113.7", "GET", &guessed))
        .await;
    assert_eq!(page.status, 429);
    let retry: u64 = page.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=600).contains(&retry));
    assert!(
        page.body.contains("try this link again in"),
        "{}",
        page.body
    );
    let status = w
        .call(
            Api::Capture,
            read_from("203.0.113.7", "GET", "/requests/AAAAAAAAAAAAAAAAAAAAAA"),
        )
        .await;
    assert_eq!(status.status, 429);
    assert!(status.header("retry-after").is_some());
    // Another address is not held back.
    let other = w
        .call(Api::Capture, read_from("198.51.100.8", "GET", &guessed))
        .await;
    assert_eq!(other.status, 410);
}

#[tokio::test]
async fn a_shop_behind_one_address_can_raise_the_join_limit() {
    let (w, _) = World::memory().await;
    let mut settings = settings();
    settings.limits.joins_per_ip = 100;
    w.store.put_settings(&settings).await.unwrap();
    for i in 0..40 {
        let reply = w
            .call(
                Api::Capture,
                join_from(&w, "203.0.113.7", "203.0.113.7", &format!("Fan{i}")),
            )
            .await;
        assert_eq!(reply.status, 201, "join {i}: {}", reply.body);
    }
}

#[tokio::test]
async fn texts_go_only_to_mobiles_in_the_shops_countries() {
    let (w, _) = World::memory().await;
    let by_phone = |phone: &str, name: &str| {
        w.capture_json(
            "POST",
            "/requests",
            json!({"sku": CHAIR, "name": name, "phone": phone, "consent": true}),
        )
    };
    let premium = by_phone("+44 909 090 1234", "Pump").await;
    assert_eq!(premium.status, 400, "{}", premium.body);
    assert_eq!(premium.json()["errors"][0]["field"], "phone");
    let said = premium.json()["errors"][0]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(said.contains("premium-rate"), "{said}");
    let abroad = by_phone("+33 6 12 34 56 78", "Far").await;
    assert_eq!(abroad.status, 400);
    assert!(abroad.body.contains("GB, GG, JE, IM"), "{}", abroad.body);
    assert_eq!(by_phone("+44 7400 123456", "Ann").await.status, 201);
    // A shop that lists no countries sends no texts at all.
    let mut settings = settings();
    settings.sms_countries.clear();
    let (w, _) = World::memory().await;
    w.store.put_settings(&settings).await.unwrap();
    let off = w
        .capture_json(
            "POST",
            "/requests",
            json!({"sku": CHAIR, "name": "Bo", "phone": "+44 7400 123456", "consent": true}),
        )
        .await;
    assert_eq!(off.status, 400);
    assert!(
        off.body.contains("does not send text messages"),
        "{}",
        off.body
    );
}

/// Ann joins, the chair comes back, she clicks: the world and her hold id
/// (from the checkout URL she is sent to).
pub(crate) async fn ann_holds_the_chair() -> (World, String) {
    let (w, outbox) = World::memory().await;
    w.join("Ann").await;
    w.shopify(Some(1), "s-1").await;
    w.pump().await;
    let held = w
        .capture("POST", &path_of(&outbox.sent()[0].reserve_link().unwrap()))
        .await;
    let hold = hold_in(held.header("location").unwrap());
    (w, hold.to_owned())
}

#[tokio::test]
async fn a_shopify_order_ends_the_hold_it_carried_as_bought() {
    let (w, hold) = ann_holds_the_chair().await;
    // The checkout URL carried the hold as the cart attribute `hold`, which
    // Shopify keeps on the order as a note attribute.
    let paid = format!(
        r#"{{"id": 820982911946154508, "financial_status": "paid", "note_attributes": [{{"name": "hold", "value": "{hold}"}}], "line_items": [{{"sku": "{CHAIR}", "quantity": 1}}]}}"#
    );
    // Created before payment: nothing yet.
    let pending = paid.replace("\"paid\"", "\"pending\"");
    let created = w
        .call(
            Api::Detect,
            shopify_delivery("orders/create", "o-0", &pending),
        )
        .await;
    assert_eq!(created.status, 202, "{}", created.body);
    let bought = w
        .call(Api::Detect, shopify_delivery("orders/paid", "o-1", &paid))
        .await;
    assert_eq!(bought.status, 200, "{}", bought.body);
    assert_eq!(bought.json()["status"], "bought");
    let stats = w
        .store
        .stats(&Sku::try_from(CHAIR).unwrap(), 2)
        .await
        .unwrap();
    assert_eq!(
        (stats.held, stats.bought),
        (0, 1),
        "the unit is counted as sold"
    );
    // Shopify's redelivery changes nothing; a forged one is refused.
    let again = w
        .call(Api::Detect, shopify_delivery("orders/paid", "o-1", &paid))
        .await;
    assert_eq!(again.json()["status"], "duplicate");
    let mut forged = shopify_delivery("orders/paid", "o-2", &paid);
    forged
        .headers_mut()
        .insert("x-shopify-hmac-sha256", "AAAA".parse().unwrap());
    assert_eq!(w.call(Api::Detect, forged).await.status, 401);
    // An order without a hold changes nothing.
    let plain = r#"{"id": 1, "financial_status": "paid", "note_attributes": [], "line_items": [{"sku": "CHAIR-WAL"}]}"#;
    assert_eq!(
        w.call(Api::Detect, shopify_delivery("orders/paid", "o-3", plain))
            .await
            .status,
        202
    );
    assert_eq!(
        w.store
            .stats(&Sku::try_from(CHAIR).unwrap(), 2)
            .await
            .unwrap()
            .bought,
        1
    );
}

#[tokio::test]
async fn a_paid_woocommerce_order_ends_the_hold_in_its_meta_data() {
    let (w, hold) = ann_holds_the_chair().await;
    let order = |status: &str, topic: &str, delivery: &str| {
        let body = format!(
            r#"{{"id": 727, "status": "{status}", "meta_data": [{{"id": 9, "key": "hold", "value": "{hold}"}}], "line_items": [{{"sku": "{CHAIR}"}}]}}"#
        );
        woocommerce_delivery(topic, delivery, &body)
    };
    let created = w
        .call(Api::Detect, order("pending", "order.created", "1"))
        .await;
    assert_eq!(created.status, 202, "{}", created.body);
    let paid = w
        .call(Api::Detect, order("processing", "order.updated", "2"))
        .await;
    assert_eq!(
        (paid.status.as_u16(), paid.json()["status"].as_str()),
        (200, Some("bought")),
        "{}",
        paid.body
    );
    let again = w
        .call(Api::Detect, order("completed", "order.updated", "3"))
        .await;
    assert_eq!(again.json()["status"], "duplicate");
    let stats = w
        .store
        .stats(&Sku::try_from(CHAIR).unwrap(), 2)
        .await
        .unwrap();
    assert_eq!((stats.held, stats.bought), (0, 1));
}

#[tokio::test]
async fn sign_webhook_makes_order_deliveries_detect_accepts() {
    use restock_app::admin::webhooks::{TestEvent, sign};
    use restock_core::Platform;
    for (platform, key) in [
        (Platform::Shopify, SHOPIFY_KEY),
        (Platform::WooCommerce, WOO_KEY),
    ] {
        let (w, hold) = ann_holds_the_chair().await;
        let order = TestEvent::Order {
            hold,
            sku: Some(CHAIR.into()),
        };
        let delivery = sign(
            platform,
            &order,
            key,
            "msg_order_1",
            w.clock.now().unix_timestamp(),
        )
        .unwrap();
        let mut request = Request::builder().method("POST").uri(delivery.path);
        for (name, value) in &delivery.headers {
            request = request.header(*name, value);
        }
        let reply = w
            .call(
                Api::Detect,
                request.body(Body::from(delivery.body.clone())).unwrap(),
            )
            .await;
        assert_eq!(reply.status, 200, "{platform}: {}", reply.body);
        assert_eq!(reply.json()["status"], "bought", "{platform}");
    }
}

/// An order that names a hold but not its item (a reused checkout link, a
/// hand-edited cart): the hold is left alone, the level is not touched, and
/// the team is told once however often Shopify delivers it.
#[tokio::test]
async fn an_order_without_the_hold_s_item_leaves_the_hold_and_tells_the_team_once() {
    let (w, hold) = ann_holds_the_chair().await;
    let chair = Sku::try_from(CHAIR).unwrap();
    let before = w.store.snapshot(&chair).await.unwrap();
    let paid = format!(
        r#"{{"id": 4411, "created_at": "2026-12-04T00:01:00Z", "financial_status": "paid", "note_attributes": [{{"name": "hold", "value": "{hold}"}}], "line_items": [{{"sku": "THROW-OAT", "quantity": 1}}]}}"#
    );
    for delivery in ["o-9", "o-9", "o-10"] {
        let reply = w
            .call(
                Api::Detect,
                shopify_delivery("orders/paid", delivery, &paid),
            )
            .await;
        assert_eq!(reply.status, 202, "{}", reply.body);
        assert!(
            reply.body.contains("does not have the hold's item"),
            "{}",
            reply.body
        );
    }
    let after = w.store.snapshot(&chair).await.unwrap();
    assert_eq!(
        after.counters, before.counters,
        "the level and the hold are untouched"
    );
    assert_eq!(after.bought, 0);
    let told: Vec<_> = w
        .alerts
        .all()
        .into_iter()
        .filter(|a| a.subject.contains("without the item"))
        .collect();
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].body.contains(&hold), "{}", told[0].body);
}

/// The shop's webhook to 0 at checkout arrives before Shopify's order: the
/// sale is counted once, and the next restock of one tells the next shopper.
#[tokio::test]
async fn the_shop_s_webhook_before_its_order_counts_the_last_sale_once() {
    let (w, outbox) = World::memory().await;
    w.join("Ann").await;
    w.advance(1_000);
    w.join("Bo").await;
    w.shopify(Some(1), "s-1").await;
    w.pump().await;
    let held = w
        .capture("POST", &path_of(&outbox.sent()[0].reserve_link().unwrap()))
        .await;
    let hold = hold_in(held.header("location").unwrap());
    // Checkout: Shopify takes the unit (the webhook, a second later) ...
    let checkout = w.clock_rfc3339();
    w.advance(1_000);
    assert_eq!(w.shopify(Some(0), "s-2").await.status, 200);
    // ... then sends the paid order, placed at checkout.
    let paid = format!(
        r#"{{"id": 99, "created_at": "{checkout}", "financial_status": "paid", "note_attributes": [{{"name": "hold", "value": "{hold}"}}], "line_items": [{{"sku": "{CHAIR}"}}]}}"#
    );
    let bought = w
        .call(Api::Detect, shopify_delivery("orders/paid", "o-1", &paid))
        .await;
    assert_eq!(bought.status, 200, "{}", bought.body);
    let chair = Sku::try_from(CHAIR).unwrap();
    let snap = w.store.snapshot(&chair).await.unwrap();
    assert_eq!(
        (snap.counters.level, snap.counters.held),
        (0, 0),
        "no phantom hold"
    );
    w.advance(60_000);
    w.shopify(Some(1), "s-3").await;
    w.pump().await;
    let told: Vec<_> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(
        told,
        [w.email("Ann"), w.email("Bo")],
        "Bo is told of the next one"
    );
}

/// A warm capture keeps an item's catalogue entry for `ENTRY_TTL`, so a hot
/// item's shoppers do not each read it: the team ending the chair is seen
/// by sign-ups within those ten seconds. A click reads the store itself: a
/// reserve link of the ended chair holds nothing at once.
#[tokio::test]
async fn a_warm_capture_sees_an_ended_item_within_ten_seconds_and_a_click_at_once() {
    let (w, outbox) = World::memory().await;
    assert_eq!(w.join("Ann").await.status, 201);
    w.shopify(Some(1), "s-1").await;
    w.pump().await;
    let link = path_of(&outbox.sent()[0].reserve_link().unwrap());
    assert_eq!(
        w.capture("GET", &link).await.status,
        200,
        "her reserve page"
    );
    let mut entry = w.store.catalogue_entry(&chair()).await.unwrap().unwrap();
    entry.ended = Some(w.clock.now_ms());
    w.store.put_catalogue_entry(&entry).await.unwrap();

    let click = w.capture("POST", &link).await;
    assert_eq!(click.status, 410, "{}", click.body);
    assert_eq!(w.store.stats(&chair(), 1).await.unwrap().held, 0);
    // The warm copy still takes a sign-up; ten seconds on, it is read again.
    assert_eq!(w.join("Ben").await.status, 201);
    w.advance(restock_app::ENTRY_TTL.as_millis() as i64);
    let late = w.join("Cy").await;
    assert_eq!(late.status, 410, "{}", late.body);
}
