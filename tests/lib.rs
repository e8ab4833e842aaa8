//! End-to-end test support: a [`World`] that runs restock's real routers and
//! handlers, on the in-memory store with an outbox, or on the AWS adapters
//! against moto's DynamoDB, SES, SNS and Secrets Manager with a local Bedrock
//! fake that speaks the Converse API.
//!
//! The stream that carries wakes to notify is emulated by [`World::pump`],
//! which runs the notify handler for every SKU with new wake records, the way
//! the DynamoDB stream would.

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
use restock_core::webhook::{shopify, standard, woocommerce};
use restock_core::{CatalogEntry, Settings, Sku};
use restock_store::prelude::*;
use restock_store_memory::MemoryStore;
use tower::ServiceExt;

/// 2026-11-29T09:00:00Z: every world's clock starts here.
pub const T0: i64 = 1_796_374_800_000;
/// One minute in ms.
pub const MIN: i64 = 60_000;
/// The documented test key for Shopify webhooks (also in `events/`).
pub const SHOPIFY_KEY: &str = "shpss_restock_test_key";
/// The documented test key for WooCommerce webhooks.
pub const WOO_KEY: &str = "wc_restock_test_key";
/// The documented test key for the generic stock and order webhooks.
pub const STOCK_KEY: &str = "whsec_cmVzdG9jay10ZXN0LXN0b2NrLWtleQ==";
/// The chair's Shopify inventory item id.
pub const CHAIR_SHOPIFY_ID: u64 = 271_878_346_596_884_015;
/// The chair's SKU.
pub const CHAIR: &str = "CHAIR-WAL";

/// The secret's JSON as the template would hold it once keys are set.
pub fn secrets_json() -> String {
    serde_json::json!({
        "shopify": ["shpss_new_key_not_yet_used", SHOPIFY_KEY],
        "woocommerce": [WOO_KEY],
        "stock": [STOCK_KEY],
        "contact_pepper": "restock-test-contact-pepper-0123456789",
    })
    .to_string()
}

/// The settings every world starts with (fast sends so tests do not wait).
pub fn settings() -> Settings {
    Settings::from_toml(
        r#"
store_name = "Loom & Last"
public_base_url = "https://notify.loomandlast.co.uk"
email_from = "Loom & Last <hello@loomandlast.co.uk>"
sms_sender_id = "LoomLast"
offer_window = "15m"
hold_window = "15m"
sends_per_second = 1000
storefront_origins = ["https://loomandlast.co.uk"]
# +44 numbers span Great Britain and the Crown Dependencies (+44 7911 is Guernsey).
sms_countries = ["GB", "GG", "JE", "IM"]
# Most suites start from a confirmed sign-up; tests/confirm walks double opt-in.
confirm = false
"#,
    )
    .expect("test settings are valid")
}

/// The chair and a throw, as the catalogue CSV would give them.
pub fn catalogue() -> Vec<CatalogEntry> {
    let csv = format!(
        "sku,name,product_url,checkout_url,threshold,shopify_inventory_item_id,woocommerce_product_id,shards\n\
         {CHAIR},Walnut dining chair,https://loomandlast.co.uk/products/walnut-chair,https://loomandlast.co.uk/cart/4242:1?attributes[hold]={{hold}},,{CHAIR_SHOPIFY_ID},799,2\n\
         THROW-OAT,Linen throw,https://loomandlast.co.uk/products/linen-throw,,,,812,\n"
    );
    restock_core::catalog::parse_csv(&csv).expect("test catalogue is valid")
}

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
        let services = Arc::new(services);
        store
            .put_settings(&settings())
            .await
            .expect("settings stored");
        for entry in catalogue() {
            store
                .put_catalog_entry(&entry)
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
        let updated_at = time::OffsetDateTime::from_unix_timestamp_nanos(
            i128::from(self.clock.now_ms()) * 1_000_000,
        )
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
        Request::builder()
            .method("POST")
            .uri("/webhooks/shopify")
            .header("content-type", "application/json")
            .header(
                shopify::SIGNATURE,
                shopify::sign(SHOPIFY_KEY.as_bytes(), body.as_bytes()),
            )
            .header(shopify::WEBHOOK_ID, webhook_id)
            .header(shopify::TOPIC, "inventory_levels/update")
            .body(Body::from(body))
            .expect("request")
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
        Request::builder()
            .method("POST")
            .uri("/webhooks/woocommerce")
            .header("content-type", "application/json")
            .header(
                woocommerce::SIGNATURE,
                woocommerce::sign(WOO_KEY.as_bytes(), body.as_bytes()),
            )
            .header(woocommerce::DELIVERY_ID, delivery)
            .header(woocommerce::TOPIC, "product.updated")
            .body(Body::from(body.to_owned()))
            .expect("request")
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

/// What the Bedrock fake does.
#[derive(Debug, Clone)]
pub enum ModelMode {
    /// Answers with this text.
    Answer(String),
    /// Answers 500.
    Fail,
    /// Answers after this long.
    Slow(Duration),
}

/// A local HTTP server that speaks Bedrock's Converse API.
pub struct BedrockFake {
    /// Its base URL.
    pub url: String,
    /// Converse calls received.
    pub calls: Arc<AtomicUsize>,
    /// What it does next.
    pub mode: Arc<Mutex<ModelMode>>,
}

impl BedrockFake {
    /// Starts the fake on a free loopback port.
    pub async fn start(mode: ModelMode) -> Self {
        use axum::extract::{Path, State};
        use axum::response::IntoResponse;
        let calls = Arc::new(AtomicUsize::new(0));
        let mode = Arc::new(Mutex::new(mode));
        type Shared = (Arc<AtomicUsize>, Arc<Mutex<ModelMode>>);
        async fn converse(
            State((calls, mode)): State<Shared>,
            Path(_model): Path<String>,
            body: String,
        ) -> axum::response::Response {
            let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            if !request["messages"][0]["content"][0]["text"].is_string() {
                return (
                    StatusCode::BAD_REQUEST,
                    axum::Json(serde_json::json!({"message": "not a Converse request"})),
                )
                    .into_response();
            }
            calls.fetch_add(1, Ordering::SeqCst);
            let mode = mode.lock().expect("lock").clone();
            match mode {
                ModelMode::Fail => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    axum::Json(serde_json::json!({"message": "model down"})),
                )
                    .into_response(),
                ModelMode::Slow(d) => {
                    tokio::time::sleep(d).await;
                    axum::Json(reply("Too late to matter.")).into_response()
                }
                ModelMode::Answer(text) => axum::Json(reply(&text)).into_response(),
            }
        }
        fn reply(text: &str) -> serde_json::Value {
            serde_json::json!({
                "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 40, "outputTokens": 14, "totalTokens": 54},
                "metrics": {"latencyMs": 120}
            })
        }
        let app = Router::new()
            .route("/model/{model}/converse", axum::routing::post(converse))
            .with_state((calls.clone(), mode.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await.expect("fake serves") });
        Self { url, calls, mode }
    }

    /// Converse calls received so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Changes what it does next.
    pub fn set(&self, mode: ModelMode) {
        *self.mode.lock().expect("lock") = mode;
    }
}

/// SDK configuration for moto (and for Bedrock, the fake).
pub async fn aws_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(aws_config::Region::new("eu-west-2"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
            "testing", "testing", None, None, "e2e",
        ))
        .load()
        .await
}

/// Emails moto's SES accepted, as (recipient, subject, HTML body), read from
/// the test server's `/_restock/ses/messages` (see `scripts/moto_serial.py`).
pub async fn ses_messages(endpoint: &str) -> Vec<(String, String, String)> {
    let body = http_get(&format!("{endpoint}/_restock/ses/messages")).await;
    let messages: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| {
        panic!("{endpoint} is not scripts/moto_serial.py (no SES message list: {e})")
    });
    messages
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| {
            let to = m["to"][0].as_str().unwrap_or_default().to_owned();
            (
                to,
                m["subject"].as_str().unwrap_or_default().to_owned(),
                m["body"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A plain HTTP GET on loopback.
pub async fn http_get(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").expect("http url");
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
        .await
        .expect("write");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.expect("read");
    let text = String::from_utf8_lossy(&response).into_owned();
    text.split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

/// The reserve link in an email's HTML.
pub fn reserve_link_in(html: &str) -> Option<String> {
    let start = html.find("href=\"https://notify.loomandlast.co.uk/r/")? + "href=\"".len();
    let end = start + html[start..].find('"')?;
    Some(html[start..end].to_owned())
}

/// What a function answered to one invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The handler's response body.
    Response(String),
    /// The handler's error report.
    Error(String),
}

struct Invocation {
    id: String,
    event: String,
    done: tokio::sync::oneshot::Sender<Outcome>,
}

#[derive(Clone)]
struct EmulatorState {
    queue: Arc<tokio::sync::Mutex<tokio::sync::mpsc::Receiver<Invocation>>>,
    pending: Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<Outcome>>>>,
    first_poll: Arc<Mutex<Option<std::time::Instant>>>,
    init_error: Arc<Mutex<Option<String>>>,
}

/// A Lambda Runtime API emulator on loopback: the compiled binaries poll it
/// for events exactly as they poll Lambda.
pub struct RuntimeApi {
    /// `host:port`, for `AWS_LAMBDA_RUNTIME_API`.
    pub addr: String,
    send: tokio::sync::mpsc::Sender<Invocation>,
    state: EmulatorState,
    next_id: AtomicUsize,
}

impl RuntimeApi {
    /// Starts the emulator on a free port.
    pub async fn start() -> Self {
        use axum::extract::{Path, State};
        use axum::response::IntoResponse;
        let (send, receive) = tokio::sync::mpsc::channel::<Invocation>(16);
        let state = EmulatorState {
            queue: Arc::new(tokio::sync::Mutex::new(receive)),
            pending: Arc::new(Mutex::new(HashMap::new())),
            first_poll: Arc::new(Mutex::new(None)),
            init_error: Arc::new(Mutex::new(None)),
        };
        async fn next(State(s): State<EmulatorState>) -> axum::response::Response {
            s.first_poll
                .lock()
                .expect("lock")
                .get_or_insert_with(std::time::Instant::now);
            let Some(invocation) = s.queue.lock().await.recv().await else {
                return StatusCode::GONE.into_response();
            };
            s.pending
                .lock()
                .expect("lock")
                .insert(invocation.id.clone(), invocation.done);
            let deadline = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("clock")
                .as_millis()
                + 60_000;
            (
                [
                    ("lambda-runtime-aws-request-id", invocation.id),
                    ("lambda-runtime-deadline-ms", deadline.to_string()),
                    ("lambda-runtime-invoked-function-arn", "arn:aws:lambda:eu-west-2:123456789012:function:restock".to_owned()),
                    ("lambda-runtime-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1".to_owned()),
                    ("content-type", "application/json".to_owned()),
                ],
                invocation.event,
            )
                .into_response()
        }
        async fn respond(
            State(s): State<EmulatorState>,
            Path(id): Path<String>,
            body: String,
        ) -> StatusCode {
            if let Some(done) = s.pending.lock().expect("lock").remove(&id) {
                let _ = done.send(Outcome::Response(body));
            }
            StatusCode::ACCEPTED
        }
        async fn fail(
            State(s): State<EmulatorState>,
            Path(id): Path<String>,
            body: String,
        ) -> StatusCode {
            if let Some(done) = s.pending.lock().expect("lock").remove(&id) {
                let _ = done.send(Outcome::Error(body));
            }
            StatusCode::ACCEPTED
        }
        async fn init_error(State(s): State<EmulatorState>, body: String) -> StatusCode {
            *s.init_error.lock().expect("lock") = Some(body);
            StatusCode::ACCEPTED
        }
        let app = Router::new()
            .route(
                "/2018-06-01/runtime/invocation/next",
                axum::routing::get(next),
            )
            .route(
                "/2018-06-01/runtime/invocation/{id}/response",
                axum::routing::post(respond),
            )
            .route(
                "/2018-06-01/runtime/invocation/{id}/error",
                axum::routing::post(fail),
            )
            .route(
                "/2018-06-01/runtime/init/error",
                axum::routing::post(init_error),
            )
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        tokio::spawn(async move { axum::serve(listener, app).await.expect("emulator serves") });
        Self {
            addr,
            send,
            state,
            next_id: AtomicUsize::new(1),
        }
    }

    /// Invokes the function with `event` and waits (up to a minute) for its answer.
    pub async fn invoke(&self, event: &str) -> Outcome {
        self.invoke_within(event, Duration::from_secs(60)).await
    }

    /// Invokes the function with `event` and waits up to `limit` for its answer.
    pub async fn invoke_within(&self, event: &str, limit: Duration) -> Outcome {
        let (done, answer) = tokio::sync::oneshot::channel();
        let id = format!("req-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        self.send
            .send(Invocation {
                id,
                event: event.to_owned(),
                done,
            })
            .await
            .expect("emulator running");
        tokio::time::timeout(limit, answer)
            .await
            .expect("the function answered in time")
            .expect("answer")
    }

    /// When the function first asked for an event (its init was done).
    pub fn first_poll(&self) -> Option<std::time::Instant> {
        *self.state.first_poll.lock().expect("lock")
    }

    /// Waits for the first poll, up to `limit`.
    pub async fn wait_first_poll(&self, limit: Duration) -> Option<std::time::Instant> {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if let Some(at) = self.first_poll() {
                return Some(at);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        None
    }
}

/// The environment Lambda gives every function, pointed at `api`.
pub fn lambda_env(api: &RuntimeApi, function: &str) -> Vec<(String, String)> {
    [
        ("AWS_LAMBDA_RUNTIME_API", api.addr.as_str()),
        ("AWS_LAMBDA_FUNCTION_NAME", function),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"),
        ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
        ("AWS_LAMBDA_LOG_FORMAT", "JSON"),
        ("AWS_LAMBDA_LOG_LEVEL", "INFO"),
        ("AWS_REGION", "eu-west-2"),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// `template.yaml`, parsed.
pub fn template() -> serde_yaml::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../template.yaml");
    let text = std::fs::read_to_string(path).expect("template.yaml");
    serde_yaml::from_str(&text).expect("template.yaml is YAML")
}

/// Every action the inline policies of the template's function
/// `logical_id` allow.
pub fn policy_actions(
    t: &serde_yaml::Value,
    logical_id: &str,
) -> std::collections::BTreeSet<String> {
    fn strings(v: &serde_yaml::Value) -> Vec<String> {
        match v {
            serde_yaml::Value::String(s) => vec![s.clone()],
            serde_yaml::Value::Sequence(items) => items.iter().flat_map(strings).collect(),
            _ => vec![],
        }
    }
    t["Resources"][logical_id]["Properties"]["Policies"]
        .as_sequence()
        .expect("inline policies")
        .iter()
        .flat_map(|p| p["Statement"].as_sequence().cloned().unwrap_or_default())
        .inspect(|s| assert_eq!(s["Effect"].as_str(), Some("Allow")))
        .flat_map(|s| strings(&s["Action"]))
        .collect()
}

/// The access key a function binary signs with in these tests.
fn function_key(binary: &str) -> String {
    format!("role-{binary}")
}

/// Tells the strict double (when the endpoint is one) each function's
/// DynamoDB permissions from `template.yaml`, keyed by the access key its
/// binary signs with: a request the deployed role would be refused is
/// refused here too (moto itself enforces no IAM).
async fn register_policies(endpoint: &str) {
    let t = template();
    let policies: HashMap<String, Vec<String>> = ["capture", "detect", "notify", "sweep"]
        .into_iter()
        .map(|f| {
            let logical_id = format!("{}{}Function", f[..1].to_uppercase(), &f[1..]);
            (
                function_key(f),
                policy_actions(&t, &logical_id)
                    .into_iter()
                    .filter(|a| a.starts_with("dynamodb:"))
                    .collect(),
            )
        })
        .collect();
    // Plain moto has no such endpoint: nothing to enforce with.
    let _ = reqwest::Client::new()
        .post(format!("{endpoint}/_restock/strict/iam"))
        .json(&policies)
        .send()
        .await;
}

/// Where cargo put a workspace binary for `profile` (`debug` or `release`).
pub fn binary(name: &str, profile: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join(profile).join(name)
}

use std::path::PathBuf;

/// What `sam deploy` and the after-deploy steps leave behind, on moto: a
/// table with settings and catalogue, the keys secret, the team topic, a
/// verified sender, and a Bedrock fake. Runs the compiled binaries against it.
pub struct Deployment {
    /// moto's endpoint.
    pub endpoint: String,
    /// The table, through the store.
    pub store: restock_store_dynamo::DynamoStore,
    /// The keys secret's name.
    pub secret: String,
    /// The team topic's ARN.
    pub topic: String,
    /// The model.
    pub model: BedrockFake,
    /// The SES configuration set notices go through.
    pub configuration_set: String,
}

impl Deployment {
    /// Creates it all with `settings`.
    pub async fn create(settings: Settings) -> Self {
        Self::create_with_secret(settings, &secrets_json()).await
    }

    /// Creates it all with `settings` and `secret` as the keys secret.
    pub async fn create_with_secret(settings: Settings, secret_json: &str) -> Self {
        let endpoint = restock_store_dynamo::testing::endpoint();
        let store = restock_store_dynamo::testing::dynamo_store().await;
        store
            .put_settings(&settings)
            .await
            .expect("settings stored");
        for entry in catalogue() {
            store
                .put_catalog_entry(&entry)
                .await
                .expect("catalogue stored");
        }
        let sdk = aws_config(&endpoint).await;
        let secret = restock_store_dynamo::testing::unique_table("restock-secret");
        aws_sdk_secretsmanager::Client::new(&sdk)
            .create_secret()
            .name(&secret)
            .secret_string(secret_json)
            .send()
            .await
            .expect("secret created");
        let topic = aws_sdk_sns::Client::new(&sdk)
            .create_topic()
            .name("restock-team")
            .send()
            .await
            .expect("topic created")
            .topic_arn
            .expect("topic arn");
        // Verifying the sender twice (another test did) is fine.
        let _ = aws_sdk_sesv2::Client::new(&sdk)
            .create_email_identity()
            .email_identity("hello@loomandlast.co.uk")
            .send()
            .await;
        register_policies(&endpoint).await;
        let configuration_set = restock_store_dynamo::testing::unique_table("restock-notices");
        aws_sdk_sesv2::Client::new(&sdk)
            .create_configuration_set()
            .configuration_set_name(&configuration_set)
            .send()
            .await
            .expect("configuration set created");
        let model = BedrockFake::start(ModelMode::Answer(
            "Home again, and one is set aside for you.".into(),
        ))
        .await;
        Self {
            endpoint,
            store,
            secret,
            topic,
            configuration_set,
            model,
        }
    }

    /// The command that starts binary `name` (from `profile`) as Lambda
    /// would, against this deployment; output is discarded unless the caller
    /// sets otherwise.
    pub fn command(&self, api: &RuntimeApi, name: &str, profile: &str) -> tokio::process::Command {
        let path = binary(name, profile);
        assert!(
            path.exists(),
            "{} is missing: build it first (`cargo build --workspace`; scripts/test.sh does)",
            path.display()
        );
        let mut command = tokio::process::Command::new(path);
        command
            .env_clear()
            .envs(lambda_env(api, name))
            // Signed as the function's role: the strict double refuses what
            // its template policy does not allow (see `register_policies`).
            .env("AWS_ACCESS_KEY_ID", function_key(name))
            .env("AWS_ENDPOINT_URL", &self.endpoint)
            .env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &self.model.url)
            .env("RESTOCK_TABLE", self.store.table())
            .env("RESTOCK_SECRET_ID", &self.secret)
            .env("RESTOCK_ALERT_TOPIC_ARN", &self.topic)
            .env("RESTOCK_BEDROCK_MODEL_ID", "amazon.nova-micro-v1:0")
            .env("RESTOCK_SES_CONFIGURATION_SET", &self.configuration_set)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        command
    }
}

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

/// How the provider fake answers a send to one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderAnswer {
    /// SES v2 refuses `SendEmail` with this HTTP status, error code and message.
    Ses(u16, &'static str, &'static str),
    /// SNS refuses `Publish` with this HTTP status, error code and message.
    Sns(u16, &'static str, &'static str),
    /// SNS's `CheckIfPhoneNumberIsOptedOut` says the number opted out.
    OptedOut,
    /// SNS refuses `CheckIfPhoneNumberIsOptedOut` with this status, code and message.
    SnsCheck(u16, &'static str, &'static str),
    /// Answers only after this long (past the SDK's attempt timeout).
    Slow(Duration),
}

/// A local HTTP server that speaks the two send APIs restock uses, as the
/// SDK sees them on the wire: SES v2 `SendEmail` (REST-JSON, errors named
/// by `x-amzn-ErrorType`) and SNS `CheckIfPhoneNumberIsOptedOut` and
/// `Publish` (the query protocol, XML errors). moto refuses only an
/// unverified sender; this refuses whatever a recipient is given in
/// [`ProviderFake::answer`], and delivers the rest. A `Publish` to a topic
/// (the team's alerts) is recorded.
#[derive(Clone)]
pub struct ProviderFake {
    /// Its base URL (`AWS_ENDPOINT_URL_SESV2`, `AWS_ENDPOINT_URL_SNS`).
    pub url: String,
    answers: Arc<Mutex<HashMap<String, ProviderAnswer>>>,
    /// Recipients a notice was accepted for.
    pub delivered: Arc<Mutex<Vec<String>>>,
    /// Subjects of alerts published to a topic.
    pub alerts: Arc<Mutex<Vec<String>>>,
}

impl ProviderFake {
    /// Starts the fake on a free loopback port.
    pub async fn start() -> Self {
        use axum::extract::State;
        use axum::response::IntoResponse;
        let fake = Self {
            url: String::new(),
            answers: Arc::default(),
            delivered: Arc::default(),
            alerts: Arc::default(),
        };
        const SNS_NS: &str = "http://sns.amazonaws.com/doc/2010-03-31/";
        fn xml(status: u16, body: String) -> axum::response::Response {
            (
                StatusCode::from_u16(status).expect("status"),
                [("content-type", "text/xml")],
                body,
            )
                .into_response()
        }
        async fn ses(State(fake): State<ProviderFake>, body: String) -> axum::response::Response {
            let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let Some(to) = request["Destination"]["ToAddresses"][0].as_str() else {
                return (
                    StatusCode::BAD_REQUEST,
                    [("x-amzn-ErrorType", "BadRequestException")],
                    r#"{"message":"not a SendEmail request"}"#,
                )
                    .into_response();
            };
            match fake.answer_for(to) {
                Some(ProviderAnswer::Ses(status, code, message)) => (
                    StatusCode::from_u16(status).expect("status"),
                    [
                        ("x-amzn-ErrorType", code),
                        ("content-type", "application/json"),
                    ],
                    serde_json::json!({ "message": message }).to_string(),
                )
                    .into_response(),
                Some(ProviderAnswer::Slow(d)) => {
                    tokio::time::sleep(d).await;
                    axum::Json(serde_json::json!({"MessageId": "late"})).into_response()
                }
                _ => {
                    fake.delivered.lock().expect("lock").push(to.to_owned());
                    axum::Json(serde_json::json!({"MessageId": "fake-ses-message"})).into_response()
                }
            }
        }
        async fn sns(
            State(fake): State<ProviderFake>,
            axum::extract::Form(form): axum::extract::Form<HashMap<String, String>>,
        ) -> axum::response::Response {
            let action = form.get("Action").map(String::as_str).unwrap_or_default();
            let phone = form.get("PhoneNumber").or(form.get("phoneNumber"));
            let answer = phone.and_then(|p| fake.answer_for(p));
            let refusal = |status: u16, code: &str, message: &str| {
                xml(
                    status,
                    format!(
                        "<ErrorResponse xmlns=\"{SNS_NS}\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}</Message></Error><RequestId>r-2</RequestId></ErrorResponse>"
                    ),
                )
            };
            match action {
                "CheckIfPhoneNumberIsOptedOut" => {
                    if let Some(ProviderAnswer::SnsCheck(status, code, message)) = answer {
                        return refusal(status, code, message);
                    }
                    xml(
                        200,
                        format!(
                            "<CheckIfPhoneNumberIsOptedOutResponse xmlns=\"{SNS_NS}\"><CheckIfPhoneNumberIsOptedOutResult><isOptedOut>{}</isOptedOut></CheckIfPhoneNumberIsOptedOutResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></CheckIfPhoneNumberIsOptedOutResponse>",
                            answer == Some(ProviderAnswer::OptedOut)
                        ),
                    )
                }
                "Publish" => {
                    if form.contains_key("TopicArn") {
                        let subject = form.get("Subject").cloned().unwrap_or_default();
                        fake.alerts.lock().expect("lock").push(subject);
                    } else if let Some(ProviderAnswer::Sns(status, code, message)) = answer {
                        return refusal(status, code, message);
                    } else if let Some(ProviderAnswer::Slow(d)) = answer {
                        tokio::time::sleep(d).await;
                    } else if let Some(p) = phone {
                        fake.delivered.lock().expect("lock").push(p.clone());
                    }
                    xml(
                        200,
                        format!(
                            "<PublishResponse xmlns=\"{SNS_NS}\"><PublishResult><MessageId>fake-sns-message</MessageId></PublishResult><ResponseMetadata><RequestId>r-3</RequestId></ResponseMetadata></PublishResponse>"
                        ),
                    )
                }
                other => refusal(
                    400,
                    "InvalidAction",
                    &format!("the fake does not speak {other}"),
                ),
            }
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let fake = Self {
            url: format!("http://{}", listener.local_addr().expect("addr")),
            ..fake
        };
        let app = Router::new()
            .route("/v2/email/outbound-emails", axum::routing::post(ses))
            .route("/", axum::routing::post(sns))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.expect("fake serves") });
        fake
    }

    /// Sends to `recipient` (an address or E.164 number) get `answer`.
    pub fn answer(&self, recipient: &str, answer: ProviderAnswer) {
        self.answers
            .lock()
            .expect("lock")
            .insert(recipient.to_owned(), answer);
    }

    /// Every recipient is delivered to from now on.
    pub fn clear(&self) {
        self.answers.lock().expect("lock").clear();
    }

    fn answer_for(&self, recipient: &str) -> Option<ProviderAnswer> {
        self.answers.lock().expect("lock").get(recipient).cloned()
    }
}
