//! An item's stock level, whoever reports it: the one decision webhooks
//! and the stock pull share ([`apply_one`]), asking the platform for the
//! level now ([`pull_one`]: the scheduled pull, and how a tie is settled,
//! [`settle`]). detect and the pull both use this module and not each
//! other.

use restock_core::webhook::ItemRef;
use restock_core::{CatalogueEntry, Millis, Platform, StockEvent, StockOutcome};
use restock_store::ApplyOutcome;
use time::OffsetDateTime;

use crate::metrics::{self, Metric};
use crate::ports::{PlatformError, PulledLevel, Secrets};
use crate::{AppError, Services, alerts};

/// Applies one stock event for a catalogued item with its rules, and tells
/// the team when a restock is paused for review: the one decision webhooks
/// and the stock pull share.
pub(crate) async fn apply_one(
    s: &Services,
    settings: &restock_core::Settings,
    source: &str,
    entry: &restock_core::CatalogueEntry,
    event: &StockEvent,
    now: restock_core::Millis,
) -> Result<ApplyOutcome, AppError> {
    let rules = settings.rules(entry.threshold);
    let applied = s.store.apply_stock(&entry.sku, event, &rules, now).await?;
    if let ApplyOutcome::Applied { outcome, .. } = &applied {
        tracing::info!(source, sku = %entry.sku, ?outcome, "stock level applied");
        match outcome {
            StockOutcome::Restock { .. } => metrics::count(Metric::Restocks, 1),
            StockOutcome::Escalated { .. } => metrics::count(Metric::RestocksEscalated, 1),
            _ => {}
        }
        if let StockOutcome::Escalated {
            level,
            jump,
            reason,
            ..
        } = *outcome
        {
            let waiting = s.store.stats(&entry.sku, entry.shards).await?.waiting;
            s.alert(alerts::paused_restock(entry, level, jump, reason, waiting))
                .await;
        }
    }
    Ok(applied)
}

/// A tie the shop's timestamps cannot order (two readings, or a reading and
/// a sale, at the same instant with different levels): the lower level
/// stands meanwhile, and the platform is asked for the item's level now
/// through the stock pull's code path. An item with no platform API to ask
/// keeps the lower level until its next report.
pub(crate) async fn settle(s: &Services, sku: &restock_core::Sku) -> Result<(), AppError> {
    let Some(entry) = s.store.catalogue_entry(sku).await? else {
        return Ok(());
    };
    let settings = s.settings().await?;
    let keys = s.keyring.keys().await?;
    let now = s.clock.now_ms();
    match pull_one(s, &settings, &keys, &entry, now).await? {
        Pulled::Read { .. } => {
            tracing::info!(%sku, "a tie settled by asking the platform");
        }
        Pulled::NotPullable => {
            tracing::info!(%sku, "a tie with no platform API to ask: the lower level stands until the next report");
        }
        Pulled::Failed(e) => {
            tracing::warn!(%sku, error = %e, "a tie could not be settled now; the stock pull reads the item again");
        }
    }
    Ok(())
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
            crate::metrics::pull_failed(platform);
            return Ok(Pulled::Failed(e));
        }
    };
    let before = s.store.snapshot(&entry.sku).await?.stock.level();
    let mut restocked = None;
    let online = online_locations(s, settings, platform).await?;
    for PulledLevel { location, level } in levels {
        let level = sold_from(settings, &location, online.get(&location).copied(), level);
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
        let applied = apply_one(s, settings, "pull", entry, &event, now).await?;
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

/// A location's level as it counts toward the SKU's: none can be promised
/// from a location whose units cannot be bought from the reserve link (the
/// settings' `[locations]`: by default, one the platform says does not
/// fulfil online orders).
pub(crate) fn sold_from(
    settings: &restock_core::Settings,
    location: &str,
    online: Option<bool>,
    level: restock_core::Level,
) -> restock_core::Level {
    if settings.locations.counts(location, online) {
        level
    } else {
        restock_core::Level::Untracked
    }
}

/// Which of `platform`'s locations fulfil online orders, by id, where the
/// settings ask and the platform says; empty otherwise (every location
/// counts). A platform that cannot be read now is logged, and its
/// locations count until it can.
pub(crate) async fn online_locations(
    s: &Services,
    settings: &restock_core::Settings,
    platform: Platform,
) -> Result<std::collections::HashMap<String, bool>, AppError> {
    if !settings.locations.online_only {
        return Ok(std::collections::HashMap::new());
    }
    let keys = s.keyring.keys().await?;
    let Some(access) = keys.platform_api.get(&platform) else {
        return Ok(std::collections::HashMap::new());
    };
    match s.platforms.locations(platform, access).await {
        Ok(listed) => Ok(listed.into_iter().map(|l| (l.id, l.online)).collect()),
        Err(e) => {
            tracing::warn!(%platform, error = %e, "the shop's locations could not be read: every location counts until they can");
            Ok(std::collections::HashMap::new())
        }
    }
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

fn at(now: Millis) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(now) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}
