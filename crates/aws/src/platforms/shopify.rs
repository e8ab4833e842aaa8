//! Shopify Admin GraphQL: `inventoryItem.inventoryLevels`, the `available`
//! quantity at each location. Access: `shopify_admin` in the keys secret,
//! either a Dev Dashboard app's `{"shop", "client_id", "client_secret"}`
//! (how a shop set up since 2026 gets Admin API access: tokens come from
//! the client credentials grant, last 24 hours, and are cached and renewed
//! here before they run out) or a legacy custom app's
//! `{"shop", "access_token": "shpat_…"}`. Either needs `read_inventory`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// A token is renewed this long before Shopify says it runs out, so no
/// call is made with one about to expire.
pub const RENEW_BEFORE: Duration = Duration::from_secs(5 * 60);

/// Shopify Admin API access.
#[derive(Deserialize)]
struct ShopifyAdmin {
    /// `your-shop.myshopify.com` (or a full base URL, as the tests' fake has).
    shop: String,
    #[serde(flatten)]
    credentials: Credentials,
}

/// How restock gets an Admin API token.
#[derive(Deserialize)]
#[serde(untagged)]
enum Credentials {
    /// A Dev Dashboard app: tokens through the client credentials grant.
    App {
        client_id: String,
        client_secret: String,
    },
    /// A legacy custom app's token (`shpat_…`), used as it is.
    Token { access_token: String },
}

/// Admin API tokens got through the client credentials grant, per shop and
/// app, each with when it must be renewed: one grant per day (and per cold
/// start) rather than per call.
#[derive(Default)]
pub struct Tokens(Mutex<HashMap<(String, String), (String, Instant)>>);

impl Tokens {
    fn fresh(&self, key: &(String, String)) -> Option<String> {
        let tokens = self.0.lock().expect("token cache");
        tokens
            .get(key)
            .filter(|(_, renew_at)| Instant::now() < *renew_at)
            .map(|(token, _)| token.clone())
    }

    fn keep(&self, key: (String, String), token: String, expires_in: Duration) {
        let renew_at = Instant::now() + expires_in.saturating_sub(RENEW_BEFORE);
        self.0
            .lock()
            .expect("token cache")
            .insert(key, (token, renew_at));
    }

    fn forget(&self, key: &(String, String)) {
        self.0.lock().expect("token cache").remove(key);
    }
}

/// The client credentials grant's answer.
#[derive(Deserialize)]
struct Granted {
    access_token: String,
    /// Seconds (Shopify: 86,399).
    expires_in: u64,
}

/// An Admin API token for `api`: its own, or a cached one from the grant
/// renewed before it runs out. `renew`: a call was refused with the cached
/// one (rotated or revoked), so a new one is asked for.
async fn token(
    client: &reqwest::Client,
    tokens: &Tokens,
    api: &ShopifyAdmin,
    renew: bool,
) -> Result<String, PlatformError> {
    let (client_id, client_secret) = match &api.credentials {
        Credentials::Token { access_token } => return Ok(access_token.clone()),
        Credentials::App {
            client_id,
            client_secret,
        } => (client_id, client_secret),
    };
    let key = (api.shop.clone(), client_id.clone());
    if renew {
        tokens.forget(&key);
    } else if let Some(token) = tokens.fresh(&key) {
        return Ok(token);
    }
    let response = client
        .post(format!("{}/admin/oauth/access_token", base(&api.shop)))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", client_id.as_str()),
            ("client_secret", client_secret.as_str()),
        ])
        .send()
        .await
        .map_err(|e| failed(P, e.without_url()))?;
    let status = response.status();
    if !status.is_success() {
        // Shopify's words (`invalid_client`, …) name no secret.
        let said = response.text().await.unwrap_or_default();
        return Err(failed(
            P,
            format!(
                "the client credentials grant answered HTTP {status} ({}): check `client_id` and `client_secret` under `shopify_admin` in the keys secret, and that the app is installed on the shop",
                said.chars().take(200).collect::<String>()
            ),
        ));
    }
    let granted: Granted = response
        .json()
        .await
        .map_err(|e| failed(P, format!("unexpected token answer: {}", e.without_url())))?;
    tokens.keep(
        key,
        granted.access_token.clone(),
        Duration::from_secs(granted.expires_in),
    );
    Ok(granted.access_token)
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
    tokens: &Tokens,
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
    let mut renew = false;
    let response = loop {
        let token = token(client, tokens, &api, renew).await?;
        let response = client
            .post(&url)
            .header("X-Shopify-Access-Token", token)
            .json(&body)
            .send()
            .await
            .map_err(|e| failed(P, e.without_url()))?;
        // A granted token refused before its time (rotated, revoked, the
        // app reinstalled): one new grant, then the call again.
        let granted = matches!(api.credentials, Credentials::App { .. });
        if response.status() == reqwest::StatusCode::UNAUTHORIZED && granted && !renew {
            renew = true;
            continue;
        }
        break response;
    };
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
