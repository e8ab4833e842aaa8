//! `cargo bench -p restock-core`: the hot decisions, at hyped-drop size.
//!
//! - planning a 10,000-unit batch from a 100,000-request queue spread over 16
//!   shards (the k-way merge plus the allocation walk); budget: under 20 ms;
//! - verifying a 4 KiB webhook body in each signed format.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use restock_core::platform::{shopify, standard};
use restock_core::webhook::Keys;
use restock_core::{
    Candidate, Counters, JoinKey, ListShare, RequestId, merge_oldest_first, plan_offers,
};
use std::hint::black_box;
use time::OffsetDateTime;

fn queue(requests: usize, shards: u16) -> Vec<Vec<Candidate<RequestId>>> {
    let mut parts: Vec<Vec<Candidate<RequestId>>> = vec![Vec::new(); shards as usize];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..requests {
        let mut bytes = [0u8; 16];
        for chunk in bytes.chunks_mut(8) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            chunk.copy_from_slice(&seed.to_be_bytes());
        }
        let id = RequestId::from_random(bytes);
        // Sign-ups arrive a few per millisecond, so ties are common.
        let key = JoinKey::new(1_767_225_600_000 + (i / 4) as i64, &id);
        parts[id.shard(shards) as usize].push(Candidate {
            request: id,
            key,
            stale_at_ms: i64::MAX,
            opted_out: i % 97 == 0,
            last_offered_episode: None,
            asleep_until: None,
        });
    }
    for p in &mut parts {
        p.sort_by_key(|c| c.key);
    }
    parts
}

fn plan(c: &mut Criterion) {
    let shards = queue(100_000, 16);
    let counters = Counters {
        level: 10_000,
        offered: 0,
        held: 0,
    };
    c.bench_function("plan 10k units from 100k queued over 16 shards", |b| {
        b.iter_batched(
            || shards.clone(),
            |shards| {
                let merged = merge_oldest_first(shards);
                let plan = plan_offers(counters.free(ListShare::ALL), 1, 0, merged);
                assert_eq!(plan.offers.len(), 10_000);
                black_box(plan)
            },
            BatchSize::LargeInput,
        )
    });
}

fn verify(c: &mut Criterion) {
    let body = {
        let mut b = br#"{"inventory_item_id":271878346596884015,"location_id":24826418,"available":4,"updated_at":"2026-11-29T09:15:02-05:00","admin_graphql_api_id":""#.to_vec();
        b.resize(4096 - 2, b'x');
        b.extend_from_slice(b"\"}");
        b
    };
    let key = b"shpss_restock_bench_key";
    let headers = vec![
        (shopify::SIGNATURE, shopify::sign(key, &body)),
        (shopify::WEBHOOK_ID, "bench".to_owned()),
    ];
    let keys = Keys::raw([key]);
    c.bench_function("verify and parse a 4 KiB Shopify webhook", |b| {
        b.iter(|| black_box(shopify::parse(&keys, &headers, black_box(&body)).unwrap()))
    });

    let now = OffsetDateTime::now_utc();
    let std_key = standard::decode_key("whsec_cmVzdG9jay1iZW5jaC1rZXk=").unwrap();
    let ts = now.unix_timestamp();
    let std_headers = vec![
        (standard::ID, "msg_bench".to_owned()),
        (standard::TIMESTAMP, ts.to_string()),
        (
            standard::SIGNATURE,
            standard::sign(&std_key, "msg_bench", ts, &body),
        ),
    ];
    let std_keys = Keys::raw([std_key]);
    c.bench_function("verify a 4 KiB Standard Webhooks signature", |b| {
        b.iter(|| {
            black_box(standard::verify(&std_keys, &std_headers, black_box(&body), now).unwrap())
        })
    });
}

fn sleepers(c: &mut Criterion) {
    // 10,000 texts to numbers across area codes, countries and zones: who
    // is asleep or outside their legal hours, as a wave asks.
    let prefixes = [
        "+1305", "+1212", "+1808", "+1416", "+3361", "+44740", "+6141",
    ];
    let contacts: Vec<restock_core::Contact> = (0..10_000)
        .map(|i| {
            let number = format!("{}{:07}", prefixes[i % prefixes.len()], 2_345_000 + i);
            restock_core::Contact::Sms(restock_core::Phone::parse(&number).expect("a number"))
        })
        .collect();
    let hours = restock_core::QuietHours::default();
    let shop = restock_core::Zone::utc();
    c.bench_function("who of 10k texted is asleep or outside legal hours", |b| {
        b.iter(|| {
            let mut sleepers = restock_core::Sleepers::new(&hours, &shop, 1_796_630_400_000);
            contacts
                .iter()
                .filter(|c| sleepers.asleep_until(c, None).is_some())
                .count()
        });
    });
}

criterion_group!(benches, plan, verify, sleepers);
criterion_main!(benches);
