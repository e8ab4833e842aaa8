//! Settings and the catalogue. Each entry is kept twice in one transaction —
//! under its SKU for lookups and in one listing partition, so the whole
//! catalogue is a single Query — with an item per platform id that maps a
//! webhook's reference to the SKU.

use async_trait::async_trait;
use restock_core::webhook::ItemRef;
use restock_core::{CatalogueEntry, Platform, Settings, Sku};
use restock_store::port::Result;
use restock_store::{CatalogueStore, StoreError};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::tx::{Outcome, PutIf};

/// The item mapped to a platform's id. Shopify's and WooCommerce's keep the
/// prefixes they were first written with.
fn platform_pk(platform: Platform, id: u64) -> String {
    match platform {
        Platform::Shopify => format!("SHOPIFY#{id}"),
        Platform::WooCommerce => format!("WOO#{id}"),
        other => format!("ID#{}#{id}", other.name()),
    }
}

pub(crate) fn read_entry(item: &Item) -> Result<CatalogueEntry> {
    serde_json::from_str(get_s(item, ENTRY)?).map_err(|e| corrupt(item, e))
}

#[async_trait]
impl CatalogueStore for DynamoStore {
    async fn put_settings(&self, settings: &Settings) -> Result<()> {
        let mut item = key("SETTINGS", ONE_SK);
        item.insert(DOC.into(), s(settings.to_toml()));
        self.put_item(item).await
    }

    async fn settings(&self) -> Result<Option<Settings>> {
        let Some(item) = self.get("SETTINGS".into(), ONE_SK).await? else {
            return Ok(None);
        };
        Settings::from_toml(get_s(&item, DOC)?)
            .map(Some)
            .map_err(|e| corrupt(&item, e))
    }

    async fn put_catalogue_entry(&self, entry: &CatalogueEntry) -> Result<()> {
        let old = self.catalogue_entry(&entry.sku).await?;
        if let Some(old) = &old
            && entry.shards < old.shards
        {
            return Err(StoreError::shards_lowered(
                &entry.sku,
                old.shards,
                entry.shards,
            ));
        }
        let ent = s(serde_json::to_string(entry).expect("catalogue entries serialise"));
        let mut item = key(sku_pk(&entry.sku), CATALOGUE_SK);
        item.insert(ENTRY.into(), ent.clone());
        let mut listed = key(CATALOGUE_PK.to_owned(), entry.sku.as_str());
        listed.insert(ENTRY.into(), ent);
        let mut tx = self.tx();
        tx.put("entry", item, PutIf::Always)?;
        tx.put("listing", listed, PutIf::Always)?;
        let mapping = |pk: String| {
            let mut m = key(pk, ONE_SK);
            m.insert(SKU.into(), s(entry.sku.as_str()));
            m
        };
        for (platform, id) in old.iter().flat_map(|o| o.ids.iter()) {
            if entry.ids.get(platform) != Some(id) {
                tx.delete("old platform id", key(platform_pk(platform, id), ONE_SK))?;
            }
        }
        for (platform, id) in entry.ids.iter() {
            tx.put(
                "platform id",
                mapping(platform_pk(platform, id)),
                PutIf::Always,
            )?;
        }
        match self.transact(tx).await? {
            Outcome::Done => Ok(()),
            Outcome::Cancelled(_) => Err(StoreError::Contention(sku_pk(&entry.sku))),
        }
    }

    async fn catalogue(&self) -> Result<Vec<CatalogueEntry>> {
        self.partition(CATALOGUE_PK.into())
            .await?
            .iter()
            .map(read_entry)
            .collect()
    }

    async fn catalogue_entry(&self, sku: &Sku) -> Result<Option<CatalogueEntry>> {
        self.get(sku_pk(sku), CATALOGUE_SK)
            .await?
            .as_ref()
            .map(read_entry)
            .transpose()
    }

    async fn resolve_item(&self, item: &ItemRef) -> Result<Option<CatalogueEntry>> {
        let mapped = |pk: String| async move {
            match self.get(pk, ONE_SK).await? {
                Some(m) => Ok::<_, StoreError>(Some(
                    Sku::try_from(get_s(&m, SKU)?).map_err(|e| corrupt(&m, e))?,
                )),
                None => Ok(None),
            }
        };
        let sku = match item {
            ItemRef::Sku { sku } => Some(sku.clone()),
            ItemRef::Platform { platform, id, sku } => {
                if let Some(sku) = sku
                    && let Some(entry) = self.catalogue_entry(sku).await?
                {
                    return Ok(Some(entry));
                }
                mapped(platform_pk(*platform, *id)).await?
            }
        };
        match sku {
            Some(sku) => self.catalogue_entry(&sku).await,
            None => Ok(None),
        }
    }
}
