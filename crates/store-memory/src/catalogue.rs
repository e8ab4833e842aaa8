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
    async fn put_catalog_entry(&self, entry: &CatalogEntry) -> Result<()> {
        let mut s = self.lock();
        if let Some(old) = s.catalog.get(&entry.sku)
            && entry.shards < old.shards
        {
            return Err(crate::StoreError::shards_lowered(
                &entry.sku,
                old.shards,
                entry.shards,
            ));
        }
        if let Some(old) = s.catalog.get(&entry.sku).cloned() {
            if let Some(id) = old.shopify_inventory_item_id {
                s.shopify.remove(&id);
            }
            if let Some(id) = old.woocommerce_product_id {
                s.woocommerce.remove(&id);
            }
        }
        if let Some(id) = entry.shopify_inventory_item_id {
            s.shopify.insert(id, entry.sku.clone());
        }
        if let Some(id) = entry.woocommerce_product_id {
            s.woocommerce.insert(id, entry.sku.clone());
        }
        s.catalog.insert(entry.sku.clone(), entry.clone());
        Ok(())
    }
    async fn catalog(&self) -> Result<Vec<CatalogEntry>> {
        Ok(self.lock().catalog.values().cloned().collect())
    }
    async fn catalog_entry(&self, sku: &Sku) -> Result<Option<CatalogEntry>> {
        Ok(self.lock().catalog.get(sku).cloned())
    }
    async fn resolve_item(&self, item: &ItemRef) -> Result<Option<CatalogEntry>> {
        let s = self.lock();
        let sku = match item {
            ItemRef::Sku { sku } => Some(sku.clone()),
            ItemRef::Shopify { inventory_item_id } => s.shopify.get(inventory_item_id).cloned(),
            ItemRef::WooCommerce { product_id, sku } => match sku {
                Some(sku) if s.catalog.contains_key(sku) => Some(sku.clone()),
                _ => s.woocommerce.get(product_id).cloned(),
            },
        };
        Ok(sku.and_then(|sku| s.catalog.get(&sku).cloned()))
    }
}
