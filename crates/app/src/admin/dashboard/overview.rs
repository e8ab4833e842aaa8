//! The overview: every item's figures, sortable, or the sold-out items most
//! waited for; the health banner and today's mail figures.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use restock_core::{Millis, Sku};
use serde::Deserialize;

use super::super::AdminError;
use super::{Dashboard, Shared, failed, page};
use crate::health::{Report, Severity};

/// One item's row on the overview.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) sku: Sku,
    pub(super) name: String,
    pub(super) waiting: u32,
    /// Sign-ups still to confirm: not in line yet.
    pub(super) unconfirmed: u32,
    pub(super) offered: u32,
    pub(super) held: u32,
    pub(super) bought: u32,
    pub(super) lapsed: u32,
    /// What bought holds brought in, per currency (thousandths).
    pub(super) revenue: BTreeMap<String, i64>,
    /// Orders without a hold by a contact told, and what they paid.
    pub(super) assisted: u32,
    pub(super) assisted_revenue: BTreeMap<String, i64>,
    pub(super) in_stock: bool,
    pub(super) paused: bool,
    /// The newest stock report, when the item is sold out.
    pub(super) out_since: Option<Millis>,
}

impl Row {
    /// Notices sent so far: live offers and every offer decided since.
    pub(super) fn told(&self) -> u32 {
        self.offered + self.held + self.bought + self.lapsed
    }

    /// Offers clicked (held or bought) among offers decided.
    pub(super) fn claim(&self) -> Option<f64> {
        let decided = self.held + self.bought + self.lapsed;
        (decided > 0).then(|| f64::from(self.held + self.bought) / f64::from(decided))
    }

    /// Bought among told.
    pub(super) fn conversion(&self) -> Option<f64> {
        (self.told() > 0).then(|| f64::from(self.bought) / f64::from(self.told()))
    }
}

pub(super) fn percent(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{:.0}%", r * 100.0))
}

/// "3 d 4 h", "12 min": how long ago `then` was.
pub(super) fn ago(now: Millis, then: Millis) -> String {
    let minutes = (now - then).max(0) / 60_000;
    match minutes {
        m if m < 60 => format!("{m} min"),
        m if m < 48 * 60 => format!("{} h {} min", m / 60, m % 60),
        m => format!("{} d {} h", m / (24 * 60), m / 60 % 24),
    }
}

pub(super) async fn rows(d: &Dashboard) -> Result<Vec<Row>, AdminError> {
    let mut rows = Vec::new();
    for entry in d.admin.store.catalogue().await? {
        rows.push(row(d, entry).await?);
    }
    Ok(rows)
}

/// One item's figures.
pub(super) async fn row(
    d: &Dashboard,
    entry: restock_core::CatalogueEntry,
) -> Result<Row, AdminError> {
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
pub(super) const COLUMNS: [(&str, &str); 12] = [
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
pub(super) fn sort(rows: &mut [Row], key: &str) {
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
pub(super) struct OverviewQuery {
    #[serde(default)]
    pub(super) sort: String,
    #[serde(default)]
    pub(super) view: String,
}

pub(super) async fn overview(State(d): Shared, Query(q): Query<OverviewQuery>) -> Response {
    match overview_html(&d, &q).await {
        Ok(body) => page(&d, StatusCode::OK, "Dashboard", body),
        Err(e) => failed(&d, &e),
    }
}

/// The banner for what the checks found that needs a person (nothing when
/// all is well): blocking findings first, each with its fix.
pub(super) fn health_html(report: &Report) -> Markup {
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

pub(super) async fn overview_html(d: &Dashboard, q: &OverviewQuery) -> Result<Markup, AdminError> {
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
        (items_table_html(d, &rows, now))
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
pub(super) async fn mail_html(d: &Dashboard, now: Millis) -> Result<Markup, AdminError> {
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

/// Every item's figures, a row each, the headings sorting by their column.
fn items_table_html(d: &Dashboard, rows: &[Row], now: Millis) -> Markup {
    let home = d.home();
    html! {
    div.scroll {
        table {
            thead { tr { @for (key, heading) in COLUMNS { th scope="col" { a href={ (home) "?sort=" (key) } { (heading) } } } } }
            tbody {
                @for r in rows {
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
    }
}
