//! A platform's listing merged into the stack's catalogue: saved, held
//! items and ended ones told to the team, items listed again woken.

use restock_app::admin::{Admin, Command};
use restock_app::ports::Alerts;
use restock_core::catalogue::{Change, Held, Merge, merge_listed};
use restock_core::{CatalogueEntry, Platform};
use restock_store::{CatalogueStore, DetectStore, FiguresStore, NotifyStore};
use restock_store_dynamo::DynamoStore;

use super::error::{on_store, said};
use super::{ConnectError, Stack};

/// Merges what `platform` lists into the stack's catalogue (unless
/// `dry_run`), checked as any import is, and answers the changes. Items it
/// no longer lists are ended (`merge_listed`), and the team is told once
/// through `alerts`, with how many were waiting on each; an item listed
/// again is woken, so units already back go to its queue.
pub(super) async fn catalogue(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    platform: Platform,
    listed: Vec<CatalogueEntry>,
    dry_run: bool,
    alerts: &dyn Alerts,
) -> Result<Merge, ConnectError> {
    let store = std::sync::Arc::new(DynamoStore::new(
        aws_sdk_dynamodb::Client::new(sdk),
        &stack.table,
    ));
    let existing: Vec<CatalogueEntry> = store
        .catalogue()
        .await
        .map_err(on_store("reading the catalogue"))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as restock_core::Millis);
    let merge = merge_listed(&existing, platform, listed, now);
    if dry_run {
        return Ok(merge);
    }
    if !merge.held.is_empty() {
        let held = held_lines(&merge.held, platform);
        alerts
            .alert(&restock_app::alerts::items_held(platform.label(), &held))
            .await
            .map_err(|e| said("telling the team")(e.to_string()))?;
    }
    let changes = &merge.changes;
    let admin = Admin {
        store: store.clone(),
        pepper: None,
    };
    let entries: Vec<CatalogueEntry> = changes.iter().map(|c| c.entry().clone()).collect();
    for chunk in entries.chunks(25) {
        admin
            .run(
                Command::CataloguePut {
                    entries: chunk.to_vec(),
                },
                0,
            )
            .await
            .map_err(|e| ConnectError {
                message: format!("saving the catalogue: {e}"),
                kind: e.kind(),
            })?;
    }
    let ended = ended_and_relisted(&store, changes, now).await?;
    if !ended.is_empty() {
        alerts
            .alert(&restock_app::alerts::items_ended(platform.label(), &ended))
            .await
            .map_err(|e| said("telling the team")(e.to_string()))?;
    }
    Ok(merge)
}

/// The held items' lines, each with what to do.
pub(super) fn held_lines(held: &[Held], platform: Platform) -> Vec<String> {
    held.iter().map(|h| h.describe(platform)).collect()
}

/// After saving: each item ended, with how many wait on it; each ended
/// item listed again woken, so units already back go to its queue.
async fn ended_and_relisted(
    store: &DynamoStore,
    changes: &[Change],
    now: restock_core::Millis,
) -> Result<Vec<(CatalogueEntry, u32)>, ConnectError> {
    let store_failed = on_store("the table");
    let mut ended = Vec::new();
    for change in changes {
        match change {
            Change::Ended(entry) => {
                let waiting = store
                    .counts(&entry.sku, entry.shards)
                    .await
                    .map_err(&store_failed)?;
                ended.push((entry.clone(), waiting.waiting));
            }
            Change::Changed { was, now: entry } if was.ended.is_some() => {
                let episode = store
                    .snapshot(&entry.sku)
                    .await
                    .map_err(&store_failed)?
                    .stock
                    .episode;
                store
                    .wake_again(&entry.sku, episode, now)
                    .await
                    .map_err(&store_failed)?;
            }
            _ => {}
        }
    }
    Ok(ended)
}
