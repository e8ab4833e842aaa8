//! The stock pull (every 15 minutes, on its own schedule): for each
//! catalogued item with someone waiting, restock reads the level from the
//! shop platform's Admin API and feeds it through the same decision as a
//! webhook (threshold crossing, newest wins, escalation), so a restock whose
//! webhook never came is still seen. Then the silence check: a platform that
//! used to deliver stock webhooks and has been quiet for longer than
//! `webhook_silence` while people wait on its items is reported, once per
//! silence.

use restock_core::{CatalogueEntry, Millis, Platform};
use serde::Serialize;

use crate::{AppError, Services, alerts, levels};

/// How long one pull keeps starting platform reads (the sweep function's
/// timeout is 50 s); items not reached are counted and read next time.
pub const BUDGET: std::time::Duration = std::time::Duration::from_secs(35);

/// What one pull did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct PullReport {
    /// Items with someone waiting whose level was read.
    pub pulled: usize,
    /// Items with someone waiting and no platform API to ask.
    pub not_pullable: usize,
    /// Reads that failed (logged; the next pull tries again).
    pub failed: usize,
    /// Pulled levels that differed from the last one known.
    pub differed: usize,
    /// Restocks the pull found that no webhook had reported.
    pub missed_restocks: usize,
    /// Items left unread because the pull ran out of time (each pull starts
    /// at a random item, so it is not always the same ones).
    pub deferred: usize,
    /// Sources whose silence was reported this time.
    pub silent: Vec<String>,
}

/// One pull and silence check at the clock's now.
///
/// # Errors
/// Store, settings or key failures (the schedule retries); a platform that
/// cannot be read is counted and logged, not an error.
pub async fn run(s: &Services) -> Result<PullReport, AppError> {
    let settings = s.settings().await?;
    let keys = s.keyring.keys().await?;
    let now = s.clock.now_ms();
    let mut report = PullReport::default();
    let mut waiting_on = Vec::new();
    for entry in s.store.catalogue().await? {
        if s.store.anyone_waiting(&entry.sku, entry.shards).await? {
            waiting_on.push(entry);
        }
    }
    // Start at a random item, so a pull cut short by its budget does not
    // always leave out the same ones.
    if !waiting_on.is_empty() {
        let start = u64::from_le_bytes(s.random()[..8].try_into().expect("8 bytes"));
        let by = (start % waiting_on.len() as u64) as usize;
        waiting_on.rotate_left(by);
    }
    let started = std::time::Instant::now();
    for (i, entry) in waiting_on.iter().enumerate() {
        if started.elapsed() > BUDGET {
            report.deferred = waiting_on.len() - i;
            tracing::warn!(
                left = report.deferred,
                "stock pull out of time; the rest are read next time"
            );
            break;
        }
        match levels::pull_one(s, &settings, &keys, entry, now).await? {
            levels::Pulled::NotPullable => report.not_pullable += 1,
            levels::Pulled::Failed(_) => report.failed += 1,
            levels::Pulled::Read {
                platform,
                differed,
                restocked,
            } => {
                report.pulled += 1;
                if differed {
                    report.differed += 1;
                }
                if let Some(level) = restocked {
                    report.missed_restocks += 1;
                    tracing::warn!(sku = %entry.sku, %platform, level, "stock pull found a restock no webhook reported");
                    s.alert(alerts::missed_restock(entry, platform, level))
                        .await;
                }
            }
        }
    }
    check_silence(s, &settings, &waiting_on, now, &mut report).await?;
    tracing::info!(?report, "stock pull");
    Ok(report)
}

/// The items among `waiting_on` whose stock `source` reports: a platform
/// that names items by id reports those that have one there; the generic
/// format may report any.
fn reported_by<'a>(
    source: &str,
    waiting_on: &'a [CatalogueEntry],
) -> impl Iterator<Item = &'a CatalogueEntry> {
    let platform = Platform::from_name(source);
    waiting_on.iter().filter(move |e| match platform {
        Some(p) if p.id_column().is_some() => e.ids.get(p).is_some(),
        _ => true,
    })
}

/// Whole hours (or minutes, under an hour), as a person says it.
fn said(ms: Millis) -> String {
    let secs = (ms / 1000).max(0) as u64;
    let unit = if secs >= 3_600 { 3_600 } else { 60 };
    restock_core::Window::from_secs(secs / unit * unit).to_string()
}

/// Reports each source that used to deliver and has been quiet longer than
/// `webhook_silence` while people wait on its items (once per silence), and
/// each platform that has never delivered while people have waited on its
/// items longer than that (weekly while it stays so).
async fn check_silence(
    s: &Services,
    settings: &restock_core::Settings,
    waiting_on: &[CatalogueEntry],
    now: Millis,
    report: &mut PullReport,
) -> Result<(), AppError> {
    let limit = settings.webhook_silence.as_millis();
    let heard_from = s.store.heard_from().await?;
    // A platform whose items the catalogue names by id: those items can
    // only be reported by it. (The generic format is wired by the shop
    // itself, for whichever items it likes.)
    for platform in Platform::ALL
        .into_iter()
        .filter(|p| p.id_column().is_some())
    {
        let source = platform.name();
        if heard_from.iter().any(|h| h.source == source) {
            continue;
        }
        // Since when people have waited on its items: the oldest in line.
        let (mut items, mut since) = (0, now);
        for entry in reported_by(source, waiting_on) {
            items += 1;
            if let Some(first) = s.store.queue(&entry.sku, entry.shards, 1).await?.first() {
                since = since.min(first.key.joined_ms);
            }
        }
        if items == 0 || now - since <= limit {
            continue;
        }
        const WEEK_MS: Millis = 7 * 24 * 60 * 60 * 1000;
        let this_week = s
            .store
            .rate_limit(&format!("never-delivered:{source}"), 1, WEEK_MS, now)
            .await?;
        if this_week == restock_store::RateDecision::Allowed {
            tracing::warn!(
                source,
                items,
                "stock webhooks never delivered while people wait"
            );
            s.alert(alerts::never_delivered(source, &said(now - since), items))
                .await;
            report.silent.push(source.to_owned());
        }
    }
    for heard in heard_from {
        if now - heard.last <= limit {
            continue;
        }
        let items = reported_by(&heard.source, waiting_on).count();
        if items == 0 {
            continue;
        }
        if s.store
            .claim_silence_alert(&heard.source, heard.last, now)
            .await?
        {
            let silent_for = said(now - heard.last);
            tracing::warn!(source = %heard.source, %silent_for, items, "stock webhooks silent");
            s.alert(alerts::webhook_silence(&heard.source, &silent_for, items))
                .await;
            report.silent.push(heard.source);
        }
    }
    Ok(())
}
