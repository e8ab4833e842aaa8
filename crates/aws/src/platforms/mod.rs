//! The shop platforms' Admin APIs, read by the stock pull: one module per
//! platform with an API ([`shopify`], [`woocommerce`]). Access comes from
//! the keys secret per call (under [`Platform::api_secret_key`]) and never
//! appears in logs or errors. Every call has connect and overall timeouts.

pub mod shopify;
pub mod woocommerce;

use std::time::Duration;

use async_trait::async_trait;
use restock_app::ports::{PlatformError, Platforms, PulledLevel, ShopLocation};
use restock_core::Platform;
use serde::de::DeserializeOwned;

pub use shopify::SHOPIFY_API_VERSION;

/// The platforms' APIs over HTTPS.
pub struct HttpPlatforms {
    client: reqwest::Client,
    /// Shopify's granted Admin API tokens, kept while the function is warm.
    shopify_tokens: shopify::Tokens,
    /// Shopify shops' locations, kept a while ([`shopify::LOCATIONS_FOR`]).
    shopify_locations: shopify::KnownLocations,
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
            shopify_locations: shopify::KnownLocations::default(),
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

    async fn locations(
        &self,
        platform: Platform,
        access: &serde_json::Value,
    ) -> Result<Vec<ShopLocation>, PlatformError> {
        match platform {
            Platform::Shopify => {
                shopify::locations(
                    &self.client,
                    &self.shopify_tokens,
                    &self.shopify_locations,
                    access,
                )
                .await
            }
            Platform::WooCommerce | Platform::Standard => Ok(Vec::new()),
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
                "`{}` in the keys secret is not in the expected form: {}",
                platform.api_secret_key().unwrap_or_default(),
                what_is_wrong(&e, access)
            ),
        )
    })
}

/// What is wrong with a credential's shape, in words that never quote it:
/// serde's own message can carry the value (`invalid type: string
/// "shpat_…"`), so only a missing field's name is taken from it.
fn what_is_wrong(e: &serde_json::Error, access: &serde_json::Value) -> String {
    let kind = |v: &serde_json::Value| match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "true or false",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    };
    let said = e.to_string();
    if let Some(field) = said
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        format!("it has no `{field}`")
    } else if !access.is_object() {
        format!(
            "it is {} where an object with its fields belongs",
            kind(access)
        )
    } else {
        "one of its fields is missing or not a string".to_owned()
    }
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

/// The platform could not be reached, or cannot serve now.
fn unavailable(platform: Platform, reason: impl ToString) -> PlatformError {
    PlatformError::Unavailable {
        platform,
        reason: reason.to_string(),
    }
}

/// A failure by what the platform answered: a 5xx or a 429 is worth trying
/// again ([`unavailable`]), anything else is a refusal.
fn answered(platform: Platform, status: reqwest::StatusCode, reason: String) -> PlatformError {
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        unavailable(platform, reason)
    } else {
        failed(platform, reason)
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

    /// Every wrong shape of a platform's access in the keys secret (a
    /// string where an object belongs, an easy misreading; a list; fields
    /// of the wrong type; a field missing) is refused with words that quote
    /// none of the secret's values, so no log, `doctor` finding or
    /// dashboard banner can carry a credential.
    #[test]
    fn a_credential_of_the_wrong_shape_is_refused_without_quoting_it() {
        let secret = "shpat_0123456789abcdef";
        let other = "cs_9876543210fedcba";
        let shapes = [
            serde_json::json!(secret),
            serde_json::json!([secret, other]),
            serde_json::json!(42),
            serde_json::json!({"shop": secret}),
            serde_json::json!({"shop": "s.myshopify.com", "client_id": 7, "client_secret": secret}),
            serde_json::json!({"shop": ["s", secret], "access_token": other}),
            serde_json::json!({"url": secret, "consumer_key": other}),
            serde_json::json!({"url": "https://w.example", "consumer_key": secret, "consumer_secret": [other]}),
        ];
        let platforms = HttpPlatforms::new();
        let mut refused = 0;
        for access in &shapes {
            let errors = [
                platforms.shopify(access).err().map(|e| e.to_string()),
                platforms.woocommerce(access).err().map(|e| e.to_string()),
            ];
            for said in errors.into_iter().flatten() {
                refused += 1;
                assert!(
                    !said.contains(secret) && !said.contains(other) && !said.contains("0123456789"),
                    "{said}"
                );
                assert!(said.contains("keys secret"), "{said}");
            }
        }
        assert!(refused >= shapes.len() * 2 - 2, "{refused} refused");
        let said = platforms
            .shopify(&serde_json::json!(secret))
            .err()
            .unwrap()
            .to_string();
        assert!(said.contains("a string where an object"), "{said}");
    }

    #[test]
    fn a_host_becomes_an_https_base_and_a_url_stays() {
        assert_eq!(base("loom.myshopify.com/"), "https://loom.myshopify.com");
        assert_eq!(base("http://127.0.0.1:9000"), "http://127.0.0.1:9000");
    }
}
