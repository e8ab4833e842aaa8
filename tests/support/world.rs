//! [`World`]: restock's real routers and handlers on one store, with the
//! stream emulated by [`World::pump`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use restock_app::ports::{
    Alerts, Clock, FixedPhraser, Keyring, ManualClock, OsEntropy, Phraser, RecordedAlerts, Secrets,
    Sender, StaticKeyring,
};
use restock_app::{Services, capture, detect, notify, sweep};
use restock_core::Sku;
use restock_core::platform::{shopify, standard, woocommerce};
use restock_store::prelude::*;
use restock_store_memory::MemoryStore;
use tower::ServiceExt;

use crate::*;

/// An HTTP answer, read whole.
#[derive(Debug)]
pub struct Reply {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body as text.
    pub body: String,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Which router.
#[derive(Debug, Clone, Copy)]
pub enum Api {
    /// Shopper-facing.
    Capture,
    /// Store-facing.
    Detect,
}

/// restock, wired for a test.
pub struct World {
    /// The services the handlers share.
    pub services: Arc<Services>,
    /// The store.
    pub store: Arc<dyn Store>,
    /// The clock.
    pub clock: Arc<ManualClock>,
    /// Alerts raised.
    pub alerts: Arc<RecordedAlerts>,
    /// restock's events published (from stream records handed to notify).
    pub events: Arc<restock_app::ports::EventLog>,
    capture: Router,
    detect: Router,
    pumped: Mutex<HashMap<String, usize>>,
    /// Distinguishes this world's shoppers from other tests' in shared stand-ins.
    pub tag: String,
    lag: IndexLag,
}

/// How a world's store's index reads trail its writes.
#[derive(Clone, Default)]
pub enum IndexLag {
    /// Index reads are current.
    #[default]
    None,
    /// The in-memory store's lagging knob.
    Memory(Arc<MemoryStore>),
    /// A DynamoDB endpoint whose indexes trail by this much
    /// (`restock_store_dynamo::testing::index_lag`).
    Dynamo(Duration),
}

static WORLDS: AtomicUsize = AtomicUsize::new(0);

impl World {
    /// A world on the given adapters, seeded with settings and the catalogue.
    pub async fn new(
        store: Arc<dyn Store>,
        sender: Arc<dyn Sender>,
        phraser: Arc<dyn Phraser>,
        keyring: Arc<dyn Keyring>,
    ) -> Self {
        let clock = Arc::new(ManualClock::at_ms(T0));
        let alerts = Arc::new(RecordedAlerts::default());
        let mut services = Services::new(
            store.clone(),
            sender,
            phraser,
            keyring,
            alerts.clone() as Arc<dyn Alerts>,
            clock.clone() as Arc<dyn Clock>,
            Arc::new(OsEntropy),
        );
        // The production adapter: it reads whatever API access the keys
        // secret holds (none in the usual test secret).
        services.platforms = Arc::new(restock_aws::platforms::HttpPlatforms::new());
        let events = Arc::new(restock_app::ports::EventLog::default());
        services.events = events.clone();
        let services = Arc::new(services);
        store
            .put_settings(&settings())
            .await
            .expect("settings stored");
        for entry in catalogue() {
            store
                .put_catalogue_entry(&entry)
                .await
                .expect("catalogue stored");
        }
        let tag = format!(
            "{}-{}",
            std::process::id(),
            WORLDS.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            capture: capture::router(services.clone()),
            detect: detect::router(services.clone()),
            services,
            store,
            clock,
            alerts,
            events,
            pumped: Mutex::new(HashMap::new()),
            tag,
            lag: IndexLag::None,
        }
    }

    /// The same world, its store's indexes trailing as `lag` says.
    pub fn lagging(mut self, lag: IndexLag) -> Self {
        self.lag = lag;
        self
    }

    /// Lets the store's indexes catch up: the real time that passes where
    /// the tests' clock jumps (before a scheduled sweep, after an advance).
    pub async fn settle(&self) {
        match &self.lag {
            IndexLag::None => {}
            IndexLag::Memory(store) => store.catch_up(),
            IndexLag::Dynamo(lag) if lag.is_zero() => {}
            IndexLag::Dynamo(lag) => tokio::time::sleep(*lag * 2).await,
        }
    }

    /// The world's now as RFC 3339 (as the platforms write times).
    pub fn clock_rfc3339(&self) -> String {
        time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(self.clock.now_ms()) * 1_000_000)
            .expect("a time")
            .format(&time::format_description::well_known::Rfc3339)
            .expect("formats")
    }

    /// A world on the in-memory store with an outbox and a model that answers.
    pub async fn memory() -> (Self, Arc<restock_app::ports::Outbox>) {
        Self::on_memory(Arc::new(MemoryStore::new())).await
    }

    /// A world on the in-memory store whose keys secret is `secret` (for
    /// example one with platform API access, [`PlatformFake::secrets_json`]).
    pub async fn memory_with_secret(secret: &str) -> (Self, Arc<restock_app::ports::Outbox>) {
        let outbox = Arc::new(restock_app::ports::Outbox::default());
        let world = Self::new(
            Arc::new(MemoryStore::new()),
            outbox.clone(),
            Arc::new(FixedPhraser(Ok("It is back.".into()))),
            Arc::new(StaticKeyring(Arc::new(
                Secrets::from_json(secret).expect("valid secret"),
            ))),
        )
        .await;
        (world, outbox)
    }

    /// A world on the in-memory store with its indexes lagging
    /// ([`MemoryStore::lagging`]; [`World::settle`] catches them up).
    pub async fn memory_lagging() -> (Self, Arc<restock_app::ports::Outbox>) {
        let store = Arc::new(MemoryStore::lagging());
        let (world, outbox) = Self::on_memory(store.clone()).await;
        (world.lagging(IndexLag::Memory(store)), outbox)
    }

    async fn on_memory(store: Arc<MemoryStore>) -> (Self, Arc<restock_app::ports::Outbox>) {
        let outbox = Arc::new(restock_app::ports::Outbox::default());
        let world = Self::new(
            store,
            outbox.clone(),
            Arc::new(FixedPhraser(Ok(
                "The walnut chair is home again, and one is set aside for you.".into(),
            ))),
            Arc::new(StaticKeyring(Arc::new(
                Secrets::from_json(&secrets_json()).expect("valid secret"),
            ))),
        )
        .await;
        (world, outbox)
    }

    /// An email address unique to this world.
    pub fn email(&self, name: &str) -> String {
        format!("{}.{}@example.com", name.to_lowercase(), self.tag)
    }

    /// Sends a request to a router.
    pub async fn call(&self, api: Api, request: Request<Body>) -> Reply {
        let router = match api {
            Api::Capture => self.capture.clone(),
            Api::Detect => self.detect.clone(),
        };
        let response = router
            .oneshot(request)
            .await
            .expect("routers are infallible");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// A JSON request to capture.
    pub async fn capture_json(&self, method: &str, path: &str, body: serde_json::Value) -> Reply {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .extension(restock_app::capture::ClientAddr(
                "203.0.113.7".parse().expect("an address"),
            ))
            .body(Body::from(body.to_string()))
            .expect("request");
        self.call(Api::Capture, request).await
    }

    /// A bodiless request to capture.
    pub async fn capture(&self, method: &str, path: &str) -> Reply {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .body(Body::empty())
            .expect("request");
        self.call(Api::Capture, request).await
    }

    /// `GET` or `DELETE /requests/{id}` as the joining browser does it: with
    /// the manage token its 201 carried (`{sku}~{id}.{secret}`).
    pub async fn manage(&self, method: &str, token: &str) -> Reply {
        let id = token
            .split('~')
            .nth(1)
            .and_then(|rest| rest.split('.').next())
            .unwrap_or_default();
        let request = Request::builder()
            .method(method)
            .uri(format!("/requests/{id}"))
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .expect("request");
        self.call(Api::Capture, request).await
    }

    /// A shopper taps "notify me" by email.
    pub async fn join(&self, name: &str) -> Reply {
        self.capture_json(
            "POST",
            "/requests",
            serde_json::json!({ "sku": CHAIR, "name": name, "email": self.email(name), "consent": true }),
        )
        .await
    }

    /// A signed Shopify inventory webhook for the chair.
    pub fn shopify_request(&self, available: Option<i64>, webhook_id: &str) -> Request<Body> {
        self.shopify_request_at(available, webhook_id, self.clock.now_ms())
    }

    /// The same, its `updated_at` at `updated_ms`.
    pub fn shopify_request_at(
        &self,
        available: Option<i64>,
        webhook_id: &str,
        updated_ms: i64,
    ) -> Request<Body> {
        let updated_at =
            time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(updated_ms) * 1_000_000)
                .expect("time")
                .format(&time::format_description::well_known::Rfc3339)
                .expect("format");
        let body = serde_json::json!({
            "inventory_item_id": CHAIR_SHOPIFY_ID,
            "location_id": 24826418u64,
            "available": available,
            "updated_at": updated_at,
        })
        .to_string();
        shopify_delivery("inventory_levels/update", webhook_id, &body)
    }

    /// Sends a signed Shopify inventory webhook for the chair.
    pub async fn shopify(&self, available: Option<i64>, webhook_id: &str) -> Reply {
        self.call(Api::Detect, self.shopify_request(available, webhook_id))
            .await
    }

    /// A generic stock webhook signed per Standard Webhooks at the world's now.
    pub fn stock_request(&self, id: &str, body: &str) -> Request<Body> {
        self.signed_request("/webhooks/stock", id, body)
    }

    /// A delivery to `path` signed per Standard Webhooks at the world's now
    /// (`/webhooks/stock` or `/webhooks/orders`).
    pub fn signed_request(&self, path: &str, id: &str, body: &str) -> Request<Body> {
        let ts = self.clock.now().unix_timestamp();
        let key = standard::decode_key(STOCK_KEY).expect("test key");
        Request::builder()
            .method("POST")
            .uri(path)
            .header("content-type", "application/json")
            .header(standard::ID, id)
            .header(standard::TIMESTAMP, ts.to_string())
            .header(
                standard::SIGNATURE,
                standard::sign(&key, id, ts, body.as_bytes()),
            )
            .body(Body::from(body.to_owned()))
            .expect("request")
    }

    /// A signed WooCommerce product webhook.
    pub fn woocommerce_request(&self, body: &str, delivery: &str) -> Request<Body> {
        woocommerce_delivery("product.updated", delivery, body)
    }

    /// Delivers new wake records to notify, as the stream would: one notify
    /// pass per SKU with wakes since the last pump. Returns the passes' reports.
    pub async fn pump(&self) -> Vec<notify::NotifyReport> {
        let mut reports = Vec::new();
        for entry in catalogue() {
            let wakes = self.store.wakes(&entry.sku).await.expect("wakes").len();
            let seen = self
                .pumped
                .lock()
                .expect("lock")
                .get(entry.sku.as_str())
                .copied()
                .unwrap_or(0);
            if wakes > seen {
                self.pumped
                    .lock()
                    .expect("lock")
                    .insert(entry.sku.to_string(), wakes);
                reports.push(
                    notify::notify_sku(&self.services, &entry.sku)
                        .await
                        .expect("notify pass"),
                );
            }
        }
        reports
    }

    /// One sweep at the world's now.
    pub async fn sweep(&self) -> sweep::SweepReport {
        // The sweep runs on a schedule: its due listing reads an index that
        // has had real time to catch up.
        self.settle().await;
        sweep::run(&self.services, sweep::DEFAULT_LIMIT)
            .await
            .expect("sweep")
    }

    /// Moves the clock.
    pub fn advance(&self, ms: i64) {
        self.clock.advance_ms(ms);
    }

    /// I1 at this moment: live offers plus holds never exceed the level.
    pub async fn assert_never_oversold(&self) {
        let c = self
            .store
            .snapshot(&Sku::try_from(CHAIR).expect("sku"))
            .await
            .expect("snapshot")
            .counters;
        assert!(c.offered + c.held <= c.level, "oversold: {c:?}");
    }
}

/// The path of a link (`https://host/r/x` → `/r/x`).
pub fn path_of(link: &str) -> String {
    let after_scheme = link.split_once("://").map_or(link, |(_, rest)| rest);
    after_scheme
        .find('/')
        .map_or_else(|| "/".to_owned(), |i| after_scheme[i..].to_owned())
}

/// A Shopify delivery of `body` on `topic` to detect's router, signed with
/// the shop's key.
pub fn shopify_delivery(topic: &str, webhook_id: &str, body: &str) -> Request<Body> {
    shopify_delivery_signed(SHOPIFY_KEY.as_bytes(), topic, webhook_id, body)
}

/// The same, signed with `key` (an app's client secret, or a stranger's).
pub fn shopify_delivery_signed(
    key: &[u8],
    topic: &str,
    webhook_id: &str,
    body: &str,
) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri("/webhooks/shopify")
        .header("content-type", "application/json")
        .header(shopify::SIGNATURE, shopify::sign(key, body.as_bytes()))
        .header(shopify::WEBHOOK_ID, webhook_id)
        .header(shopify::TOPIC, topic)
        .body(Body::from(body.to_owned()))
        .expect("request")
}

/// A WooCommerce delivery of `body` on `topic` (`product.updated`,
/// `order.updated`, …), signed with the site's key.
pub fn woocommerce_delivery(topic: &str, delivery: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri("/webhooks/woocommerce")
        .header("content-type", "application/json")
        .header(
            woocommerce::SIGNATURE,
            woocommerce::sign(WOO_KEY.as_bytes(), body.as_bytes()),
        )
        .header(woocommerce::DELIVERY_ID, delivery)
        .header(woocommerce::TOPIC, topic)
        .body(Body::from(body.to_owned()))
        .expect("request")
}
