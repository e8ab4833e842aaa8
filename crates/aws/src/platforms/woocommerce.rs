//! WooCommerce REST: `GET /wp-json/wc/v3/products/{id}`. Access:
//! `woocommerce_api` in the keys secret, `{"url": "https://shop.example",
//! "consumer_key": "ck_…", "consumer_secret": "cs_…"}` (a read-only key).

use restock_app::ports::{PlatformError, PulledLevel};
use restock_core::{Level, Platform};
use serde::Deserialize;

use super::{access_from, base, failed};

const P: Platform = Platform::WooCommerce;

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
        .map_err(|e| failed(P, e.without_url()))?;
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
