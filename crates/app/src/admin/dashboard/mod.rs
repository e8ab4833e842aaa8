//! The team's dashboard: server-rendered pages over the same [`Admin`]
//! commands the CLI runs, served on loopback only (`restock dashboard` on the
//! operator's machine, `/admin` in restock-local). No login: it answers only
//! requests addressed to a loopback host (no DNS-rebinding page can read
//! it), and every action is a POST carrying this server's CSRF token from a
//! page of the same origin.
//!
//! - `GET /`: every item's figures, sortable, or the sold-out items most
//!   waited for (`?view=wanted`); mail health; the sender's pause.
//! - `GET /items/{sku}`: 30 days of sign-ups, notices and purchases as
//!   inline SVG, the queue's head (masked) and the item's actions.
//! - `POST /resume`, `/release`, `/reconcile`, `/forget`: the CLI's
//!   commands. `POST /export`: the CSV `restock export` writes, streamed a
//!   page at a time.
//!
//! One module per page (`overview`, `item`, `request`), the actions and
//! the exports; this module holds what every page shares: the routes, the
//! loopback and CSRF guards, and the page's frame and style.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use restock_core::Millis;

use super::{Admin, AdminError};

mod actions;
mod export;
mod item;
mod overview;
mod request;

use crate::health::{Cached, Health, StoreHealth};
use crate::ports::Clock;
use actions::{forget, pause, reconcile, reject, release, resume};
use export::export_csv;
use item::item;
use overview::overview;
use request::request;

/// Days the item charts cover.
pub const CHART_DAYS: usize = 30;
/// Queue entries an item page shows.
const HEAD: usize = 10;
const DAY_MS: Millis = 86_400_000;

/// One dashboard: the commands, the time, this server's CSRF token and the
/// path it is mounted under (`""` or `"/admin"`).
pub struct Dashboard {
    admin: Admin,
    clock: Arc<dyn Clock>,
    csrf: String,
    base: String,
    health: Arc<dyn Health>,
}

impl Dashboard {
    /// A dashboard mounted at `base`, with a fresh CSRF token. Its banner
    /// shows what the store's own checks find ([`StoreHealth`]), run at
    /// most once a minute; [`Dashboard::with_health`] gives it more.
    pub fn new(admin: Admin, clock: Arc<dyn Clock>, base: &str) -> Self {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the OS has randomness");
        let health = Arc::new(Cached::new(
            StoreHealth(admin.store.clone()),
            std::time::Duration::from_secs(60),
        ));
        Self {
            admin,
            clock,
            csrf: bytes.iter().map(|b| format!("{b:02x}")).collect(),
            base: base.trim_end_matches('/').to_owned(),
            health,
        }
    }

    /// The same dashboard, its banner fed by `health` (`restock doctor`'s
    /// checks on a deployed stack).
    #[must_use]
    pub fn with_health(mut self, health: Arc<dyn Health>) -> Self {
        self.health = health;
        self
    }

    /// The overview's address.
    fn home(&self) -> String {
        if self.base.is_empty() {
            "/".into()
        } else {
            self.base.clone()
        }
    }

    fn path(&self, rest: &str) -> String {
        format!("{}{rest}", self.base)
    }

    /// A one-button form for `action`, carrying the token.
    fn action(&self, action: &str, fields: &[(&str, &str)], label: &str) -> Markup {
        html! {
            form method="post" action=(self.path(action)) {
                input type="hidden" name="csrf" value=(self.csrf);
                @for (k, v) in fields {
                    input type="hidden" name=(k) value=(v);
                }
                button type="submit" { (label) }
            }
        }
    }

    /// A form that asks for one line of text before `action` (forget a
    /// contact, pause an item), carrying the token and `fields`.
    fn ask(
        &self,
        action: &str,
        fields: &[(&str, &str)],
        question: &str,
        (name, placeholder, max): (&str, &str, usize),
        label: &str,
    ) -> Markup {
        html! {
            form method="post" action=(self.path(action)) {
                input type="hidden" name="csrf" value=(self.csrf);
                @for (k, v) in fields {
                    input type="hidden" name=(k) value=(v);
                }
                label { (question) br; input type="text" name=(name) placeholder=(placeholder) maxlength=(max) autocomplete="off" required; }
                " "
                button type="submit" { (label) }
            }
        }
    }
}

type Shared = State<Arc<Dashboard>>;

/// The dashboard's routes; nest them under the dashboard's `base`.
pub fn router(dashboard: Arc<Dashboard>) -> Router {
    Router::new()
        .route("/", get(overview))
        .route("/items/{sku}", get(item))
        .route("/requests/{id}", get(request))
        .route("/resume", post(resume))
        .route("/pause", post(pause))
        .route("/release", post(release))
        .route("/reject", post(reject))
        .route("/reconcile", post(reconcile))
        .route("/forget", post(forget))
        .route("/export", post(export_csv))
        .layer(axum::middleware::from_fn(loopback_only))
        .with_state(dashboard)
}

/// Whether `host` (a Host header) names this machine.
fn is_loopback(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    matches!(name, "127.0.0.1" | "localhost" | "::1")
}

/// Refuses requests addressed to any other host than loopback: a page that
/// rebinds its own name to 127.0.0.1 cannot read the dashboard (nor, as a
/// layer on the local server, any of its routes).
pub async fn loopback_only(request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if is_loopback(host) {
        next.run(request).await
    } else {
        plain(
            StatusCode::FORBIDDEN,
            "this server answers only at a loopback address: open http://127.0.0.1:PORT/ (a page that names another host is refused, so a rebinding page cannot reach it)",
        )
    }
}

fn plain(status: StatusCode, message: &str) -> Response {
    (status, format!("{message}\n")).into_response()
}

/// Whether a form's `given` token is this server's `expected` one,
/// compared in constant time.
pub fn same_token(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Whether the browser says another site sent the request
/// (`Sec-Fetch-Site`); tools (curl) say nothing.
pub fn sent_by_another_site(headers: &HeaderMap) -> bool {
    headers
        .get("sec-fetch-site")
        .and_then(|h| h.to_str().ok())
        .is_some_and(|s| s != "same-origin" && s != "none")
}

/// Why an action is refused, if it is: the token must be this server's and
/// the form must come from a page of the same origin.
fn forged(dashboard: &Dashboard, headers: &HeaderMap, token: &str) -> Option<&'static str> {
    if !same_token(token, &dashboard.csrf) {
        return Some(
            "this form is not from this dashboard (its CSRF token is missing or from an earlier run): reload the page and try again",
        );
    }
    let from_another_site = "this form was posted from another site: actions are taken only from the dashboard's own pages";
    if sent_by_another_site(headers) {
        return Some(from_another_site);
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
    match (origin, host) {
        (Some(origin), Some(host))
            if origin != format!("http://{host}") && origin != format!("https://{host}") =>
        {
            Some(from_another_site)
        }
        _ => None,
    }
}

const STYLE: &str = "body{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a1a1a;background:#fafaf8;line-height:1.45}\
header{background:#1a1a1a;color:#fff;padding:.75rem 1rem}header a{color:#fff;margin-right:1rem;font-weight:600}\
main{max-width:72rem;margin:0 auto;padding:1rem}h1{font-size:1.5rem;margin:.25rem 0 .75rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}\
.muted{color:#555}.banner{background:#fff3cd;border:1px solid #d4a106;border-radius:.4rem;padding:.75rem;margin:0 0 1rem}\
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\
td,th{border-bottom:1px solid #ddd;padding:.4rem .5rem;text-align:right;white-space:nowrap}td:first-child,th:first-child{text-align:left}\
th a{color:inherit}.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:.5rem}\
.card{background:#fff;border:1px solid #ddd;border-radius:.4rem;padding:.5rem .75rem}.card b{display:block;font-size:1.3rem}\
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}form{margin:0}\
button{padding:.55rem .9rem;font:inherit;font-weight:600;color:#fff;background:#1a1a1a;border:0;border-radius:.35rem;cursor:pointer}\
input[type=text]{padding:.5rem;font:inherit;max-width:100%}.warn{color:#a4000f;font-weight:600}.ok{color:#1d6b2f}\
svg{width:100%;height:auto;max-height:9rem;background:#fff;border:1px solid #ddd;border-radius:.4rem}\
pre{white-space:pre-wrap;background:#fff;border:1px solid #ddd;padding:.75rem}:focus-visible{outline:3px solid #f2b705;outline-offset:2px}";

fn page(d: &Dashboard, status: StatusCode, title: &str, body: Markup) -> Response {
    let home = d.home();
    let html = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                meta name="robots" content="noindex";
                title { (title) " · restock" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    nav aria-label="dashboard" {
                        a href=(home) { "restock" }
                        a href={ (home) "?view=wanted" } { "Most wanted" }
                    }
                }
                main { (body) }
            }
        }
    };
    let mut response = (status, Html(html.into_string())).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, "no-store".parse().expect("static"));
    // Not `no-referrer`: with it a form's Origin is `null`, and the action
    // could not be told from a forged one.
    headers.insert("referrer-policy", "same-origin".parse().expect("static"));
    headers.insert(
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
            .parse()
            .expect("static"),
    );
    response
}

fn failed(d: &Dashboard, e: &AdminError) -> Response {
    let status = e.kind().status();
    page(
        d,
        status,
        "Not done",
        html! {
            h1 { "Not done" }
            p.warn { (e.to_string()) }
            p { a href=(d.home()) { "Back" } }
        },
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use restock_core::{Millis, Sku};

    use super::item::chart;
    use super::overview::{Row, ago, sort};
    use super::*;

    fn row(sku: &str, waiting: u32, bought: u32, lapsed: u32, out: Option<Millis>) -> Row {
        Row {
            sku: Sku::try_from(sku).expect("sku"),
            name: String::new(),
            waiting,
            unconfirmed: 10 - waiting,
            offered: 0,
            held: 0,
            bought,
            lapsed,
            revenue: BTreeMap::new(),
            assisted: 0,
            assisted_revenue: BTreeMap::new(),
            in_stock: out.is_none(),
            paused: false,
            out_since: out,
        }
    }

    #[test]
    fn only_loopback_hosts_are_answered() {
        for host in ["127.0.0.1:7878", "localhost:3000", "[::1]:80", "127.0.0.1"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "evil.example:7878",
            "127.0.0.1.evil.example",
            "",
            "[::2]:80",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn rates_and_sorting_follow_the_figures() {
        let a = row("A", 5, 1, 3, Some(1_000));
        let b = row("B", 9, 3, 1, None);
        assert_eq!(a.claim(), Some(0.25));
        assert_eq!(b.conversion(), Some(0.75));
        let mut rows = vec![a.clone(), b.clone()];
        sort(&mut rows, "waiting");
        assert_eq!(rows[0].sku, b.sku);
        sort(&mut rows, "out");
        assert_eq!(rows[0].sku, a.sku);
        sort(&mut rows, "sku");
        assert_eq!(rows[0].sku, a.sku);
        sort(&mut rows, "claim");
        assert_eq!(rows[0].sku, b.sku);
        sort(&mut rows, "unconfirmed");
        assert_eq!(rows[0].sku, a.sku, "5 to confirm against 1");
    }

    #[test]
    fn a_chart_has_a_bar_a_day_scaled_to_the_largest() {
        let svg = chart("Sign-ups", &[0, 2, 4], "#000").into_string();
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains("6 in 3 days, at most 4 a day"), "{svg}");
        assert!(svg.contains("height=\"56\""), "{svg}");
        assert!(svg.contains("height=\"28\""), "{svg}");
    }

    #[test]
    fn ages_read_in_minutes_hours_then_days() {
        assert_eq!(ago(3_600_000, 0), "1 h 0 min");
        assert_eq!(ago(59 * 60_000, 0), "59 min");
        assert_eq!(ago(3 * DAY_MS + 7_200_000, 0), "3 d 2 h");
    }
}
