//! What a join and a status call read at queue depths 100, 10,000 and
//! 100,000 (over 16 shards), against the strict DynamoDB double in front of
//! moto: requests sent (counted by an SDK interceptor), items read and read
//! units as DynamoDB bills them (counted by the double,
//! `GET /_restock/strict/stats`). Each depth is loaded with
//! `import_waiting` (the requests, their places, queue entries and tickets,
//! as joins would leave them), then measured:
//!
//! - a join by a new shopper (the back of the line), then its position;
//! - the status of the shopper in the middle of the line (the request read
//!   and its position);
//! - the same position counted the way it was before tickets (a `COUNT`
//!   query of every queue entry ahead, per shard), for comparison.
//!
//! ```sh
//! RESTOCK_DYNAMODB_ENDPOINT=http://127.0.0.1:PORT \
//!   cargo bench -p restock-store-dynamo --bench positions -- 100 10000 100000
//! ```
//!
//! `bash scripts/positions.sh` starts moto and runs it, after the in-memory
//! store's figures (`-- memory 100 10000 100000`: the time of a join and of
//! the middle shopper's position, which reads no items: its queue is an
//! order-statistic tree, so a position is a rank).

use std::time::Instant;

use restock_core::{CatalogueEntry, Sku};
use restock_store::prelude::*;
use restock_store::{JoinOutcome, NewRequest, Request};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, Recorder};

const T0: i64 = 1_796_342_400_000;
const SHARDS: u16 = 16;
const PEPPER: &[u8] = b"bench-pepper";

#[derive(Debug, Clone, Copy, Default)]
struct Read {
    requests: usize,
    items: f64,
    units: f64,
}

/// The double's running totals.
async fn stats() -> (f64, f64) {
    let url = format!("{}/_restock/strict/stats", testing::endpoint());
    let body = reqwest::get(&url)
        .await
        .and_then(|r| r.error_for_status())
        .expect("the strict double answers its stats (is RESTOCK_DYNAMODB_ENDPOINT the double?)")
        .json::<serde_json::Value>()
        .await
        .expect("stats are JSON");
    (
        body["items_read"].as_f64().unwrap_or(0.0),
        body["read_units"].as_f64().unwrap_or(0.0),
    )
}

/// Runs `f` and answers what it read.
async fn measured<T>(recorder: &Recorder, f: impl std::future::Future<Output = T>) -> (T, Read) {
    recorder.take();
    let before = stats().await;
    let out = f.await;
    let after = stats().await;
    let requests = recorder.take().len();
    (
        out,
        Read {
            requests,
            items: after.0 - before.0,
            units: after.1 - before.1,
        },
    )
}

fn shopper(i: usize, sku: &Sku) -> Request {
    testing::waiting_request(i, sku, T0 + i as i64 * 10, SHARDS, PEPPER)
}

fn new_request(r: &Request, now: i64) -> NewRequest {
    NewRequest {
        id: r.id,
        sku: r.sku.clone(),
        name: r.name.clone(),
        contact_key: r.contact_key.clone(),
        contact: r.contact.clone(),
        now,
        shards: SHARDS,
        lifetime_ms: 90 * 86_400_000,
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: None,
        consent: None,
    }
}

/// Write units per join on a one-shard item after `lifetime` tickets, as
/// the strict double bills them: the shard's counter is set as that many
/// sign-ups leave it (their presence blocks deleted once empty), then 100
/// shoppers join and wait, then 20 more are measured.
async fn lifetime(lifetimes: &[usize]) {
    println!(
        "write units per join on one shard, by the shard's lifetime tickets (the strict double's billing)"
    );
    println!("| lifetime tickets | write units per join | presence block written (bytes) |");
    println!("|---:|---:|---:|");
    let table = testing::unique_table("restock-lifetime");
    let store = DynamoStore::new(
        aws_sdk_dynamodb::Client::from_conf(testing::config().build()),
        table.clone(),
    );
    store.create_table().await.expect("table");
    reqwest::Client::new()
        .post(format!("{}/_restock/strict/meter", testing::endpoint()))
        .body(serde_json::json!({ "table": table }).to_string())
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .expect("the strict double meters the table (is RESTOCK_DYNAMODB_ENDPOINT the double?)");
    let units = || async {
        let url = format!(
            "{}/_restock/strict/stats?table={table}",
            testing::endpoint()
        );
        let body: serde_json::Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        body["write_units"].as_f64().unwrap_or(0.0)
    };
    for (k, &lifetime) in lifetimes.iter().enumerate() {
        let sku = Sku::try_from(format!("AGED-{lifetime}").as_str()).unwrap();
        let one = |i: usize| {
            let mut r = testing::waiting_request(k * 1_000 + i, &sku, T0 + i as i64, 1, PEPPER);
            r.shard = 0;
            r
        };
        let dealt = lifetime.saturating_sub(120) as u64;
        testing::age_queue(&store, &sku, 0, dealt, one(0).key).await;
        for i in 1..=100 {
            let r = one(i);
            store
                .join(NewRequest {
                    shards: 1,
                    ..new_request(&r, r.key.joined_ms)
                })
                .await
                .unwrap();
        }
        let before = units().await;
        for i in 101..=120 {
            let r = one(i);
            store
                .join(NewRequest {
                    shards: 1,
                    ..new_request(&r, r.key.joined_ms)
                })
                .await
                .unwrap();
        }
        let per_join = (units().await - before) / 20.0;
        let block = testing::presence_block_size(&store, &sku, 0, dealt + 119).await;
        println!("| {lifetime} | {per_join:.1} | {block} |");
    }
}

/// The in-memory store (the local server's): the time of a join at the
/// back of the line and of the middle shopper's position, at each depth.
async fn in_memory(depths: &[usize]) {
    println!("positions in memory, {SHARDS} shards: time per call (mean of 1,000)");
    println!("| waiting | join | position of the middle shopper |");
    println!("|---:|---:|---:|");
    let sku = Sku::try_from("SNEAKER-DROP").unwrap();
    for &depth in depths {
        let store = restock_store_memory::MemoryStore::new();
        let queue: Vec<Request> = (0..depth).map(|i| shopper(i, &sku)).collect();
        for r in &queue {
            store.join(new_request(r, r.key.joined_ms)).await.unwrap();
        }
        let started = Instant::now();
        for i in 0..1_000 {
            let r = shopper(depth + 1 + i, &sku);
            store.join(new_request(&r, r.key.joined_ms)).await.unwrap();
        }
        let join = started.elapsed() / 1_000;
        let middle = store.request(&queue[depth / 2].id).await.unwrap().unwrap();
        let started = Instant::now();
        for _ in 0..1_000 {
            let place = store.position(&middle, SHARDS).await.unwrap();
            assert_eq!(place, Some(depth / 2 + 1), "the middle shopper's place");
        }
        let position = started.elapsed() / 1_000;
        println!("| {depth} | {join:.1?} | {position:.1?} |");
    }
}

fn cell(r: Read) -> String {
    format!("{} / {} / {}", r.requests, r.items, r.units)
}

#[tokio::main]
async fn main() {
    let depths: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let depths = if depths.is_empty() {
        vec![100, 10_000, 100_000]
    } else {
        depths
    };
    if std::env::args().any(|a| a == "memory") {
        in_memory(&depths).await;
        return;
    }
    if std::env::args().any(|a| a == "lifetime") {
        lifetime(&depths).await;
        return;
    }
    println!(
        "positions on DynamoDB (the strict double), {SHARDS} shards: requests / items read / read units"
    );
    println!(
        "| waiting | load | join | its position | status in the middle (request + position) | counted as before tickets |"
    );
    println!("|---:|---:|---|---|---|---|");
    for depth in depths {
        let recorder = Recorder::default();
        let client = aws_sdk_dynamodb::Client::from_conf(
            testing::config().interceptor(recorder.clone()).build(),
        );
        let store = DynamoStore::new(client, testing::unique_table("restock-positions"));
        store.create_table().await.expect("table");
        let sku = Sku::try_from("SNEAKER-DROP").unwrap();
        let mut entry = CatalogueEntry::new(sku.clone(), "Limited runner");
        entry.shards = SHARDS;
        store.put_catalogue_entry(&entry).await.unwrap();

        let started = Instant::now();
        let queue: Vec<Request> = (0..depth).map(|i| shopper(i, &sku)).collect();
        store
            .import_waiting(&queue, SHARDS)
            .await
            .expect("import the queue");
        let load = started.elapsed();

        let newcomer = shopper(depth + 1, &sku);
        let new = new_request(&newcomer, T0 + depth as i64 * 10 + 60_000);
        let (joined, join) = measured(&recorder, store.join(new)).await;
        let JoinOutcome::Joined(joined) = joined.expect("join") else {
            panic!("the newcomer joins")
        };
        let (position, own) = measured(&recorder, store.position(&joined, SHARDS)).await;
        assert_eq!(position.unwrap(), Some(depth + 1), "the newcomer is last");

        let middle = &queue[depth / 2];
        let (status, mid) = measured(&recorder, async {
            let r = store.request(&middle.id).await.unwrap().expect("stored");
            store.position(&r, SHARDS).await.unwrap()
        })
        .await;
        let ahead = queue.iter().filter(|r| r.key < middle.key).count();
        assert_eq!(status, Some(ahead + 1), "the middle shopper's place");

        let untracked = Request {
            ticket: None,
            ..store.request(&middle.id).await.unwrap().unwrap()
        };
        let (counted, before) = measured(&recorder, store.position(&untracked, SHARDS)).await;
        assert_eq!(counted.unwrap(), Some(ahead + 1));

        println!(
            "| {depth} | {:.1} s | {} | {} | {} | {} |",
            load.as_secs_f64(),
            cell(join),
            cell(own),
            cell(mid),
            cell(before)
        );
    }
}
