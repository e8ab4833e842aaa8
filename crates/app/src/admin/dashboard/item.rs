//! One item's page: 30 days of sign-ups, notices and purchases as inline SVG,
//! its restocks, the queue's head (masked) and the item's actions.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use restock_core::{Millis, Sku};
use restock_store::RestockFigures;

use super::super::AdminError;
use super::overview::ago;
use super::overview::percent;
use super::overview::row;
use super::{CHART_DAYS, DAY_MS, Dashboard, HEAD, Shared, failed, page};

/// An item's last [`CHART_DAYS`] days, oldest first: sign-ups, notices and
/// purchases a day; and its restocks, from the store's history of the item
/// (not the requests: its cost is the days and restocks, at any depth).
pub(super) async fn history(
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
pub(super) fn chart(title: &str, values: &[u64], colour: &str) -> Markup {
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

pub(super) async fn item(State(d): Shared, Path(sku): Path<String>) -> Response {
    let Ok(sku) = Sku::try_from(sku.as_str()) else {
        return failed(&d, &AdminError::Invalid(format!("`{sku}` is not a SKU")));
    };
    match item_html(&d, &sku).await {
        Ok(body) => page(&d, StatusCode::OK, sku.as_str(), body),
        Err(e) => failed(&d, &e),
    }
}

pub(super) async fn item_html(d: &Dashboard, sku: &Sku) -> Result<Markup, AdminError> {
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
        (banners_html(d, &entry, snapshot.stock.paused, now))
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
        (queue_head_html(d, &head))
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
pub(super) fn restocks_html(restocks: &BTreeMap<u32, RestockFigures>) -> Markup {
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

/// The banners for what stops the item's notices: the team's pause, the
/// item ended on the platform, a restock held back for review.
fn banners_html(
    d: &Dashboard,
    entry: &restock_core::CatalogueEntry,
    held_back: bool,
    now: Millis,
) -> Markup {
    let this = [("sku", entry.sku.as_str())];
    html! {
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
    @if held_back {
        div.banner role="alert" {
            p { "A restock waits for the team's review: nothing is offered until it is released, or rejected as a level not to believe." }
            (d.action("/release", &this, "Release"))
            (d.action("/reject", &this, "Reject"))
        }
    }
    }
}

/// The head of the item's line, masked, each linked to its story.
fn queue_head_html(d: &Dashboard, head: &[restock_store::Request]) -> Markup {
    html! {
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
    }
}
