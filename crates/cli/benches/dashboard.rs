//! The dashboard's pages against 100,000 shoppers waiting for one item:
//! how long the overview (`/`) and the item's page (`/items/CHAIR-WAL`:
//! its 30 days of charts, read from the item's history) take to load over HTTP,
//! and the peak memory. The in-memory store (the local server's) holds the
//! shoppers, joined over the 30 days the charts cover.
//!
//! ```sh
//! cargo bench -p restock-cli --bench dashboard -- 10000 100000
//! RESTOCK_DYNAMODB_ENDPOINT=http://127.0.0.1:PORT \
//!   cargo bench -p restock-cli --bench dashboard -- dynamodb 10000 100000
//! ```
//!
//! With `dynamodb`, the shoppers are imported into a fresh table on the
//! DynamoDB API (moto behind the strict double, which counts the items read
//! and the read units as DynamoDB bills them), as `restock dashboard` reads
//! it on a stack: the overview reads the item's queue (its languages) and
//! counts the sign-ups to confirm; the item page reads the item's history
//! (a `Query` per partition: its days and restocks, whatever the depth).

use std::sync::Arc;
use std::time::Instant;

use restock_app::admin::Admin;
use restock_app::admin::dashboard::{Dashboard, router};
use restock_app::ports::ManualClock;
use restock_store::prelude::*;
use restock_store_dynamo::testing;
use restock_store_memory::MemoryStore;
use support::{fill, peak_mib, sizes};

mod support;

const T0: i64 = 1_796_342_400_000;
const DAYS_30: i64 = 30 * 86_400_000;

/// The slowest of three loads of `url`, in seconds, and the page's size.
async fn load(url: String) -> (f64, usize) {
    tokio::task::spawn_blocking(move || {
        let mut slowest: f64 = 0.0;
        let mut size = 0;
        for _ in 0..3 {
            let started = Instant::now();
            let page = ureq::get(&url)
                .call()
                .expect("the page loads")
                .body_mut()
                .read_to_string()
                .expect("a page");
            slowest = slowest.max(started.elapsed().as_secs_f64());
            size = page.len();
            assert!(page.contains("CHAIR-WAL"), "{page}");
        }
        (slowest, size)
    })
    .await
    .expect("loaded")
}

/// The strict double's running totals: items read and read units.
fn read_so_far() -> (f64, f64) {
    let url = format!("{}/_restock/strict/stats", testing::endpoint());
    let body: serde_json::Value = ureq::get(&url)
        .call()
        .expect("the strict double answers its stats (is RESTOCK_DYNAMODB_ENDPOINT the double?)")
        .body_mut()
        .read_json()
        .expect("stats are JSON");
    (
        body["items_read"].as_f64().unwrap_or(0.0),
        body["read_units"].as_f64().unwrap_or(0.0),
    )
}

/// The example catalogue, saved in `store`.
async fn catalogue(store: &dyn Store) {
    for entry in restock_core::catalogue::parse_csv(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/catalogue.csv"
        ))
        .expect("the example catalogue"),
    )
    .expect("a catalogue")
    {
        store.put_catalogue_entry(&entry).await.expect("saved");
    }
}

/// Serves the dashboard of `store` at the end of the 30 days; answers its
/// address and the server's task.
async fn serve(store: Arc<dyn Store>) -> (String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let admin = Admin {
        store,
        pepper: None,
    };
    let clock = Arc::new(ManualClock::at_ms(T0 + DAYS_30));
    let app = router(Arc::new(Dashboard::new(admin, clock, "")));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("a port");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    (
        base,
        tokio::spawn(async move { axum::serve(listener, app).await }),
    )
}

/// The pages against DynamoDB: time, items read and read units per load.
async fn on_dynamodb(sizes: &[usize]) {
    println!(
        "| waiting | overview | its items read / read units | item page | its items read / read units |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for &n in sizes {
        let store = Arc::new(testing::dynamo_store().await);
        catalogue(store.as_ref()).await;
        let sku = restock_core::Sku::try_from("CHAIR-WAL").expect("a SKU");
        let spacing = DAYS_30 / n as i64;
        let requests: Vec<_> = (0..n)
            .map(|i| testing::waiting_request(i, &sku, T0 + i as i64 * spacing, 1, b"bench-pepper"))
            .collect();
        store.import_waiting(&requests, 1).await.expect("imported");
        let (base, server) = serve(store).await;
        let mut figures = Vec::new();
        for path in ["/", "/items/CHAIR-WAL"] {
            let before = tokio::task::spawn_blocking(read_so_far)
                .await
                .expect("read");
            let (took, _) = load(format!("{base}{path}")).await;
            let after = tokio::task::spawn_blocking(read_so_far)
                .await
                .expect("read");
            // `load` reads the page three times: a load is a third.
            figures.push(format!(
                "{:.0} ms | {:.0} / {:.0}",
                took * 1000.0,
                (after.0 - before.0) / 3.0,
                (after.1 - before.1) / 3.0
            ));
        }
        server.abort();
        println!("| {n} | {} | {} |", figures[0], figures[1]);
    }
}

#[tokio::main]
async fn main() {
    if std::env::args().nth(1).as_deref() == Some("dynamodb") {
        return on_dynamodb(&sizes()).await;
    }
    println!("| waiting | overview | item page (30-day charts) | item page size | peak memory |");
    println!("|---:|---:|---:|---:|---:|");
    for n in sizes() {
        let store = Arc::new(MemoryStore::new());
        catalogue(store.as_ref()).await;
        fill(&store, n, T0, DAYS_30 / n as i64).await;
        let (base, server) = serve(store).await;
        let (overview, _) = load(format!("{base}/")).await;
        let (item, size) = load(format!("{base}/items/CHAIR-WAL")).await;
        server.abort();
        println!(
            "| {n} | {:.0} ms | {:.0} ms | {:.0} KiB | {:.1} MiB |",
            overview * 1000.0,
            item * 1000.0,
            size as f64 / 1024.0,
            peak_mib()
        );
    }
}
