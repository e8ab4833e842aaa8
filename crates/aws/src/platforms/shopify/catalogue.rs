//! A shop's variants as the catalogue takes them: the Admin GraphQL
//! `ProductVariant` nodes `connect` and `catalogue sync` read, and the
//! entries they make (an archived product's variants are not listed).

use serde::Deserialize;

use super::P;

/// A product variant, as the catalogue needs it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    /// `gid://shopify/ProductVariant/…`.
    pub id: String,
    /// The shop's SKU (empty when the shop gave none).
    #[serde(default)]
    pub sku: Option<String>,
    /// The variant's title (`Oak / Large`; `Default Title` when the product has no options).
    pub title: String,
    /// Its inventory item.
    pub inventory_item: Gid,
    /// Its product.
    pub product: Product,
}

/// An object's global id.
#[derive(Debug, Clone, Deserialize)]
pub struct Gid {
    /// `gid://shopify/…/<number>`.
    pub id: String,
}

/// A variant's product.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    /// Its title.
    pub title: String,
    /// Its handle (`walnut-chair`).
    pub handle: String,
    /// Its page on the online store, when published there.
    pub online_store_url: Option<String>,
    /// Whether it has no options (its one variant is `Default Title`).
    #[serde(default)]
    pub has_only_default_variant: bool,
    /// `ACTIVE`, `DRAFT`, `ARCHIVED` (or `UNLISTED`): an archived product
    /// is no longer sold, so its variants are not listed.
    #[serde(default)]
    pub status: Option<String>,
}

/// The number at the end of a global id.
pub(super) fn number(gid: &str) -> Option<u64> {
    gid.rsplit('/').next()?.parse().ok()
}

/// The catalogue entries `variants` make for the shop at `shop_url`: one
/// per variant with a SKU, named "product — variant" (the product's name
/// alone when it has no options), its page with the variant selected, its
/// inventory item id, and a cart link that carries the hold into the order
/// as a cart attribute (Shopify copies cart attributes to the order's note
/// attributes, where `orders/paid` shows them). Variants without a SKU are
/// left out and counted.
pub fn catalogue_entries(
    shop_url: &str,
    variants: &[Variant],
) -> (Vec<restock_core::CatalogueEntry>, usize) {
    let mut entries = Vec::new();
    let mut skipped = 0;
    // An archived product is no longer sold: its variants are not listed,
    // so a sync ends their items (a draft may be a launch to come).
    for v in variants
        .iter()
        .filter(|v| v.product.status.as_deref() != Some("ARCHIVED"))
    {
        let sku = v
            .sku
            .as_deref()
            .and_then(|s| restock_core::Sku::from_shop(s).ok());
        let (Some(sku), Some(variant), Some(item)) =
            (sku, number(&v.id), number(&v.inventory_item.id))
        else {
            skipped += 1;
            continue;
        };
        let name = if v.product.has_only_default_variant || v.title == "Default Title" {
            v.product.title.clone()
        } else {
            format!("{} — {}", v.product.title, v.title)
        };
        let page = v
            .product
            .online_store_url
            .clone()
            .unwrap_or_else(|| format!("{shop_url}/products/{}", v.product.handle));
        // The shop's own domain when the product is published there.
        let store = url::Url::parse(&page)
            .ok()
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|| shop_url.to_owned());
        let mut entry = restock_core::CatalogueEntry::new(sku, name);
        entry.product_url = url::Url::parse(&format!("{page}?variant={variant}")).ok();
        entry.checkout_url = Some(format!(
            "{store}/cart/{variant}:1?attributes[hold]={{hold}}"
        ));
        entry.ids.set(P, Some(item));
        entries.push(entry);
    }
    (entries, skipped)
}
