//! The shop platforms' Admin APIs, read by the stock pull: one module per
//! platform with an API ([`shopify`], [`woocommerce`]). Access comes from
//! the keys secret per call (under [`Platform::api_secret_key`]) and never
//! appears in logs or errors. Every call has connect and overall timeouts.

pub mod shopify;
pub mod woocommerce;

use std::time::Duration;

use async_trait::async_trait;
use restock_app::ports::{PlatformError, Platforms, PulledLevel};
use restock_core::Platform;
use serde::de::DeserializeOwned;

pub use shopify::SHOPIFY_API_VERSION;

/// The platforms' APIs over HTTPS.
pub struct HttpPlatforms {
    client: reqwest::Client,
    /// Shopify's granted Admin API tokens, kept while the function is warm.
    shopify_tokens: shopify::Tokens,
}

impl HttpPlatforms {
    /// A client with a 3 s connect and 10 s overall timeout per call.
    ///
    /// # Panics
    /// When the TLS stack cannot be set up (a broken build).
    pub fn new() -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(3))
            .timeout(Duration::from_secs(10))
            .user_agent(concat!("restock/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("an HTTP client");
        Self {
            client,
            shopify_tokens: shopify::Tokens::default(),
        }
    }
}

impl HttpPlatforms {
    /// A shop's Shopify Admin API with `access` (the keys secret's
    /// `shopify_admin`), sharing this client's connections and tokens:
    /// `restock connect shopify`.
    ///
    /// # Errors
    /// [`PlatformError`] when `access` is not in either accepted form.
    pub fn shopify(&self, access: &serde_json::Value) -> Result<shopify::Api<'_>, PlatformError> {
        shopify::Api::new(&self.client, &self.shopify_tokens, access)
    }

    /// A site's WooCommerce REST API with `access` (the keys secret's
    /// `woocommerce_api`): `restock connect woocommerce`.
    ///
    /// # Errors
    /// [`PlatformError`] when `access` is not in the expected form.
    pub fn woocommerce(
        &self,
        access: &serde_json::Value,
    ) -> Result<woocommerce::Api<'_>, PlatformError> {
        woocommerce::Api::new(&self.client, access)
    }
}

impl Default for HttpPlatforms {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Platforms for HttpPlatforms {
    async fn levels(
        &self,
        platform: Platform,
        access: &serde_json::Value,
        id: u64,
    ) -> Result<Vec<PulledLevel>, PlatformError> {
        match platform {
            Platform::Shopify => {
                shopify::levels(&self.client, &self.shopify_tokens, access, id).await
            }
            Platform::WooCommerce => woocommerce::levels(&self.client, access, id).await,
            Platform::Standard => Err(PlatformError::NotConfigured(platform)),
        }
    }
}

/// The platform's access settings, read from the keys secret's JSON.
fn access_from<T: DeserializeOwned>(
    platform: Platform,
    access: &serde_json::Value,
) -> Result<T, PlatformError> {
    serde_json::from_value(access.clone()).map_err(|e| {
        failed(
            platform,
            format!(
                "`{}` in the keys secret is not in the expected form ({})",
                platform.api_secret_key().unwrap_or_default(),
                e.to_string().split(" at line").next().unwrap_or_default()
            ),
        )
    })
}

/// `https://{shop}` unless the setting is already a URL (a local fake).
fn base(url_or_host: &str) -> String {
    let trimmed = url_or_host.trim_end_matches('/');
    if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("https://{trimmed}")
    }
}

fn failed(platform: Platform, reason: impl ToString) -> PlatformError {
    PlatformError::Failed {
        platform,
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_becomes_an_https_base_and_a_url_stays() {
        assert_eq!(base("loom.myshopify.com/"), "https://loom.myshopify.com");
        assert_eq!(base("http://127.0.0.1:9000"), "http://127.0.0.1:9000");
    }
}
