//! The local server's parts: the admin commands the CLI sends, the signed
//! deliveries `restock sign-webhook` prints (accepted by the real detect
//! router), and the demo routes, all on the in-memory store.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use restock_app::admin::Command;
use restock_app::admin::webhooks::{TestEvent, curl, sign};
use restock_core::Platform;
use restock_core::Sku;
use restock_local::{app, webhook_request};
use support::{call, local};

mod support;

fn post_json(path: &str, body: serde_json::Value) -> Request<Body> {
    Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// Sends the pending confirmations and follows each link, as the shoppers
/// would from their inboxes (double opt-in is on in the demo settings).
async fn confirm_everyone(local: &restock_local::Local, router: &axum::Router, sku: &str) {
    restock_app::notify::notify_sku(&local.services, &Sku::try_from(sku).unwrap())
        .await
        .unwrap();
    for sent in local.outbox.sent() {
        let Some(link) = sent.confirm_link() else {
            continue;
        };
        let path = link
            .split_once("/c/")
            .map(|(_, t)| format!("/c/{t}"))
            .unwrap();
        let (status, body) = call(router, Request::post(path).body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

fn now() -> i64 {
    i64::try_from(time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000).unwrap()
}

#[tokio::test]
async fn admin_commands_run_on_the_servers_store() {
    let local = local().await;
    let router = app(local.clone());
    let run = |command: serde_json::Value| post_json("/_admin/run", command);

    let (status, body) = call(
        &router,
        run(serde_json::json!({"command": "catalogue_list"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("CHAIR-WAL") && body.contains("SNEAKER-DROP"));

    // A bad settings document is refused with the field named, and changes nothing.
    let (status, body) = call(
        &router,
        run(serde_json::json!({"command": "settings_put", "toml": "store_name = 'x'\npublic_base_url = 'not a url'\nemail_from = 'a@b.c'"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("\"error\":\"refused\""), "{body}");
    assert!(
        body.contains("public_base_url") || body.contains("URL") || body.contains("url"),
        "{body}"
    );
    let (_, shown) = call(
        &router,
        run(serde_json::json!({"command": "settings_show"})),
    )
    .await;
    assert!(shown.contains("Restock demo shop"));

    // Unknown SKUs are named.
    let (status, body) = call(
        &router,
        run(serde_json::json!({"command": "queue", "sku": "NOPE", "limit": 5})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let refusal: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(refusal["error"], "not_found", "the CLI's code: {body}");
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .contains("NOPE is not in the catalogue"),
        "{body}"
    );

    // Join two shoppers, then the queue lists them oldest first, masked.
    for (email, name) in [("ada@example.com", "Ada"), ("bob@example.com", "Bob")] {
        let (status, body) = call(
            &router,
            post_json("/requests", serde_json::json!({"sku": "CHAIR-WAL", "email": email, "name": name, "consent": true})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        // Joins in one millisecond are ordered by their ids' tie-break.
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    confirm_everyone(&local, &router, "CHAIR-WAL").await;
    let output = local
        .admin
        .run(
            Command::Queue {
                sku: Sku::try_from("CHAIR-WAL").unwrap(),
                limit: 10,
            },
            now(),
        )
        .await
        .unwrap();
    let contacts: Vec<&str> = output.rows.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(contacts, ["a***@example.com", "b***@example.com"]);
    // Nothing a front end could show (message, rows, JSON) names the contact.
    assert!(
        !serde_json::to_string(&output)
            .unwrap()
            .contains("ada@example.com"),
        "contacts are masked"
    );

    // Opting Ada out ends her request; lifting it lets her join again.
    let out = local
        .admin
        .run(
            Command::OptOutAdd {
                contact: "Ada@Example.com".into(),
            },
            now(),
        )
        .await
        .unwrap();
    assert_eq!(out.json["ended"], 1);
    let (status, _) = call(
        &router,
        post_json("/requests", serde_json::json!({"sku": "CHAIR-WAL", "email": "ada@example.com", "name": "Ada", "consent": true})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let out = local
        .admin
        .run(
            Command::OptOutRemove {
                contact: "ada@example.com".into(),
            },
            now(),
        )
        .await
        .unwrap();
    assert_eq!(out.json["removed"], true);

    // Nothing paused: release says so. Reconcile finds the counters right.
    let out = local
        .admin
        .run(
            Command::Release {
                sku: Sku::try_from("CHAIR-WAL").unwrap(),
            },
            now(),
        )
        .await
        .unwrap();
    assert_eq!(out.json["released"], false);
    let out = local
        .admin
        .run(Command::Reconcile { skus: vec![] }, now())
        .await
        .unwrap();
    assert_eq!(
        out.rows.len(),
        7,
        "the three items, the launch and the tee's three sizes"
    );
    assert!(
        out.rows.iter().all(|r| r[1] == "counters match"),
        "{:?}",
        out.rows
    );
    let out = local
        .admin
        .run(Command::Stats { skus: vec![] }, now())
        .await
        .unwrap();
    assert_eq!(out.rows[0][0], "CHAIR-WAL");
    assert_eq!(out.rows[0][1], "1", "Bob still waits");

    // The export pages over the server's endpoint, as the CLI asks for them:
    // Ada (opted out, ended) and Bob (waiting), masked, in English.
    let (status, body) = call(
        &router,
        run(serde_json::json!({"command": "export_page", "skus": ["CHAIR-WAL"], "after": null, "with_contacts": false})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let page: serde_json::Value = serde_json::from_str(&body).unwrap();
    let mut rows: Vec<(String, String, String)> = page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_array().unwrap();
            let cell = |i: usize| r[i].as_str().unwrap().to_owned();
            (cell(10), cell(2), cell(9))
        })
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            ("a***@example.com".into(), "opted_out".into(), "en".into()),
            ("b***@example.com".into(), "waiting".into(), "en".into()),
        ],
        "{body}"
    );
    assert!(!body.contains("bob@example.com"));
}

#[tokio::test]
async fn signed_test_deliveries_are_accepted_and_tampered_ones_refused() {
    let local = local().await;
    let router = app(local.clone());
    let key = restock_app::admin::dev_key;
    let now_s = now() / 1000;
    let hooks = [
        (
            Platform::Shopify,
            TestEvent::Stock {
                id: Some(44_120_133_468_435),
                sku: None,
                level: 2,
                location: Some("1".into()),
            },
        ),
        (
            Platform::WooCommerce,
            TestEvent::Stock {
                id: Some(381),
                sku: None,
                level: 4,
                location: None,
            },
        ),
        (
            Platform::Standard,
            TestEvent::Stock {
                id: None,
                sku: Some("SNEAKER-DROP".into()),
                level: 7,
                location: Some("warehouse".into()),
            },
        ),
    ];
    for (i, (platform, hook)) in hooks.iter().enumerate() {
        let delivery = sign(
            *platform,
            hook,
            &key(*platform),
            &format!("msg_test_{i}"),
            now_s,
        )
        .unwrap();
        let (status, body) = call(&router, webhook_request(&delivery, delivery.body.clone())).await;
        assert_eq!(status, StatusCode::OK, "{hook:?}: {body}");
        assert!(body.contains("restock"), "{hook:?} is a restock: {body}");
        assert!(
            curl(&delivery, "http://127.0.0.1:3000")
                .starts_with("curl -sS -X POST 'http://127.0.0.1:3000/webhooks/")
        );

        // The same delivery with one byte changed is refused.
        let tampered = delivery.body.replacen(['2', '4', '7'], "9", 1);
        let (status, _) = call(&router, webhook_request(&delivery, tampered)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{hook:?} tampered");
    }
}

/// The demo's product in sizes gives the widget every variant with whether
/// it is in stock, in a JSON data block nothing can close early; the
/// Shopify snippet a shop copies gives it the same way, with the
/// attributes the widget reads.
#[tokio::test]
async fn a_product_in_sizes_gives_the_widget_its_variants_as_the_shopify_app_block_does() {
    let local = local().await;
    let router = app(local);
    let get = |path: &str| Request::get(path).body(Body::empty()).unwrap();
    let (status, page) = call(&router, get("/sized/linen-tee")).await;
    assert_eq!(status, StatusCode::OK);
    let open = "<script type=\"application/json\">";
    let start = page.find(open).unwrap() + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    let variants: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
    assert_eq!(
        variants,
        serde_json::json!([
            {"id": 9001, "sku": "TEE-S", "available": false},
            {"id": 9002, "sku": "TEE-M", "available": false},
            {"id": 9003, "sku": "TEE-L", "available": false},
        ])
    );
    assert!(
        page.contains("<select id=\"size\" name=\"id\">"),
        "the picker is the form's `id` field"
    );
    let (_, js) = call(&router, get("/restock-widget.js")).await;
    let snippet = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/shopify/extensions/restock-notify/blocks/notify.liquid"),
    )
    .unwrap();
    for attribute in [
        "data-restock-endpoint",
        "data-restock-product",
        "data-restock-variant",
    ] {
        assert!(
            snippet.contains(attribute) && js.contains(attribute),
            "{attribute}"
        );
    }
    assert!(
        snippet
            .contains("<script type=\"application/json\">{{ product.variants | json }}</script>")
    );
    assert!(js.contains("script[type=\"application/json\"]"));
}

#[tokio::test]
async fn the_demo_pages_serve_the_widget_and_escape_what_they_show() {
    let local = local().await;
    let router = app(local);
    let get = |path: &str| Request::get(path).body(Body::empty()).unwrap();
    let (status, js) = call(&router, get("/restock-widget.js")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(js.contains("data-restock-sku"));
    let (status, page) = call(&router, get("/products/CHAIR-WAL")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("data-restock-sku=\"CHAIR-WAL\"") && page.contains("Sold out"));
    let (_, page) = call(&router, get("/products/CHAIR-WAL?lang=de")).await;
    assert!(
        page.contains("<html lang=\"de\" dir=\"ltr\">"),
        "a German storefront page"
    );
    let (_, page) = call(&router, get("/products/CHAIR-WAL?lang=ar")).await;
    assert!(page.contains("<html lang=\"ar\" dir=\"rtl\">"));
    let (_, page) = call(&router, get("/products/CHAIR-WAL?lang=%22%3E%3Cscript%3E")).await;
    assert!(page.contains("<html lang=\"en\"") && !page.contains("\"><script>"));
    let (status, _) = call(&router, get("/products/NOPE")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, page) = call(
        &router,
        get("/checkout?sku=CHAIR-WAL&hold=%3Cscript%3Ealert(1)%3C/script%3E"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(!page.contains("<script>alert(1)") && page.contains("&lt;script&gt;"));
    let (status, _) = call(&router, get("/checkout")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

/// A web page the shopper or the team happens to open cannot reach the
/// local server: not by rebinding its own name to 127.0.0.1 (every route
/// answers only to a loopback `Host`), not by posting the demo shop's forms
/// (each carries this run's token), and `/_admin/run` checks a catalogue
/// as the CSV import does.
#[tokio::test]
async fn a_hostile_page_can_neither_read_nor_change_the_local_server() {
    let local = local().await;
    let router = app(local.clone());
    let level = |local: std::sync::Arc<restock_local::Local>| async move {
        local
            .services
            .store
            .snapshot(&Sku::try_from("CHAIR-WAL").unwrap())
            .await
            .unwrap()
            .counters
            .level
    };
    // DNS rebinding: the page's own name, now pointing at 127.0.0.1.
    let rebound = |method: &str, path: &str, body: &str| {
        Request::builder()
            .method(method)
            .uri(path)
            .header("host", "shop.evil.example:3000")
            .header("content-type", "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap()
    };
    for (method, path, body) in [
        ("GET", "/outbox", ""),
        ("GET", "/outbox.json", ""),
        ("GET", "/products/CHAIR-WAL", ""),
        ("GET", "/admin", ""),
        (
            "POST",
            "/_admin/run",
            r#"{"command":"export_page","skus":[],"after":null,"with_contacts":true}"#,
        ),
        ("POST", "/_admin/run", r#"{"command":"settings_show"}"#),
        ("POST", "/webhooks/stock", "{}"),
        ("POST", "/requests", "{}"),
    ] {
        let (status, answer) = call(&router, rebound(method, path, body)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {answer}");
        assert!(answer.contains("loopback"), "{answer}");
    }
    // The demo's forms: without this run's token, or posted by another
    // site, they change nothing; from the page itself they work.
    let (_, page) = call(
        &router,
        Request::get("/products/CHAIR-WAL")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    let token = page
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the stock form carries its token")
        .to_owned();
    let stock = |body: String, site: Option<&str>| {
        let mut request = Request::post("/demo/stock")
            .header("content-type", "application/x-www-form-urlencoded");
        if let Some(site) = site {
            request = request.header("sec-fetch-site", site);
        }
        request.body(Body::from(body)).unwrap()
    };
    for (body, site) in [
        ("sku=CHAIR-WAL&level=7".to_owned(), None),
        ("sku=CHAIR-WAL&level=7&csrf=0000".to_owned(), None),
        (
            format!("sku=CHAIR-WAL&level=7&csrf={token}"),
            Some("cross-site"),
        ),
    ] {
        let (status, answer) = call(&router, stock(body.clone(), site)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body} {site:?}: {answer}");
    }
    let buy = Request::post("/checkout/buy")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from("hold=AAAAAAAAAAAAAAAAAAAAAA&sku=CHAIR-WAL"))
        .unwrap();
    assert_eq!(call(&router, buy).await.0, StatusCode::FORBIDDEN);
    assert_eq!(level(local.clone()).await, 0, "nothing changed");
    let (status, _) = call(
        &router,
        stock(
            format!("sku=CHAIR-WAL&level=7&csrf={token}"),
            Some("same-origin"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(level(local.clone()).await, 7);
    // A catalogue through /_admin/run is checked as the CSV import checks it.
    for (entry, field) in [
        (
            serde_json::json!({"sku": "EVIL-1", "name": "Evil", "checkout_url": "javascript:alert(1)//{hold}", "shards": 1}),
            "checkout_url",
        ),
        (
            serde_json::json!({"sku": "EVIL-2", "name": "Evil", "shards": 0}),
            "shards",
        ),
    ] {
        let (status, answer) = call(
            &router,
            post_json(
                "/_admin/run",
                serde_json::json!({"command": "catalogue_put", "entries": [entry]}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer.contains(field), "{answer}");
    }
    let entries = local.services.store.catalogue().await.unwrap();
    assert!(entries.iter().all(|e| !e.sku.as_str().starts_with("EVIL")));
}
