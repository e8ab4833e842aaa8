//! Shopify's privacy topics through detect's router, on both stores:
//! `customers/redact` erases the customer's requests (every spelling of
//! their address and number, as `restock forget` does), again and again
//! without harm; `customers/data_request` and `shop/redact` tell the team
//! what to run; an unsigned one changes nothing.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use restock_app::ports::Outbox;
use restock_core::Sku;
use restock_core::platform::shopify;
use restock_e2e::*;

/// A privacy delivery on `topic`, signed with the shop's key (or not).
fn privacy(topic: &str, body: &serde_json::Value, signed: bool) -> Request<Body> {
    let body = body.to_string();
    let signature = if signed {
        shopify::sign(SHOPIFY_KEY.as_bytes(), body.as_bytes())
    } else {
        shopify::sign(b"someone else's key", body.as_bytes())
    };
    Request::post("/webhooks/shopify")
        .header("content-type", "application/json")
        .header(shopify::SIGNATURE, signature)
        .header(shopify::WEBHOOK_ID, format!("privacy-{topic}"))
        .header(shopify::TOPIC, topic)
        .header("X-Shopify-Shop-Domain", "loom-and-last.myshopify.com")
        .body(Body::from(body))
        .expect("request")
}

/// The customer as Shopify's payloads show one: the address in other
/// capitals than the shopper typed it, a number with its spaces.
fn customer(w: &World) -> serde_json::Value {
    serde_json::json!({ "id": 191_167, "email": w.email("Ann").to_uppercase(), "phone": "+44 7911 123456" })
}

async fn the_privacy_topics_are_carried_out(w: World, _outbox: Arc<Outbox>) {
    let ann = w.join("Ann").await;
    assert_eq!(ann.status, 201, "{}", ann.body);
    let bo = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({ "sku": "THROW-OAT", "name": "Ann", "phone": "+447911123456", "consent": true }),
        )
        .await;
    assert_eq!(bo.status, 201, "{}", bo.body);
    assert_eq!(w.join("Della").await.status, 201);
    let id = |r: &Reply| r.json()["request_id"].as_str().unwrap().parse().unwrap();

    // Unsigned: refused, nothing erased.
    let redact = serde_json::json!({
        "shop_id": 954_889, "shop_domain": "loom-and-last.myshopify.com",
        "customer": customer(&w), "orders_to_redact": [299_938, 280_263]
    });
    let refused = w
        .call(Api::Detect, privacy("customers/redact", &redact, false))
        .await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(w.store.request(&id(&ann)).await.unwrap().is_some());

    // A data request: the team is told, with the command, nothing in the clear.
    let asked = serde_json::json!({
        "shop_id": 954_889, "shop_domain": "loom-and-last.myshopify.com",
        "orders_requested": [299_938], "customer": customer(&w), "data_request": { "id": 9999 }
    });
    let told = w
        .call(Api::Detect, privacy("customers/data_request", &asked, true))
        .await;
    assert_eq!(told.status, 202, "{}", told.body);
    assert_eq!(
        told.json()["requests_held"],
        2,
        "her address and her number"
    );
    let alert = w.alerts.all().pop().expect("the team is told");
    assert!(
        alert.subject.contains("customer 191167")
            && alert.body.contains("(9999)")
            && alert
                .body
                .contains("restock show <their email or number> --with-contacts"),
        "{alert:?}"
    );
    assert!(
        !alert.body.contains(&w.email("Ann")) && !alert.body.contains("7911123456"),
        "{alert:?}"
    );

    // Erased: both of her requests (address and number), Della's kept.
    let erased = w
        .call(Api::Detect, privacy("customers/redact", &redact, true))
        .await;
    assert_eq!(erased.status, 200, "{}", erased.body);
    assert_eq!(erased.json()["requests_erased"], 2, "{}", erased.body);
    for r in [&ann, &bo] {
        assert_eq!(w.store.request(&id(r)).await.unwrap(), None);
    }
    assert_eq!(
        w.store
            .stats(&Sku::try_from(CHAIR).unwrap(), 1)
            .await
            .unwrap()
            .waiting,
        1
    );
    // Redelivered: nothing more to erase, still 200.
    let again = w
        .call(Api::Detect, privacy("customers/redact", &redact, true))
        .await;
    assert_eq!(
        (
            again.status.as_u16(),
            again.json()["requests_erased"].as_u64()
        ),
        (200, Some(0))
    );

    // The shop's erasure: the team is told how, nothing is deleted by itself.
    let shop =
        serde_json::json!({ "shop_id": 954_889, "shop_domain": "loom-and-last.myshopify.com" });
    let told = w
        .call(Api::Detect, privacy("shop/redact", &shop, true))
        .await;
    assert_eq!(told.status, 202, "{}", told.body);
    let alert = w.alerts.all().pop().unwrap();
    assert!(
        alert
            .subject
            .contains("loom-and-last.myshopify.com asks for its data to be erased")
            && alert.body.contains("aws dynamodb delete-table"),
        "{alert:?}"
    );
    assert_eq!(
        w.store
            .stats(&Sku::try_from(CHAIR).unwrap(), 1)
            .await
            .unwrap()
            .waiting,
        1
    );
}

#[tokio::test]
async fn the_privacy_topics_are_carried_out_on_memory() {
    let (w, outbox) = World::memory().await;
    the_privacy_topics_are_carried_out(w, outbox).await;
}

#[tokio::test]
async fn the_privacy_topics_are_carried_out_on_dynamodb() {
    let (w, outbox) = crate::reliability::histories::dynamo_world().await;
    the_privacy_topics_are_carried_out(w, outbox).await;
}
