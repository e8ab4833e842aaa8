//! What a wave costs when most of the queue is asleep: N people wait for one
//! SKU over S shards, told by text, one in `awake_every` in New York and the
//! rest in Sydney. A restock of U units comes at 09:00 in New York (01:00 in
//! Sydney): waves run until nothing more is offered, passing over the
//! sleepers; then Sydney wakes (08:00 there), the sweep wakes the item, and
//! the units left go to the first sleepers in line. The same queue with
//! quiet hours off is the baseline. Prints, per phase, the offers, the
//! people passed over, the time and, on DynamoDB, the requests and the read
//! units the strict double billed; checks that the awake were offered
//! oldest first, nobody asleep was offered, and the sleepers were offered
//! oldest first when they woke.
//!
//!   cargo bench -p restock-store-dynamo --bench quiet -- memory 100000 100 16 10
//!   RESTOCK_DYNAMODB_ENDPOINT=http://127.0.0.1:PORT \
//!     cargo bench -p restock-store-dynamo --bench quiet -- dynamodb 2000 100 16 10
//!
//! `bash scripts/quiet.sh` runs both (starting moto for the second).

use std::sync::Arc;
use std::time::Instant;

use restock_core::{
    CatalogueEntry, Contact, ItemRef, Level, ListShare, Phone, QuietHours, RequestId, Rules, Sku,
    StockEvent, Window, Zone,
};
use restock_store::prelude::*;
use restock_store::{JoinOutcome, NewRequest, WaveParams};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, Recorder};
use restock_store_memory::MemoryStore;

/// 2026-12-04T00:00:00Z.
const T0: i64 = 1_796_342_400_000;
const HOUR: i64 = 3_600_000;

/// The read units the strict double has billed so far (0 elsewhere).
async fn read_units() -> f64 {
    if std::env::var_os("RESTOCK_DYNAMODB_ENDPOINT").is_none() {
        return 0.0;
    }
    let url = format!("{}/_restock/strict/stats", testing::endpoint());
    match reqwest::get(&url).await {
        Ok(answer) => answer
            .json::<serde_json::Value>()
            .await
            .ok()
            .and_then(|v| v["read_units"].as_f64())
            .unwrap_or(0.0),
        Err(_) => 0.0,
    }
}

struct Phase {
    offered: Vec<RequestId>,
    asleep: u32,
    wake_at: Option<i64>,
    waves: u32,
}

/// Waves at `now` until one offers nothing.
async fn waves(store: &dyn Store, sku: &Sku, params: &WaveParams, now: i64) -> Phase {
    let mut random = testing::random(now as u64);
    let mut phase = Phase {
        offered: Vec::new(),
        asleep: 0,
        wake_at: None,
        waves: 0,
    };
    loop {
        let wave = store
            .create_offers(sku, params, now, &mut random)
            .await
            .unwrap();
        phase.waves += 1;
        phase.asleep = phase.asleep.max(wave.asleep);
        phase.wake_at = phase.wake_at.or(wave.wake_at);
        if wave.offers.is_empty() {
            return phase;
        }
        phase
            .offered
            .extend(wave.offers.iter().map(|o| o.request.id));
    }
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
    let (waiting, units, shards, awake_every) = (
        number(1, 100_000),
        number(2, 100),
        number(3, 16) as u16,
        number(4, 10).max(1),
    );
    let recorder = Recorder::default();
    let new_store = |recorder: &Recorder| {
        let (kind, recorder) = (kind.clone(), recorder.clone());
        async move {
            let store: Arc<dyn Store> = match kind.as_str() {
                "dynamodb" => {
                    let client = aws_sdk_dynamodb::Client::from_conf(
                        testing::config().interceptor(recorder).build(),
                    );
                    let store = DynamoStore::new(client, testing::unique_table("restock-quiet"));
                    store.create_table().await.expect("table");
                    Arc::new(store)
                }
                _ => Arc::new(MemoryStore::new()),
            };
            store
        }
    };
    let sku = Sku::try_from("SNEAKER-DROP").unwrap();
    let (sydney, new_york) = (
        Zone::named("Australia/Sydney").unwrap(),
        Zone::named("America/New_York").unwrap(),
    );
    println!(
        "quiet hours on the {kind} store: {waiting} waiting over {shards} shards by text, one in {awake_every} awake (New York), the rest asleep (Sydney); {units} units"
    );
    let restock_at = T0 + 14 * HOUR; // 09:00 in New York, 01:00 in Sydney
    let sydney_wakes = T0 + 21 * HOUR; // 08:00 in Sydney
    for quiet in [true, false] {
        let store = new_store(&recorder).await;
        let mut entry = CatalogueEntry::new(sku.clone(), "Limited runner");
        entry.shards = shards;
        store.put_catalogue_entry(&entry).await.unwrap();
        let mut random = testing::random(7);
        let mut line = Vec::with_capacity(waiting);
        for i in 0..waiting {
            let contact = Contact::Sms(Phone::parse(&format!("+614{i:08}")).unwrap());
            let awake = i % awake_every == awake_every - 1;
            let request = NewRequest {
                id: RequestId::from_random(random()),
                sku: sku.clone(),
                name: "Fan".try_into().unwrap(),
                contact_key: contact.key(b"quiet-pepper-0123456789"),
                contact,
                now: T0 + i as i64,
                shards,
                lifetime_ms: 90 * 86_400_000,
                manage_hash: None,
                language: None,
                zone: Some(if awake {
                    new_york.clone()
                } else {
                    sydney.clone()
                }),
                confirm_window_ms: None,
                consent: None,
            };
            match store.join(request).await.unwrap() {
                JoinOutcome::Joined(r) => line.push((r.id, awake)),
                other => panic!("sign-up {i}: {other:?}"),
            }
        }
        let event = StockEvent {
            delivery_id: "restock".into(),
            item: ItemRef::Sku { sku: sku.clone() },
            location: "warehouse".into(),
            level: Level::Tracked(units as u32),
            at: time::OffsetDateTime::from_unix_timestamp(restock_at / 1000).unwrap(),
            untimed: false,
        };
        let rules = Rules {
            threshold: 1,
            max_jump: u32::MAX,
            max_level: u32::MAX,
        };
        store
            .apply_stock(&sku, &event, &rules, restock_at)
            .await
            .unwrap();
        let params = WaveParams {
            share: ListShare::ALL,
            offer_window: Window::from_mins(15),
            shards,
            max_offers: 1_000,
            quiet_hours: if quiet {
                QuietHours::default()
            } else {
                QuietHours {
                    sms: None,
                    ..QuietHours::default()
                }
            },
            shop_zone: Zone::utc(),
        };
        let label = if quiet {
            "quiet hours 21:00-08:00"
        } else {
            "no quiet hours (baseline)"
        };

        recorder.take();
        let (units_before, started) = (read_units().await, Instant::now());
        let night = waves(store.as_ref(), &sku, &params, restock_at).await;
        let (took, requests, units_read) = (
            started.elapsed(),
            recorder.take(),
            read_units().await - units_before,
        );
        let expected: Vec<RequestId> = line
            .iter()
            .filter(|(_, awake)| *awake || !quiet)
            .map(|(id, _)| *id)
            .take(units)
            .collect();
        assert_eq!(
            night.offered, expected,
            "{label}: the first awake, oldest first"
        );
        println!(
            "  {label}, at the restock: {} offered over {} waves, {} passed over asleep, {:.1} ms, {} DynamoDB requests ({} Query), {:.0} read units",
            night.offered.len(),
            night.waves,
            night.asleep,
            took.as_secs_f64() * 1e3,
            requests.len(),
            requests.iter().filter(|r| r.as_str() == "Query").count(),
            units_read,
        );
        if !quiet {
            continue;
        }
        let left = units - night.offered.len();
        if left == 0 {
            println!("  every unit went to someone awake: no wake asked for");
            continue;
        }
        assert_eq!(
            night.wake_at,
            Some(sydney_wakes),
            "the first sleeper's morning"
        );
        store.wake_at(&sku, sydney_wakes).await.unwrap();
        assert_eq!(
            store.wake_sleepers(sydney_wakes).await.unwrap(),
            std::slice::from_ref(&sku)
        );
        recorder.take();
        let (units_before, started) = (read_units().await, Instant::now());
        let morning = waves(store.as_ref(), &sku, &params, sydney_wakes).await;
        let (took, requests, units_read) = (
            started.elapsed(),
            recorder.take(),
            read_units().await - units_before,
        );
        let sleepers: Vec<RequestId> = line
            .iter()
            .filter(|(_, awake)| !*awake)
            .map(|(id, _)| *id)
            .take(left)
            .collect();
        assert_eq!(
            morning.offered, sleepers,
            "the sleepers first in line, oldest first"
        );
        println!(
            "  Sydney wakes: the sweep wakes the item once; {} offered to the first sleepers in line over {} waves, {:.1} ms, {} DynamoDB requests ({} Query), {:.0} read units",
            morning.offered.len(),
            morning.waves,
            took.as_secs_f64() * 1e3,
            requests.len(),
            requests.iter().filter(|r| r.as_str() == "Query").count(),
            units_read,
        );
    }
}
