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
    CatalogueEntry, Contact, Email, HoldId, ItemRef, Level, ListShare, RequestId, RequestState,
    Rules, Sku, StockEvent, Window,
};
use restock_store::prelude::*;
use restock_store::{Claim, HoldOutcome, JoinOutcome, NewRequest, NoticeOutcome, WaveParams};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, Recorder};
use restock_store_memory::MemoryStore;

const T0: i64 = 1_796_342_400_000;

/// What the strict double has counted for `table` so far: writes per
/// counter item, write units (a metered table) and read units (the whole
/// double). Empty when the endpoint is plain moto or the store in memory.
#[derive(Debug, Default)]
struct Meter {
    counter_writes: std::collections::HashMap<String, u64>,
    write_units: f64,
    read_units: f64,
}

async fn meter(table: &str) -> Meter {
    if std::env::var_os("RESTOCK_DYNAMODB_ENDPOINT").is_none() {
        return Meter::default();
    }
    let get = |url: String| async move {
        let answer = reqwest::get(&url).await.ok()?;
        answer.json::<serde_json::Value>().await.ok()
    };
    let endpoint = testing::endpoint();
    let (Some(of_table), Some(all)) = (
        get(format!("{endpoint}/_restock/strict/stats?table={table}")).await,
        get(format!("{endpoint}/_restock/strict/stats")).await,
    ) else {
        return Meter::default();
    };
    Meter {
        counter_writes: serde_json::from_value(of_table["counter_writes"].clone())
            .unwrap_or_default(),
        write_units: of_table["write_units"].as_f64().unwrap_or(0.0),
        read_units: all["read_units"].as_f64().unwrap_or(0.0),
    }
}

/// DynamoDB on-demand list prices (us-east-1; the cost model in docs/DEPLOY.md).
const DOLLARS_PER_WRITE_UNIT: f64 = 0.625 / 1e6;
const DOLLARS_PER_READ_UNIT: f64 = 0.125 / 1e6;

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
            // Ask the strict double to bill this table's writes.
            let _ = reqwest::Client::new()
                .post(format!("{}/_restock/strict/meter", testing::endpoint()))
                .json(&serde_json::json!({ "table": table }))
                .send()
                .await;
            Arc::new(store)
        }
        _ => Arc::new(MemoryStore::new()),
    };
    let sku = Sku::try_from("SNEAKER-DROP").unwrap();
    let mut entry = CatalogueEntry::new(sku.clone(), "Limited runner");
    entry.shards = shards;
    store.put_catalogue_entry(&entry).await.unwrap();
    println!(
        "hyped drop on the {kind} store: {signups} sign-ups over {shards} shards, {units} units"
    );

    // Sign-ups, one millisecond apart, through the real join.
    let mut meters = vec![("start", meter(&table).await)];
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
            language: None,
            zone: None,
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
    meters.push(("sign-ups", meter(&table).await));

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
        untimed: false,
    };
    store.apply_stock(&sku, &event, &rules, now).await.unwrap();
    let restock = recorder.take();
    let restock_time = started.elapsed();
    meters.push(("restock", meter(&table).await));

    // Waves until every unit is offered.
    let started = Instant::now();
    let params = WaveParams {
        share: ListShare::ALL,
        offer_window: Window::from_mins(15),
        shards,
        max_offers: 1_000,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    };
    let mut offered = Vec::with_capacity(units);
    let mut links = Vec::with_capacity(units);
    let mut notices = Vec::with_capacity(units);
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
        notices.extend(wave.offers.iter().map(|o| {
            let RequestState::Offered { episode, .. } = o.request.state else {
                panic!("an offer is offered")
            };
            (
                o.request.id,
                episode,
                o.reserve.secret_hash(),
                o.request.contact_key.clone(),
            )
        }));
        links.extend(wave.offers.into_iter().map(|o| o.reserve));
    }
    let offers = recorder.take();
    let offer_time = started.elapsed();
    meters.push(("offers", meter(&table).await));

    // Each notice: claimed (with the opt-out check), then recorded as sent.
    let started = Instant::now();
    for (id, episode, reserve, contact) in &notices {
        let claim = store
            .claim_notice(&sku, id, *episode, reserve, contact)
            .await
            .unwrap();
        assert_eq!(claim, Claim::Claimed);
        store
            .record_notice(
                id,
                *episode,
                NoticeOutcome::Sent {
                    message_id: format!("m-{id}"),
                },
                now,
            )
            .await
            .unwrap();
    }
    let sends = recorder.take();
    let notice_time = started.elapsed();
    meters.push(("notices", meter(&table).await));

    // The click race: every offered shopper (at most 1,000) taps their
    // reserve link twice at once, all concurrently, on the one SKU.
    links.truncate(1_000);
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
    meters.push(("clicks", meter(&table).await));
    let before = &meters[meters.len() - 2].1.counter_writes;
    let mut hot: Vec<(String, u64)> = meters[meters.len() - 1]
        .1
        .counter_writes
        .iter()
        .map(|(item, n)| {
            let was = before.get(item).copied().unwrap_or(0);
            (item.clone(), n - was)
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
        &format!("{} notices claimed and recorded", notices.len()),
        notice_time,
        &sends,
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
    if meters.iter().any(|(_, m)| m.write_units > 0.0) {
        project(&meters, signups, notices.len(), links.len());
    }
}

/// DynamoDB units per phase as the strict double billed them, each per
/// unit of work, and what the drop of the issue (100,000 sign-ups, 10,000
/// units offered, noticed and held) would cost at those rates.
fn project(meters: &[(&str, Meter)], signups: usize, offers: usize, holds: usize) {
    println!();
    println!("| phase | write units | read units | per | projected for 100,000 / 10,000 | cost |");
    println!("|---|---:|---:|---|---:|---:|");
    let mut total = 0.0;
    for pair in meters.windows(2) {
        let ((_, was), (phase, now)) = (&pair[0], &pair[1]);
        let (wu, ru) = (
            now.write_units - was.write_units,
            now.read_units - was.read_units,
        );
        let (per, done, scale) = match *phase {
            "sign-ups" => ("sign-up", signups, 100_000),
            "offers" => ("offer", offers, 10_000),
            "notices" => ("notice", offers, 10_000),
            "clicks" => ("hold (2 taps)", holds, 10_000),
            _ => ("restock", 1, 1),
        };
        let factor = scale as f64 / done.max(1) as f64;
        let cost = factor * (wu * DOLLARS_PER_WRITE_UNIT + ru * DOLLARS_PER_READ_UNIT);
        total += cost;
        println!(
            "| {phase} | {wu:.0} | {ru:.0} | {:.1} WU + {:.1} RU per {per} | {scale} | ${cost:.3} |",
            wu / done.max(1) as f64,
            ru / done.max(1) as f64,
        );
    }
    println!("projected DynamoDB cost of the drop (on-demand, us-east-1 list prices): ${total:.2}");
}
