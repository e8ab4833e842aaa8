//! The team's dashboard at `/admin` on the local server: what it shows after
//! sign-ups and a restock, and that its actions run only from its own pages.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use restock_app::admin::webhooks::{TestEvent, sign};
use restock_core::{Platform, Sku};
use restock_local::{app, webhook_request};
use support::{call, local};
use tower::ServiceExt;

mod support;

const HOST: &str = "127.0.0.1:3000";

fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .header("host", HOST)
        .body(Body::empty())
        .unwrap()
}

fn form(path: &str, body: &str) -> Request<Body> {
    Request::post(path)
        .header("host", HOST)
        .header("origin", format!("http://{HOST}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// The CSRF token a dashboard page carries in its forms.
fn token(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").expect("a form") + 19;
    page[at..at + 32].to_owned()
}

/// The text of the overview's row for `sku`, cells joined by `|`.
fn row(page: &str, sku: &str) -> String {
    let start = page
        .find(&format!("<tr><td><a href=\"/admin/items/{sku}\">"))
        .expect("the item's row");
    let end = start + page[start..].find("</tr>").unwrap();
    let cells: Vec<String> = page[start..end]
        .split("<td>")
        .skip(2)
        .map(|c| c.replace("</td>", ""))
        .collect();
    cells.join("|")
}

async fn join(router: &axum::Router, email: &str) {
    let request = Request::post("/requests")
        .header("content-type", "application/json")
        .body(Body::from(
            serde_json::json!({"sku": "CHAIR-WAL", "email": email, "name": "A", "consent": true})
                .to_string(),
        ))
        .unwrap();
    let (status, body) = call(router, request).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    tokio::time::sleep(Duration::from_millis(3)).await;
}

#[tokio::test]
async fn the_dashboard_shows_the_story_and_acts_only_for_its_own_pages() {
    let local = local().await;
    let router = app(local.clone());
    let chair = Sku::try_from("CHAIR-WAL").unwrap();

    // Two confirm, a third has not yet; then two units come back.
    join(&router, "ada@example.com").await;
    join(&router, "bob@example.com").await;
    restock_app::notify::notify_sku(&local.services, &chair)
        .await
        .unwrap();
    for sent in local.outbox.sent() {
        let link = sent.confirm_link().unwrap();
        let path = format!("/c/{}", link.split_once("/c/").unwrap().1);
        let (status, _) = call(&router, Request::post(path).body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::OK);
    }
    join(&router, "cy@example.com").await;
    let (_, page) = call(&router, get("/admin")).await;
    assert_eq!(
        row(&page, "CHAIR-WAL"),
        "2|1|0|0|0|0|-|-|-|-|0",
        "two in line, Cy to confirm"
    );

    let stock = TestEvent::Stock {
        id: None,
        sku: Some("CHAIR-WAL".into()),
        level: 1,
        location: Some("warehouse".into()),
    };
    let now_s = time::OffsetDateTime::now_utc().unix_timestamp();
    let key = restock_app::admin::dev_key(Platform::Standard);
    let delivery = sign(Platform::Standard, &stock, &key, "msg_dash_1", now_s).unwrap();
    let (status, body) = call(&router, webhook_request(&delivery, delivery.body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    restock_app::notify::notify_sku(&local.services, &chair)
        .await
        .unwrap();

    // The overview: one told (offered), one still waiting, in stock.
    let (status, page) = call(&router, get("/admin")).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(row(&page, "CHAIR-WAL"), "1|1|1|0|0|0|-|0%|-|in stock|0");
    assert!(page.contains("Sending today"), "mail health");
    // Sold-out items only in the "most wanted" view: the chair is in stock.
    let (_, wanted) = call(&router, get("/admin?view=wanted")).await;
    assert!(wanted.contains("Most wanted while sold out"));
    assert!(!wanted.contains("/admin/items/CHAIR-WAL\""), "in stock");
    assert!(wanted.contains("/admin/items/LAMP-BRASS\""));

    // The item: a day's sign-ups and notice in the charts; the queue's head
    // masked, never in the clear.
    let (status, item) = call(&router, get("/admin/items/CHAIR-WAL")).await;
    assert_eq!(status, StatusCode::OK, "{item}");
    assert!(
        item.contains("Sign-ups — 3 in 30 days, at most 3 a day"),
        "{item}"
    );
    assert!(item.contains("Notices — 1 in 30 days"), "{item}");
    assert_eq!(
        item.matches("<rect").count(),
        90,
        "30 bars in each of 3 charts"
    );
    assert!(item.contains("b***@example.com"), "Bob is next, masked");
    assert!(item.contains("Waiting<b>1</b>and 1 to confirm"), "{item}");
    let restock = &item[item.find("<td>#1</td>").expect("restock #1")..];
    let restock = &restock[..restock.find("</tr>").unwrap()];
    assert!(
        restock.ends_with(
            "<td>1</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0%</td><td>0%</td><td>0</td>"
        ),
        "one told, nothing clicked yet, nobody reminded: {restock}"
    );
    // Bob's masked entry links to his story: why he waits, and what happened.
    let at = item.find("/admin/requests/").expect("a link to the story");
    let link = &item[at..at + item[at..].find('"').unwrap()];
    let (status, story) = call(&router, get(link)).await;
    assert_eq!(status, StatusCode::OK, "{story}");
    assert!(story.contains("b***@example.com on"), "{story}");
    assert!(
        story.contains("<b>Now: </b>waiting, number 1 in line; restock 1 since it joined told 1 person ahead of it"),
        "{story}"
    );
    let said: Vec<_> = [
        "joined the queue",
        "sent the confirmation message",
        "confirmed: in the queue",
    ]
    .iter()
    .map(|s| story.find(s).unwrap_or_else(|| panic!("{s}: {story}")))
    .collect();
    assert!(said.is_sorted(), "in time order: {story}");
    let (status, _) = call(&router, get("/admin/requests/not-an-id")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let nobody = format!(
        "/admin/requests/{}",
        restock_core::RequestId::from_random([7; 16])
    );
    let (status, body) = call(&router, get(&nobody)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    for page in [&page, &item, &story] {
        assert!(!page.contains("bob@example.com") && !page.contains("ada@example.com"));
    }

    // Other hosts are refused (a rebinding page cannot read it).
    let (status, _) = call(
        &router,
        Request::get("/admin")
            .header("host", "shop.evil.example")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Actions: refused without this server's token or from another origin.
    let csrf = token(&page);
    let (status, body) = call(
        &router,
        form("/admin/forget", "csrf=nope&contact=bob%40example.com"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("reload the page"), "{body}");
    let mut cross = form(
        "/admin/forget",
        &format!("csrf={csrf}&contact=bob%40example.com"),
    );
    cross
        .headers_mut()
        .insert("origin", "https://shop.evil.example".parse().unwrap());
    let (status, _) = call(&router, cross).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let mut cross = form(
        "/admin/forget",
        &format!("csrf={csrf}&contact=bob%40example.com"),
    );
    cross
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    let (status, _) = call(&router, cross).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a browser says it came from elsewhere"
    );
    let (_, page) = call(&router, get("/admin")).await;
    assert_eq!(
        row(&page, "CHAIR-WAL"),
        "1|1|1|0|0|0|-|0%|-|in stock|0",
        "nothing changed"
    );

    // With it, they run the CLI's commands.
    let (status, done) = call(
        &router,
        form(
            "/admin/forget",
            &format!("csrf={csrf}&contact=bob%40example.com"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert!(
        done.contains("b***@example.com: erased 1 requests"),
        "{done}"
    );
    let (_, page) = call(&router, get("/admin")).await;
    assert_eq!(row(&page, "CHAIR-WAL"), "0|1|1|0|0|0|-|0%|-|in stock|0");
    let (status, done) = call(
        &router,
        form("/admin/reconcile", &format!("csrf={csrf}&sku=CHAIR-WAL")),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(done.contains("counters match"), "{done}");
    let (_, done) = call(
        &router,
        form("/admin/release", &format!("csrf={csrf}&sku=CHAIR-WAL")),
    )
    .await;
    assert!(done.contains("nothing is paused"), "{done}");
    let (status, done) = call(
        &router,
        form("/admin/release", &format!("csrf={csrf}&sku=NOPE")),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{done}");

    // Ada holds her unit and buys it in a Shopify order that gives its
    // price: the item's revenue, in the shop's currency.
    let reserve = local
        .outbox
        .sent()
        .iter()
        .find_map(restock_app::ports::Sent::reserve_link)
        .expect("Ada's notice");
    let reserve = format!("/r/{}", reserve.split_once("/r/").unwrap().1);
    let response = router
        .clone()
        .oneshot(
            Request::post(reserve)
                .header("host", HOST)
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let checkout = response.headers()["location"].to_str().unwrap().to_owned();
    let hold = checkout
        .split("hold=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    let key = restock_app::admin::dev_key(Platform::Shopify);
    let order = TestEvent::Order {
        hold: hold.to_owned(),
        sku: Some("CHAIR-WAL".into()),
    };
    let mut delivery = sign(Platform::Shopify, &order, &key, "shop_order_1", now_s).unwrap();
    let mut body: serde_json::Value = serde_json::from_str(&delivery.body).unwrap();
    body["currency"] = "EUR".into();
    body["line_items"][0]["price"] = "199.00".into();
    delivery.body = body.to_string();
    for (name, value) in &mut delivery.headers {
        if *name == "x-shopify-hmac-sha256" {
            *value =
                restock_core::platform::shopify::sign(key.as_bytes(), delivery.body.as_bytes());
        }
    }
    let (status, said) = call(&router, webhook_request(&delivery, delivery.body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{said}");
    let (_, page) = call(&router, get("/admin")).await;
    assert_eq!(
        row(&page, "CHAIR-WAL"),
        "0|1|0|0|1|0|100%|100%|EUR 199.00|0 min|0"
    );
    let (_, item) = call(&router, get("/admin/items/CHAIR-WAL")).await;
    assert!(item.contains("Revenue<b>EUR 199.00</b>"), "{item}");

    // The banner: what the store's own checks find (the demo has items
    // only the generic format can report), with the fix.
    assert!(
        page.contains("notices can reach shoppers; 1 warnings")
            && page.contains("<b>Warning</b>: catalogue ids:")
            && page.contains("Fix: `restock connect …`"),
        "{page}"
    );

    // A sender pause shows as a banner with Resume, which ends it.
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    local
        .admin
        .store
        .pause_sender("SES: sending quota exceeded", now + 3_600_000, &chair, now)
        .await
        .unwrap();
    let (_, page) = call(&router, get("/admin")).await;
    assert!(page.contains("Sending is paused") && page.contains("SES: sending quota exceeded"));
    assert!(page.contains("action=\"/admin/resume\""));
    let (_, done) = call(&router, form("/admin/resume", &format!("csrf={csrf}"))).await;
    assert!(
        done.contains("sending resumed; 1 woken: CHAIR-WAL"),
        "{done}"
    );
    let (_, page) = call(&router, get("/admin")).await;
    assert!(!page.contains("Sending is paused"));

    // The item's page pauses its notices with a reason, shows it, and
    // resumes them.
    let (_, item) = call(&router, get("/admin/items/CHAIR-WAL")).await;
    assert!(item.contains("action=\"/admin/pause\"") && item.contains("name=\"reason\""));
    let (_, done) = call(
        &router,
        form(
            "/admin/pause",
            &format!("csrf={csrf}&sku=CHAIR-WAL&reason=wrong+price"),
        ),
    )
    .await;
    assert!(
        done.contains("CHAIR-WAL: notices paused (wrong price)"),
        "{done}"
    );
    let (_, item) = call(&router, get("/admin/items/CHAIR-WAL")).await;
    assert!(
        item.contains("Notices paused")
            && item.contains("wrong price")
            && item.contains("Resume notices"),
        "{item}"
    );
    let (_, done) = call(
        &router,
        form("/admin/resume", &format!("csrf={csrf}&sku=CHAIR-WAL")),
    )
    .await;
    assert!(done.contains("CHAIR-WAL: notices resumed"), "{done}");
    let (_, forged) = call(
        &router,
        form("/admin/pause", "csrf=nope&sku=CHAIR-WAL&reason=x"),
    )
    .await;
    assert!(!forged.contains("notices paused"), "{forged}");

    // What the shop or the team typed is text on every page, never markup
    // (the templates escape by default).
    let mut hostile = restock_core::CatalogueEntry::new(
        restock_core::Sku::try_from("HOSTILE-1").unwrap(),
        "<script>alert(1)</script> \"quoted\"",
    );
    hostile.paused = Some(restock_core::catalogue::ItemPause {
        reason: "<img src=x onerror=alert(2)>".into(),
        since_ms: 0,
    });
    local
        .admin
        .store
        .put_catalogue_entry(&hostile)
        .await
        .unwrap();
    let (_, page) = call(&router, get("/admin")).await;
    assert!(
        !page.contains("<script>alert(1)")
            && page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    let (_, item) = call(&router, get("/admin/items/HOSTILE-1")).await;
    assert!(
        !item.contains("<img src=x") && item.contains("&lt;img src=x onerror=alert(2)&gt;"),
        "{item}"
    );

    // The export button streams the CSV `restock export` writes, masked.
    let (status, csv) = call(
        &router,
        form(
            "/admin/export",
            &format!("csrf={csrf}&kind=requests&sku=CHAIR-WAL"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "item,request,state,joined,confirmed,told,held,bought,ended,language,contact"
    );
    assert_eq!(lines.len(), 3, "Ada and Cy (Bob is forgotten): {csv}");
    assert!(csv.contains("a***@example.com") && !csv.contains("ada@example.com"));
    let (_, days) = call(
        &router,
        form("/admin/export", &format!("csrf={csrf}&kind=days")),
    )
    .await;
    assert!(
        days.starts_with("day,item,sign_ups,confirmed,told,held,bought\n"),
        "{days}"
    );
    assert!(days.contains(",CHAIR-WAL,2,1,1,1,1"), "{days}");
}
