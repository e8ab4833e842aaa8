//! The hyped drop: N sign-ups for one SKU over S queue shards, then a
//! restock of U units offered in waves of at most 1,000, then every shopper
//! offered (at most 1,000) clicks their reserve link twice at once. Prints the
//! time of each phase and, on DynamoDB, the requests it took; checks that
//! exactly the U oldest sign-ups were offered, across every shard, and that
//! the click race took exactly one hold per offer.
//!
//!   cargo bench -p restock-store --bench drop -- memory 100000 10000 16
//!   RESTOCK_DYNAMODB_ENDPOINT=http://127.0.0.1:PORT \
//!     cargo bench -p restock-store --bench drop -- dynamodb 2000 200 16
//!
//! `bash scripts/drop.sh` runs both (starting moto for the second).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use restock_core::{
    CatalogEntry, Contact, Email, HoldId, ItemRef, Level, ListShare, RequestId, Rules, Sku,
    StockEvent, Window,
};
use restock_store::prelude::*;
use restock_store::{HoldOutcome, JoinOutcome, NewRequest, WaveParams};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, Recorder};
use restock_store_memory::MemoryStore;

const T0: i64 = 1_796_342_400_000;

/// Writes per counter item of `table` so far, as the strict double counts
/// them (empty when the endpoint is plain moto).
async fn counter_writes(table: &str) -> std::collections::HashMap<String, u64> {
    let url = format!(
        "{}/_restock/strict/stats?table={table}",
        testing::endpoint()
    );
    let Ok(answer) = reqwest::get(&url).await else {
        return Default::default();
    };
    answer
        .json::<serde_json::Value>()
        .await
        .ok()
        .and_then(|v| serde_json::from_value(v["counter_writes"].clone()).ok())
        .unwrap_or_default()
}

fn summary(requests: &[String]) -> String {
    let mut names: Vec<&String> = requests
        .iter()
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| format!("{} {n}", requests.iter().filter(|r| r == n).count()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let kind = args.first().map_or("memory", String::as_str).to_owned();
    let number =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (signups, units, shards) = (number(1, 100_000), number(2, 10_000), number(3, 16) as u16);
    let recorder = Recorder::default();
    let table = testing::unique_table("restock-drop");
    let store: Arc<dyn Store> = match kind.as_str() {
        "dynamodb" => {
            let client = aws_sdk_dynamodb::Client::from_conf(
                testing::config().interceptor(recorder.clone()).build(),
            );
            let store = DynamoStore::new(client, table.clone());
            store.create_table().await.expect("table");
            Arc::new(store)
        }
        _ => Arc::new(MemoryStore::new()),
    };
    let sku = Sku::try_from("SNEAKER-DROP").unwrap();
    let mut entry = CatalogEntry::new(sku.clone(), "Limited runner");
    entry.shards = shards;
    store.put_catalog_entry(&entry).await.unwrap();
    println!(
        "hyped drop on the {kind} store: {signups} sign-ups over {shards} shards, {units} units"
    );

    // Sign-ups, one millisecond apart, through the real join.
    let started = Instant::now();
    recorder.take();
    let mut order = Vec::with_capacity(signups);
    let mut random = testing::random(7);
    for i in 0..signups {
        let contact =
            Contact::Email(Email::try_from(format!("fan{i}@example.com").as_str()).unwrap());
        let request = NewRequest {
            id: RequestId::from_random(random()),
            sku: sku.clone(),
            name: "Fan".try_into().unwrap(),
            contact_key: contact.key(b"drop-pepper-0123456789"),
            contact,
            now: T0 + i as i64,
            shards,
            lifetime_ms: 90 * 86_400_000,
            manage_hash: None,
            confirm_window_ms: None,
            consent: None,
        };
        match store.join(request).await.unwrap() {
            JoinOutcome::Joined(r) => order.push(r.id),
            other => panic!("sign-up {i}: {other:?}"),
        }
        if (i + 1) % (signups / 10).max(1) == 0 {
            eprint!("\r  signed up {}/{signups}", i + 1);
        }
    }
    eprintln!();
    let joins = recorder.take();
    let signup_time = started.elapsed();

    // The restock.
    let now = T0 + signups as i64 + 60_000;
    let started = Instant::now();
    let rules = Rules {
        threshold: 1,
        max_jump: u32::MAX,
        max_level: u32::MAX,
    };
    let event = StockEvent {
        delivery_id: "drop".into(),
        item: ItemRef::Sku { sku: sku.clone() },
        location: "warehouse".into(),
        level: Level::Tracked(units as u32),
        at: time::OffsetDateTime::from_unix_timestamp(now / 1000).unwrap(),
    };
    store.apply_stock(&sku, &event, &rules, now).await.unwrap();
    let restock = recorder.take();
    let restock_time = started.elapsed();

    // Waves until every unit is offered.
    let started = Instant::now();
    let params = WaveParams {
        share: ListShare::ALL,
        offer_window: Window::from_mins(15),
        shards,
        max_offers: 1_000,
    };
    let mut offered = Vec::with_capacity(units);
    let mut links = Vec::with_capacity(units);
    let mut waves = 0;
    loop {
        let wave = store
            .create_offers(&sku, &params, now, &mut random)
            .await
            .unwrap();
        if wave.offers.is_empty() {
            break;
        }
        waves += 1;
        offered.extend(wave.offers.iter().map(|o| o.request.id));
        links.extend(wave.offers.into_iter().map(|o| o.reserve));
    }
    let offers = recorder.take();
    let offer_time = started.elapsed();

    // The click race: every offered shopper (at most 1,000) taps their
    // reserve link twice at once, all concurrently, on the one SKU.
    links.truncate(1_000);
    let before = counter_writes(&table).await;
    let started = Instant::now();
    let mut clicks = tokio::task::JoinSet::new();
    for (i, link) in links.iter().enumerate() {
        for tap in 0..2u8 {
            let (store, link) = (store.clone(), link.clone());
            let hold = HoldId::from_random([
                i as u8,
                (i >> 8) as u8,
                tap,
                7,
                7,
                7,
                7,
                7,
                7,
                7,
                7,
                7,
                7,
                7,
                7,
                7,
            ]);
            clicks.spawn(async move {
                store
                    .take_hold(&link, hold, shards, now + 1_000, Window::from_mins(15))
                    .await
                    .unwrap()
            });
        }
    }
    let (mut held, mut repeat, mut other) = (0, 0, 0);
    while let Some(outcome) = clicks.join_next().await {
        match outcome.unwrap() {
            HoldOutcome::Held { .. } => held += 1,
            HoldOutcome::AlreadyHeld { .. } => repeat += 1,
            _ => other += 1,
        }
    }
    let race = recorder.take();
    let race_time = started.elapsed();
    let mut hot: Vec<(String, u64)> = counter_writes(&table)
        .await
        .into_iter()
        .map(|(item, n)| {
            let was = before.get(&item).copied().unwrap_or(0);
            (item, n - was)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    hot.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    assert_eq!(
        (held, repeat, other),
        (links.len(), links.len(), 0),
        "exactly one hold per offer; each second tap answered with the same hold"
    );
    let after = store.snapshot(&sku).await.unwrap().counters;
    assert_eq!(after.held as usize, links.len(), "{after:?}");
    assert!(
        after.offered + after.held <= after.level,
        "never oversold: {after:?}"
    );

    // Exactly the oldest `units`, in order, across every shard.
    let expected = &order[..units.min(signups)];
    assert_eq!(offered.len(), expected.len(), "every unit offered once");
    assert_eq!(
        offered, expected,
        "offers follow join order exactly across {shards} shards"
    );
    let c = store.snapshot(&sku).await.unwrap().counters;
    assert!(c.offered + c.held <= c.level, "never oversold: {c:?}");

    println!("| phase | time | DynamoDB requests |");
    println!("|---|---|---|");
    let row = |phase: &str, t: std::time::Duration, r: &[String]| {
        let requests = if kind == "dynamodb" {
            format!("{} ({})", r.len(), summary(r))
        } else {
            "-".into()
        };
        println!("| {phase} | {:.2} s | {requests} |", t.as_secs_f64());
    };
    row(&format!("{signups} sign-ups"), signup_time, &joins);
    row("restock event", restock_time, &restock);
    row(
        &format!("{} offers in {waves} waves", offered.len()),
        offer_time,
        &offers,
    );
    row(
        &format!(
            "{} concurrent clicks on {} offers: {held} holds",
            2 * links.len(),
            links.len()
        ),
        race_time,
        &race,
    );
    if kind == "dynamodb" {
        let writes = race.iter().filter(|r| *r == "TransactWriteItems").count();
        println!(
            "click race: {writes} TransactWriteItems for {} clicks ({} retried after a conflict or throttle)",
            2 * links.len(),
            writes.saturating_sub(2 * links.len())
        );
        if let Some((item, n)) = hot.first() {
            println!(
                "click race: {} counter items written; the hottest, {item}, {n} times ({} holds)",
                hot.len(),
                links.len()
            );
        }
    }
    println!(
        "order checked: the {} oldest of {signups} were offered, oldest first, over {shards} shards",
        offered.len()
    );
}
