//! Settings and the catalogue: plain maps, with the platform id mappings kept beside the entries.

use async_trait::async_trait;

use crate::*;

#[async_trait]
impl CatalogueStore for MemoryStore {
    async fn put_settings(&self, settings: &Settings) -> Result<()> {
        self.lock().settings = Some(settings.clone());
        Ok(())
    }
    async fn settings(&self) -> Result<Option<Settings>> {
        Ok(self.lock().settings.clone())
    }
    async fn put_catalogue_entry(&self, entry: &CatalogueEntry) -> Result<()> {
        let mut s = self.lock();
        if let Some(old) = s.catalogue.get(&entry.sku)
            && entry.shards < old.shards
        {
            return Err(crate::StoreError::shards_lowered(
                &entry.sku,
                old.shards,
                entry.shards,
            ));
        }
        if let Some(old) = s.catalogue.get(&entry.sku).cloned() {
            for id in old.ids.iter() {
                s.platform_ids.remove(&id);
            }
        }
        for id in entry.ids.iter() {
            s.platform_ids.insert(id, entry.sku.clone());
        }
        s.catalogue.insert(entry.sku.clone(), entry.clone());
        Ok(())
    }
    async fn catalogue(&self) -> Result<Vec<CatalogueEntry>> {
        Ok(self.lock().catalogue.values().cloned().collect())
    }
    async fn catalogue_entry(&self, sku: &Sku) -> Result<Option<CatalogueEntry>> {
        Ok(self.lock().catalogue.get(sku).cloned())
    }
    async fn resolve_item(&self, item: &ItemRef) -> Result<Option<CatalogueEntry>> {
        let s = self.lock();
        let sku = match item {
            ItemRef::Sku { sku } => Some(sku.clone()),
            ItemRef::Platform { platform, id, sku } => match sku {
                Some(sku) if s.catalogue.contains_key(sku) => Some(sku.clone()),
                _ => s.platform_ids.get(&(*platform, *id)).cloned(),
            },
        };
        Ok(sku.and_then(|sku| s.catalogue.get(&sku).cloned()))
    }
}
