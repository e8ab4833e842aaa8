//! A drop's load in simulated time (see the crate's description).
//!
//! ```sh
//! cargo run --release -p restock-sim -- signups --rate 500 --shards 16
//! cargo run --release -p restock-sim -- clicks --offers 1000 --clicks 2000
//! ```
//!
//! `bash scripts/load.sh` runs the table in `docs/PERFORMANCE.md`.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use clap::{Parser, Subcommand};
use http_body_util::BodyExt;
use restock_app::Services;
use restock_app::capture::ClientAddr;
use restock_app::ports::{
    Alert, AlertError, Alerts, Clock, Disabled, OsEntropy, SendError, Sender, StaticKeyring,
};
use restock_core::{
    CatalogueEntry, Contact, ItemRef, Level, Message, Rules, Settings, Sku, StockEvent,
};
use restock_sim::{Model, SimStore};
use restock_store::prelude::*;
use restock_store::{NewRequest, WaveParams};
use restock_store_memory::MemoryStore;
use time::OffsetDateTime;
use tokio::time::Instant;
use tower::ServiceExt;

const T0: i64 = 1_796_342_400_000;

#[derive(Parser)]
#[command(about = "restock under a drop's load, in simulated time")]
struct Cli {
    #[command(subcommand)]
    load: Load,
    /// A read's round trip (ms).
    #[arg(long, default_value_t = 4, global = true)]
    read_ms: u64,
    /// A single write's round trip (ms).
    #[arg(long, default_value_t = 6, global = true)]
    write_ms: u64,
    /// A transaction's time in flight (ms).
    #[arg(long, default_value_t = 12, global = true)]
    tx_ms: u64,
    /// Write units a partition takes a second.
    #[arg(long, default_value_t = 1_000, global = true)]
    partition_wcu: u32,
    /// Seed of the arrival times.
    #[arg(long, default_value_t = 1, global = true)]
    seed: u64,
}

#[derive(Subcommand)]
enum Load {
    /// Sign-ups on one item through capture's router.
    Signups {
        /// Sign-ups offered a second.
        #[arg(long)]
        rate: u32,
        /// For how long (s).
        #[arg(long, default_value_t = 10)]
        secs: u32,
        /// The item's queue shards.
        #[arg(long, default_value_t = 16)]
        shards: u16,
        /// Double opt-in (the default for a shop).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        confirm: bool,
    },
    /// Clicks on the reserve links of one restock's offers, each link
    /// clicked `clicks / offers` times (a mail scanner, then the shopper).
    Clicks {
        /// Offers (and units).
        #[arg(long, default_value_t = 1_000)]
        offers: u32,
        /// Clicks.
        #[arg(long, default_value_t = 2_000)]
        clicks: u32,
        /// Over how long (s).
        #[arg(long, default_value_t = 10)]
        secs: u32,
        /// The item's queue shards (and hold slots).
        #[arg(long, default_value_t = 16)]
        shards: u16,
    },
}

/// The clock: `T0` plus the virtual time since the run began.
struct SimClock(Instant);

impl Clock for SimClock {
    fn now(&self) -> OffsetDateTime {
        let ms = T0 + self.0.elapsed().as_millis() as i64;
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).expect("a time")
    }
}

/// Sends nothing (a load run measures capture).
struct Nowhere;

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

fn sku() -> Sku {
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

async fn setup(model: Model, shards: u16, confirm: bool) -> (Arc<SimStore>, Router) {
    let store = Arc::new(SimStore::new(MemoryStore::new(), model));
    store
        .inner()
        .put_settings(&settings(confirm))
        .await
        .expect("settings");
    let mut entry = CatalogueEntry::new(sku(), "Limited runner");
    entry.shards = shards;
    entry.checkout_url = Some("https://shop.example/checkout?hold={hold}".into());
    store
        .inner()
        .put_catalogue_entry(&entry)
        .await
        .expect("entry");
    let secrets = Arc::new(
        restock_app::ports::Secrets::from_json(restock_app::admin::DEV_SECRETS_JSON)
            .expect("dev secrets"),
    );
    let services = Services::new(
        store.clone(),
        Arc::new(Nowhere),
        Arc::new(Disabled),
        Arc::new(StaticKeyring(secrets)),
        Arc::new(Nowhere),
        Arc::new(SimClock(Instant::now())),
        Arc::new(OsEntropy),
    );
    (store, restock_app::capture::router(Arc::new(services)))
}

/// Arrival offsets of `n` requests at `rate` a second (a Poisson process,
/// seeded).
fn arrivals(n: u32, rate: u32, seed: u64) -> Vec<Duration> {
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

/// A client address per shopper.
fn ip(i: u32) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i))
}

async fn call(
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

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1000.0
}

/// One sign-up as the widget sends it: again once after `Retry-After` when
/// answered 503.
async fn sign_up(router: Router, i: u32) -> (StatusCode, Duration, Option<String>, bool) {
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
    let id = answer["request_id"].as_str().map(str::to_owned);
    (status, started.elapsed(), id, again)
}

async fn signups(cli: &Cli, model: Model, rate: u32, secs: u32, shards: u16, confirm: bool) {
    let (store, router) = setup(model, shards, confirm).await;
    let start = Instant::now();
    let tasks: Vec<_> = arrivals(rate * secs, rate, cli.seed)
        .into_iter()
        .enumerate()
        .map(|(i, at)| {
            let router = router.clone();
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
    let accepted: Vec<&String> = results
        .iter()
        .filter(|(status, ..)| status.is_success())
        .filter_map(|(_, _, id, _)| id.as_ref())
        .collect();
    let limited = results
        .iter()
        .filter(|r| r.0 == StatusCode::TOO_MANY_REQUESTS)
        .count();
    let unavailable = results
        .iter()
        .filter(|r| r.0 == StatusCode::SERVICE_UNAVAILABLE)
        .count();
    let other = results.len() - accepted.len() - limited - unavailable;
    let retried = results.iter().filter(|r| r.3).count();
    // Lost: answered saved but not stored, or stored but answered refused.
    let mut missing = 0;
    for id in &accepted {
        if store
            .inner()
            .request(&id.parse().expect("an id"))
            .await
            .expect("read")
            .is_none()
        {
            missing += 1;
        }
    }
    let stats = store.inner().stats(&sku(), shards).await.expect("stats");
    let unconfirmed = store
        .inner()
        .pending_confirmations(&sku(), 1_000_000)
        .await
        .expect("pending")
        .len();
    let stored = stats.waiting as usize + unconfirmed;
    let lost = missing + stored.saturating_sub(accepted.len());
    let mut latencies: Vec<Duration> = results.iter().map(|r| r.1).collect();
    latencies.sort();
    let counts = store.counts();
    println!(
        "| {rate}/s × {secs} s | {shards} | {} | {} | {limited} / {unavailable} | {other} | {lost} | {retried} | {:.0} | {:.0} | {:.2} | {} | {} | {:.1} |",
        if confirm { "on" } else { "off" },
        accepted.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        counts.join_attempts as f64 / results.len().max(1) as f64,
        counts.conflicts,
        counts.throttles,
        start.elapsed().as_secs_f64(),
    );
}

async fn click_links(cli: &Cli, model: Model, offers: u32, clicks: u32, secs: u32, shards: u16) {
    let (store, router) = setup(model, shards, false).await;
    let inner = store.inner();
    let mut random = restock_store::port::seeded(cli.seed);
    let pepper = b"sim-pepper";
    for i in 0..offers {
        let contact = Contact::Email(
            restock_core::Email::try_from(format!("fan{i}@example.com").as_str()).expect("email"),
        );
        let id = restock_core::RequestId::from_random(random());
        inner
            .join(NewRequest {
                id,
                sku: sku(),
                name: "Fan".try_into().expect("a name"),
                contact_key: contact.key(pepper),
                contact,
                now: T0 - 60_000 + i64::from(i),
                shards,
                lifetime_ms: 90 * 86_400_000,
                manage_hash: None,
                confirm_window_ms: None,
                consent: None,
            })
            .await
            .expect("join");
    }
    let at = T0 - 1_000;
    let event = StockEvent {
        delivery_id: "restock".into(),
        item: ItemRef::Sku { sku: sku() },
        location: "default".into(),
        level: Level::Tracked(offers),
        at: OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).expect("time"),
    };
    let rules = Rules {
        threshold: 1,
        max_jump: 1_000_000,
        max_level: 1_000_000,
    };
    inner
        .apply_stock(&sku(), &event, &rules, at)
        .await
        .expect("level");
    let wave = inner
        .create_offers(
            &sku(),
            &WaveParams {
                share: restock_core::ListShare::ALL,
                offer_window: restock_core::Window::from_mins(15),
                shards,
                max_offers: offers,
            },
            at,
            &mut random,
        )
        .await
        .expect("offers");
    assert_eq!(wave.offers.len() as u32, offers, "every unit offered");
    store.set_allowance(&sku(), i64::from(offers), shards);
    let links: Vec<String> = wave.offers.iter().map(|o| o.reserve.to_string()).collect();
    let start = Instant::now();
    let tasks: Vec<_> = arrivals(clicks, clicks / secs.max(1), cli.seed + 1)
        .into_iter()
        .enumerate()
        .map(|(i, at)| {
            let router = router.clone();
            let link = links[i % links.len()].clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(start + at).await;
                let began = Instant::now();
                let mut request = Request::post(format!("/r/{link}"))
                    .body(Body::empty())
                    .expect("a request");
                request.extensions_mut().insert(ClientAddr(ip(i as u32)));
                let (status, ..) = call(&router, request).await;
                (status, began.elapsed())
            })
        })
        .collect();
    let mut results = Vec::with_capacity(tasks.len());
    for t in tasks {
        results.push(t.await.expect("a click task"));
    }
    let stats = inner.stats(&sku(), shards).await.expect("stats");
    let to_checkout = results
        .iter()
        .filter(|r| r.0 == StatusCode::SEE_OTHER)
        .count();
    let errors = results.iter().filter(|r| r.0.is_server_error()).count();
    let mut latencies: Vec<Duration> = results.iter().map(|r| r.1).collect();
    latencies.sort();
    let counts = store.counts();
    println!(
        "| {clicks} on {offers} over {secs} s | {shards} | {} | {to_checkout} | {errors} | {:.0} | {:.0} | {:.2} | {} | {} | {:.1} |",
        stats.held,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        counts.click_attempts as f64 / results.len().max(1) as f64,
        counts.conflicts,
        counts.throttles,
        start.elapsed().as_secs_f64(),
    );
}

fn main() {
    let cli = Cli::parse();
    let model = Model {
        read: Duration::from_millis(cli.read_ms),
        write: Duration::from_millis(cli.write_ms),
        in_flight: Duration::from_millis(cli.tx_ms),
        partition_wcu: cli.partition_wcu,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        match cli.load {
            Load::Signups {
                rate,
                secs,
                shards,
                confirm,
            } => signups(&cli, model, rate, secs, shards, confirm).await,
            Load::Clicks {
                offers,
                clicks,
                secs,
                shards,
            } => click_links(&cli, model, offers, clicks, secs, shards).await,
        }
    });
}
