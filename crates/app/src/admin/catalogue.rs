//! The operator's documents: the settings (shown, replaced) and the
//! catalogue (entries put, listed, one item shown with its figures).

use restock_core::{CatalogueEntry, Settings, Sku};
use serde_json::json;

use super::{Admin, AdminError, Output};

impl Admin {
    /// The settings document, as TOML.
    pub(super) async fn settings_show(&self) -> Result<Output, AdminError> {
        let Some(settings) = self.store.settings().await? else {
            return Err(AdminError::NotFound(
                "no settings yet: restock settings put FILE.toml (examples/settings.toml is a start)"
                    .into(),
            ));
        };
        Ok(Output::message(
            settings.to_toml(),
            serde_json::to_value(&settings).unwrap_or_default(),
        ))
    }

    /// Validates and stores a settings document.
    pub(super) async fn settings_put(&self, toml: String) -> Result<Output, AdminError> {
        let settings =
            Settings::from_toml(&toml).map_err(|e| AdminError::Invalid(e.to_string()))?;
        self.store.put_settings(&settings).await?;
        Ok(Output::message(
            format!(
                "settings saved for {} (the functions pick them up within 30 s)",
                settings.store_name
            ),
            json!({ "saved": true }),
        ))
    }

    /// Adds or replaces catalogue entries.
    pub(super) async fn catalogue_put(
        &self,
        entries: Vec<CatalogueEntry>,
    ) -> Result<Output, AdminError> {
        // Checked as the CSV import checks them, however they came: none
        // is saved unless all are good.
        restock_core::catalogue::check_entries(&entries)
            .map_err(|e| AdminError::Invalid(e.to_string()))?;
        for entry in &entries {
            let old = self.store.catalogue_entry(&entry.sku).await?;
            // A team's pause outlives an import (lifting it is `resume`).
            let mut entry = entry.clone();
            if entry.paused.is_none() {
                entry.paused = old.as_ref().and_then(|old| old.paused.clone());
            }
            self.store.put_catalogue_entry(&entry).await?;
            // A launch moved is followed at once: the item is woken at the
            // new time (an earlier one replaces the wake asked for; a later
            // one finds the item not launched yet and asks again).
            if let Some(at) = entry.launch_at
                && old.and_then(|old| old.launch_at) != Some(at)
            {
                self.store.wake_at(&entry.sku, at).await?;
            }
        }
        Ok(Output::message(
            format!("{} catalogue entries saved", entries.len()),
            json!({ "saved": entries.len() }),
        ))
    }

    /// Every catalogue entry.
    pub(super) async fn catalogue_list(&self) -> Result<Output, AdminError> {
        let entries = self.store.catalogue().await?;
        let rows = entries
            .iter()
            .map(|e| {
                vec![
                    e.sku.to_string(),
                    e.name.clone(),
                    e.threshold.map_or("default".into(), |t| t.to_string()),
                    e.shards.to_string(),
                ]
            })
            .collect();
        Ok(Output::table(
            format!("{} entries", entries.len()),
            &["sku", "name", "threshold", "shards"],
            rows,
            serde_json::to_value(&entries).unwrap_or_default(),
        ))
    }

    /// One entry, with its stock and counters.
    pub(super) async fn catalogue_show(&self, sku: Sku) -> Result<Output, AdminError> {
        let entry = self.entry(&sku).await?;
        let snapshot = self.store.snapshot(&sku).await?;
        let level = snapshot.stock.level();
        let mut rows = entry_rows(&entry);
        rows.extend([
            vec!["queue shards".into(), entry.shards.to_string()],
            vec!["level".into(), level.to_string()],
            vec!["in stock".into(), snapshot.stock.in_stock.to_string()],
            vec!["restocks".into(), snapshot.stock.episode.to_string()],
            vec![
                "paused for the team".into(),
                snapshot.stock.paused.to_string(),
            ],
            vec![
                "offered / held / bought".into(),
                format!(
                    "{} / {} / {}",
                    snapshot.counters.offered, snapshot.counters.held, snapshot.bought
                ),
            ],
        ]);
        Ok(Output::table(
            "",
            &["field", "value"],
            rows,
            json!({ "entry": entry, "stock": snapshot.stock, "counters": snapshot.counters, "bought": snapshot.bought }),
        ))
    }
}

/// An entry's own fields, as `catalogue show` lists them.
fn entry_rows(entry: &CatalogueEntry) -> Vec<Vec<String>> {
    let mut rows = vec![
        vec!["sku".into(), entry.sku.to_string()],
        vec!["name".into(), entry.name.clone()],
        vec![
            "product url".into(),
            entry
                .product_url
                .as_ref()
                .map_or(String::new(), ToString::to_string),
        ],
        vec![
            "checkout url".into(),
            entry.checkout_url.clone().unwrap_or_default(),
        ],
        vec![
            "threshold".into(),
            entry.threshold.map_or("default".into(), |t| t.to_string()),
        ],
    ];
    for platform in restock_core::Platform::ALL
        .into_iter()
        .filter(|p| p.id_column().is_some())
    {
        let id = entry
            .ids
            .get(platform)
            .map_or(String::new(), |i| i.to_string());
        rows.push(vec![format!("{platform} {}", platform.id_noun()), id]);
    }
    rows.extend([
        vec![
            "notices".into(),
            entry.paused.as_ref().map_or("on".into(), |p| {
                format!(
                    "paused by the team since {}: {}",
                    restock_core::rfc3339(p.since_ms),
                    p.reason
                )
            }),
        ],
        vec![
            "ended".into(),
            entry.ended.map_or("no: listed".into(), |at| {
                format!(
                    "since {}: no longer listed, takes no sign-ups, tells nobody",
                    restock_core::rfc3339(at)
                )
            }),
        ],
        vec![
            "launch".into(),
            entry.launch_at.map_or("none scheduled".into(), |at| {
                format!(
                    "{}: stock reported before it waits; the first wave goes at it",
                    restock_core::rfc3339(at)
                )
            }),
        ],
    ]);
    rows
}
