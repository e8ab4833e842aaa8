//! WooCommerce REST: `GET /wp-json/wc/v3/products/{id}`. Access:
//! `woocommerce_api` in the keys secret, `{"url": "https://shop.example",
//! "consumer_key": "ck_…", "consumer_secret": "cs_…"}` (a read-only key).

use restock_app::ports::{PlatformError, PulledLevel};
use restock_core::{Level, Platform};
use serde::Deserialize;

use super::{access_from, answered, base, failed, unavailable};

const P: Platform = Platform::WooCommerce;

/// WooCommerce's own "Allow sign-ups" for back-in-stock notifications (a
/// Products setting since its `customer_stock_notifications` feature).
pub const OWN_SIGNUPS: &str = "woocommerce_customer_stock_notifications_allow_signups";

/// WooCommerce REST API access.
#[derive(Deserialize)]
struct WooCommerceApi {
    /// The site's base URL.
    url: String,
    /// `ck_…`.
    consumer_key: String,
    /// `cs_…`.
    consumer_secret: String,
}

#[derive(Deserialize)]
struct WooProduct {
    #[serde(default)]
    manage_stock: serde_json::Value,
    #[serde(default)]
    stock_quantity: Option<i64>,
}

/// A product's level (REST `products/{id}`), at the one location
/// WooCommerce has.
pub(super) async fn levels(
    client: &reqwest::Client,
    access: &serde_json::Value,
    product_id: u64,
) -> Result<Vec<PulledLevel>, PlatformError> {
    let api: WooCommerceApi = access_from(P, access)?;
    let url = format!("{}/wp-json/wc/v3/products/{product_id}", base(&api.url));
    let response = client
        .get(url)
        .basic_auth(&api.consumer_key, Some(&api.consumer_secret))
        .send()
        .await
        .map_err(|e| unavailable(P, e.without_url()))?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Err(PlatformError::NotFound {
            platform: P,
            id: product_id,
        });
    }
    if !status.is_success() {
        return Err(failed(P, format!("HTTP {status}")));
    }
    let product: WooProduct = response
        .json()
        .await
        .map_err(|e| failed(P, format!("unexpected answer: {}", e.without_url())))?;
    // `manage_stock` is true, false, or "parent" on a variation whose
    // parent product keeps the count.
    let managed = product.manage_stock == serde_json::Value::Bool(true);
    Ok(vec![PulledLevel {
        location: "default".to_owned(),
        level: if managed {
            Level::from_reported(product.stock_quantity)
        } else {
            Level::Untracked
        },
    }])
}

/// One site's WooCommerce REST API, with its key: `restock connect
/// woocommerce` (the key needs Read/Write to register webhooks).
/// Items a list page asks for (WooCommerce's most).
const PER_PAGE: usize = 100;

/// Pages a list without `X-WP-TotalPages` is read to at most (100,000
/// items).
const MAX_PAGES: u32 = 1_000;

pub struct Api<'a> {
    client: &'a reqwest::Client,
    access: WooCommerceApi,
}

/// A webhook as WooCommerce lists it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Webhook {
    /// Its id.
    pub id: u64,
    /// `product.updated`, `order.updated`, …
    pub topic: String,
    /// Where it delivers.
    pub delivery_url: String,
    /// `active`, `paused` or `disabled` (WooCommerce disables one after
    /// five failed deliveries in a row).
    pub status: String,
}

/// A product as the catalogue needs it.
#[derive(Debug, Clone, Deserialize)]
pub struct Product {
    /// Its id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// `simple`, `variable`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// Its SKU (may be empty).
    #[serde(default)]
    pub sku: String,
    /// Its page.
    #[serde(default)]
    pub permalink: String,
}

/// A variation of a variable product.
#[derive(Debug, Clone, Deserialize)]
pub struct Variation {
    /// Its id (the stock webhook's and the pull's).
    pub id: u64,
    /// Its SKU (may be empty).
    #[serde(default)]
    pub sku: String,
    /// Its page (the parent's, with the attributes selected).
    #[serde(default)]
    pub permalink: String,
    /// The options that make it (`Size: Large`).
    #[serde(default)]
    pub attributes: Vec<Attribute>,
}

/// One option of a variation.
#[derive(Debug, Clone, Deserialize)]
pub struct Attribute {
    /// Its value (`Large`).
    pub option: String,
}

impl<'a> Api<'a> {
    /// The API `access` (the keys secret's `woocommerce_api`) names.
    ///
    /// # Errors
    /// [`PlatformError`] when `access` is not in the expected form.
    pub fn new(
        client: &'a reqwest::Client,
        access: &serde_json::Value,
    ) -> Result<Self, PlatformError> {
        Ok(Self {
            client,
            access: access_from(P, access)?,
        })
    }

    /// The site's base URL.
    pub fn site(&self) -> String {
        base(&self.access.url)
    }

    /// A `GET` of REST's `path` (under `/wp-json/wc/v3/`), with the key.
    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .get(format!("{}/wp-json/wc/v3/{path}", self.site()))
            .basic_auth(
                &self.access.consumer_key,
                Some(&self.access.consumer_secret),
            )
    }

    /// Every page of a list, 100 a page: as many as `X-WP-TotalPages` says,
    /// or, where a proxy or cache dropped that header, until a page comes
    /// back short (never assuming one page: the rest would look unlisted
    /// and be ended).
    async fn all<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<Vec<T>, PlatformError> {
        let mut items = Vec::new();
        let mut page = 1;
        loop {
            let response = self
                .get(path)
                .query(&[
                    ("per_page", PER_PAGE.to_string()),
                    ("page", page.to_string()),
                ])
                .send()
                .await
                .map_err(|e| unavailable(P, e.without_url()))?;
            let pages: Option<u32> = response
                .headers()
                .get("x-wp-totalpages")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok());
            let response = checked(response).await?;
            let batch: Vec<T> = response
                .json()
                .await
                .map_err(|e| failed(P, format!("unexpected answer: {}", e.without_url())))?;
            let full = batch.len() >= PER_PAGE;
            items.extend(batch);
            let more = match pages {
                Some(pages) => page < pages,
                None => full && page < MAX_PAGES,
            };
            if !more {
                return Ok(items);
            }
            page += 1;
        }
    }

    /// The site's webhooks.
    ///
    /// # Errors
    /// [`PlatformError`]; a key without access says so.
    pub async fn webhooks(&self) -> Result<Vec<Webhook>, PlatformError> {
        self.all("webhooks").await
    }

    /// Registers `topic` to `delivery_url`, signed with `secret`.
    ///
    /// # Errors
    /// [`PlatformError`] with WooCommerce's own words when it refuses.
    pub async fn create_webhook(
        &self,
        topic: &str,
        delivery_url: &str,
        secret: &str,
    ) -> Result<Webhook, PlatformError> {
        let response = self
            .client
            .post(format!("{}/wp-json/wc/v3/webhooks", self.site()))
            .basic_auth(
                &self.access.consumer_key,
                Some(&self.access.consumer_secret),
            )
            .json(&serde_json::json!({
                "name": format!("restock: {topic}"),
                "topic": topic,
                "delivery_url": delivery_url,
                "secret": secret,
                "status": "active",
            }))
            .send()
            .await
            .map_err(|e| unavailable(P, e.without_url()))?;
        checked(response)
            .await?
            .json()
            .await
            .map_err(|e| failed(P, format!("unexpected answer: {}", e.without_url())))
    }

    /// Whether WooCommerce's own back-in-stock sign-ups are on (its
    /// `customer_stock_notifications` feature, Products settings' "Allow
    /// sign-ups"), read as REST's setting option; `None` where the site has
    /// no such setting (the feature off, or a WooCommerce before it:
    /// `rest_setting_setting_invalid`).
    ///
    /// # Errors
    /// [`PlatformError`] for any other refusal.
    pub async fn own_signups(&self) -> Result<Option<bool>, PlatformError> {
        let response = self
            .get(&format!("settings/products/{OWN_SIGNUPS}"))
            .send()
            .await
            .map_err(|e| unavailable(P, e.without_url()))?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            let said: serde_json::Value = response.json().await.unwrap_or_default();
            if said["code"] == "rest_setting_setting_invalid" {
                return Ok(None);
            }
            return Err(answered(
                P,
                reqwest::StatusCode::NOT_FOUND,
                format!("HTTP 404 ({said}): is the site's URL the WordPress root?"),
            ));
        }
        let setting: serde_json::Value = checked(response)
            .await?
            .json()
            .await
            .map_err(|e| failed(P, format!("unexpected answer: {}", e.without_url())))?;
        Ok(Some(setting["value"] == "yes"))
    }

    /// Every product, and every variation of each variable one.
    ///
    /// # Errors
    /// [`PlatformError`].
    pub async fn products(&self) -> Result<Vec<(Product, Vec<Variation>)>, PlatformError> {
        let mut all = Vec::new();
        for product in self.all::<Product>("products").await? {
            let variations = if product.kind == "variable" {
                self.all(&format!("products/{}/variations", product.id))
                    .await?
            } else {
                Vec::new()
            };
            all.push((product, variations));
        }
        Ok(all)
    }
}

/// A successful answer, or WooCommerce's own message as the failure.
async fn checked(response: reqwest::Response) -> Result<reqwest::Response, PlatformError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let said: serde_json::Value = response.json().await.unwrap_or_default();
    let message = said["message"].as_str().unwrap_or("no message");
    let hint = if status == reqwest::StatusCode::UNAUTHORIZED {
        ": check `consumer_key` and `consumer_secret`, and that the key has Read/Write access"
    } else {
        ""
    };
    Err(answered(
        P,
        status,
        format!("HTTP {status} ({message}){hint}"),
    ))
}

/// The catalogue entries a site's products make: one per simple product
/// and per variation with a SKU, named "product — options", its page, its
/// id (the one its stock webhook and the pull name), and a link that puts
/// it in the cart carrying the hold (`?hold=` is kept into the order by
/// the restock plugin, [`plugin`]). Items without a SKU are left out and counted.
pub fn catalogue_entries(
    site: &str,
    products: &[(Product, Vec<Variation>)],
) -> (Vec<restock_core::CatalogueEntry>, usize) {
    let mut entries = Vec::new();
    let mut skipped = 0;
    let mut add = |id: u64, sku: &str, name: String, page: &str| {
        let Ok(sku) = restock_core::Sku::from_shop(sku) else {
            skipped += 1;
            return;
        };
        let mut entry = restock_core::CatalogueEntry::new(sku, name);
        entry.product_url = url::Url::parse(page).ok();
        entry.checkout_url = Some(format!("{site}/cart/?add-to-cart={id}&hold={{hold}}"));
        entry.ids.set(P, Some(id));
        entries.push(entry);
    };
    for (product, variations) in products {
        if product.kind == "variable" {
            for v in variations {
                let options: Vec<&str> = v.attributes.iter().map(|a| a.option.as_str()).collect();
                let name = format!("{} — {}", product.name, options.join(" / "));
                let page = if v.permalink.is_empty() {
                    &product.permalink
                } else {
                    &v.permalink
                };
                add(v.id, &v.sku, name, page);
            }
        } else {
            add(
                product.id,
                &product.sku,
                product.name.clone(),
                &product.permalink,
            );
        }
    }
    (entries, skipped)
}

/// The widget, as the shop's pages run it.
const WIDGET_JS: &str = include_str!("../../../local/assets/restock-widget.js");

/// The plugin's source, with the stack's CaptureUrl and the widget left
/// for [`plugin`] to fill in.
const PLUGIN: &str = include_str!("../../../../examples/woocommerce/restock.php");

/// What stands for the CaptureUrl in [`PLUGIN`].
const ENDPOINT_MARK: &str = "RESTOCK_CAPTURE_URL";

/// What stands for the widget's script in [`PLUGIN`].
const WIDGET_MARK: &str =
    "/* RESTOCK_WIDGET_SCRIPT: the widget, crates/local/assets/restock-widget.js */";

/// The WordPress plugin `restock connect woocommerce --plugin` writes, for
/// the stack whose capture listens at `endpoint` (`examples/woocommerce/`
/// with the endpoint and the widget filled in):
///
/// - it carries a reserve link's `?hold=…` into the order: kept in the
///   shopper's session from the link until checkout, then saved on the
///   order as its `hold` meta (classic checkout and the Checkout block's
///   Store API alike), which the order webhook shows;
/// - it renders the notify-me widget on a product page, classic theme
///   (the product summary) or block theme (after the "Add to Cart +
///   Options" block): for a simple product while it is out of stock, and
///   for a variable product with every variation and whether it is in
///   stock, so the form follows the shopper's choice. The widget's script
///   is inside the plugin: nothing else to host;
/// - it declares HPOS and Cart/Checkout blocks compatibility, and takes
///   WooCommerce's own stock-notification form off the page.
///
/// Upload it under Plugins → Add New → Upload Plugin.
pub fn plugin(endpoint: &str) -> String {
    let endpoint = endpoint.trim_end_matches('/').replace(['\\', '\''], "");
    PLUGIN
        .replace(ENDPOINT_MARK, &endpoint)
        .replace(WIDGET_MARK, WIDGET_JS.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_keeps_the_hold_until_the_order_and_renders_the_widget() {
        let plugin = plugin("https://capture.example/");
        assert!(plugin.starts_with("<?php\n/**\n * Plugin Name: restock\n"));
        assert!(plugin.contains("defined('ABSPATH') || exit;"));
        assert!(plugin.contains("const RESTOCK_ENDPOINT = 'https://capture.example';"));
        // Kept from the link (`?hold=`, as the catalogue's checkout_url
        // carries it) to the order's `hold` meta, which the order webhook
        // parser reads.
        assert!(plugin.contains("$_GET['hold']"));
        assert!(plugin.contains("update_meta_data('hold', $hold)"));
        // From both checkouts; the template's marks all filled in.
        for hook in [
            "woocommerce_checkout_create_order",
            "woocommerce_store_api_checkout_update_order_from_request",
        ] {
            assert!(plugin.contains(&format!("add_action('{hook}', 'restock_keep_hold');")));
        }
        assert!(!plugin.contains(ENDPOINT_MARK) && !plugin.contains(WIDGET_MARK));
        // The widget inside, whole, in a nowdoc its text cannot end early.
        assert!(plugin.contains(WIDGET_JS.trim_end()));
        assert_eq!(plugin.matches("\nRESTOCK_WIDGET_JS\n").count(), 1);
        assert!(!WIDGET_JS.contains("RESTOCK_WIDGET_JS"));
        // Variations as the widget reads them; JSON that cannot close the element.
        assert!(
            plugin
                .contains("'id' => $id, 'sku' => $v->get_sku(), 'available' => $v->is_in_stock()")
        );
        // Every variation: get_available_variations() drops sold-out ones
        // where the shop hides out-of-stock items.
        assert!(plugin.contains("$product->get_children()"));
        assert!(!plugin.contains("get_available_variations()"));
        assert!(plugin.contains("JSON_HEX_TAG"));
        // An endpoint cannot break out of its PHP string.
        assert!(plugin_endpoint_is_plain("https://x.example/'; evil(); '"));
        let (entries, _) = catalogue_entries(
            "https://shop.example",
            &[(
                Product {
                    id: 7,
                    name: "Mug".into(),
                    kind: "simple".into(),
                    sku: "MUG".into(),
                    permalink: "https://shop.example/product/mug/".into(),
                },
                vec![],
            )],
        );
        let checkout = entries[0].checkout_url.as_deref().unwrap();
        assert!(checkout.ends_with("&hold={hold}"), "{checkout}");
    }

    fn plugin_endpoint_is_plain(endpoint: &str) -> bool {
        let plugin = plugin(endpoint);
        let line = plugin
            .lines()
            .find(|l| l.starts_with("const RESTOCK_ENDPOINT"))
            .unwrap();
        line.matches('\'').count() == 2 && line.ends_with("';")
    }
}
