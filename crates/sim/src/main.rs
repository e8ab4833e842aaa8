//! A drop's load in simulated time (see the crate's description).
//!
//! ```sh
//! cargo run --release -p restock-sim -- signups --rate 500 --shards 16
//! cargo run --release -p restock-sim -- clicks --offers 1000 --clicks 2000
//! ```
//!
//! `bash scripts/load.sh` runs the table in `docs/PERFORMANCE.md`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use clap::{Parser, Subcommand};
use restock_app::capture::ClientAddr;
use restock_sim::drive::{self, Functions, T0, call, sku};
use restock_sim::{Model, SimStore};
use restock_store::prelude::*;
use restock_store_memory::MemoryStore;
use tokio::time::Instant;

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
    /// Read units a partition serves a second.
    #[arg(long, default_value_t = 3_000, global = true)]
    partition_rcu: u32,
    /// Lambda invocations at once in the account (its concurrency quota).
    #[arg(long, default_value_t = 1_000, global = true)]
    concurrency: u32,
    /// A new execution environment's start (ms): Lambda's own, and
    /// restock's init (about 5 ms: `bash scripts/bench-functions.sh`).
    #[arg(long, default_value_t = 200, global = true)]
    cold_start_ms: u64,
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

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1000.0
}

/// The in-memory store behind `model`, and capture's router on it as
/// Lambda runs it.
async fn setup(
    cli: &Cli,
    model: Model,
    shards: u16,
    confirm: bool,
) -> (Arc<SimStore>, Router, Arc<Functions>) {
    let store = Arc::new(SimStore::new(MemoryStore::new(), model));
    let functions = Functions::new(cli.concurrency, Duration::from_millis(cli.cold_start_ms));
    let router = functions.serve(drive::capture(store.clone(), shards, confirm).await);
    (store, router, functions)
}

/// The report's capacity columns: throttles (write / read, before the
/// SDK's retries), the hottest key's read and write units in one second,
/// units per request (read / write), and the functions at once (cold
/// starts).
fn capacity(store: &SimStore, functions: &Functions, requests: usize) -> String {
    let counts = store.counts();
    let hot = store.hottest();
    let f = functions.counts();
    let per = |units: f64| units / requests.max(1) as f64;
    // The keys without the item's SKU: `QT#0` is its first shard's counter.
    let key = |k: &str| {
        k.replace(&format!("{}#", sku()), "")
            .replace(&format!("#{}", sku()), "")
    };
    format!(
        "{} / {} | {:.0} ({}) · {} ({}) | {:.1} / {:.1} | {} ({}) |",
        counts.throttles,
        counts.read_throttles,
        f64::from(hot.read_half_units) / 2.0,
        key(&hot.read_key),
        hot.write_units,
        key(&hot.write_key),
        per(counts.read_half_units as f64 / 2.0),
        per(counts.write_units as f64),
        f.peak,
        f.warm,
    )
}

async fn signups(cli: &Cli, model: Model, rate: u32, secs: u32, shards: u16, confirm: bool) {
    let (store, router, functions) = setup(cli, model, shards, confirm).await;
    let start = Instant::now();
    let results = drive::sign_ups(&router, &drive::arrivals(rate * secs, rate, cli.seed)).await;
    let accepted: Vec<&String> = results
        .iter()
        .filter(|r| r.status.is_success())
        .filter_map(|r| r.id.as_ref())
        .collect();
    let count = |status: StatusCode| results.iter().filter(|r| r.status == status).count();
    let limited = count(StatusCode::TOO_MANY_REQUESTS);
    let unavailable = count(StatusCode::SERVICE_UNAVAILABLE);
    // Answered without a request id: a 200 for a sign-up already saved (a
    // 503 that had saved it), or an error other than 429 and 503.
    let other = results.len() - accepted.len() - limited - unavailable;
    let retried = results.iter().filter(|r| r.again).count();
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
    let stored = drive::stored(store.inner(), shards).await;
    let lost = missing + stored.saturating_sub(accepted.len());
    let mut latencies: Vec<Duration> = results.iter().map(|r| r.took).collect();
    latencies.sort();
    let counts = store.counts();
    if counts.throttles + counts.read_throttles > 0 {
        eprintln!("throttled most: {:?}", store.throttled_most(4));
    }
    println!(
        "| {rate}/s × {secs} s | {shards} | {} | {} | {limited} / {unavailable} | {other} | {lost} | {retried} | {:.0} | {:.0} | {:.2} | {} | {:.1} | {}",
        if confirm { "on" } else { "off" },
        accepted.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        counts.join_attempts as f64 / results.len().max(1) as f64,
        counts.conflicts,
        start.elapsed().as_secs_f64(),
        capacity(&store, &functions, results.len()),
    );
}

async fn click_links(cli: &Cli, model: Model, offers: u32, clicks: u32, secs: u32, shards: u16) {
    let (store, router, functions) = setup(cli, model, shards, false).await;
    let links: Vec<String> = drive::offered(store.inner(), offers, shards, T0 - 1_000, cli.seed)
        .await
        .iter()
        .map(ToString::to_string)
        .collect();
    store.set_allowance(&sku(), i64::from(offers), shards);
    let start = Instant::now();
    let tasks: Vec<_> = drive::arrivals(clicks, clicks / secs.max(1), cli.seed + 1)
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
                request
                    .extensions_mut()
                    .insert(ClientAddr(drive::ip(i as u32)));
                let (status, ..) = call(&router, request).await;
                (status, began.elapsed())
            })
        })
        .collect();
    let mut results = Vec::with_capacity(tasks.len());
    for t in tasks {
        results.push(t.await.expect("a click task"));
    }
    let stats = store.inner().stats(&sku(), shards).await.expect("stats");
    let to_checkout = results
        .iter()
        .filter(|r| r.0 == StatusCode::SEE_OTHER)
        .count();
    let errors = results.iter().filter(|r| r.0.is_server_error()).count();
    let mut latencies: Vec<Duration> = results.iter().map(|r| r.1).collect();
    latencies.sort();
    let counts = store.counts();
    println!(
        "| {clicks} on {offers} over {secs} s | {shards} | {} | {to_checkout} | {errors} | {:.0} | {:.0} | {:.2} | {} | {:.1} | {}",
        stats.held,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        counts.click_attempts as f64 / results.len().max(1) as f64,
        counts.conflicts,
        start.elapsed().as_secs_f64(),
        capacity(&store, &functions, results.len()),
    );
}

fn main() {
    let cli = Cli::parse();
    let model = Model {
        read: Duration::from_millis(cli.read_ms),
        write: Duration::from_millis(cli.write_ms),
        in_flight: Duration::from_millis(cli.tx_ms),
        partition_wcu: cli.partition_wcu,
        partition_rcu: cli.partition_rcu,
    };
    drive::paused().block_on(async {
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
