//! The stock pull (every 15 minutes, on its own schedule): for each
//! catalogued item with someone waiting, restock reads the level from the
//! shop platform's Admin API and feeds it through the same decision as a
//! webhook (threshold crossing, newest wins, escalation), so a restock whose
//! webhook never came is still seen. Then the silence check: a platform that
//! used to deliver stock webhooks and has been quiet for longer than
//! `webhook_silence` while people wait on its items is reported, once per
//! silence.

use restock_core::webhook::ItemRef;
use restock_core::{CatalogueEntry, Millis, Platform, StockEvent, StockOutcome};
use serde::Serialize;
use time::OffsetDateTime;

use crate::ports::{PlatformError, PulledLevel, Secrets};
use crate::{AppError, Services, alerts, detect};

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
        match pull_one(s, &settings, &keys, entry, now).await? {
            Pulled::NotPullable => report.not_pullable += 1,
            Pulled::Failed(_) => report.failed += 1,
            Pulled::Read {
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

/// What asking the platform for one item's level came to.
#[derive(Debug)]
pub(crate) enum Pulled {
    /// The item names no platform whose API access is in the keys secret.
    NotPullable,
    /// The platform could not be read (logged; the next pull tries again).
    Failed(PlatformError),
    /// Read and applied like a webhook.
    Read {
        /// The platform asked.
        platform: Platform,
        /// The level differed from the last one known.
        differed: bool,
        /// A restock no webhook had reported, at this level.
        restocked: Option<u32>,
    },
}

/// Asks the item's platform for its level now and feeds each location's
/// reading through the same decision as a webhook (taken now, so it is the
/// newest): the scheduled pull, and how a tie between readings is settled.
///
/// # Errors
/// Store failures; a platform that cannot be read is [`Pulled::Failed`].
pub(crate) async fn pull_one(
    s: &Services,
    settings: &restock_core::Settings,
    keys: &Secrets,
    entry: &CatalogueEntry,
    now: Millis,
) -> Result<Pulled, AppError> {
    let Some((platform, read)) = read_levels(s, keys, entry).await else {
        return Ok(Pulled::NotPullable);
    };
    let levels = match read {
        Ok(levels) => levels,
        Err(e) => {
            tracing::warn!(sku = %entry.sku, %platform, error = %e, "stock pull: level not read");
            return Ok(Pulled::Failed(e));
        }
    };
    let before = s.store.snapshot(&entry.sku).await?.stock.level();
    let mut restocked = None;
    for PulledLevel { location, level } in levels {
        let event = StockEvent {
            delivery_id: format!("pull:{platform}:{}:{location}:{now}", entry.sku),
            item: ItemRef::Sku {
                sku: entry.sku.clone(),
            },
            location,
            level,
            at: at(now),
            untimed: false,
        };
        let applied = detect::apply_one(s, settings, "pull", entry, &event, now).await?;
        if let Some(StockOutcome::Restock { level, .. }) = applied.outcome() {
            restocked = Some(*level);
        }
    }
    let after = s.store.snapshot(&entry.sku).await?.stock.level();
    if after != before {
        tracing::warn!(sku = %entry.sku, %platform, ?before, ?after, "stock pull: the platform's level differs from the last one known");
    }
    Ok(Pulled::Read {
        platform,
        differed: after != before,
        restocked,
    })
}

/// The item's platform and its levels there, or `None` when the item names
/// no platform whose API access is in the keys secret.
async fn read_levels(
    s: &Services,
    keys: &Secrets,
    entry: &CatalogueEntry,
) -> Option<(Platform, Result<Vec<PulledLevel>, PlatformError>)> {
    let (platform, id, access) = entry
        .ids
        .iter()
        .find_map(|(p, id)| Some((p, id, keys.platform_api.get(&p)?)))?;
    Some((platform, s.platforms.levels(platform, access, id).await))
}

/// Reports each source that used to deliver and has been quiet longer than
/// `webhook_silence` while people wait on its items (once per silence).
async fn check_silence(
    s: &Services,
    settings: &restock_core::Settings,
    waiting_on: &[CatalogueEntry],
    now: Millis,
    report: &mut PullReport,
) -> Result<(), AppError> {
    let limit = settings.webhook_silence.as_millis();
    for heard in s.store.heard_from().await? {
        if now - heard.last <= limit {
            continue;
        }
        let items = waiting_on
            .iter()
            .filter(|e| match Platform::from_name(&heard.source) {
                // A platform that names items by id delivers for the items that have one.
                Some(p) if p.id_column().is_some() => e.ids.get(p).is_some(),
                _ => true,
            })
            .count();
        if items == 0 {
            continue;
        }
        if s.store
            .claim_silence_alert(&heard.source, heard.last, now)
            .await?
        {
            // Whole hours (or minutes, under an hour), as a person says it.
            let secs = ((now - heard.last) / 1000) as u64;
            let unit = if secs >= 3_600 { 3_600 } else { 60 };
            let silent_for = restock_core::Window::from_secs(secs / unit * unit);
            tracing::warn!(source = %heard.source, %silent_for, items, "stock webhooks silent");
            s.alert(alerts::webhook_silence(
                &heard.source,
                &silent_for.to_string(),
                items,
            ))
            .await;
            report.silent.push(heard.source);
        }
    }
    Ok(())
}

fn at(now: Millis) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(now) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}
