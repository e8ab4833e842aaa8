//! Security checks: link secrets are 128-bit and stored only as hashes; a
//! guessed link is answered exactly like an expired one; the logs of a full
//! run name no contact, token or key. (Unsigned, tampered and replayed
//! webhooks: `tests/inputs`.)

use std::sync::Arc;

use base64::Engine;
use restock_app::ports::{Clock, FixedPhraser, Outbox, Secrets, StaticKeyring};
use restock_core::LinkToken;
use restock_e2e::*;

fn secret_of(link: &str) -> String {
    link.rsplit('.').next().unwrap().to_owned()
}

#[tokio::test]
async fn a_guessed_link_is_answered_exactly_like_an_expired_one() {
    let (w, outbox) = World::memory().await;
    let id = w.join("Ann").await.json()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    w.call(Api::Detect, w.stock_request("m1", &stock(&w, 1)))
        .await;
    w.pump().await;
    let real = path_of(&outbox.sent()[0].reserve_link().unwrap());
    w.advance(16 * MIN);
    w.sweep().await;
    let guessed = format!("/r/{CHAIR}~{id}.AAAAAAAAAAAAAAAAAAAAAA");
    for method in ["GET", "POST"] {
        let expired = w.capture(method, &real).await;
        let guess = w.capture(method, &guessed).await;
        assert_eq!(expired.status, 410);
        // The same page; only the link the caller sent is echoed back.
        let strip = |body: &str, path: &str| body.replace(path, "/r/LINK");
        assert_eq!(
            (guess.status, strip(&guess.body, &guessed)),
            (expired.status, strip(&expired.body, &real)),
            "{method}"
        );
    }
}

fn stock(w: &World, level: u32) -> String {
    let at =
        time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(w.clock.now_ms()) * 1_000_000)
            .unwrap()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
    serde_json::json!({ "sku": CHAIR, "level": level, "at": at }).to_string()
}

#[tokio::test]
async fn link_secrets_are_128_bit_and_stored_only_as_hashes() {
    let outbox = Arc::new(Outbox::default());
    let store = restock_store_dynamo::testing::dynamo_store().await;
    let table = store.table().to_owned();
    let w = World::new(
        Arc::new(store),
        outbox.clone(),
        Arc::new(FixedPhraser(Ok("It is back.".into()))),
        Arc::new(StaticKeyring(Arc::new(
            Secrets::from_json(&secrets_json()).unwrap(),
        ))),
    )
    .await;
    // Double opt-in on, as shipped: the confirmation's links are secrets too.
    let mut confirming = settings();
    confirming.confirm = true;
    w.store.put_settings(&confirming).await.unwrap();
    let id = w.join("Ann").await.json()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    w.pump().await;
    let confirmation = outbox.sent()[0].clone();
    let confirm_link = confirmation.confirm_link().unwrap();
    let inbox_links = [confirm_link.clone(), confirmation.link("m").unwrap()];
    let confirmed = w
        .call(
            Api::Capture,
            axum::http::Request::post(path_of(&confirm_link))
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(confirmed.status, 200);
    w.call(Api::Detect, w.stock_request("m1", &stock(&w, 1)))
        .await;
    w.pump().await;
    let notice = &outbox.sent()[1];
    let notice_manage = notice.link("m").unwrap();
    let reserve = notice.reserve_link().unwrap();
    let token: LinkToken = reserve.rsplit("/r/").next().unwrap().parse().unwrap();
    let secret = secret_of(&reserve);
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&secret)
        .unwrap();
    assert_eq!(bytes.len(), 16, "128-bit secrets");
    let optout = match notice {
        restock_app::ports::Sent::Email { notice, .. } => notice.list_unsubscribe.clone(),
        restock_app::ports::Sent::Sms { .. } => unreachable!("an email"),
    };
    let optout_secret = optout
        .trim_matches(['<', '>'])
        .rsplit('.')
        .next()
        .unwrap()
        .to_owned();

    // Every item of the request's partition, raw.
    let client = restock_store_dynamo::testing::client();
    let items = client
        .query()
        .table_name(&table)
        .key_condition_expression("pk = :p")
        .expression_attribute_values(
            ":p",
            aws_sdk_dynamodb::types::AttributeValue::S(format!("REQ#{id}")),
        )
        .send()
        .await
        .unwrap()
        .items
        .unwrap_or_default();
    assert_eq!(items.len(), 1);
    let raw = format!("{:?}", items[0]);
    assert!(!raw.contains(&secret), "the reserve secret is not stored");
    assert!(
        !raw.contains(&optout_secret),
        "the opt-out secret is not stored"
    );
    for link in inbox_links.iter().chain([&notice_manage]) {
        let secret = secret_of(link);
        assert_eq!(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(&secret)
                .unwrap()
                .len(),
            16
        );
        assert!(!raw.contains(&secret), "{link}'s secret is not stored");
        let token: LinkToken = link.rsplit('/').next().unwrap().parse().unwrap();
        assert!(
            raw.contains(&token.secret_hash().to_hex()),
            "{link}'s hash is"
        );
    }
    let hash = token.secret_hash().to_hex();
    assert!(raw.contains(&hash), "its hash is: {raw}");
}

#[test]
fn the_logs_of_a_full_run_name_no_contact_token_or_key() {
    let phone = "+447911123456";
    let ((secrets, email), logs) = logged(async {
        {
            let (w, outbox) = World::memory().await;
            let email = w.email("Ann");
            w.join("Ann").await;
            let sms = w
                .capture_json(
                    "POST",
                    "/requests",
                    serde_json::json!({ "sku": CHAIR, "name": "Bo", "phone": "+44 7911 123456", "consent": true }),
                )
                .await;
            assert_eq!(sms.status, 201, "{}", sms.body);
            w.shopify(Some(3), "wh-1").await;
            w.pump().await;
            let links: Vec<String> = outbox
                .sent()
                .iter()
                .filter_map(|n| n.reserve_link())
                .collect();
            assert_eq!(links.len(), 2, "both told");
            let hold = w.capture("POST", &path_of(&links[0])).await;
            assert_eq!(hold.status, 303);
            // A wrong signature, an opt-out, an expiry and a sweep log too.
            w.call(
                Api::Detect,
                w.signed_request("/webhooks/stock", "bad", "{}")
                    .map(|_| axum::body::Body::from("[]")),
            )
            .await;
            let secrets: Vec<String> = outbox
                .sent()
                .iter()
                .flat_map(|n| match n {
                    restock_app::ports::Sent::Email { notice, .. } => {
                        vec![notice.text.clone(), notice.list_unsubscribe.clone()]
                    }
                    restock_app::ports::Sent::Sms { notice, .. } => vec![notice.text.clone()],
                })
                .flat_map(|text| {
                    text.split(|c: char| c.is_whitespace() || c == '<' || c == '>')
                        .filter(|w| w.contains("/r/") || w.contains("/o/"))
                        .map(|w| secret_of(w.trim_end_matches(['.', ','])))
                        .collect::<Vec<_>>()
                })
                .collect();
            w.advance(20 * MIN);
            w.sweep().await;
            (secrets, email)
        }
    });
    assert!(logs.contains("notice sent"), "the run was logged: {logs}");
    let mut forbidden = vec![
        email.clone(),
        phone.to_owned(),
        "7911123456".to_owned(),
        "+44 7911 123456".to_owned(),
        SHOPIFY_KEY.to_owned(),
        WOO_KEY.to_owned(),
        STOCK_KEY.to_owned(),
        "restock-test-contact-pepper".to_owned(),
    ];
    assert!(
        secrets.len() >= 3,
        "reserve and opt-out secrets collected: {secrets:?}"
    );
    forbidden.extend(secrets);
    for needle in forbidden {
        assert!(!logs.contains(&needle), "the logs contain {needle:?}");
    }
    // Masked forms are what the logs use.
    assert!(logs.contains("***"), "contacts appear masked");
}

#[tokio::test]
async fn a_burst_of_sign_ups_for_one_item_tells_the_team_once_per_window() {
    let (w, _) = World::memory().await;
    let mut settings = settings();
    settings.limits.signup_burst = 4;
    w.store.put_settings(&settings).await.unwrap();
    let bursts = |w: &World| {
        w.alerts
            .all()
            .iter()
            .filter(|a| a.subject.contains("sign-ups in 10m"))
            .count()
    };
    // The chair's queue has two shards: the count is kept per shard (no hot
    // key), each shard's share of the limit being 2.
    for i in 0..12 {
        let reply = w.join(&format!("Shopper{i}")).await;
        assert_eq!(reply.status, 201, "nothing is refused: {}", reply.body);
    }
    assert_eq!(bursts(&w), 1, "once per window");
    let alert = w
        .alerts
        .all()
        .into_iter()
        .find(|a| a.subject.contains("sign-ups"))
        .unwrap();
    assert!(
        alert.subject.contains("more than 4 sign-ups in 10m"),
        "{}",
        alert.subject
    );
    // A repeat tap is not a new sign-up.
    w.advance(10 * 60_000);
    assert_eq!(w.join("Shopper0").await.status, 200);
    assert_eq!(bursts(&w), 1);
    // The next window bursts again: told again.
    for i in 12..24 {
        assert_eq!(w.join(&format!("Shopper{i}")).await.status, 201);
    }
    assert_eq!(bursts(&w), 2);
}
