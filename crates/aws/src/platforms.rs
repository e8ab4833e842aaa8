//! The shop platforms' Admin APIs, read by the stock pull: Shopify Admin
//! GraphQL (`inventoryItem.inventoryLevels`, the `available` quantity at
//! each location) and WooCommerce REST (`GET /wp-json/wc/v3/products/{id}`).
//! Credentials come from the keys secret per call and never appear in logs
//! or errors. Every call has connect and overall timeouts.

use std::time::Duration;

use async_trait::async_trait;
use restock_app::ports::{PlatformError, Platforms, PulledLevel, ShopifyAdmin, WooCommerceApi};
use restock_core::Level;
use serde::Deserialize;

/// The Admin API version restock speaks.
pub const SHOPIFY_API_VERSION: &str = "2025-01";

/// Locations read per inventory item (a shop with more is told in the log).
const LOCATIONS: u32 = 100;

/// The GraphQL query: every location's `available` quantity, and whether
/// Shopify tracks the item at all.
const LEVELS_QUERY: &str = "query Levels($id: ID!, $first: Int!) { inventoryItem(id: $id) { tracked inventoryLevels(first: $first) { edges { node { location { id } quantities(names: [\"available\"]) { name quantity } } } pageInfo { hasNextPage } } } }";

/// Shopify and WooCommerce over HTTPS.
pub struct HttpPlatforms {
    client: reqwest::Client,
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
        Self { client }
    }
}

impl Default for HttpPlatforms {
    fn default() -> Self {
        Self::new()
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

fn failed(platform: &'static str, reason: impl ToString) -> PlatformError {
    PlatformError::Failed {
        platform,
        reason: reason.to_string(),
    }
}

/// `gid://shopify/Location/24826418` → `24826418`, as the stock webhook names it.
fn location_id(gid: &str) -> String {
    gid.rsplit('/').next().unwrap_or(gid).to_owned()
}

#[derive(Deserialize)]
struct GraphQl<T> {
    data: Option<T>,
    #[serde(default)]
    errors: Vec<GraphQlError>,
}

#[derive(Deserialize)]
struct GraphQlError {
    message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ItemData {
    inventory_item: Option<InventoryItem>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InventoryItem {
    tracked: bool,
    inventory_levels: Connection,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    edges: Vec<Edge>,
    page_info: PageInfo,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageInfo {
    has_next_page: bool,
}

#[derive(Deserialize)]
struct Edge {
    node: LevelNode,
}

#[derive(Deserialize)]
struct LevelNode {
    location: Named,
    quantities: Vec<Quantity>,
}

#[derive(Deserialize)]
struct Named {
    id: String,
}

#[derive(Deserialize)]
struct Quantity {
    name: String,
    quantity: i64,
}

#[derive(Deserialize)]
struct WooProduct {
    #[serde(default)]
    manage_stock: serde_json::Value,
    #[serde(default)]
    stock_quantity: Option<i64>,
}

#[async_trait]
impl Platforms for HttpPlatforms {
    async fn shopify_levels(
        &self,
        api: &ShopifyAdmin,
        inventory_item_id: u64,
    ) -> Result<Vec<PulledLevel>, PlatformError> {
        const P: &str = "shopify";
        let url = format!(
            "{}/admin/api/{SHOPIFY_API_VERSION}/graphql.json",
            base(&api.shop)
        );
        let body = serde_json::json!({
            "query": LEVELS_QUERY,
            "variables": {
                "id": format!("gid://shopify/InventoryItem/{inventory_item_id}"),
                "first": LOCATIONS,
            },
        });
        let response = self
            .client
            .post(url)
            .header("X-Shopify-Access-Token", &api.access_token)
            .json(&body)
            .send()
            .await
            .map_err(|e| failed(P, e.without_url()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(failed(P, format!("HTTP {status}")));
        }
        let answer: GraphQl<ItemData> = response
            .json()
            .await
            .map_err(|e| failed(P, format!("unexpected answer: {}", e.without_url())))?;
        if let Some(e) = answer.errors.first() {
            return Err(failed(P, &e.message));
        }
        let item = answer
            .data
            .and_then(|d| d.inventory_item)
            .ok_or(PlatformError::NotFound {
                platform: P,
                id: inventory_item_id,
            })?;
        if item.inventory_levels.page_info.has_next_page {
            tracing::warn!(
                inventory_item_id,
                "Shopify lists more than {LOCATIONS} locations for this item; the pull sums the first {LOCATIONS}"
            );
        }
        Ok(item
            .inventory_levels
            .edges
            .into_iter()
            .map(|Edge { node }| {
                let available = node
                    .quantities
                    .iter()
                    .find(|q| q.name == "available")
                    .map(|q| q.quantity);
                PulledLevel {
                    location: location_id(&node.location.id),
                    level: if item.tracked {
                        Level::from_reported(available)
                    } else {
                        Level::Untracked
                    },
                }
            })
            .collect())
    }

    async fn woocommerce_level(
        &self,
        api: &WooCommerceApi,
        product_id: u64,
    ) -> Result<PulledLevel, PlatformError> {
        const P: &str = "woocommerce";
        let url = format!("{}/wp-json/wc/v3/products/{product_id}", base(&api.url));
        let response = self
            .client
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
        Ok(PulledLevel {
            location: "default".to_owned(),
            level: if managed {
                Level::from_reported(product.stock_quantity)
            } else {
                Level::Untracked
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shopify_location_gids_become_webhook_location_ids() {
        assert_eq!(location_id("gid://shopify/Location/24826418"), "24826418");
        assert_eq!(base("loom.myshopify.com/"), "https://loom.myshopify.com");
        assert_eq!(base("http://127.0.0.1:9000"), "http://127.0.0.1:9000");
    }
}
