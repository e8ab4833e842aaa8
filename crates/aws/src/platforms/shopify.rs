//! Shopify Admin GraphQL: `inventoryItem.inventoryLevels`, the `available`
//! quantity at each location. Access: `shopify_admin` in the keys secret,
//! `{"shop": "your-shop.myshopify.com", "access_token": "shpat_…"}` (a custom
//! app's Admin API token with `read_inventory`).

use restock_app::ports::{PlatformError, PulledLevel};
use restock_core::{Level, Platform};
use serde::Deserialize;

use super::{access_from, base, failed};

const P: Platform = Platform::Shopify;

/// The Admin API version restock speaks.
pub const SHOPIFY_API_VERSION: &str = "2025-01";

/// Locations read per inventory item (a shop with more is told in the log).
const LOCATIONS: u32 = 100;

/// The GraphQL query: every location's `available` quantity, and whether
/// Shopify tracks the item at all.
const LEVELS_QUERY: &str = "query Levels($id: ID!, $first: Int!) { inventoryItem(id: $id) { tracked inventoryLevels(first: $first) { edges { node { location { id } quantities(names: [\"available\"]) { name quantity } } } pageInfo { hasNextPage } } } }";

/// Shopify Admin API access.
#[derive(Deserialize)]
struct ShopifyAdmin {
    /// `your-shop.myshopify.com` (or a full base URL, as the tests' fake has).
    shop: String,
    /// The Admin API access token (`shpat_…`).
    access_token: String,
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

/// An inventory item's available level at each location (Admin GraphQL
/// `inventoryItem.inventoryLevels`).
pub(super) async fn levels(
    client: &reqwest::Client,
    access: &serde_json::Value,
    inventory_item_id: u64,
) -> Result<Vec<PulledLevel>, PlatformError> {
    let api: ShopifyAdmin = access_from(P, access)?;
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
    let response = client
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shopify_location_gids_become_webhook_location_ids() {
        assert_eq!(location_id("gid://shopify/Location/24826418"), "24826418");
    }
}
