//! The demo storefront: a product page with the notify-me widget, a back
//! office that posts signed stock webhooks, the outbox, and a stand-in
//! checkout. Every value is escaped; pages load only this server's script.

use std::sync::Arc;

use axum::extract::{Form, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use restock_app::admin::Command;
use restock_app::admin::webhooks::{TestEvent, delivery_id, sign};
use restock_app::ports::Sent;
use restock_core::Sku;
use restock_core::notice::escape_html as esc;
use restock_core::{Language, Platform};
use serde::Deserialize;
use serde_json::json;
use tower::ServiceExt;

use crate::Local;

const WIDGET: &str = include_str!("../assets/restock-widget.js");

const STYLE: &str = "body{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a1a1a;background:#fafaf8;line-height:1.5}\
header{background:#1a1a1a;color:#fff;padding:.75rem 1.25rem}header a{color:#fff;margin-right:1rem}\
main{max-width:44rem;margin:0 auto;padding:1.5rem 1.25rem}h1{font-size:1.6rem;margin:.25rem 0 1rem}\
.tag{display:inline-block;background:#a4000f;color:#fff;border-radius:.25rem;padding:.1rem .5rem;font-size:.85rem}\
.tag.in{background:#1d6b2f}.muted{color:#555}.panel{border:1px dashed #8a8a85;border-radius:.5rem;padding:1rem;margin-top:2rem}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.5rem;text-align:left;vertical-align:top}\
button,.button{padding:.7rem 1rem;font:inherit;font-weight:600;color:#fff;background:#1a1a1a;border:0;border-radius:.35rem;cursor:pointer;text-decoration:none;display:inline-block}\
input{padding:.5rem;font:inherit}:focus-visible{outline:3px solid #f2b705;outline-offset:2px}";

fn page(title: &str, body: &str) -> Response {
    page_in(&Language::english(), title, body, None)
}

/// A demo page declaring `language` (the widget sends it with a sign-up);
/// its scripts may call `capture` (another origin) when given.
fn page_in(language: &Language, title: &str, body: &str, capture: Option<&str>) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"{lang}\" dir=\"{dir}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{t}</title>\
         <style>{STYLE}</style></head><body><header><nav aria-label=\"demo\"><a href=\"/\">Restock demo shop</a>\
         <a href=\"/outbox\">Outbox</a><a href=\"/admin\">Dashboard</a></nav></header><main>{body}</main></body></html>",
        t = esc(title),
        lang = esc(&language.to_string()),
        dir = language.dir(),
    );
    let mut response = Html(html).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, "no-store".parse().expect("static"));
    let connect = capture.map_or_else(String::new, |c| format!("; connect-src 'self' {c}"));
    if let Ok(csp) = format!(
        "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; base-uri 'none'; frame-ancestors 'none'{connect}"
    )
    .parse()
    {
        headers.insert("content-security-policy", csp);
    }
    response
}

fn problem(status: StatusCode, message: &str) -> Response {
    let mut r = page("Not here", &format!("<h1>{}</h1>", esc(message)));
    *r.status_mut() = status;
    r
}

pub fn router(local: Arc<Local>, detect: Router) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/products/{sku}", get(product))
        .route("/sized/linen-tee", get(sized))
        .route("/outbox", get(outbox))
        .route("/outbox.json", get(outbox_json))
        .route("/checkout", get(checkout))
        .route("/checkout/buy", post(buy))
        .route("/demo/stock", post(post_stock))
        .route("/restock-widget.js", get(widget))
        .route("/_admin/run", post(admin))
        .with_state((local, detect))
}

type Shared = State<(Arc<Local>, Router)>;

async fn widget() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        WIDGET,
    )
        .into_response()
}

async fn index(State((local, _)): Shared) -> Response {
    let Ok(catalogue) = local.services.store.catalogue().await else {
        return problem(StatusCode::SERVICE_UNAVAILABLE, "the store is unreachable");
    };
    let items: String = catalogue
        .iter()
        .map(|e| {
            format!(
                "<li><a href=\"/products/{sku}\">{name}</a></li>",
                sku = esc(e.sku.as_str()),
                name = esc(&e.name)
            )
        })
        .collect();
    page(
        "Restock demo shop",
        &format!(
            "<h1>Restock demo shop</h1><p>Every product here is sold out. Open one, tap <strong>Notify me</strong>, \
             then post a restock from the back-office panel and watch the <a href=\"/outbox\">outbox</a>.</p>\
             <ul><li><a href=\"/sized/linen-tee\">Linen tee, in sizes</a> (the widget follows the size picker)</li>{items}</ul>"
        ),
    )
}

/// A product page's query: `?lang=de` declares the page German, as a shop's
/// German storefront would.
#[derive(Deserialize)]
struct ProductQuery {
    lang: Option<String>,
}

async fn product(
    State((local, _)): Shared,
    Path(sku): Path<String>,
    Query(query): Query<ProductQuery>,
) -> Response {
    let language = query
        .lang
        .and_then(|l| l.parse::<Language>().ok())
        .unwrap_or_else(Language::english);
    let Ok(sku) = Sku::try_from(sku.as_str()) else {
        return problem(StatusCode::NOT_FOUND, "no such product");
    };
    let store = &local.services.store;
    let (Ok(Some(entry)), Ok(snapshot)) = (
        store.catalogue_entry(&sku).await,
        store.snapshot(&sku).await,
    ) else {
        return problem(StatusCode::NOT_FOUND, "no such product");
    };
    let level = snapshot.counters.level;
    let free = level.saturating_sub(snapshot.counters.offered + snapshot.counters.held);
    let now = local.services.clock.now_ms();
    let launch = entry
        .launch_at
        .filter(|at| *at > now)
        .map_or(String::new(), |at| {
            format!(
                "<p class=\"muted\">Launches at {}: stock posted before then waits, and the first wave goes out at the launch.</p>",
                restock_core::rfc3339(at)
            )
        });
    let tag = if free > 0 && snapshot.stock.in_stock {
        format!("<span class=\"tag in\">{free} available</span>")
    } else {
        "<span class=\"tag\">Sold out</span>".to_owned()
    };
    let languages = restock_core::lang::SHIPPED
        .iter()
        .map(|(tag, _)| format!("<a href=\"?lang={tag}\" hreflang=\"{tag}\">{tag}</a>"))
        .collect::<Vec<_>>()
        .join(" · ");
    let capture = crate::capture_origin(local.capture_port);
    page_in(
        &language,
        &entry.name,
        &format!(
            "<p class=\"muted\">{sku} · page language: {languages}</p><h1>{name}</h1><p>{tag}</p>\
             <div data-restock-sku=\"{sku}\" data-restock-product=\"{name}\" data-restock-endpoint=\"{endpoint}\"></div>\
             <script src=\"/restock-widget.js\" defer></script>\
             <section class=\"panel\" aria-labelledby=\"bo\"><h2 id=\"bo\">Back office (demo)</h2>\
             <p class=\"muted\">Posts a signed stock webhook to detect, as the shop's inventory system would. \
             Level now: {level}; offered {offered}, held {held}.</p>{launch}\
             <form method=\"post\" action=\"/demo/stock\"><input type=\"hidden\" name=\"sku\" value=\"{sku}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <label for=\"level\">New stock level</label> <input id=\"level\" name=\"level\" type=\"number\" min=\"0\" max=\"100000\" value=\"3\" required> \
             <button type=\"submit\">Post restock</button></form></section>",
            sku = esc(sku.as_str()),
            name = esc(&entry.name),
            offered = snapshot.counters.offered,
            held = snapshot.counters.held,
            endpoint = esc(&capture),
            csrf = esc(&local.csrf),
        ),
        Some(&capture),
    )
}

/// The demo's product in sizes, as a Shopify theme renders one: a size
/// picker in the form that adds to the cart (its `id` field is the
/// variant), and the widget given every variant with whether it is in
/// stock. The widget shows only for a sold-out size, and follows the picker.
async fn sized(State((local, _)): Shared) -> Response {
    let store = &local.services.store;
    let mut variants = Vec::new();
    let mut options = String::new();
    for (size, id) in crate::SIZES {
        let sku = Sku::try_from(format!("TEE-{size}").as_str()).expect("demo SKU");
        let Ok(snapshot) = store.snapshot(&sku).await else {
            return problem(StatusCode::SERVICE_UNAVAILABLE, "the store is unreachable");
        };
        let c = snapshot.counters;
        let available = snapshot.stock.in_stock && c.level > c.offered + c.held;
        variants.push(json!({ "id": id, "sku": sku, "available": available }));
        options += &format!(
            "<option value=\"{id}\">{size}{}</option>",
            if available { "" } else { " — sold out" }
        );
    }
    let sizes: String = crate::SIZES
        .iter()
        .map(|(size, _)| format!("<option>TEE-{size}</option>"))
        .collect();
    let capture = crate::capture_origin(local.capture_port);
    // JSON in a data block: `<` escaped, so no value ends the element.
    let variants = serde_json::to_string(&variants)
        .expect("JSON")
        .replace('<', "\\u003c");
    page_in(
        &Language::english(),
        "Linen tee",
        &format!(
            "<p class=\"muted\">TEE-S, TEE-M, TEE-L · a product in sizes</p><h1>Linen tee</h1>\
             <form action=\"/cart/add\" method=\"post\"><label for=\"size\">Size</label> \
             <select id=\"size\" name=\"id\">{options}</select></form>\
             <div data-restock-product=\"Linen tee\" data-restock-endpoint=\"{endpoint}\">\
             <script type=\"application/json\">{variants}</script></div>\
             <script src=\"/restock-widget.js\" defer></script>\
             <section class=\"panel\" aria-labelledby=\"bo\"><h2 id=\"bo\">Back office (demo)</h2>\
             <form method=\"post\" action=\"/demo/stock\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"back\" value=\"/sized/linen-tee\">\
             <label for=\"sku\">Size to restock</label> <select id=\"sku\" name=\"sku\">{sizes}</select> \
             <label for=\"level\">New stock level</label> <input id=\"level\" name=\"level\" type=\"number\" min=\"0\" max=\"100000\" value=\"3\" required> \
             <button type=\"submit\">Post restock</button></form></section>",
            endpoint = esc(&capture),
            csrf = esc(&local.csrf),
        ),
        Some(&capture),
    )
}

#[derive(Deserialize)]
struct StockForm {
    sku: String,
    level: i64,
    #[serde(default)]
    csrf: String,
    /// The demo page to go back to (this server's own).
    #[serde(default)]
    back: Option<String>,
}

/// Why a demo form is refused, if it is: it must carry this run's token
/// (a page of this server put it there) and not come from another site.
fn forged(local: &Local, headers: &axum::http::HeaderMap, token: &str) -> Option<Response> {
    use restock_app::admin::dashboard::{same_token, sent_by_another_site};
    (!same_token(token, &local.csrf) || sent_by_another_site(headers)).then(|| {
        problem(
            StatusCode::FORBIDDEN,
            "this form is not from this demo shop's own page (its token is missing or from an earlier run, or another site posted it): reload the page and try again",
        )
    })
}

async fn deliver(
    local: &Local,
    detect: &Router,
    hook: &TestEvent,
) -> Result<(StatusCode, String), String> {
    let now = local.services.clock.now_ms() / 1000;
    let delivery = sign(
        Platform::Standard,
        hook,
        &restock_app::admin::dev_key(Platform::Standard),
        &delivery_id(local.services.random()),
        now,
    )
    .map_err(|e| e.to_string())?;
    let request = crate::webhook_request(&delivery, delivery.body.clone());
    let Ok(response) = detect.clone().oneshot(request).await;
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    Ok((status, body))
}

async fn post_stock(
    State((local, detect)): Shared,
    headers: axum::http::HeaderMap,
    Form(form): Form<StockForm>,
) -> Response {
    if let Some(refused) = forged(&local, &headers, &form.csrf) {
        return refused;
    }
    let hook = TestEvent::Stock {
        id: None,
        sku: Some(form.sku.clone()),
        level: form.level,
        location: None,
    };
    match deliver(&local, &detect, &hook).await {
        Ok((status, _)) if status.is_success() => match form.back.as_deref() {
            Some(back @ "/sized/linen-tee") => Redirect::to(back).into_response(),
            _ => Redirect::to(&format!("/products/{}", form.sku)).into_response(),
        },
        Ok((status, body)) => problem(status, &format!("detect answered {status}: {body}")),
        Err(e) => problem(StatusCode::BAD_REQUEST, &e),
    }
}

fn notices(local: &Local) -> Vec<Sent> {
    let mut sent = local.outbox.sent();
    sent.reverse();
    sent
}

async fn outbox(State((local, _)): Shared) -> Response {
    let rows: String = notices(&local)
        .iter()
        .map(|n| {
            let (channel, subject) = match n {
                Sent::Email { notice, .. } => ("email", notice.subject.clone()),
                Sent::Sms { notice, .. } => ("sms", notice.text.clone()),
            };
            let link = match (n.confirm_link(), n.reserve_link()) {
                (Some(l), _) => format!("<a href=\"{}\">Open confirmation link</a>", esc(&l)),
                (None, Some(l)) => format!("<a href=\"{}\">Open reserve link</a>", esc(&l)),
                (None, None) => String::new(),
            };
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{link}</td></tr>",
                esc(n.to()),
                channel,
                esc(&subject)
            )
        })
        .collect();
    let body = if rows.is_empty() {
        "<p>Nothing sent yet. Join a queue on a product page (a confirmation arrives here), then post a restock.</p>".to_owned()
    } else {
        format!(
            "<table><thead><tr><th>to</th><th>channel</th><th>subject</th><th>link</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    };
    page(
        "Outbox",
        &format!(
            "<h1>Outbox</h1><p class=\"muted\">Notices the local server sent, newest first (also in {}).</p>{body}",
            esc(&local.outbox_path.display().to_string())
        ),
    )
}

async fn outbox_json(State((local, _)): Shared) -> Response {
    Json(json!(notices(&local))).into_response()
}

#[derive(Deserialize)]
struct CheckoutQuery {
    sku: Option<String>,
    hold: Option<String>,
}

async fn checkout(State((local, _)): Shared, Query(q): Query<CheckoutQuery>) -> Response {
    let (Some(sku), Some(hold)) = (q.sku, q.hold) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "checkout needs a product and a hold",
        );
    };
    let name = match Sku::try_from(sku.as_str()) {
        Ok(s) => local
            .services
            .store
            .catalogue_entry(&s)
            .await
            .ok()
            .flatten()
            .map_or(sku.clone(), |e| e.name),
        Err(_) => return problem(StatusCode::NOT_FOUND, "no such product"),
    };
    let window = local
        .services
        .settings()
        .await
        .map(|s| s.hold_window.to_string())
        .unwrap_or_default();
    page(
        "Checkout",
        &format!(
            "<h1>Checkout (stand-in)</h1><p><strong>One {name} is held for you.</strong> \
             It stays yours for {window} from your click; after that it passes to the next person in line.</p>\
             <p class=\"muted\">Hold {hold}</p>\
             <form method=\"post\" action=\"/checkout/buy\"><input type=\"hidden\" name=\"hold\" value=\"{hold}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"sku\" value=\"{sku}\"><button type=\"submit\">Complete purchase</button></form>",
            name = esc(&name),
            window = esc(&window),
            hold = esc(&hold),
            sku = esc(&sku),
            csrf = esc(&local.csrf),
        ),
    )
}

#[derive(Deserialize)]
struct BuyForm {
    hold: String,
    sku: String,
    #[serde(default)]
    csrf: String,
}

async fn buy(
    State((local, detect)): Shared,
    headers: axum::http::HeaderMap,
    Form(form): Form<BuyForm>,
) -> Response {
    if let Some(refused) = forged(&local, &headers, &form.csrf) {
        return refused;
    }
    let hook = TestEvent::Order {
        hold: form.hold.clone(),
        sku: None,
    };
    match deliver(&local, &detect, &hook).await {
        Ok((status, _)) if status.is_success() => page(
            "Order placed",
            &format!(
                "<h1>Order placed</h1><p>Thank you. The shop's order webhook told restock, which took the unit off the level.</p>\
                 <p><a href=\"/products/{}\">Back to the product</a></p>",
                esc(&form.sku)
            ),
        ),
        Ok((status, body)) => problem(status, &format!("detect answered {status}: {body}")),
        Err(e) => problem(StatusCode::BAD_REQUEST, &e),
    }
}

async fn admin(State((local, _)): Shared, Json(command): Json<Command>) -> Response {
    let now = local.services.clock.now_ms();
    match local.admin.run(command, now).await {
        Ok(output) => Json(output).into_response(),
        Err(e) => {
            let kind = e.kind();
            (
                kind.status(),
                Json(json!({ "error": kind.code(), "message": e.to_string() })),
            )
                .into_response()
        }
    }
}
