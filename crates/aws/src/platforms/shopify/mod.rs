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

use restock_app::ports::{PlatformError, PulledLevel, ShopLocation};
use restock_core::{Level, Platform};
use serde::Deserialize;

use super::{access_from, answered, base, failed, unavailable};

mod catalogue;

pub use catalogue::{Gid, Product, Variant, catalogue_entries};

const P: Platform = Platform::Shopify;

/// The Admin API version restock speaks.
pub const SHOPIFY_API_VERSION: &str = "2026-10";

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
        .map_err(|e| unavailable(P, e.without_url()))?;
    let status = response.status();
    if !status.is_success() {
        // Shopify's words (`invalid_client`, …) name no secret.
        let said = response.text().await.unwrap_or_default();
        return Err(answered(
            P,
            status,
            format!(
                "the client credentials grant answered HTTP {status} ({}): check the app's `client_id` and `client_secret`, and that the app is installed on the shop",
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
    #[serde(default)]
    extensions: Option<serde_json::Value>,
}

impl GraphQlError {
    /// Shopify's answer to a query over the shop's rate: wait and retry.
    fn throttled(&self) -> bool {
        self.extensions
            .as_ref()
            .and_then(|e| e["code"].as_str())
            .is_some_and(|code| code == "THROTTLED")
    }
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
#[serde(rename_all = "camelCase")]
struct Named {
    id: String,
    /// Whether the location fulfils online orders (Shopify: false for a
    /// retail-only location, such as a POS shop counter).
    #[serde(default)]
    fulfills_online_orders: Option<bool>,
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
    let api = Api::new(client, tokens, access)?;
    let data: ItemData = api
        .graphql(
            LEVELS_QUERY,
            serde_json::json!({
                "id": format!("gid://shopify/InventoryItem/{inventory_item_id}"),
                "first": LOCATIONS,
            }),
        )
        .await?;
    let item = data.inventory_item.ok_or(PlatformError::NotFound {
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

/// How long to wait when Shopify answers `THROTTLED`, and how often.
const THROTTLE_WAIT: Duration = Duration::from_millis(500);
const THROTTLE_TRIES: u32 = 6;

/// One shop's Admin GraphQL API, with its credentials.
pub struct Api<'a> {
    client: &'a reqwest::Client,
    tokens: &'a Tokens,
    access: ShopifyAdmin,
}

impl<'a> Api<'a> {
    /// The API `access` (the keys secret's `shopify_admin`) names.
    ///
    /// # Errors
    /// [`PlatformError`] when `access` is not in either accepted form.
    pub fn new(
        client: &'a reqwest::Client,
        tokens: &'a Tokens,
        access: &serde_json::Value,
    ) -> Result<Self, PlatformError> {
        Ok(Self {
            client,
            tokens,
            access: access_from(P, access)?,
        })
    }

    /// The shop's base URL (`https://your-shop.myshopify.com`).
    pub fn shop(&self) -> String {
        base(&self.access.shop)
    }

    /// Whether an Admin API token can be had now (the grant answers, or
    /// the legacy token is set).
    ///
    /// # Errors
    /// [`PlatformError`] saying what to check.
    pub async fn check(&self) -> Result<(), PlatformError> {
        token(self.client, self.tokens, &self.access, false)
            .await
            .map(drop)
    }

    /// One GraphQL call: a token (renewed once if Shopify refuses it), a
    /// wait and a retry while Shopify answers `THROTTLED`, and the first
    /// error Shopify gives as the failure.
    ///
    /// # Errors
    /// [`PlatformError`] naming what failed, never a secret.
    pub async fn graphql<T: serde::de::DeserializeOwned>(
        &self,
        query: &str,
        variables: serde_json::Value,
    ) -> Result<T, PlatformError> {
        let url = format!(
            "{}/admin/api/{SHOPIFY_API_VERSION}/graphql.json",
            base(&self.access.shop)
        );
        let body = serde_json::json!({ "query": query, "variables": variables });
        let granted = matches!(self.access.credentials, Credentials::App { .. });
        let (mut renew, mut tries) = (false, 0);
        loop {
            let token = token(self.client, self.tokens, &self.access, renew).await?;
            let response = self
                .client
                .post(&url)
                .header("X-Shopify-Access-Token", token)
                .json(&body)
                .send()
                .await
                .map_err(|e| unavailable(P, e.without_url()))?;
            let status = response.status();
            // A granted token refused before its time (rotated, revoked,
            // the app reinstalled): one new grant, then the call again.
            if status == reqwest::StatusCode::UNAUTHORIZED && granted && !renew {
                renew = true;
                continue;
            }
            if !status.is_success() {
                return Err(answered(P, status, format!("HTTP {status}")));
            }
            // A token renewed once is the token from here on: a THROTTLED
            // retry asks for no new one.
            renew = false;
            let answer: GraphQl<T> = response
                .json()
                .await
                .map_err(|e| failed(P, format!("unexpected answer: {}", e.without_url())))?;
            let throttled = answer.errors.iter().any(GraphQlError::throttled);
            if throttled && tries + 1 < THROTTLE_TRIES {
                tries += 1;
                tokio::time::sleep(THROTTLE_WAIT * tries).await;
                continue;
            }
            if throttled {
                return Err(unavailable(P, "THROTTLED: the shop's API budget is spent"));
            }
            if let Some(e) = answer.errors.first() {
                return Err(failed(P, &e.message));
            }
            return answer
                .data
                .ok_or_else(|| failed(P, "an answer without data"));
        }
    }

    /// Every node of a connection, a page of `first` at a time: `query`
    /// takes `$first` and `$after` beside `vars`, and `page` takes the
    /// connection out of its answer.
    async fn all_pages<D: serde::de::DeserializeOwned, T>(
        &self,
        query: &str,
        first: u32,
        mut vars: serde_json::Value,
        page: impl Fn(D) -> Page<T>,
    ) -> Result<Vec<T>, PlatformError> {
        let mut all = Vec::new();
        let mut after: Option<String> = None;
        loop {
            vars["first"] = first.into();
            vars["after"] = after.into();
            let Page { nodes, page_info } = page(self.graphql(query, vars.clone()).await?);
            all.extend(nodes);
            match (page_info.has_next_page, page_info.end_cursor) {
                (true, Some(cursor)) => after = Some(cursor),
                _ => return Ok(all),
            }
        }
    }

    /// Every product variant of the shop, a page of 250 at a time.
    ///
    /// # Errors
    /// [`PlatformError`].
    pub async fn variants(&self) -> Result<Vec<Variant>, PlatformError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Data {
            product_variants: Page<Variant>,
        }
        self.all_pages(VARIANTS_QUERY, 250, serde_json::json!({}), |d: Data| {
            d.product_variants
        })
        .await
    }

    /// Every location of the shop and whether it fulfils online orders.
    ///
    /// # Errors
    /// [`PlatformError`].
    pub async fn locations(&self) -> Result<Vec<ShopLocation>, PlatformError> {
        #[derive(Deserialize)]
        struct Data {
            locations: Page<Named>,
        }
        let listed = self
            .all_pages(LOCATIONS_QUERY, 250, serde_json::json!({}), |d: Data| {
                d.locations
            })
            .await?;
        Ok(listed
            .into_iter()
            .map(|l| ShopLocation {
                id: location_id(&l.id),
                online: l.fulfills_online_orders.unwrap_or(true),
            })
            .collect())
    }

    /// The app's webhook subscriptions for `topics` (`INVENTORY_LEVELS_UPDATE`, …).
    ///
    /// # Errors
    /// [`PlatformError`].
    pub async fn subscriptions(&self, topics: &[&str]) -> Result<Vec<Subscription>, PlatformError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Data {
            webhook_subscriptions: Page<Subscription>,
        }
        self.all_pages(
            SUBSCRIPTIONS_QUERY,
            100,
            serde_json::json!({ "topics": topics }),
            |d: Data| d.webhook_subscriptions,
        )
        .await
    }

    /// Subscribes `topic` to `uri` (JSON).
    ///
    /// # Errors
    /// [`PlatformError`] with Shopify's own words when it refuses.
    pub async fn subscribe(&self, topic: &str, uri: &str) -> Result<Subscription, PlatformError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Data {
            webhook_subscription_create: Created,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Created {
            webhook_subscription: Option<Subscription>,
            #[serde(default)]
            user_errors: Vec<GraphQlError>,
        }
        let data: Data = self
            .graphql(
                SUBSCRIBE_MUTATION,
                serde_json::json!({
                    "topic": topic,
                    "sub": { "uri": uri, "format": "JSON" },
                }),
            )
            .await?;
        let created = data.webhook_subscription_create;
        if let Some(e) = created.user_errors.first() {
            return Err(failed(P, format!("subscribing {topic}: {}", e.message)));
        }
        created
            .webhook_subscription
            .ok_or_else(|| failed(P, format!("subscribing {topic}: no subscription came back")))
    }
}

/// The shop's locations, a page at a time: whether each fulfils online orders.
const LOCATIONS_QUERY: &str = "query Locations($first: Int!, $after: String) { locations(first: $first, after: $after, includeInactive: true) { nodes { id fulfillsOnlineOrders } pageInfo { hasNextPage endCursor } } }";

/// How long the shop's locations are kept before they are read again: a
/// location changed in the admin counts as it is now within this long.
pub const LOCATIONS_FOR: Duration = Duration::from_secs(10 * 60);

/// The shops' locations, each with when it was read, kept while the
/// function is warm: one read per shop every [`LOCATIONS_FOR`], not one per
/// webhook.
#[derive(Default)]
pub struct KnownLocations(Mutex<HashMap<String, (Vec<ShopLocation>, Instant)>>);

/// The shop's locations (Admin GraphQL `locations`), from `known` while
/// fresh.
pub(super) async fn locations(
    client: &reqwest::Client,
    tokens: &Tokens,
    known: &KnownLocations,
    access: &serde_json::Value,
) -> Result<Vec<ShopLocation>, PlatformError> {
    let api = Api::new(client, tokens, access)?;
    let shop = api.shop();
    if let Some((listed, read_at)) = known.0.lock().expect("locations").get(&shop)
        && read_at.elapsed() < LOCATIONS_FOR
    {
        return Ok(listed.clone());
    }
    let listed = api.locations().await?;
    known
        .0
        .lock()
        .expect("locations")
        .insert(shop, (listed.clone(), Instant::now()));
    Ok(listed)
}

/// The variants query: what the catalogue needs of each.
const VARIANTS_QUERY: &str = "query Variants($first: Int!, $after: String) { productVariants(first: $first, after: $after) { nodes { id sku title inventoryItem { id } product { title handle status onlineStoreUrl hasOnlyDefaultVariant } } pageInfo { hasNextPage endCursor } } }";

/// The app's subscriptions for some topics.
const SUBSCRIPTIONS_QUERY: &str = "query Subscriptions($first: Int!, $after: String, $topics: [WebhookSubscriptionTopic!]) { webhookSubscriptions(first: $first, after: $after, topics: $topics) { nodes { id topic uri } pageInfo { hasNextPage endCursor } } }";

/// A new subscription.
const SUBSCRIBE_MUTATION: &str = "mutation Subscribe($topic: WebhookSubscriptionTopic!, $sub: WebhookSubscriptionInput!) { webhookSubscriptionCreate(topic: $topic, webhookSubscription: $sub) { webhookSubscription { id topic uri } userErrors { field message } } }";

/// A page of a GraphQL connection.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page<T> {
    nodes: Vec<T>,
    page_info: Cursor,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cursor {
    has_next_page: bool,
    end_cursor: Option<String>,
}

/// A webhook subscription.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Subscription {
    /// Its id.
    pub id: String,
    /// Its topic (`INVENTORY_LEVELS_UPDATE`).
    pub topic: String,
    /// Where it delivers.
    pub uri: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unpublished_product_s_variant_links_to_the_shop_s_own_domain() {
        let variant: Variant = serde_json::from_value(serde_json::json!({
            "id": "gid://shopify/ProductVariant/77",
            "sku": " RUG-L ",
            "title": "Large",
            "inventoryItem": {"id": "gid://shopify/InventoryItem/78"},
            "product": {"title": "Jute rug", "handle": "jute-rug", "onlineStoreUrl": null},
        }))
        .unwrap();
        let (entries, skipped) = catalogue_entries("https://loom.myshopify.com", &[variant]);
        assert_eq!(skipped, 0);
        let e = &entries[0];
        assert_eq!(
            (e.sku.as_str(), e.name.as_str()),
            ("RUG-L", "Jute rug — Large")
        );
        assert_eq!(
            e.product_url.as_ref().unwrap().as_str(),
            "https://loom.myshopify.com/products/jute-rug?variant=77"
        );
        assert_eq!(
            e.checkout_url.as_deref(),
            Some("https://loom.myshopify.com/cart/77:1?attributes[hold]={hold}")
        );
        assert_eq!(e.ids.get(P), Some(78));
    }

    #[test]
    fn an_archived_product_s_variants_are_not_listed() {
        let variant = |sku: &str, status: &str| -> Variant {
            serde_json::from_value(serde_json::json!({
                "id": "gid://shopify/ProductVariant/77",
                "sku": sku,
                "title": "Large",
                "inventoryItem": {"id": "gid://shopify/InventoryItem/78"},
                "product": {"title": "Jute rug", "handle": "jute-rug", "status": status},
            }))
            .unwrap()
        };
        let variants = [
            variant("RUG-L", "ARCHIVED"),
            variant("RUG-M", "ACTIVE"),
            variant("RUG-S", "DRAFT"),
        ];
        let (entries, skipped) = catalogue_entries("https://loom.myshopify.com", &variants);
        let skus: Vec<&str> = entries.iter().map(|e| e.sku.as_str()).collect();
        assert_eq!(skus, ["RUG-M", "RUG-S"]);
        assert_eq!(skipped, 0, "archived is not 'without a SKU'");
    }

    #[test]
    fn shopify_location_gids_become_webhook_location_ids() {
        assert_eq!(location_id("gid://shopify/Location/24826418"), "24826418");
    }
}
