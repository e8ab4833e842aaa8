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

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Form, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use restock_core::{Millis, Sku};
use restock_store::RestockFigures;
use serde::Deserialize;

use super::export::{self, Kind};
use super::{Admin, AdminError, Command, Output};
use crate::health::{Cached, Health, Report, Severity, StoreHealth};
use crate::ports::Clock;

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

/// One item's row on the overview.
#[derive(Debug, Clone)]
struct Row {
    sku: Sku,
    name: String,
    waiting: u32,
    /// Sign-ups still to confirm: not in line yet.
    unconfirmed: u32,
    offered: u32,
    held: u32,
    bought: u32,
    lapsed: u32,
    /// What bought holds brought in, per currency (thousandths).
    revenue: BTreeMap<String, i64>,
    /// Orders without a hold by a contact told, and what they paid.
    assisted: u32,
    assisted_revenue: BTreeMap<String, i64>,
    in_stock: bool,
    paused: bool,
    /// The newest stock report, when the item is sold out.
    out_since: Option<Millis>,
}

impl Row {
    /// Notices sent so far: live offers and every offer decided since.
    fn told(&self) -> u32 {
        self.offered + self.held + self.bought + self.lapsed
    }

    /// Offers clicked (held or bought) among offers decided.
    fn claim(&self) -> Option<f64> {
        let decided = self.held + self.bought + self.lapsed;
        (decided > 0).then(|| f64::from(self.held + self.bought) / f64::from(decided))
    }

    /// Bought among told.
    fn conversion(&self) -> Option<f64> {
        (self.told() > 0).then(|| f64::from(self.bought) / f64::from(self.told()))
    }
}

fn percent(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{:.0}%", r * 100.0))
}

/// "3 d 4 h", "12 min": how long ago `then` was.
fn ago(now: Millis, then: Millis) -> String {
    let minutes = (now - then).max(0) / 60_000;
    match minutes {
        m if m < 60 => format!("{m} min"),
        m if m < 48 * 60 => format!("{} h {} min", m / 60, m % 60),
        m => format!("{} d {} h", m / (24 * 60), m / 60 % 24),
    }
}

async fn rows(d: &Dashboard) -> Result<Vec<Row>, AdminError> {
    let mut rows = Vec::new();
    for entry in d.admin.store.catalogue().await? {
        rows.push(row(d, entry).await?);
    }
    Ok(rows)
}

/// One item's figures.
async fn row(d: &Dashboard, entry: restock_core::CatalogueEntry) -> Result<Row, AdminError> {
    let store = &d.admin.store;
    let snapshot = store.snapshot(&entry.sku).await?;
    let stats = store.counts(&entry.sku, entry.shards).await?;
    let newest = snapshot.stock.locations.values().map(|r| r.at_ms).max();
    Ok(Row {
        name: entry.name,
        sku: entry.sku,
        waiting: stats.waiting,
        unconfirmed: stats.unconfirmed,
        offered: stats.offered,
        held: stats.held,
        bought: stats.bought,
        lapsed: stats.lapsed,
        revenue: stats.revenue,
        assisted: stats.assisted,
        assisted_revenue: stats.assisted_revenue,
        in_stock: snapshot.stock.in_stock,
        paused: snapshot.stock.paused,
        out_since: newest.filter(|_| !snapshot.stock.in_stock),
    })
}

/// The overview's columns: query key, heading.
const COLUMNS: [(&str, &str); 12] = [
    ("sku", "Item"),
    ("waiting", "Waiting"),
    ("unconfirmed", "To confirm"),
    ("offered", "Offered"),
    ("held", "Held"),
    ("bought", "Bought"),
    ("lapsed", "Lapsed"),
    ("claim", "Claim rate"),
    ("conversion", "Conversion"),
    ("revenue", "Revenue"),
    ("out", "Sold out for"),
    ("assisted", "Assisted"),
];

/// Sorts `rows` by the column `key` names: figures most first, items by
/// SKU, "sold out for" longest first.
fn sort(rows: &mut [Row], key: &str) {
    let rate = |r: Option<f64>| Reverse((r.unwrap_or(-1.0) * 1e6) as i64);
    match key {
        "waiting" => rows.sort_by_key(|r| Reverse(r.waiting)),
        "unconfirmed" => rows.sort_by_key(|r| Reverse(r.unconfirmed)),
        "offered" => rows.sort_by_key(|r| Reverse(r.offered)),
        "held" => rows.sort_by_key(|r| Reverse(r.held)),
        "bought" => rows.sort_by_key(|r| Reverse(r.bought)),
        "lapsed" => rows.sort_by_key(|r| Reverse(r.lapsed)),
        "claim" => rows.sort_by_key(|r| rate(r.claim())),
        "conversion" => rows.sort_by_key(|r| rate(r.conversion())),
        // Currencies do not add up: the largest amount in any one.
        "revenue" => rows.sort_by_key(|r| Reverse(r.revenue.values().copied().max().unwrap_or(0))),
        "assisted" => rows.sort_by_key(|r| Reverse(r.assisted)),
        "out" => rows.sort_by_key(|r| r.out_since.unwrap_or(Millis::MAX)),
        _ => rows.sort_by(|a, b| a.sku.cmp(&b.sku)),
    }
}

#[derive(Debug, Default, Deserialize)]
struct OverviewQuery {
    #[serde(default)]
    sort: String,
    #[serde(default)]
    view: String,
}

async fn overview(State(d): Shared, Query(q): Query<OverviewQuery>) -> Response {
    match overview_html(&d, &q).await {
        Ok(body) => page(&d, StatusCode::OK, "Dashboard", body),
        Err(e) => failed(&d, &e),
    }
}

/// The banner for what the checks found that needs a person (nothing when
/// all is well): blocking findings first, each with its fix.
fn health_html(report: &Report) -> Markup {
    let attention = report.needing_attention();
    html! {
        @if !attention.is_empty() {
            div.banner role="alert" {
                p { b { (report.summary()) } " (what " code { "restock doctor" } " checks)" }
                ul {
                    @for f in &attention {
                        li {
                            b { @if f.severity == Severity::Blocking { "Blocks notices" } @else { "Warning" } }
                            ": " (f.check) ": " (f.found)
                            @if let Some(fix) = &f.fix { br; "Fix: " (fix) }
                        }
                    }
                }
            }
        }
    }
}

async fn overview_html(d: &Dashboard, q: &OverviewQuery) -> Result<Markup, AdminError> {
    let now = d.clock.now_ms();
    let mut rows = rows(d).await?;
    let wanted = q.view == "wanted";
    if wanted {
        // What restock would earn most from: the sold-out items most waited for.
        rows.retain(|r| !r.in_stock);
        sort(&mut rows, "waiting");
    } else {
        sort(&mut rows, &q.sort);
    }
    let health = d.health.report().await;
    let pause = d.admin.store.sender_pause().await?;
    let mail = mail_html(d, now).await?;
    let home = d.home();
    Ok(html! {
        (health_html(&health))
        @if let Some(pause) = &pause {
            div.banner role="alert" {
                p {
                    b { "Sending is paused" }
                    " since " (restock_core::rfc3339(pause.since)) " (" (ago(now, pause.since)) "), until "
                    (restock_core::rfc3339(pause.until)) " at the latest: " (pause.reason) ". Items held back: "
                    (pause.skus.iter().map(Sku::as_str).collect::<Vec<_>>().join(", ")) "."
                }
                (d.action("/resume", &[], "Resume sending"))
            }
        }
        @for row in rows.iter().filter(|r| r.paused) {
            div.banner role="alert" {
                p {
                    b { (row.sku) }
                    ": a restock waits for the team's review; nothing is offered until it is released, or rejected as a level not to believe."
                }
                (d.action("/release", &[("sku", row.sku.as_str())], &format!("Release {}", row.sku)))
                (d.action("/reject", &[("sku", row.sku.as_str())], &format!("Reject {}", row.sku)))
            }
        }
        @if wanted {
            h1 { "Most wanted while sold out" }
            p.muted { "Sold-out items, most people waiting first: what a restock would earn most from." }
        } @else {
            h1 { "Items" }
        }
        div.scroll {
            table {
                thead { tr { @for (key, heading) in COLUMNS { th scope="col" { a href={ (home) "?sort=" (key) } { (heading) } } } } }
                tbody {
                    @for r in &rows {
                        tr {
                            td { a href={ (d.base) "/items/" (r.sku) } { (r.sku) } br; span.muted { (r.name) } }
                            td { (r.waiting) }
                            td { (r.unconfirmed) }
                            td { (r.offered) }
                            td { (r.held) }
                            td { (r.bought) }
                            td { (r.lapsed) }
                            td { (percent(r.claim())) }
                            td { (percent(r.conversion())) }
                            td { (restock_core::money::totals(&r.revenue)) }
                            td {
                                @match (r.in_stock, r.out_since) {
                                    (true, _) => "in stock",
                                    (false, Some(t)) => (ago(now, t)),
                                    (false, None) => "-",
                                }
                            }
                            td {
                                (r.assisted)
                                @if !r.assisted_revenue.is_empty() {
                                    " " span.muted { (restock_core::money::totals(&r.assisted_revenue)) }
                                }
                            }
                        }
                    }
                    @if rows.is_empty() {
                        tr { td colspan="11" class="muted" { "No items yet: restock catalogue import FILE.csv adds them." } }
                    }
                }
            }
        }
        p.muted { "Waiting: confirmed and in line. To confirm: signed up, the confirmation link not followed yet. Claim rate: offers clicked among offers decided. Conversion: bought among told. Revenue: the unit price of each hold bought, per currency, where the order said. Sold out for: since the newest stock report. Assisted: orders without a hold by a contact told about the item within the attribution window, and what they paid for it (apart from Revenue)." }
        (mail)
        h2 { "Actions" }
        div.actions {
            (d.action("/reconcile", &[], "Reconcile every item"))
            (d.action("/export", &[("kind", "requests")], "Export requests (CSV)"))
            (d.action("/export", &[("kind", "days")], "Export per-day figures (CSV)"))
            (d.action("/export", &[("kind", "items")], "Export per-item revenue (CSV)"))
            (d.ask(
                "/forget",
                &[],
                "Forget a contact (erases their requests, keeps their opt-out)",
                ("contact", "email or +phone", 320),
                "Forget",
            ))
        }
    })
}

/// Today's mail and SMS figures against SES's review thresholds.
async fn mail_html(d: &Dashboard, now: Millis) -> Result<Markup, AdminError> {
    let day = restock_core::feedback::day_of(now);
    let mail = d.admin.store.mail_day(&day).await?;
    let rate = |r: Option<f64>, review: f64| {
        html! {
            @match r {
                None => "-",
                Some(r) if r >= review => span.warn { (format!("{:.2}%", r * 100.0)) },
                Some(r) => span.ok { (format!("{:.2}%", r * 100.0)) },
            }
        }
    };
    Ok(html! {
        h2 { "Sending today (" (day) ", UTC)" }
        div.cards {
            div.card { "Sent" b { (mail.sent) } (mail.emails_sent()) " emails, " (mail.texts_sent) " texts" }
            div.card { "Bounce rate" b { (rate(mail.bounce_rate(), 0.05)) } span.muted { "of emails; SES reviews at 5%" } }
            div.card { "Complaint rate" b { (rate(mail.complaint_rate(), 0.001)) } span.muted { "of emails; SES reviews at 0.1%" } }
            div.card { "Confirmations sent" b { (mail.confirm_sent) } }
            div.card { "Confirmed" b { (mail.confirmed) } }
            div.card { "Ran out unconfirmed" b { (mail.confirm_expired) } }
        }
    })
}

/// An item's last [`CHART_DAYS`] days, oldest first: sign-ups, notices and
/// purchases a day; and its restocks, from the store's history of the item
/// (not the requests: its cost is the days and restocks, at any depth).
async fn history(
    d: &Dashboard,
    sku: &Sku,
    now: Millis,
) -> Result<([Vec<u64>; 3], BTreeMap<u32, RestockFigures>), AdminError> {
    let day = |back: i64| restock_core::feedback::day_of(now - back * DAY_MS);
    let first = day(CHART_DAYS as i64 - 1);
    let history = d.admin.store.item_history(sku, &first).await?;
    let mut series = [vec![], vec![], vec![]];
    for back in (0..CHART_DAYS as i64).rev() {
        let f = history.days.get(&day(back)).copied().unwrap_or_default();
        for (s, v) in series.iter_mut().zip([f.sign_ups, f.told, f.bought]) {
            s.push(v);
        }
    }
    Ok((series, history.restocks))
}

/// A bar chart of `values` (one bar a day, oldest first), with its total
/// and largest day in the label.
fn chart(title: &str, values: &[u64], colour: &str) -> Markup {
    let max = values.iter().copied().max().unwrap_or(0).max(1);
    let total: u64 = values.iter().sum();
    let (w, h) = (10 * values.len(), 60);
    let days = values.len();
    html! {
        figure style="margin:0" {
            figcaption { (title) " — " (total) " in " (days) " days, at most " (values.iter().max().unwrap_or(&0)) " a day" }
            svg viewBox={ "0 0 " (w) " " (h) } preserveAspectRatio="none" role="img" aria-label={ (title) ": " (total) " in " (days) " days" } {
                @for (i, v) in values.iter().enumerate() {
                    @let bh = (*v as f64 / max as f64 * f64::from(h - 4)).round() as u32;
                    rect x=(i * 10 + 1) y=(h as u32 - bh) width="8" height=(bh) fill=(colour) { title { (v) } }
                }
            }
        }
    }
}

async fn item(State(d): Shared, Path(sku): Path<String>) -> Response {
    let Ok(sku) = Sku::try_from(sku.as_str()) else {
        return failed(&d, &AdminError::Invalid(format!("`{sku}` is not a SKU")));
    };
    match item_html(&d, &sku).await {
        Ok(body) => page(&d, StatusCode::OK, sku.as_str(), body),
        Err(e) => failed(&d, &e),
    }
}

/// One request's story, masked: what `restock show ID` prints.
async fn request(State(d): Shared, Path(id): Path<String>) -> Response {
    if id.parse::<restock_core::RequestId>().is_err() {
        return failed(
            &d,
            &AdminError::Invalid(format!("`{id}` is not a request id")),
        );
    }
    let shown = d
        .admin
        .run(
            Command::Show {
                who: id.clone(),
                with_contacts: false,
            },
            d.clock.now_ms(),
        )
        .await;
    match shown {
        Ok(out) => page(&d, StatusCode::OK, &id, story_html(&d, &out.json)),
        Err(e) => failed(&d, &e),
    }
}

/// The requests of a `restock show` answer, each with why it stands where
/// it does and its story.
fn story_html(d: &Dashboard, shown: &serde_json::Value) -> Markup {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let requests = shown["requests"].as_array().cloned().unwrap_or_default();
    html! {
        @for r in &requests {
            h1 { (text(&r["contact"])) " on " a href={ (d.base) "/items/" (text(&r["sku"])) } { (text(&r["sku"])) } }
            p.muted { "Request " (text(&r["request_id"])) " · " (text(&r["channel"])) " · " b { (text(&r["status"])) } }
            p { b { "Now: " } (text(&r["why"])) }
            h2 { "Its story" }
            div.scroll {
                table {
                    thead { tr { th scope="col" { "When (UTC)" } th scope="col" { "What happened" } } }
                    tbody {
                        @for c in r["story"].as_array().into_iter().flatten() {
                            tr {
                                td { (restock_core::rfc3339(c["at"].as_i64().unwrap_or_default())) }
                                td { (text(&c["text"])) }
                            }
                        }
                    }
                }
            }
            p.muted { "Each kind of event is kept once, and for the last " (restock_core::story::RESTOCKS_KEPT) " restocks it was offered in. The same story: " code { "restock show " (text(&r["request_id"])) } }
        }
    }
}

async fn item_html(d: &Dashboard, sku: &Sku) -> Result<Markup, AdminError> {
    let now = d.clock.now_ms();
    let entry = d.admin.entry(sku).await?;
    let snapshot = d.admin.store.snapshot(sku).await?;
    let row = row(d, entry.clone()).await?;
    let ([sign_ups, told, bought], restocks) = history(d, sku, now).await?;
    let stock = if snapshot.stock.in_stock {
        "in stock".to_owned()
    } else {
        row.out_since.map_or("sold out".to_owned(), |t| {
            format!("sold out for {}", ago(now, t))
        })
    };
    let head = d.admin.store.queue(sku, entry.shards, HEAD).await?;
    let this = [("sku", sku.as_str())];
    Ok(html! {
        h1 { (sku) }
        p.muted { (entry.name) }
        @if let Some(pause) = &entry.paused {
            div.banner role="alert" {
                p {
                    b { "Notices paused" } " " (ago(now, pause.since_ms)) " ago: " (pause.reason)
                    ". Sign-ups and places are kept; offers already sent stay good."
                }
                (d.action("/resume", &this, "Resume notices"))
            }
        }
        @if let Some(ended) = entry.ended {
            div.banner role="status" {
                p {
                    b { "Ended" } " " (ago(now, ended))
                    " ago: the platform no longer lists it, so it takes no sign-ups and nobody waiting is told. Listing it again on the platform and running "
                    code { "restock catalogue sync" } " carries on with its queue."
                }
            }
        }
        @if snapshot.stock.paused {
            div.banner role="alert" {
                p { "A restock waits for the team's review: nothing is offered until it is released, or rejected as a level not to believe." }
                (d.action("/release", &this, "Release"))
                (d.action("/reject", &this, "Reject"))
            }
        }
        div.cards {
            div.card { "Level" b { (snapshot.stock.level()) } (stock) }
            div.card { "Restocks" b { (snapshot.stock.episode) } }
            div.card { "Waiting" b { (row.waiting) } "and " (row.unconfirmed) " to confirm" }
            div.card { "Offered" b { (row.offered) } }
            div.card { "Held" b { (row.held) } }
            div.card { "Bought" b { (row.bought) } }
            div.card { "Lapsed" b { (row.lapsed) } }
            div.card { "Claim rate" b { (percent(row.claim())) } }
            div.card { "Conversion" b { (percent(row.conversion())) } }
            div.card { "Revenue" b { (restock_core::money::totals(&row.revenue)) } }
            div.card { "Assisted" b { (row.assisted) " orders, " (restock_core::money::totals(&row.assisted_revenue)) } }
        }
        h2 { "The last " (CHART_DAYS) " days (UTC)" }
        (chart("Sign-ups", &sign_ups, "#3b5bdb"))
        (chart("Notices", &told, "#d4a106"))
        (chart("Purchases", &bought, "#1d6b2f"))
        (restocks_html(&restocks))
        h2 { "Next in line" }
        div.scroll {
            table {
                thead { tr { th scope="col" { "#" } th scope="col" { "Contact" } th scope="col" { "Joined" } th scope="col" { "Status" } th scope="col" { "Language" } } }
                tbody {
                    @for (i, r) in head.iter().enumerate() {
                        tr {
                            td { (i + 1) }
                            td { a href={ (d.base) "/requests/" (r.id) } title="Its story: why it stands where it does" { (r.contact.masked()) } }
                            td { (restock_core::rfc3339(r.key.joined_ms)) }
                            td { (r.state.status().as_str()) }
                            td { (r.language.as_ref().map_or("default".into(), ToString::to_string)) }
                        }
                    }
                    @if head.is_empty() {
                        tr { td colspan="5" class="muted" { "Nobody is waiting." } }
                    }
                }
            }
        }
        h2 { "Actions" }
        div.actions {
            (d.action("/reconcile", &this, "Reconcile"))
            (d.action("/export", &[("kind", "requests"), ("sku", sku.as_str())], "Export its requests (CSV)"))
            @if entry.paused.is_none() {
                (d.ask(
                    "/pause",
                    &this,
                    "Pause its notices (sign-ups and places are kept)",
                    ("reason", "why: a recall, a wrong price", 200),
                    "Pause",
                ))
            }
        }
    })
}

/// The restocks, newest first, and what each turned into.
fn restocks_html(restocks: &BTreeMap<u32, RestockFigures>) -> Markup {
    html! {
        h2 { "Restocks" }
        p.muted { "Each notice, reminder, click, purchase and expiry counted once, in the restock whose unit it was." }
        div.scroll {
            table {
                thead {
                    tr {
                        @for heading in ["Restock", "First notice", "Told", "Held", "Bought", "Offers lapsed", "Holds run out", "Claim rate", "Conversion", "Reminded"] {
                            th scope="col" { (heading) }
                        }
                    }
                }
                tbody {
                    @for (episode, r) in restocks.iter().rev() {
                        @let rate = |n: u64| (r.told > 0).then(|| n as f64 / r.told as f64);
                        tr {
                            td { "#" (episode) }
                            td { (r.first_told.map_or(String::new(), restock_core::rfc3339)) }
                            td { (r.told) }
                            td { (r.held) }
                            td { (r.bought) }
                            td { (r.lapsed) }
                            td { (r.released) }
                            td { (percent(rate(r.held))) }
                            td { (percent(rate(r.bought))) }
                            td { (r.reminded) }
                        }
                    }
                    @if restocks.is_empty() {
                        tr { td colspan="10" class="muted" { "Nobody has been told yet." } }
                    }
                }
            }
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct ActionForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    sku: String,
    #[serde(default)]
    contact: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    reason: String,
}

impl ActionForm {
    fn skus(&self) -> Result<Vec<Sku>, AdminError> {
        if self.sku.is_empty() {
            return Ok(vec![]);
        }
        Sku::try_from(self.sku.as_str())
            .map(|s| vec![s])
            .map_err(|e| AdminError::Invalid(format!("`{}`: {e}", self.sku)))
    }
}

/// Runs `command` (as the CLI would) once the form is known to be ours,
/// and shows what it answered.
async fn act(
    d: &Dashboard,
    headers: &HeaderMap,
    form: &ActionForm,
    command: impl FnOnce() -> Result<Command, AdminError>,
) -> Response {
    if let Some(why) = forged(d, headers, &form.csrf) {
        return plain(StatusCode::FORBIDDEN, why);
    }
    let done = match command() {
        Ok(command) => d.admin.run(command, d.clock.now_ms()).await,
        Err(e) => Err(e),
    };
    match done {
        Ok(output) => page(d, StatusCode::OK, "Done", done_html(d, &output)),
        Err(e) => failed(d, &e),
    }
}

fn done_html(d: &Dashboard, output: &Output) -> Markup {
    html! {
        h1 { "Done" }
        pre role="status" { (output.message) }
        @if !output.rows.is_empty() {
            div.scroll {
                table {
                    thead { tr { @for c in &output.columns { th scope="col" { (c) } } } }
                    tbody { @for row in &output.rows { tr { @for cell in row { td { (cell) } } } } }
                }
            }
        }
        p { a href=(d.home()) { "Back to the dashboard" } }
    }
}

async fn resume(State(d): Shared, headers: HeaderMap, Form(f): Form<ActionForm>) -> Response {
    act(&d, &headers, &f, || {
        Ok(Command::Resume {
            sku: f.skus()?.pop(),
        })
    })
    .await
}

async fn pause(State(d): Shared, headers: HeaderMap, Form(f): Form<ActionForm>) -> Response {
    act(&d, &headers, &f, || {
        Ok(Command::Pause {
            sku: f.skus()?.pop(),
            reason: f.reason.clone(),
        })
    })
    .await
}

async fn release(State(d): Shared, headers: HeaderMap, Form(f): Form<ActionForm>) -> Response {
    act(&d, &headers, &f, || {
        let sku = f
            .skus()?
            .pop()
            .ok_or_else(|| AdminError::Invalid("which item? (sku)".into()))?;
        Ok(Command::Release { sku })
    })
    .await
}

async fn reject(State(d): Shared, headers: HeaderMap, Form(f): Form<ActionForm>) -> Response {
    act(&d, &headers, &f, || {
        let sku = f
            .skus()?
            .pop()
            .ok_or_else(|| AdminError::Invalid("which item? (sku)".into()))?;
        Ok(Command::Reject { sku })
    })
    .await
}

async fn reconcile(State(d): Shared, headers: HeaderMap, Form(f): Form<ActionForm>) -> Response {
    act(&d, &headers, &f, || {
        Ok(Command::Reconcile { skus: f.skus()? })
    })
    .await
}

async fn forget(State(d): Shared, headers: HeaderMap, Form(f): Form<ActionForm>) -> Response {
    act(&d, &headers, &f, || {
        Ok(Command::Forget {
            contact: f.contact.clone(),
        })
    })
    .await
}

/// The per-item export (`restock export items`) as a download: one row an
/// item, small whatever the number of requests.
async fn items_csv(d: &Dashboard, skus: Vec<Sku>) -> Response {
    let stats = match d.admin.run(Command::Stats { skus }, d.clock.now_ms()).await {
        Ok(stats) => stats,
        Err(e) => return failed(d, &e),
    };
    let mut body = Vec::new();
    if let Err(e) = export::write_items(&stats.json, &mut body) {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string());
    }
    Response::builder()
        .header(header::CONTENT_TYPE, "text/csv; charset=utf-8")
        .header(
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"restock-items.csv\"",
        )
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from(body))
        .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "the export"))
}

/// The export as a download, written a page at a time as the browser reads
/// it (`Command::ExportPage`, contacts masked): one page in memory.
async fn export_csv(State(d): Shared, headers: HeaderMap, Form(f): Form<ActionForm>) -> Response {
    if let Some(why) = forged(&d, &headers, &f.csrf) {
        return plain(StatusCode::FORBIDDEN, why);
    }
    let skus = match f.skus() {
        Ok(skus) => skus,
        Err(e) => return failed(&d, &e),
    };
    let kind = match f.kind.as_str() {
        "days" => Kind::Days,
        "items" => return items_csv(&d, skus).await,
        _ => Kind::Requests,
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(2);
    let dashboard = d.clone();
    tokio::spawn(async move {
        let written = Buffer::default();
        let done = export::write(
            kind,
            written.clone(),
            |after| {
                let command = Command::ExportPage {
                    skus: skus.clone(),
                    after,
                    with_contacts: false,
                };
                let (dashboard, written, tx) = (dashboard.clone(), written.clone(), tx.clone());
                async move {
                    // What the last page wrote goes out before the next is read.
                    let chunk = written.take();
                    if !chunk.is_empty() && tx.send(Ok(chunk)).await.is_err() {
                        return Err(AdminError::Invalid("the browser left".into()));
                    }
                    dashboard.admin.run(command, dashboard.clock.now_ms()).await
                }
            },
            |_| {},
        )
        .await;
        let last = match done {
            Ok(_) => Ok(written.take()),
            Err(e) => {
                tracing::warn!(error = %e, "a dashboard export stopped part way");
                Err(std::io::Error::other(e.to_string()))
            }
        };
        let _ = tx.send(last).await;
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    let name = match kind {
        Kind::Requests => "restock-requests.csv",
        Kind::Days => "restock-days.csv",
    };
    Response::builder()
        .header(header::CONTENT_TYPE, "text/csv; charset=utf-8")
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        )
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| {
            plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the export could not start",
            )
        })
}

/// Where the export writes: the rows of the page in hand, sent on before
/// the next page is read.
#[derive(Clone, Default)]
struct Buffer(Arc<std::sync::Mutex<Vec<u8>>>);

impl Buffer {
    fn take(&self) -> Vec<u8> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl std::io::Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
