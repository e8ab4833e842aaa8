//! The dashboard's pages against 100,000 shoppers waiting for one item:
//! how long the overview (`/`) and the item's page (`/items/CHAIR-WAL`:
//! its 30 days of charts, read from every request) take to load over HTTP,
//! and the peak memory. The in-memory store (the local server's) holds the
//! shoppers, joined over the 30 days the charts cover.
//!
//! ```sh
//! cargo bench -p restock-cli --bench dashboard -- 10000 100000
//! ```

use std::sync::Arc;
use std::time::Instant;

use restock_app::admin::Admin;
use restock_app::admin::dashboard::{Dashboard, router};
use restock_app::ports::ManualClock;
use restock_store::prelude::*;
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

#[tokio::main]
async fn main() {
    println!("| waiting | overview | item page (30-day charts) | item page size | peak memory |");
    println!("|---:|---:|---:|---:|---:|");
    for n in sizes() {
        let store = Arc::new(MemoryStore::new());
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
        fill(&store, n, T0, DAYS_30 / n as i64).await;
        let admin = Admin {
            store: store.clone(),
            pepper: None,
        };
        let clock = Arc::new(ManualClock::at_ms(T0 + DAYS_30));
        let app = router(Arc::new(Dashboard::new(admin, clock, "")));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("a port");
        let base = format!("http://{}", listener.local_addr().expect("bound"));
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
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
