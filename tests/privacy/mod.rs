//! Shopify's privacy topics through detect's router: a customer's erasure
//! and the shop's are carried out (here, where nothing is handed on; in
//! production detect hands them to the sweep: tests/binaries), a data
//! request is told to the team with the command that answers it; contacts
//! masked; an unsigned one is refused and tells nobody. A shop's erasure
//! goes a page at a time on both stores.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::Request;
use restock_app::privacy::{Erasure, ErasureQueue, ShopErasure, erase_shop};
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
    let bea = w.join("Bea").await;
    let bea: restock_core::RequestId = bea.json()["request_id"].as_str().unwrap().parse().unwrap();
    let shop = told(
        "shop/redact",
        serde_json::json!({ "shop_id": 954_889, "shop_domain": "loom-and-last.myshopify.com" }),
        200,
    )
    .await;
    assert!(
        shop.subject
            .contains("loom-and-last.myshopify.com's shoppers are erased")
            && shop.body.contains("1 in all")
            && shop.body.contains("aws dynamodb delete-table"),
        "{shop:?}"
    );
    assert!(w.store.request(&bea).await.unwrap().is_none(), "erased");
}

/// Where a shop erasure's next pages go: kept, as the bus would.
#[derive(Default)]
struct Handed(Mutex<Vec<Erasure>>);

#[async_trait::async_trait]
impl ErasureQueue for Handed {
    async fn queue(&self, erasure: &Erasure) -> Result<(), restock_app::ports::PublishError> {
        self.0.lock().unwrap().push(erasure.clone());
        Ok(())
    }
}

/// Twelve shoppers (two of them on two items, one opted out) erased a page per
/// run, each run handing the rest on as the sweep does; the team told once,
/// with the count; the opt-out kept.
async fn a_shop_s_erasure_goes_a_page_at_a_time(w: World) {
    let mut ids = Vec::new();
    for n in 0..12 {
        let joined = w.join(&format!("Shopper{n}")).await;
        assert_eq!(joined.status, 201, "{}", joined.body);
        ids.push(
            joined.json()["request_id"]
                .as_str()
                .unwrap()
                .parse::<restock_core::RequestId>()
                .unwrap(),
        );
    }
    for n in 0..2 {
        let again = w
            .capture_json(
                "POST",
                "/requests",
                serde_json::json!({ "sku": "THROW-OAT", "name": "again", "email": w.email(&format!("Shopper{n}")), "consent": true }),
            )
            .await;
        assert_eq!(again.status, 201, "{}", again.body);
    }
    let opted = w.store.request(&ids[3]).await.unwrap().unwrap().contact_key;
    w.store
        .opt_out_contact(&opted, restock_core::OptOutVia::Team, T0)
        .await
        .unwrap();
    let held = w
        .store
        .requests_page(None, 1_000)
        .await
        .unwrap()
        .requests
        .len();
    assert!(held >= 12, "{held}");
    let handed = Arc::new(Handed::default());
    let s = &w.services;
    let mut services = restock_app::Services::new(
        s.store.clone(),
        s.sender.clone(),
        s.phraser.clone(),
        s.keyring.clone(),
        s.alerts.clone(),
        s.clock.clone(),
        s.entropy.clone(),
    );
    services.erasures = Some(handed.clone());
    let mut next = ShopErasure {
        domain: "loom-and-last.myshopify.com".into(),
        after: None,
        erased: 0,
        pass_erased: 0,
    };
    let (mut runs, mut erased) = (0, 0);
    loop {
        runs += 1;
        assert!(runs < 100, "the erasure ends");
        erased += erase_shop(&services, next, 1).await.unwrap();
        let Some(rest) = handed.0.lock().unwrap().pop() else {
            break;
        };
        assert!(rest.contact_keys.is_empty() && rest.customer_id.is_none());
        next = rest.shop.expect("a shop's erasure");
    }
    assert_eq!(
        erased as usize, held,
        "every request, the opted-out one's too"
    );
    assert!(runs > 1, "a page per run: {runs}");
    for id in &ids {
        assert!(w.store.request(id).await.unwrap().is_none(), "{id} erased");
    }
    let told = w.alerts.all();
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].body.contains(&format!("{held} in all")), "{told:?}");
    assert!(
        w.store.is_opted_out(&opted).await.unwrap(),
        "the opt-out is kept"
    );
}

#[tokio::test]
async fn a_shop_s_erasure_goes_a_page_at_a_time_in_memory() {
    let (w, _outbox) = World::memory().await;
    a_shop_s_erasure_goes_a_page_at_a_time(w).await;
}

#[tokio::test]
async fn a_shop_s_erasure_goes_a_page_at_a_time_on_dynamodb() {
    let w = World::new(
        Arc::new(restock_store_dynamo::testing::dynamo_store().await),
        Arc::new(restock_app::ports::Outbox::default()),
        Arc::new(restock_app::ports::FixedPhraser(Ok("It is back.".into()))),
        Arc::new(restock_app::ports::StaticKeyring(Arc::new(
            restock_app::ports::Secrets::from_json(&secrets_json()).unwrap(),
        ))),
    )
    .await;
    a_shop_s_erasure_goes_a_page_at_a_time(w).await;
}
