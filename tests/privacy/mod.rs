//! Shopify's privacy topics through detect's router: a customer's erasure
//! is carried out (here, where nothing is handed on; in production detect
//! hands it to the sweep: tests/binaries), a data request and a shop's
//! erasure are told to the team with the command that answers them;
//! contacts masked; an unsigned one is refused and tells nobody.

use axum::body::Body;
use axum::http::Request;
use restock_e2e::*;

/// A privacy delivery on `topic`, signed with the shop's key (or not).
fn privacy(topic: &str, body: &serde_json::Value, signed: bool) -> Request<Body> {
    let key: &[u8] = if signed {
        SHOPIFY_KEY.as_bytes()
    } else {
        b"someone else's key"
    };
    let id = format!("privacy-{topic}");
    let mut request = shopify_delivery_signed(key, topic, &id, &body.to_string());
    request.headers_mut().insert(
        "X-Shopify-Shop-Domain",
        "loom-and-last.myshopify.com".parse().expect("a header"),
    );
    request
}

/// The customer as Shopify's payloads show one: the address in other
/// capitals than the shopper typed it, a number with its spaces.
fn customer(w: &World) -> serde_json::Value {
    serde_json::json!({ "id": 191_167, "email": w.email("Ann").to_uppercase(), "phone": "+44 7911 123456" })
}

#[tokio::test]
async fn a_customer_s_erasure_is_carried_out_and_the_other_topics_told_with_their_commands() {
    let (w, _outbox) = World::memory().await;
    let ann = w.join("Ann").await;
    assert_eq!(ann.status, 201, "{}", ann.body);
    let id: restock_core::RequestId = ann.json()["request_id"].as_str().unwrap().parse().unwrap();
    let redact = serde_json::json!({
        "shop_id": 954_889, "shop_domain": "loom-and-last.myshopify.com",
        "customer": customer(&w), "orders_to_redact": [299_938, 280_263]
    });
    // Unsigned: refused, the team told nothing.
    let refused = w
        .call(Api::Detect, privacy("customers/redact", &redact, false))
        .await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(w.alerts.all().is_empty());

    let told = |topic: &'static str, body: serde_json::Value, status: u16| {
        let w = &w;
        async move {
            let reply = w.call(Api::Detect, privacy(topic, &body, true)).await;
            assert_eq!(reply.status, status, "{topic}: {}", reply.body);
            let alert = w.alerts.all().pop().expect("the team is told");
            assert!(
                !alert.body.contains(&w.email("Ann").to_lowercase())
                    && !alert.body.contains("7911123456"),
                "masked: {alert:?}"
            );
            alert
        }
    };
    let erase = told("customers/redact", redact.clone(), 200).await;
    assert!(
        erase.subject.contains("customer 191167 is erased")
            && erase.body.contains("erased their 1 requests"),
        "{erase:?}"
    );
    assert!(
        w.store.request(&id).await.unwrap().is_none(),
        "every spelling of her address found"
    );
    let asked = told(
        "customers/data_request",
        serde_json::json!({
            "shop_id": 954_889, "shop_domain": "loom-and-last.myshopify.com",
            "orders_requested": [299_938], "customer": customer(&w), "data_request": { "id": 9999 }
        }),
        202,
    )
    .await;
    assert!(
        asked.body.contains("(9999)")
            && asked
                .body
                .contains("restock show <their email or number> --with-contacts"),
        "{asked:?}"
    );
    let shop = told(
        "shop/redact",
        serde_json::json!({ "shop_id": 954_889, "shop_domain": "loom-and-last.myshopify.com" }),
        202,
    )
    .await;
    assert!(
        shop.subject
            .contains("loom-and-last.myshopify.com asks for its data to be erased")
            && shop.body.contains("aws dynamodb delete-table"),
        "{shop:?}"
    );
}
