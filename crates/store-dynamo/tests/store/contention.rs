//! Transactions that really contend: on the strict double's contention model
//! (`RESTOCK_TX_INFLIGHT_MS`: each transaction and single-item write is in
//! flight for that long, and an overlapping transaction naming one of its
//! items is cancelled with `TransactionConflict`, as DynamoDB does), which
//! `scripts/test.sh` starts as `RESTOCK_DYNAMODB_CONTENDED_ENDPOINT` (5 ms).
//! On an endpoint without the model the first test fails (nothing is
//! cancelled), so a run on the wrong endpoint cannot pass quietly.
//!
//! The loads are what one moto, which applies a request at a time, serves in
//! a few seconds; the figures each test prints are for `docs/RELIABILITY.md`.

use std::sync::Arc;
use std::time::Instant;

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update};
use futures::future::join_all;
use restock_core::{Contact, Email, HoldId, RequestId, Sku, Window};
use restock_store::prelude::*;
use restock_store::{HoldOutcome, JoinOutcome, NewRequest, WaveParams};
use restock_store_dynamo::testing::{self, contended_dynamo_store};

use crate::support::set_level;

const T0: i64 = 1_796_342_400_000;
const WINDOW: Window = Window::from_mins(15);

fn sku() -> Sku {
    Sku::try_from("HYPE-1").unwrap()
}

fn new_request(i: usize, shards: u16) -> NewRequest {
    let contact = Contact::Email(Email::try_from(format!("fan{i}@example.com").as_str()).unwrap());
    NewRequest {
        id: RequestId::from_random(testing::random(50_000 + i as u64)()),
        sku: sku(),
        name: "Fan".try_into().unwrap(),
        contact_key: contact.key(b"pepper"),
        contact,
        now: T0 + i as i64,
        shards,
        lifetime_ms: 90 * 86_400_000,
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: None,
        consent: None,
    }
}

/// The double itself: two transactions in flight on one item at once, one
/// is cancelled with `TransactionConflict` (the other applies).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_transactions_in_flight_on_one_item_one_is_cancelled() {
    let (store, client) = contended_dynamo_store().await;
    let table = store.table().to_owned();
    let bump = |n: i64| {
        let (client, table) = (client.clone(), table.clone());
        async move {
            let update = Update::builder()
                .table_name(table)
                .key("pk", AttributeValue::S("CONTENDED".into()))
                .key("sk", AttributeValue::S("_".into()))
                .update_expression("ADD n :n")
                .expression_attribute_values(":n", AttributeValue::N(n.to_string()))
                .build()
                .unwrap();
            client
                .transact_write_items()
                .transact_items(TransactWriteItem::builder().update(update).build())
                .send()
                .await
        }
    };
    // Two sent at once meet in the double's window unless the machine is
    // so loaded that the second arrives after the first has applied: up
    // to twenty rounds, until three have met.
    let (mut cancelled, mut rounds) = (0, 0);
    for round in 0..20 {
        if cancelled >= 3 {
            break;
        }
        rounds += 1;
        let (a, b) = tokio::join!(bump(1), bump(1));
        let conflicts = [a, b]
            .into_iter()
            .filter(|r| {
                r.as_ref()
                    .err()
                    .and_then(|e| e.as_service_error())
                    .is_some_and(|e| {
                        e.is_transaction_canceled_exception()
                            && format!("{e:?}").contains("TransactionConflict")
                    })
            })
            .count();
        assert!(conflicts <= 1, "round {round}: both cancelled");
        cancelled += conflicts;
    }
    assert!(
        cancelled >= 3,
        "two transactions on one item at once: one must lose (lost {cancelled} of {rounds} rounds; is RESTOCK_TX_INFLIGHT_MS set?)"
    );
}

/// Sign-ups from eight clients at once, on one shard and on four: each
/// either gets in or answers `Contention` (capture's 503 with `Retry-After`)
/// having written nothing, so the same sign-up sent again gets in. Every
/// join is conditional on its shard's ticket counter, so a shard admits
/// about one join per round trip: the figures printed say how many a
/// second, and four shards take all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn joins_from_eight_clients_get_in_or_write_nothing() {
    for shards in [1u16, 4] {
        let store = Arc::new(contended_dynamo_store().await.0);
        let started = Instant::now();
        let clients = (0..8).map(|c| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut refused = Vec::new();
                for i in (c..64).step_by(8) {
                    match store.join(new_request(i, shards)).await {
                        Ok(JoinOutcome::Joined(_)) => {}
                        Err(restock_store::StoreError::Contention(_)) => refused.push(i),
                        other => panic!("join {i}: {other:?}"),
                    }
                }
                refused
            })
        });
        let refused: Vec<usize> = join_all(clients)
            .await
            .into_iter()
            .flat_map(Result::unwrap)
            .collect();
        let secs = started.elapsed().as_secs_f64();
        let joined = 64 - refused.len();
        println!(
            "contention: 64 joins from 8 clients on {shards} shard(s): {joined} in {secs:.1} s ({:.1} a second), {} answered 503",
            joined as f64 / secs,
            refused.len()
        );
        assert_eq!(
            store.queue(&sku(), shards, 100).await.unwrap().len(),
            joined
        );
        // A refused join wrote nothing: sent again, it gets in.
        for i in &refused {
            assert!(matches!(
                store.join(new_request(*i, shards)).await.unwrap(),
                JoinOutcome::Joined(_)
            ));
        }
        let queue = store.queue(&sku(), shards, 100).await.unwrap();
        assert_eq!(queue.len(), 64);
        if shards == 4 {
            assert!(refused.is_empty(), "four shards take eight clients");
        }
    }
}

/// Taps on a one-shard item's reserve links, two per offer, all at once:
/// each ends in a hold or "sold out again", none in an error, and exactly
/// as many holds as units.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contended_clicks_end_in_a_hold_or_sold_out_never_an_error() {
    let store = Arc::new(contended_dynamo_store().await.0);
    for i in 0..20 {
        store.join(new_request(i, 1)).await.unwrap();
    }
    set_level(&store, &sku(), 20, T0 + 100).await;
    let mut random = testing::random(5);
    let params = WaveParams {
        share: restock_core::ListShare::ALL,
        offer_window: WINDOW,
        shards: 1,
        max_offers: 1_000,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    };
    let wave = store
        .create_offers(&sku(), &params, T0 + 100, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 20);
    // Sold elsewhere: 8 units for 20 live links.
    set_level(&store, &sku(), 8, T0 + 200).await;
    let started = Instant::now();
    let clicks = (0..40).map(|k| {
        let store = store.clone();
        let token = wave.offers[k % 20].reserve.clone();
        tokio::spawn(async move {
            let hold = HoldId::from_random(testing::random(90_000 + k as u64)());
            store.take_hold(&token, hold, 1, T0 + 60_000, WINDOW).await
        })
    });
    let outcomes: Vec<_> = join_all(clicks)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let errors: Vec<_> = outcomes.iter().filter(|o| o.is_err()).collect();
    assert!(errors.is_empty(), "clicks ended in errors: {errors:?}");
    let holds = outcomes
        .iter()
        .flatten()
        .filter(|o| matches!(o, HoldOutcome::Held { .. }))
        .count();
    let snap = store.snapshot(&sku()).await.unwrap();
    println!(
        "contention: 40 clicks on 20 offers, 8 units, 1 shard: {} held, no error, in {:.1} s",
        snap.counters.held,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(snap.counters.held, 8, "exactly the units left");
    assert_eq!(
        holds, 8,
        "one new hold per unit; the rest sold out or a repeat"
    );
}
