//! A local HTTP server that speaks the Shopify Admin GraphQL and
//! WooCommerce REST APIs the stock pull reads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};

use crate::*;

/// The Shopify Admin API access token the platform fake accepts.
pub const SHOPIFY_ADMIN_TOKEN: &str = "shpat_test_token_0123456789";
/// The Dev Dashboard app (client id, client secret) the platform fake's
/// client credentials grant accepts.
pub const SHOPIFY_APP: (&str, &str) = (
    "3f9a1c2b7d4e5f60a1b2c3d4e5f6a7b8",
    "shpss_test_client_secret_0123",
);
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
    /// Requests answered, per platform (`shopify`, `woocommerce`; a token
    /// granted: `shopify-token`; a token refused: `shopify-refused`; the
    /// shop's locations: `shopify-locations`; other Admin reads: `shopify-admin`).
    pub calls: Arc<Mutex<Vec<&'static str>>>,
    /// Tokens the grant gave, each with when it runs out; clear it to
    /// revoke them all.
    pub granted: Granted,
    /// How long the grant's tokens last, in seconds (Shopify: 86,399).
    pub expires_in: Arc<Mutex<u64>>,
    /// The shop's product variants, as Admin GraphQL's `ProductVariant`
    /// nodes (`productVariants`, paged by cursor).
    pub variants: Arc<Mutex<Vec<serde_json::Value>>>,
    /// The app's webhook subscriptions: (id, topic, uri).
    pub subscriptions: Arc<Mutex<Vec<(String, String, String)>>>,
    /// How many of the next GraphQL calls are answered `THROTTLED`.
    pub throttle: Arc<Mutex<u32>>,
    /// WooCommerce's products as REST lists them, and each variable one's
    /// variations (both paged, `X-WP-TotalPages`).
    pub woo_products: Arc<Mutex<Vec<serde_json::Value>>>,
    /// Variations per product id.
    pub woo_variations: Arc<Mutex<HashMap<u64, Vec<serde_json::Value>>>>,
    /// WooCommerce's webhooks, as REST lists them (with the secret each
    /// was given).
    pub woo_webhooks: Arc<Mutex<Vec<serde_json::Value>>>,
    /// While set, lists come without `X-WP-Total` and `X-WP-TotalPages`
    /// (a proxy or cache in front of the site dropped them).
    pub woo_no_paging_headers: Arc<std::sync::atomic::AtomicBool>,
    /// Shopify's locations that do not fulfil online orders (a shop
    /// counter): `fulfillsOnlineOrders` false. Every other location that
    /// holds stock fulfils them.
    pub retail_only: Arc<Mutex<std::collections::BTreeSet<u64>>>,
    /// WooCommerce's setting options by `group/id` → value, as REST's
    /// `settings/{group}/{id}` answers them; any other is
    /// `rest_setting_setting_invalid` (404), as for a feature that is off.
    pub woo_settings: Arc<Mutex<HashMap<String, String>>>,
}

/// The tokens the fake's grant gave, each with when it runs out.
pub type Granted = Arc<Mutex<HashMap<String, std::time::Instant>>>;

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
            granted: Granted,
            expires_in: Arc<Mutex<u64>>,
            variants: Arc<Mutex<Vec<serde_json::Value>>>,
            subscriptions: Arc<Mutex<Vec<(String, String, String)>>>,
            throttle: Arc<Mutex<u32>>,
            woo_products: Arc<Mutex<Vec<serde_json::Value>>>,
            woo_variations: Arc<Mutex<HashMap<u64, Vec<serde_json::Value>>>>,
            woo_webhooks: Arc<Mutex<Vec<serde_json::Value>>>,
            woo_no_paging_headers: Arc<std::sync::atomic::AtomicBool>,
            retail_only: Arc<Mutex<std::collections::BTreeSet<u64>>>,
            woo_settings: Arc<Mutex<HashMap<String, String>>>,
        }
        /// WooCommerce's key check (HTTP basic auth): the 401 it answers.
        fn woo_refused(headers: &HeaderMap, message: &str) -> Option<axum::response::Response> {
            use base64::Engine;
            let expected = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD
                    .encode(format!("{}:{}", WOO_API_KEY.0, WOO_API_KEY.1))
            );
            (headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str())).then(|| {
                (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(serde_json::json!({"code": "woocommerce_rest_cannot_view", "message": message, "data": {"status": 401}})),
                )
                    .into_response()
            })
        }
        /// One page of a WooCommerce list, with `X-WP-Total` and `X-WP-TotalPages`.
        fn woo_page(
            all: &[serde_json::Value],
            query: &HashMap<String, String>,
            paging_headers: bool,
        ) -> axum::response::Response {
            let per_page: usize = query
                .get("per_page")
                .and_then(|n| n.parse().ok())
                .unwrap_or(10)
                .clamp(1, 100);
            let page: usize = query
                .get("page")
                .and_then(|n| n.parse().ok())
                .unwrap_or(1)
                .max(1);
            let pages = all.len().div_ceil(per_page).max(1);
            let items: Vec<_> = all
                .iter()
                .skip((page - 1) * per_page)
                .take(per_page)
                .cloned()
                .collect();
            if !paging_headers {
                return axum::Json(items).into_response();
            }
            (
                [
                    ("x-wp-total", all.len().to_string()),
                    ("x-wp-totalpages", pages.to_string()),
                ],
                axum::Json(items),
            )
                .into_response()
        }
        async fn woo_products(
            State(f): State<Fake>,
            headers: HeaderMap,
            axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>,
        ) -> axum::response::Response {
            if let Some(refused) = woo_refused(&headers, "Sorry, you cannot list resources.") {
                return refused;
            }
            f.calls.lock().expect("lock").push("woocommerce-list");
            let headers = !f
                .woo_no_paging_headers
                .load(std::sync::atomic::Ordering::SeqCst);
            woo_page(&f.woo_products.lock().expect("lock"), &query, headers)
        }
        async fn woo_variations(
            State(f): State<Fake>,
            Path(id): Path<u64>,
            headers: HeaderMap,
            axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>,
        ) -> axum::response::Response {
            if let Some(refused) = woo_refused(&headers, "Sorry, you cannot list resources.") {
                return refused;
            }
            f.calls.lock().expect("lock").push("woocommerce-list");
            let all = f
                .woo_variations
                .lock()
                .expect("lock")
                .get(&id)
                .cloned()
                .unwrap_or_default();
            let headers = !f
                .woo_no_paging_headers
                .load(std::sync::atomic::Ordering::SeqCst);
            woo_page(&all, &query, headers)
        }
        async fn woo_webhooks(
            State(f): State<Fake>,
            headers: HeaderMap,
            axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>,
        ) -> axum::response::Response {
            if let Some(refused) = woo_refused(&headers, "Sorry, you cannot list resources.") {
                return refused;
            }
            // The secret is never listed back.
            let listed: Vec<_> = f
                .woo_webhooks
                .lock()
                .expect("lock")
                .iter()
                .map(|w| {
                    let mut w = w.clone();
                    w.as_object_mut().expect("an object").remove("secret");
                    w
                })
                .collect();
            let headers = !f
                .woo_no_paging_headers
                .load(std::sync::atomic::Ordering::SeqCst);
            woo_page(&listed, &query, headers)
        }
        async fn woo_create_webhook(
            State(f): State<Fake>,
            headers: HeaderMap,
            body: String,
        ) -> axum::response::Response {
            if let Some(refused) = woo_refused(&headers, "Sorry, you cannot list resources.") {
                return refused;
            }
            let input: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let topic = input["topic"].as_str().unwrap_or_default();
            if ![
                "product.updated",
                "product.created",
                "order.updated",
                "order.created",
            ]
            .contains(&topic)
            {
                return (
                    StatusCode::BAD_REQUEST,
                    axum::Json(serde_json::json!({"code": "woocommerce_rest_webhook_invalid_topic", "message": "Webhook topic must be valid.", "data": {"status": 400}})),
                )
                    .into_response();
            }
            let mut hooks = f.woo_webhooks.lock().expect("lock");
            let webhook = serde_json::json!({
                "id": 100 + hooks.len(),
                "name": input["name"],
                "status": input["status"].as_str().unwrap_or("active"),
                "topic": topic,
                "delivery_url": input["delivery_url"],
                "secret": input["secret"],
            });
            hooks.push(webhook.clone());
            let mut answer = webhook;
            answer.as_object_mut().expect("an object").remove("secret");
            (StatusCode::CREATED, axum::Json(answer)).into_response()
        }
        /// The Admin GraphQL calls `restock connect shopify` makes, as
        /// Shopify answers them: variants and the app's subscriptions (by
        /// topic) a page at a time (an opaque cursor), a new subscription.
        /// One page of a GraphQL connection over `all`: `$first` nodes
        /// after the opaque cursor `$after`, and its `pageInfo`.
        fn page(all: &[serde_json::Value], variables: &serde_json::Value) -> serde_json::Value {
            let first = variables["first"].as_u64().unwrap_or(50).min(250) as usize;
            let start = variables["after"]
                .as_str()
                .and_then(|c| c.strip_prefix("cursor-"))
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            let nodes: Vec<_> = all.iter().skip(start).take(first).cloned().collect();
            let end = start + nodes.len();
            serde_json::json!({
                "nodes": nodes,
                "pageInfo": {"hasNextPage": end < all.len(), "endCursor": (!nodes.is_empty()).then(|| format!("cursor-{end}"))}
            })
        }
        fn admin(
            f: &Fake,
            query: &str,
            variables: &serde_json::Value,
        ) -> Option<serde_json::Value> {
            if query.contains("productVariants(first: $first, after: $after)") {
                let all = f.variants.lock().expect("lock").clone();
                return Some(serde_json::json!({"productVariants": page(&all, variables)}));
            }
            if query.contains("locations(first: $first, after: $after, includeInactive: true)") {
                // Every location that holds stock, and the retail-only ones.
                let retail = f.retail_only.lock().expect("lock").clone();
                let mut ids: std::collections::BTreeSet<u64> = retail.clone();
                for levels in f.shopify.lock().expect("lock").values() {
                    ids.extend(levels.iter().map(|(location, _)| *location));
                }
                let nodes: Vec<_> = ids
                    .iter()
                    .map(|id| {
                        serde_json::json!({
                            "id": format!("gid://shopify/Location/{id}"),
                            "fulfillsOnlineOrders": !retail.contains(id),
                        })
                    })
                    .collect();
                return Some(serde_json::json!({"locations": {
                    "nodes": nodes, "pageInfo": {"hasNextPage": false, "endCursor": null}
                }}));
            }
            if query.contains("webhookSubscriptions(first: $first, after: $after, topics: $topics)")
            {
                let topics: Vec<String> =
                    serde_json::from_value(variables["topics"].clone()).unwrap_or_default();
                let all: Vec<_> = f.subscriptions.lock().expect("lock").iter()
                    .filter(|(_, topic, _)| topics.is_empty() || topics.contains(topic))
                    .map(|(id, topic, uri)| serde_json::json!({"id": id, "topic": topic, "uri": uri}))
                    .collect();
                return Some(serde_json::json!({"webhookSubscriptions": page(&all, variables)}));
            }
            if query.contains("webhookSubscriptionCreate(topic: $topic, webhookSubscription: $sub)")
            {
                let topic = variables["topic"].as_str().unwrap_or_default().to_owned();
                let uri = variables["sub"]["uri"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let mut subs = f.subscriptions.lock().expect("lock");
                // Shopify refuses a second subscription of a topic to one address.
                if subs.iter().any(|(_, t, u)| *t == topic && *u == uri) {
                    return Some(serde_json::json!({"webhookSubscriptionCreate": {
                        "webhookSubscription": null,
                        "userErrors": [{"field": ["webhookSubscription", "callbackUrl"], "message": "Address for this topic has already been taken"}]
                    }}));
                }
                let id = format!("gid://shopify/WebhookSubscription/{}", 9000 + subs.len());
                subs.push((id.clone(), topic.clone(), uri.clone()));
                return Some(serde_json::json!({"webhookSubscriptionCreate": {
                    "webhookSubscription": {"id": id, "topic": topic, "uri": uri},
                    "userErrors": []
                }}));
            }
            None
        }
        /// `POST /admin/oauth/access_token`, form-encoded, as Shopify's
        /// client credentials grant: a new token each time, lasting
        /// `expires_in`; wrong credentials are 400 `invalid_client`.
        async fn grant(State(f): State<Fake>, body: String) -> axum::response::Response {
            let form: HashMap<String, String> =
                serde_urlencoded::from_str(&body).unwrap_or_default();
            let field = |k: &str| form.get(k).map(String::as_str);
            if field("grant_type") != Some("client_credentials") {
                return (
                    StatusCode::BAD_REQUEST,
                    axum::Json(serde_json::json!({"error": "unsupported_grant_type"})),
                )
                    .into_response();
            }
            if (field("client_id"), field("client_secret"))
                != (Some(SHOPIFY_APP.0), Some(SHOPIFY_APP.1))
            {
                return (
                    StatusCode::BAD_REQUEST,
                    axum::Json(serde_json::json!({"error": "invalid_client", "error_description": "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method."})),
                )
                    .into_response();
            }
            f.calls.lock().expect("lock").push("shopify-token");
            let mut granted = f.granted.lock().expect("lock");
            let token = format!("shpat_granted_{}", granted.len() + 1);
            let expires_in = *f.expires_in.lock().expect("lock");
            granted.insert(
                token.clone(),
                std::time::Instant::now() + std::time::Duration::from_secs(expires_in),
            );
            axum::Json(serde_json::json!({
                "access_token": token,
                "scope": "read_inventory,read_products",
                "expires_in": expires_in,
            }))
            .into_response()
        }
        async fn graphql(
            State(f): State<Fake>,
            Path(_version): Path<String>,
            headers: HeaderMap,
            body: String,
        ) -> axum::response::Response {
            let token = headers
                .get("x-shopify-access-token")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let granted = f
                .granted
                .lock()
                .expect("lock")
                .get(token)
                .is_some_and(|until| std::time::Instant::now() < *until);
            if token != SHOPIFY_ADMIN_TOKEN && !granted {
                f.calls.lock().expect("lock").push("shopify-refused");
                return (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(serde_json::json!({"errors": "[API] Invalid API key or access token (unrecognized login or wrong password)"})),
                )
                    .into_response();
            }
            let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let query = request["query"].as_str().unwrap_or_default();
            {
                let mut throttle = f.throttle.lock().expect("lock");
                if *throttle > 0 {
                    *throttle -= 1;
                    f.calls.lock().expect("lock").push("shopify-throttled");
                    return axum::Json(serde_json::json!({
                        "errors": [{"message": "Throttled", "extensions": {"code": "THROTTLED", "documentation": "https://shopify.dev/api/usage/rate-limits"}}],
                        "extensions": {"cost": {"requestedQueryCost": 252, "actualQueryCost": null, "throttleStatus": {"maximumAvailable": 2000.0, "currentlyAvailable": 12, "restoreRate": 100.0}}}
                    })).into_response();
                }
            }
            if let Some(data) = admin(&f, query, &request["variables"]) {
                let read = if query.contains("locations(first:") {
                    "shopify-locations"
                } else {
                    "shopify-admin"
                };
                f.calls.lock().expect("lock").push(read);
                return axum::Json(serde_json::json!({"data": data})).into_response();
            }
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
            if let Some(refused) = woo_refused(&headers, "Sorry, you cannot view this resource.") {
                return refused;
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
        /// REST's setting option (`GET settings/{group}/{id}`), shaped as
        /// WooCommerce documents it.
        async fn woo_setting(
            State(f): State<Fake>,
            Path((group, id)): Path<(String, String)>,
            headers: HeaderMap,
        ) -> axum::response::Response {
            if let Some(refused) = woo_refused(&headers, "Sorry, you cannot view this resource.") {
                return refused;
            }
            let value = f
                .woo_settings
                .lock()
                .expect("lock")
                .get(&format!("{group}/{id}"))
                .cloned();
            match value {
                None => (
                    StatusCode::NOT_FOUND,
                    axum::Json(serde_json::json!({"code": "rest_setting_setting_invalid", "message": "Invalid setting.", "data": {"status": 404}})),
                )
                    .into_response(),
                Some(value) => axum::Json(serde_json::json!({
                    "id": id, "label": "", "description": "", "type": "checkbox",
                    "default": "no", "tip": "", "value": value, "group_id": group,
                }))
                .into_response(),
            }
        }
        let fake = Fake {
            shopify: Arc::default(),
            woocommerce: Arc::default(),
            calls: Arc::default(),
            granted: Arc::default(),
            expires_in: Arc::new(Mutex::new(86_399)),
            variants: Arc::default(),
            subscriptions: Arc::default(),
            throttle: Arc::default(),
            woo_products: Arc::default(),
            woo_variations: Arc::default(),
            woo_webhooks: Arc::default(),
            woo_no_paging_headers: Arc::default(),
            retail_only: Arc::default(),
            woo_settings: Arc::default(),
        };
        let app = Router::new()
            .route("/admin/oauth/access_token", axum::routing::post(grant))
            .route(
                "/admin/api/{version}/graphql.json",
                axum::routing::post(graphql),
            )
            .route("/wp-json/wc/v3/products/{id}", axum::routing::get(product))
            .route("/wp-json/wc/v3/products", axum::routing::get(woo_products))
            .route(
                "/wp-json/wc/v3/settings/{group}/{id}",
                axum::routing::get(woo_setting),
            )
            .route(
                "/wp-json/wc/v3/products/{id}/variations",
                axum::routing::get(woo_variations),
            )
            .route(
                "/wp-json/wc/v3/webhooks",
                axum::routing::get(woo_webhooks).post(woo_create_webhook),
            )
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
            granted: fake.granted,
            expires_in: fake.expires_in,
            variants: fake.variants,
            subscriptions: fake.subscriptions,
            throttle: fake.throttle,
            woo_products: fake.woo_products,
            woo_variations: fake.woo_variations,
            woo_webhooks: fake.woo_webhooks,
            woo_no_paging_headers: fake.woo_no_paging_headers,
            retail_only: fake.retail_only,
            woo_settings: fake.woo_settings,
        }
    }

    /// The keys secret with a Dev Dashboard app's credentials for this
    /// fake's Shopify (tokens through the client credentials grant).
    pub fn app_secrets_json(&self) -> String {
        let mut secret: serde_json::Value =
            serde_json::from_str(&self.secrets_json()).expect("the secret");
        secret["shopify_admin"] = serde_json::json!({
            "shop": self.url,
            "client_id": SHOPIFY_APP.0,
            "client_secret": SHOPIFY_APP.1,
        });
        secret.to_string()
    }

    /// How many times Shopify's API was called for `what` (`shopify`,
    /// `shopify-token`, `woocommerce`).
    pub fn count(&self, what: &str) -> usize {
        self.calls
            .lock()
            .expect("lock")
            .iter()
            .filter(|c| **c == what)
            .count()
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
