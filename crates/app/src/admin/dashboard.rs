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
use restock_core::notice::escape_html as esc;
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
    fn action(&self, action: &str, fields: &[(&str, &str)], label: &str) -> String {
        let hidden: String = fields
            .iter()
            .map(|(k, v)| {
                format!(
                    "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
                    esc(k),
                    esc(v)
                )
            })
            .collect();
        format!(
            "<form method=\"post\" action=\"{}\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">{hidden}<button type=\"submit\">{}</button></form>",
            esc(&self.path(action)),
            self.csrf,
            esc(label)
        )
    }
}

type Shared = State<Arc<Dashboard>>;

/// The dashboard's routes; nest them under the dashboard's `base`.
pub fn router(dashboard: Arc<Dashboard>) -> Router {
    Router::new()
        .route("/", get(overview))
        .route("/items/{sku}", get(item))
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

fn page(d: &Dashboard, status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta name=\"robots\" content=\"noindex\">\
         <title>{t} · restock</title><style>{STYLE}</style></head><body><header><nav aria-label=\"dashboard\">\
         <a href=\"{home}\">restock</a><a href=\"{home}?view=wanted\">Most wanted</a></nav></header><main>{body}</main></body></html>",
        t = esc(title),
        home = esc(&d.home()),
    );
    let mut response = (status, Html(html)).into_response();
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
        &format!(
            "<h1>Not done</h1><p class=\"warn\">{}</p><p><a href=\"{}\">Back</a></p>",
            esc(&e.to_string()),
            esc(&d.home())
        ),
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
        in_stock: snapshot.stock.in_stock,
        paused: snapshot.stock.paused,
        out_since: newest.filter(|_| !snapshot.stock.in_stock),
    })
}

/// The overview's columns: query key, heading.
const COLUMNS: [(&str, &str); 11] = [
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
        Ok(body) => page(&d, StatusCode::OK, "Dashboard", &body),
        Err(e) => failed(&d, &e),
    }
}

/// The banner for what the checks found that needs a person (nothing when
/// all is well): blocking findings first, each with its fix.
fn health_html(report: &Report) -> String {
    let attention = report.needing_attention();
    if attention.is_empty() {
        return String::new();
    }
    let items: String = attention
        .iter()
        .map(|f| {
            let mark = if f.severity == Severity::Blocking {
                "Blocks notices"
            } else {
                "Warning"
            };
            let fix = f
                .fix
                .as_ref()
                .map_or(String::new(), |fix| format!("<br>Fix: {}", esc(fix)));
            format!(
                "<li><b>{mark}</b>: {}: {}{fix}</li>",
                esc(&f.check),
                esc(&f.found)
            )
        })
        .collect();
    format!(
        "<div class=\"banner\" role=\"alert\"><p><b>{}</b> (what <code>restock doctor</code> checks)</p><ul>{items}</ul></div>",
        esc(&report.summary())
    )
}

async fn overview_html(d: &Dashboard, q: &OverviewQuery) -> Result<String, AdminError> {
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
    let mut html = health_html(&d.health.report().await);
    if let Some(pause) = d.admin.store.sender_pause().await? {
        html += &format!(
            "<div class=\"banner\" role=\"alert\"><p><b>Sending is paused</b> since {} ({}), until {} at the latest: {}. Items held back: {}.</p>{}</div>",
            esc(&restock_core::rfc3339(pause.since)),
            esc(&ago(now, pause.since)),
            esc(&restock_core::rfc3339(pause.until)),
            esc(&pause.reason),
            esc(&pause
                .skus
                .iter()
                .map(Sku::as_str)
                .collect::<Vec<_>>()
                .join(", ")),
            d.action("/resume", &[], "Resume sending"),
        );
    }
    for row in rows.iter().filter(|r| r.paused) {
        html += &format!(
            "<div class=\"banner\" role=\"alert\"><p><b>{}</b>: a restock waits for the team's review; nothing is offered until it is released, or rejected as a level not to believe.</p>{}{}</div>",
            esc(row.sku.as_str()),
            d.action(
                "/release",
                &[("sku", row.sku.as_str())],
                &format!("Release {}", row.sku)
            ),
            d.action(
                "/reject",
                &[("sku", row.sku.as_str())],
                &format!("Reject {}", row.sku)
            ),
        );
    }
    html += if wanted {
        "<h1>Most wanted while sold out</h1><p class=\"muted\">Sold-out items, most people waiting first: what a restock would earn most from.</p>"
    } else {
        "<h1>Items</h1>"
    };
    html += "<div class=\"scroll\"><table><thead><tr>";
    for (key, heading) in COLUMNS {
        html += &format!(
            "<th scope=\"col\"><a href=\"{}?sort={key}\">{heading}</a></th>",
            esc(&d.home())
        );
    }
    html += "</tr></thead><tbody>";
    for r in &rows {
        let out = match (r.in_stock, r.out_since) {
            (true, _) => "in stock".to_owned(),
            (false, Some(t)) => ago(now, t),
            (false, None) => "-".to_owned(),
        };
        html += &format!(
            "<tr><td><a href=\"{}/items/{}\">{}</a><br><span class=\"muted\">{}</span></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&d.base),
            esc(r.sku.as_str()),
            esc(r.sku.as_str()),
            esc(&r.name),
            r.waiting,
            r.unconfirmed,
            r.offered,
            r.held,
            r.bought,
            r.lapsed,
            percent(r.claim()),
            percent(r.conversion()),
            esc(&restock_core::money::totals(&r.revenue)),
            esc(&out),
        );
    }
    if rows.is_empty() {
        html += "<tr><td colspan=\"11\" class=\"muted\">No items yet: restock catalogue import FILE.csv adds them.</td></tr>";
    }
    html += "</tbody></table></div><p class=\"muted\">Waiting: confirmed and in line. To confirm: signed up, the confirmation link not followed yet. Claim rate: offers clicked among offers decided. Conversion: bought among told. Revenue: the unit price of each hold bought, per currency, where the order said. Sold out for: since the newest stock report.</p>";
    html += &mail_html(d, now).await?;
    html += "<h2>Actions</h2><div class=\"actions\">";
    html += &d.action("/reconcile", &[], "Reconcile every item");
    html += &d.action("/export", &[("kind", "requests")], "Export requests (CSV)");
    html += &d.action(
        "/export",
        &[("kind", "days")],
        "Export per-day figures (CSV)",
    );
    html += &format!(
        "<form method=\"post\" action=\"{}\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
         <label>Forget a contact (erases their requests, keeps their opt-out)<br>\
         <input type=\"text\" name=\"contact\" placeholder=\"email or +phone\" autocomplete=\"off\" required></label> \
         <button type=\"submit\">Forget</button></form>",
        esc(&d.path("/forget")),
        d.csrf
    );
    html += "</div>";
    Ok(html)
}

/// Today's mail and SMS figures against SES's review thresholds.
async fn mail_html(d: &Dashboard, now: Millis) -> Result<String, AdminError> {
    let day = restock_core::feedback::day_of(now);
    let mail = d.admin.store.mail_day(&day).await?;
    let rate = |r: Option<f64>, review: f64| match r {
        None => "-".to_owned(),
        Some(r) if r >= review => format!("<span class=\"warn\">{:.2}%</span>", r * 100.0),
        Some(r) => format!("<span class=\"ok\">{:.2}%</span>", r * 100.0),
    };
    Ok(format!(
        "<h2>Sending today ({day}, UTC)</h2><div class=\"cards\">\
         <div class=\"card\">Sent<b>{}</b>{} emails, {} texts</div>\
         <div class=\"card\">Bounce rate<b>{}</b><span class=\"muted\">of emails; SES reviews at 5%</span></div>\
         <div class=\"card\">Complaint rate<b>{}</b><span class=\"muted\">of emails; SES reviews at 0.1%</span></div>\
         <div class=\"card\">Confirmations sent<b>{}</b></div>\
         <div class=\"card\">Confirmed<b>{}</b></div>\
         <div class=\"card\">Ran out unconfirmed<b>{}</b></div></div>",
        mail.sent,
        mail.emails_sent(),
        mail.texts_sent,
        rate(mail.bounce_rate(), 0.05),
        rate(mail.complaint_rate(), 0.001),
        mail.confirm_sent,
        mail.confirmed,
        mail.confirm_expired,
    ))
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
fn chart(title: &str, values: &[u64], colour: &str) -> String {
    let max = values.iter().copied().max().unwrap_or(0).max(1);
    let total: u64 = values.iter().sum();
    let (w, h) = (10 * values.len(), 60);
    let bars: String = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let bh = (*v as f64 / max as f64 * f64::from(h - 4)).round() as u32;
            format!(
                "<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"{bh}\" fill=\"{colour}\"><title>{v}</title></rect>",
                i * 10 + 1,
                h as u32 - bh
            )
        })
        .collect();
    format!(
        "<figure style=\"margin:0\"><figcaption>{} — {total} in {} days, at most {} a day</figcaption>\
         <svg viewBox=\"0 0 {w} {h}\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}: {total} in {} days\">{bars}</svg></figure>",
        esc(title),
        values.len(),
        values.iter().max().unwrap_or(&0),
        esc(title),
        values.len(),
    )
}

async fn item(State(d): Shared, Path(sku): Path<String>) -> Response {
    let Ok(sku) = Sku::try_from(sku.as_str()) else {
        return failed(&d, &AdminError::Invalid(format!("`{sku}` is not a SKU")));
    };
    match item_html(&d, &sku).await {
        Ok(body) => page(&d, StatusCode::OK, sku.as_str(), &body),
        Err(e) => failed(&d, &e),
    }
}

async fn item_html(d: &Dashboard, sku: &Sku) -> Result<String, AdminError> {
    let now = d.clock.now_ms();
    let entry = d.admin.entry(sku).await?;
    let snapshot = d.admin.store.snapshot(sku).await?;
    let row = row(d, entry.clone()).await?;
    let mut html = format!(
        "<h1>{}</h1><p class=\"muted\">{}</p>",
        esc(sku.as_str()),
        esc(&entry.name)
    );
    if let Some(pause) = &entry.paused {
        html += &format!(
            "<div class=\"banner\" role=\"alert\"><p><b>Notices paused</b> {} ago: {}. Sign-ups and places are kept; offers already sent stay good.</p>{}</div>",
            ago(now, pause.since_ms),
            esc(&pause.reason),
            d.action("/resume", &[("sku", sku.as_str())], "Resume notices")
        );
    }
    if let Some(ended) = entry.ended {
        html += &format!(
            "<div class=\"banner\" role=\"status\"><p><b>Ended</b> {} ago: the platform no longer lists it, so it takes no sign-ups and nobody waiting is told. Listing it again on the platform and running <code>restock catalogue sync</code> carries on with its queue.</p></div>",
            ago(now, ended)
        );
    }
    if snapshot.stock.paused {
        html += &format!(
            "<div class=\"banner\" role=\"alert\"><p>A restock waits for the team's review: nothing is offered until it is released, or rejected as a level not to believe.</p>{}{}</div>",
            d.action("/release", &[("sku", sku.as_str())], "Release"),
            d.action("/reject", &[("sku", sku.as_str())], "Reject")
        );
    }
    let ([sign_ups, told, bought], restocks) = history(d, sku, now).await?;
    let stock = if snapshot.stock.in_stock {
        "in stock".to_owned()
    } else {
        row.out_since.map_or("sold out".to_owned(), |t| {
            format!("sold out for {}", ago(now, t))
        })
    };
    html += &format!(
        "<div class=\"cards\"><div class=\"card\">Level<b>{}</b>{}</div><div class=\"card\">Restocks<b>{}</b></div>\
         <div class=\"card\">Waiting<b>{}</b>and {} to confirm</div><div class=\"card\">Offered<b>{}</b></div>\
         <div class=\"card\">Held<b>{}</b></div><div class=\"card\">Bought<b>{}</b></div><div class=\"card\">Lapsed<b>{}</b></div>\
         <div class=\"card\">Claim rate<b>{}</b></div><div class=\"card\">Conversion<b>{}</b></div><div class=\"card\">Revenue<b>{}</b></div></div>",
        snapshot.stock.level(),
        esc(&stock),
        snapshot.stock.episode,
        row.waiting,
        row.unconfirmed,
        row.offered,
        row.held,
        row.bought,
        row.lapsed,
        percent(row.claim()),
        percent(row.conversion()),
        esc(&restock_core::money::totals(&row.revenue)),
    );
    html += &format!(
        "<h2>The last {CHART_DAYS} days (UTC)</h2>{}{}{}",
        chart("Sign-ups", &sign_ups, "#3b5bdb"),
        chart("Notices", &told, "#d4a106"),
        chart("Purchases", &bought, "#1d6b2f"),
    );
    html += &restocks_html(&restocks);
    let head = d.admin.store.queue(sku, entry.shards, HEAD).await?;
    html += "<h2>Next in line</h2><div class=\"scroll\"><table><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Contact</th><th scope=\"col\">Joined</th><th scope=\"col\">Status</th><th scope=\"col\">Language</th></tr></thead><tbody>";
    for (i, r) in head.iter().enumerate() {
        html += &format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            esc(&r.contact.masked()),
            esc(&restock_core::rfc3339(r.key.joined_ms)),
            esc(r.state.status().as_str()),
            esc(&r
                .language
                .as_ref()
                .map_or("default".into(), ToString::to_string)),
        );
    }
    if head.is_empty() {
        html += "<tr><td colspan=\"5\" class=\"muted\">Nobody is waiting.</td></tr>";
    }
    html += "</tbody></table></div><h2>Actions</h2><div class=\"actions\">";
    html += &d.action("/reconcile", &[("sku", sku.as_str())], "Reconcile");
    html += &d.action(
        "/export",
        &[("kind", "requests"), ("sku", sku.as_str())],
        "Export its requests (CSV)",
    );
    if entry.paused.is_none() {
        html += &format!(
            "<form method=\"post\" action=\"{}\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <input type=\"hidden\" name=\"sku\" value=\"{}\">\
             <label>Pause its notices (sign-ups and places are kept)<br>\
             <input type=\"text\" name=\"reason\" placeholder=\"why: a recall, a wrong price\" maxlength=\"200\" autocomplete=\"off\" required></label> \
             <button type=\"submit\">Pause</button></form>",
            esc(&d.path("/pause")),
            d.csrf,
            esc(sku.as_str())
        );
    }
    html += "</div>";
    Ok(html)
}

/// The restocks, newest first, and what each turned into.
fn restocks_html(restocks: &BTreeMap<u32, RestockFigures>) -> String {
    let mut html = "<h2>Restocks</h2><p class=\"muted\">Each notice, click, purchase and expiry counted once, in the restock whose unit it was.</p>\
        <div class=\"scroll\"><table><thead><tr><th scope=\"col\">Restock</th><th scope=\"col\">First notice</th><th scope=\"col\">Told</th>\
        <th scope=\"col\">Held</th><th scope=\"col\">Bought</th><th scope=\"col\">Offers lapsed</th><th scope=\"col\">Holds run out</th>\
        <th scope=\"col\">Claim rate</th><th scope=\"col\">Conversion</th></tr></thead><tbody>"
        .to_owned();
    for (episode, r) in restocks.iter().rev() {
        let rate = |n: u64| (r.told > 0).then(|| n as f64 / r.told as f64);
        html += &format!(
            "<tr><td>#{episode}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.first_told.map_or(String::new(), restock_core::rfc3339)),
            r.told,
            r.held,
            r.bought,
            r.lapsed,
            r.released,
            percent(rate(r.held)),
            percent(rate(r.bought)),
        );
    }
    if restocks.is_empty() {
        html += "<tr><td colspan=\"9\" class=\"muted\">Nobody has been told yet.</td></tr>";
    }
    html + "</tbody></table></div>"
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
        Ok(output) => page(d, StatusCode::OK, "Done", &done_html(d, &output)),
        Err(e) => failed(d, &e),
    }
}

fn done_html(d: &Dashboard, output: &Output) -> String {
    let mut html = format!(
        "<h1>Done</h1><pre role=\"status\">{}</pre>",
        esc(&output.message)
    );
    if !output.rows.is_empty() {
        html += "<div class=\"scroll\"><table><thead><tr>";
        for c in &output.columns {
            html += &format!("<th scope=\"col\">{}</th>", esc(c));
        }
        html += "</tr></thead><tbody>";
        for row in &output.rows {
            html += "<tr>";
            for cell in row {
                html += &format!("<td>{}</td>", esc(cell));
            }
            html += "</tr>";
        }
        html += "</tbody></table></div>";
    }
    html + &format!(
        "<p><a href=\"{}\">Back to the dashboard</a></p>",
        esc(&d.home())
    )
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

/// The export as a download, written a page at a time as the browser reads
/// it (`Command::ExportPage`, contacts masked): one page in memory.
async fn export_csv(State(d): Shared, headers: HeaderMap, Form(f): Form<ActionForm>) -> Response {
    if let Some(why) = forged(&d, &headers, &f.csrf) {
        return plain(StatusCode::FORBIDDEN, why);
    }
    let kind = if f.kind == "days" {
        Kind::Days
    } else {
        Kind::Requests
    };
    let skus = match f.skus() {
        Ok(skus) => skus,
        Err(e) => return failed(&d, &e),
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
        let svg = chart("Sign-ups", &[0, 2, 4], "#000");
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
