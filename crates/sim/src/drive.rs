//! Driving capture's router as shoppers do, on any store: the load
//! benchmark runs it on [`SimStore`](crate::SimStore) in simulated time, and
//! the agreement test on the DynamoDB store against the strict double too.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use restock_app::Services;
use restock_app::capture::ClientAddr;
use restock_app::ports::{
    Alert, AlertError, Alerts, Clock, Disabled, OsEntropy, SendError, Sender, StaticKeyring,
};
use restock_core::{
    CatalogueEntry, Contact, ItemRef, Level, ListShare, Message, RequestId, ReserveToken, Rules,
    Settings, Sku, StockEvent, Window,
};
use restock_store::prelude::*;
use restock_store::{NewRequest, Store, WaveParams};
use restock_store_memory::MemoryStore;
use time::OffsetDateTime;
use tokio::time::Instant;
use tower::ServiceExt;

/// When a run's clock starts (ms since the epoch).
pub const T0: i64 = 1_796_342_400_000;

/// The clock: [`T0`] plus tokio's time since the run began (virtual in a
/// paused runtime).
pub struct RunClock(pub Instant);

impl Clock for RunClock {
    fn now(&self) -> OffsetDateTime {
        let ms = T0 + self.0.elapsed().as_millis() as i64;
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).expect("a time")
    }
}

/// Sends nothing and tells nobody (a load run measures capture).
pub struct Nowhere;

#[async_trait]
impl Sender for Nowhere {
    async fn send(&self, _: &Contact, _: &Message) -> Result<String, SendError> {
        Ok("sim".into())
    }
}

#[async_trait]
impl Alerts for Nowhere {
    async fn alert(&self, _: &Alert) -> Result<(), AlertError> {
        Ok(())
    }
}

/// The item every run signs up for.
pub fn sku() -> Sku {
    Sku::try_from("SNEAKER-DROP").expect("a SKU")
}

fn settings(confirm: bool) -> Settings {
    Settings::from_toml(&format!(
        r#"
store_name = "Load test"
public_base_url = "https://shop.example"
email_from = "Shop <shop@example.com>"
storefront_origins = ["https://shop.example"]
confirm = {confirm}
"#
    ))
    .expect("valid settings")
}

/// Stores the settings (double opt-in on or off) and the item (`shards`
/// queue shards) in `store`, and answers capture's router on it.
///
/// # Panics
/// When the store refuses the settings or the item.
pub async fn capture(store: Arc<dyn Store>, shards: u16, confirm: bool) -> Router {
    store
        .put_settings(&settings(confirm))
        .await
        .expect("settings");
    let mut entry = CatalogueEntry::new(sku(), "Limited runner");
    entry.shards = shards;
    entry.checkout_url = Some("https://shop.example/checkout?hold={hold}".into());
    store.put_catalogue_entry(&entry).await.expect("entry");
    let secrets = Arc::new(
        restock_app::ports::Secrets::from_json(restock_app::admin::DEV_SECRETS_JSON)
            .expect("dev secrets"),
    );
    let services = Services::new(
        store,
        Arc::new(Nowhere),
        Arc::new(Disabled),
        Arc::new(StaticKeyring(secrets)),
        Arc::new(Nowhere),
        Arc::new(RunClock(Instant::now())),
        Arc::new(OsEntropy),
    );
    restock_app::capture::router(Arc::new(services))
}

/// Lambda as it limits a function: at most `limit` invocations at once in
/// the account (past that, a 429 `TooManyRequestsException`, which the
/// function URL answers without running restock), and a new execution
/// environment's cold start whenever every warm one is busy.
pub struct Functions {
    limit: u32,
    cold_start: Duration,
    state: std::sync::Mutex<FunctionCounts>,
}

/// What [`Functions`] saw.
#[derive(Debug, Clone, Copy, Default)]
pub struct FunctionCounts {
    /// Running now.
    pub busy: u32,
    /// Execution environments started.
    pub warm: u32,
    /// The most running at once.
    pub peak: u32,
    /// Invocations refused for the account's concurrency.
    pub throttled: u64,
}

impl Functions {
    /// Up to `limit` at once, each new environment starting in `cold_start`.
    pub fn new(limit: u32, cold_start: Duration) -> Arc<Self> {
        Arc::new(Self {
            limit,
            cold_start,
            state: std::sync::Mutex::default(),
        })
    }

    /// What they saw so far.
    pub fn counts(&self) -> FunctionCounts {
        *self.state.lock().expect("functions lock")
    }

    /// `router` run as these functions run it.
    pub fn serve(self: &Arc<Self>, router: Router) -> Router {
        let functions = self.clone();
        router.layer(axum::middleware::from_fn(
            move |request: Request<Body>, next: axum::middleware::Next| {
                let functions = functions.clone();
                async move { functions.invoke(request, next).await }
            },
        ))
    }

    async fn invoke(
        &self,
        request: Request<Body>,
        next: axum::middleware::Next,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        let cold = {
            let mut s = self.state.lock().expect("functions lock");
            if s.busy >= self.limit {
                s.throttled += 1;
                return (
                    StatusCode::TOO_MANY_REQUESTS,
                    axum::Json(serde_json::json!({"Message": "Rate Exceeded."})),
                )
                    .into_response();
            }
            s.busy += 1;
            s.peak = s.peak.max(s.busy);
            let cold = s.busy > s.warm;
            if cold {
                s.warm += 1;
            }
            cold
        };
        if cold {
            tokio::time::sleep(self.cold_start).await;
        }
        let response = next.run(request).await;
        self.state.lock().expect("functions lock").busy -= 1;
        response
    }
}

/// A runtime on tokio's virtual clock, paused: simulated time passes only
/// while every task waits.
///
/// # Panics
/// When the runtime cannot be built.
pub fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime")
}

/// How many sign-ups `store` keeps for [`sku`] on `shards`: waiting, and
/// waiting for their confirmation.
///
/// # Panics
/// When the store cannot be read.
pub async fn stored(store: &MemoryStore, shards: u16) -> usize {
    let stats = store.stats(&sku(), shards).await.expect("stats");
    let unconfirmed = store
        .pending_confirmations(&sku(), 1_000_000, i64::MAX)
        .await
        .expect("pending")
        .len();
    stats.waiting as usize + unconfirmed
}

/// A client address per shopper.
pub fn ip(i: u32) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i))
}

/// The answer: status, `Retry-After` (s), body.
///
/// # Panics
/// When the body cannot be read.
pub async fn call(
    router: &Router,
    request: Request<Body>,
) -> (StatusCode, Option<u64>, serde_json::Value) {
    let response = router.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        retry_after,
        serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
    )
}

/// How one sign-up went.
#[derive(Debug, Clone)]
pub struct SignUp {
    /// The final answer's status.
    pub status: StatusCode,
    /// From the first tap to the final answer.
    pub took: Duration,
    /// The request id a saved sign-up was answered with.
    pub id: Option<String>,
    /// Whether the widget sent it again after a 503.
    pub again: bool,
}

/// Shopper `i` signs up (`fan{i}@example.com`, from an address of its own)
/// as the widget does: once more after `Retry-After` when answered 503.
pub async fn sign_up(router: Router, i: u32) -> SignUp {
    let started = Instant::now();
    let body = serde_json::json!({
        "sku": sku().as_str(),
        "name": "Fan",
        "email": format!("fan{i}@example.com"),
        "consent": true,
    })
    .to_string();
    let request = || {
        let mut r = Request::post("/requests")
            .header("content-type", "application/json")
            .header("origin", "https://shop.example")
            .body(Body::from(body.clone()))
            .expect("a request");
        r.extensions_mut().insert(ClientAddr(ip(i)));
        r
    };
    let (mut status, retry_after, mut answer) = call(&router, request()).await;
    let mut again = false;
    if status == StatusCode::SERVICE_UNAVAILABLE
        && let Some(secs) = retry_after
    {
        again = true;
        tokio::time::sleep(Duration::from_secs(secs)).await;
        (status, _, answer) = call(&router, request()).await;
    }
    SignUp {
        status,
        took: started.elapsed(),
        id: answer["request_id"].as_str().map(str::to_owned),
        again,
    }
}

/// Sign-ups at `arrivals` (offsets from now), each a task of its own:
/// shopper `i` at `arrivals[i]`.
///
/// # Panics
/// When a sign-up's task panics.
pub async fn sign_ups(router: &Router, arrivals: &[Duration]) -> Vec<SignUp> {
    let start = Instant::now();
    let tasks: Vec<_> = arrivals
        .iter()
        .enumerate()
        .map(|(i, at)| {
            let router = router.clone();
            let at = *at;
            tokio::spawn(async move {
                tokio::time::sleep_until(start + at).await;
                sign_up(router, i as u32).await
            })
        })
        .collect();
    let mut results = Vec::with_capacity(tasks.len());
    for t in tasks {
        results.push(t.await.expect("a sign-up task"));
    }
    results
}

/// Arrival offsets of `n` requests at `rate` a second (a Poisson process,
/// seeded).
pub fn arrivals(n: u32, rate: u32, seed: u64) -> Vec<Duration> {
    let mut random = restock_store::port::seeded(seed);
    let mut at = 0.0f64;
    (0..n)
        .map(|_| {
            let bytes = random();
            let u = (u64::from_be_bytes(bytes[..8].try_into().expect("8 bytes")) >> 11) as f64
                / (1u64 << 53) as f64;
            at += -(1.0 - u).ln() / f64::from(rate);
            Duration::from_secs_f64(at)
        })
        .collect()
}

/// The level of [`sku`] reported as `level` at `at` (ms), straight into
/// `store` (the setup and the shop's sales in a run, not what is measured).
///
/// # Panics
/// When the store refuses it.
pub async fn set_level(store: &MemoryStore, level: u32, at: i64) {
    let event = StockEvent {
        delivery_id: format!("level-{level}-{at}"),
        item: ItemRef::Sku { sku: sku() },
        location: "default".into(),
        level: Level::Tracked(level),
        at: OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).expect("a time"),
        untimed: false,
    };
    let rules = Rules {
        threshold: 1,
        max_jump: 1_000_000,
        max_level: 1_000_000,
    };
    store
        .apply_stock(&sku(), &event, &rules, at)
        .await
        .expect("the level");
}

/// `n` fans join [`sku`] on `shards` shards before `at`, the level goes to
/// `n` at `at` and every one of them is offered a unit: their reserve links.
///
/// # Panics
/// When the store refuses a step.
pub async fn offered(
    store: &MemoryStore,
    n: u32,
    shards: u16,
    at: i64,
    seed: u64,
) -> Vec<ReserveToken> {
    let mut random = restock_store::port::seeded(seed);
    for i in 0..n {
        let contact = Contact::Email(
            restock_core::Email::try_from(format!("fan{i}@example.com").as_str()).expect("email"),
        );
        store
            .join(NewRequest {
                id: RequestId::from_random(random()),
                sku: sku(),
                name: "Fan".try_into().expect("a name"),
                contact_key: contact.key(b"sim-pepper"),
                contact,
                now: at - 60_000 + i64::from(i),
                shards,
                lifetime_ms: 90 * 86_400_000,
                manage_hash: None,
                language: None,
                zone: None,
                confirm_window_ms: None,
                consent: None,
            })
            .await
            .expect("join");
    }
    set_level(store, n, at).await;
    let wave = store
        .create_offers(
            &sku(),
            &WaveParams {
                share: ListShare::ALL,
                offer_window: Window::from_mins(15),
                shards,
                max_offers: n,
                quiet_hours: restock_core::QuietHours::default(),
                shop_zone: restock_core::Zone::utc(),
            },
            at,
            &mut random,
        )
        .await
        .expect("offers");
    assert_eq!(wave.offers.len() as u32, n, "every unit offered");
    wave.offers.into_iter().map(|o| o.reserve).collect()
}
