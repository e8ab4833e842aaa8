//! A local HTTP server that speaks the Shopify Admin GraphQL and
//! WooCommerce REST APIs the stock pull reads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};

use crate::*;

/// The Shopify Admin API access token the platform fake accepts.
pub const SHOPIFY_ADMIN_TOKEN: &str = "shpat_test_token_0123456789";
/// The WooCommerce REST key pair the platform fake accepts.
pub const WOO_API_KEY: (&str, &str) = ("ck_test_consumer_key", "cs_test_consumer_secret");

/// The platform fake's Shopify levels: inventory item id → (location id,
/// available) per location.
pub type ShopifyLevels = Arc<Mutex<HashMap<u64, Vec<(u64, i64)>>>>;

/// A local HTTP server that speaks the two platform APIs the stock pull
/// reads: Shopify Admin GraphQL (`POST /admin/api/{version}/graphql.json`,
/// `X-Shopify-Access-Token`, `inventoryItem(id:)` answered with each
/// location's `available` quantity) and WooCommerce REST
/// (`GET /wp-json/wc/v3/products/{id}` with HTTP basic auth).
pub struct PlatformFake {
    /// Its base URL.
    pub url: String,
    /// Shopify: inventory item id → (location id, available) per location.
    pub shopify: ShopifyLevels,
    /// WooCommerce: product id → stock quantity (`None`: not managed).
    pub woocommerce: Arc<Mutex<HashMap<u64, Option<i64>>>>,
    /// Requests answered, per platform (`shopify`, `woocommerce`).
    pub calls: Arc<Mutex<Vec<&'static str>>>,
}

impl PlatformFake {
    /// Starts the fake on a free loopback port.
    pub async fn start() -> Self {
        use axum::extract::{Path, State};
        use axum::response::IntoResponse;
        type Levels = ShopifyLevels;
        type Products = Arc<Mutex<HashMap<u64, Option<i64>>>>;
        type Calls = Arc<Mutex<Vec<&'static str>>>;
        #[derive(Clone)]
        struct Fake {
            shopify: Levels,
            woocommerce: Products,
            calls: Calls,
        }
        async fn graphql(
            State(f): State<Fake>,
            Path(_version): Path<String>,
            headers: HeaderMap,
            body: String,
        ) -> axum::response::Response {
            if headers
                .get("x-shopify-access-token")
                .and_then(|v| v.to_str().ok())
                != Some(SHOPIFY_ADMIN_TOKEN)
            {
                return (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(serde_json::json!({"errors": "[API] Invalid API key or access token (unrecognized login or wrong password)"})),
                )
                    .into_response();
            }
            let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let query = request["query"].as_str().unwrap_or_default();
            let Some(id) = request["variables"]["id"]
                .as_str()
                .and_then(|gid| gid.strip_prefix("gid://shopify/InventoryItem/"))
                .and_then(|n| n.parse::<u64>().ok())
                .filter(|_| {
                    query.contains("inventoryItem(id: $id)")
                        && query.contains("quantities(names: [\"available\"])")
                })
            else {
                return axum::Json(serde_json::json!({"errors": [{"message": "Variable $id of type ID! was provided invalid value"}]})).into_response();
            };
            f.calls.lock().expect("lock").push("shopify");
            let levels = f.shopify.lock().expect("lock").get(&id).cloned();
            let item = levels.map(|levels| {
                serde_json::json!({
                    "tracked": true,
                    "inventoryLevels": {
                        "edges": levels.iter().map(|(location, available)| serde_json::json!({
                            "node": {
                                "location": {"id": format!("gid://shopify/Location/{location}")},
                                "quantities": [{"name": "available", "quantity": available}]
                            }
                        })).collect::<Vec<_>>(),
                        "pageInfo": {"hasNextPage": false}
                    }
                })
            });
            axum::Json(serde_json::json!({
                "data": {"inventoryItem": item},
                "extensions": {"cost": {"requestedQueryCost": 4, "actualQueryCost": 4}}
            }))
            .into_response()
        }
        async fn product(
            State(f): State<Fake>,
            Path(id): Path<u64>,
            headers: HeaderMap,
        ) -> axum::response::Response {
            use base64::Engine;
            let expected = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD
                    .encode(format!("{}:{}", WOO_API_KEY.0, WOO_API_KEY.1))
            );
            if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str())
            {
                return (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(serde_json::json!({"code": "woocommerce_rest_cannot_view", "message": "Sorry, you cannot view this resource.", "data": {"status": 401}})),
                )
                    .into_response();
            }
            f.calls.lock().expect("lock").push("woocommerce");
            match f.woocommerce.lock().expect("lock").get(&id).copied() {
                None => (
                    StatusCode::NOT_FOUND,
                    axum::Json(serde_json::json!({"code": "woocommerce_rest_product_invalid_id", "message": "Invalid ID.", "data": {"status": 404}})),
                )
                    .into_response(),
                Some(quantity) => axum::Json(serde_json::json!({
                    "id": id,
                    "name": "Linen throw",
                    "sku": "THROW-OAT",
                    "manage_stock": quantity.is_some(),
                    "stock_quantity": quantity,
                    "stock_status": if quantity.unwrap_or(0) > 0 { "instock" } else { "outofstock" }
                }))
                .into_response(),
            }
        }
        let fake = Fake {
            shopify: Arc::default(),
            woocommerce: Arc::default(),
            calls: Arc::default(),
        };
        let app = Router::new()
            .route(
                "/admin/api/{version}/graphql.json",
                axum::routing::post(graphql),
            )
            .route("/wp-json/wc/v3/products/{id}", axum::routing::get(product))
            .with_state(fake.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await.expect("fake serves") });
        Self {
            url,
            shopify: fake.shopify,
            woocommerce: fake.woocommerce,
            calls: fake.calls,
        }
    }

    /// The keys secret with API access to this fake.
    pub fn secrets_json(&self) -> String {
        let mut secret: serde_json::Value =
            serde_json::from_str(&secrets_json()).expect("the test secret");
        secret["shopify_admin"] =
            serde_json::json!({"shop": self.url, "access_token": SHOPIFY_ADMIN_TOKEN});
        secret["woocommerce_api"] = serde_json::json!({
            "url": self.url,
            "consumer_key": WOO_API_KEY.0,
            "consumer_secret": WOO_API_KEY.1,
        });
        secret.to_string()
    }
}
