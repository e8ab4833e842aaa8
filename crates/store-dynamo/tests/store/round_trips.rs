//! DynamoDB requests per operation, counted on the wire by an SDK interceptor
//! against the DynamoDB API (moto), printed as a table and held to the budgets:
//!
//! | operation | budget |
//! |---|---|
//! | join | one read (every shard's ticket counter) and one write, then the sign-up counted in the item's history (one `UpdateItem`) |
//! | position | one read on one shard (its presence blocks); on more, one `Query` per shard side by side and one `BatchGetItem` of a ticket per other shard |
//! | take a hold | one round trip, then the hold counted in its restock's history (the request read back for its restock, one `UpdateItem`) |
//! | offers for n people | ceil(n / 32) transactions plus the state and queue page reads, and one conditional delete of the presence block they emptied |
//! | release one due item | at most 2 round trips, then the lapse counted (one `UpdateItem`) |
//!
//! `bash scripts/round-trips.sh` prints the table (it runs this with `--nocapture`).

use restock_core::{HoldId, Level, ListShare, Rules, Sku, StockEvent, Window};
use restock_store::prelude::*;
use restock_store::{JoinOutcome, NewRequest, WaveParams};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, Recorder, unique_table};
use time::OffsetDateTime;

const T0: i64 = 1_796_342_400_000;
/// Offers one transaction holds on one shard, their tickets in one presence
/// block (the SKU counter, three items per offer, one presence update).
const OFFERS_PER_TX: u32 = 32;
const RULES: Rules = Rules {
    threshold: 1,
    max_jump: 100_000,
    max_level: 100_000,
};

struct Row {
    operation: String,
    budget: String,
    requests: Vec<String>,
    within: bool,
}

fn summary(requests: &[String]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in requests {
        match counts.iter_mut().find(|(name, _)| name == r) {
            Some((_, n)) => *n += 1,
            None => counts.push((r.clone(), 1)),
        }
    }
    counts
        .iter()
        .map(|(name, n)| format!("{n} {name}"))
        .collect::<Vec<_>>()
        .join(" + ")
}

fn count(requests: &[String], op: &str) -> usize {
    requests.iter().filter(|r| *r == op).count()
}

fn sku() -> Sku {
    Sku::try_from("CHAIR-WAL").unwrap()
}

fn request(i: usize, now: i64) -> NewRequest {
    crate::support::new_shopper(&sku(), i, false, now)
}

fn level(n: u32, at: i64, id: &str) -> StockEvent {
    StockEvent {
        delivery_id: id.into(),
        item: restock_core::ItemRef::Sku { sku: sku() },
        location: "default".into(),
        level: Level::Tracked(n),
        at: OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).unwrap(),
        untimed: false,
    }
}

#[tokio::test]
async fn requests_per_operation_are_within_budget() {
    let recorder = Recorder::default();
    let client = aws_sdk_dynamodb::Client::from_conf(
        testing::config().interceptor(recorder.clone()).build(),
    );
    let store = DynamoStore::new(client, unique_table("restock-round-trips"));
    store.create_table().await.unwrap();
    let mut rows = Vec::new();

    // Queue 250 shoppers (not measured), then measure one more join.
    for i in 0..250 {
        store.join(request(i, T0 + i as i64)).await.unwrap();
    }
    recorder.take();
    let JoinOutcome::Joined(joined) = store.join(request(999, T0 + 999)).await.unwrap() else {
        panic!()
    };
    let r = recorder.take();
    rows.push(Row {
        operation: "join".into(),
        budget: "1 read + 1 write + 1 count".into(),
        within: r.len() == 3
            && count(&r, "BatchGetItem") == 1
            && count(&r, "TransactWriteItems") == 1
            && count(&r, "UpdateItem") == 1,
        requests: r,
    });
    store.position(&joined, 1).await.unwrap();
    let r = recorder.take();
    rows.push(Row {
        operation: "position (1 shard)".into(),
        budget: "1 read".into(),
        within: r.len() == 1,
        requests: r,
    });
    store.join(request(999, T0 + 1_000)).await.unwrap();
    let r = recorder.take();
    rows.push(Row {
        operation: "repeat tap (same contact)".into(),
        budget: "-".into(),
        within: true,
        requests: r,
    });

    store
        .apply_stock(&sku(), &level(1, T0 + 2_000, "d1"), &RULES, T0 + 2_000)
        .await
        .unwrap();
    let r = recorder.take();
    rows.push(Row {
        operation: "apply a stock event".into(),
        budget: "-".into(),
        within: true,
        requests: r,
    });

    let params = WaveParams {
        share: ListShare::ALL,
        offer_window: Window::from_mins(15),
        shards: 1,
        max_offers: 10_000,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    };
    let mut random = testing::random(42);
    let mut offers = Vec::new();
    let mut at = T0 + 2_000;
    for (n, total) in [(1u32, 1u32), (99, 100), (150, 250)] {
        at += 1;
        store
            .apply_stock(
                &sku(),
                &level(total, at, &format!("lvl{total}")),
                &RULES,
                at,
            )
            .await
            .unwrap();
        recorder.take();
        let wave = store
            .create_offers(&sku(), &params, at, &mut random)
            .await
            .unwrap();
        assert_eq!(wave.offers.len() as u32, n);
        let r = recorder.take();
        let tx = count(&r, "TransactWriteItems");
        // The presence block the wave took bits from, deleted if empty.
        let tidy = count(&r, "DeleteItem");
        let reads = r.len() - tx - tidy;
        rows.push(Row {
            operation: format!("offers for {n}"),
            budget: format!(
                "{} tx + reads + 1 delete if empty",
                n.div_ceil(OFFERS_PER_TX)
            ),
            within: tx == n.div_ceil(OFFERS_PER_TX) as usize
                && tidy <= 1
                && reads <= 2 + n.div_ceil(500) as usize,
            requests: r,
        });
        offers.extend(wave.offers);
    }

    let hold = HoldId::from_random(random());
    store
        .take_hold(&offers[0].reserve, hold, 1, at + 1, Window::from_mins(15))
        .await
        .unwrap();
    let r = recorder.take();
    rows.push(Row {
        operation: "take a hold".into(),
        budget: "1 + 1 read + 1 count".into(),
        within: r.len() == 3
            && count(&r, "TransactWriteItems") == 1
            && count(&r, "GetItem") == 1
            && count(&r, "UpdateItem") == 1,
        requests: r,
    });
    store
        .take_hold(
            &offers[0].reserve,
            HoldId::from_random(random()),
            1,
            at + 2,
            Window::from_mins(15),
        )
        .await
        .unwrap();
    let r = recorder.take();
    rows.push(Row {
        operation: "repeat click".into(),
        budget: "-".into(),
        within: true,
        requests: r,
    });

    assert_eq!(
        store
            .claim_notice(
                &offers[1].request.sku,
                &offers[1].request.id,
                1,
                &offers[1].reserve.secret_hash(),
                &offers[1].request.contact_key,
            )
            .await
            .unwrap(),
        restock_store::Claim::Claimed
    );
    let r = recorder.take();
    rows.push(Row {
        operation: "claim a notice (with the opt-out check)".into(),
        budget: "1".into(),
        within: r.len() == 1,
        requests: r,
    });

    let later = at + 20 * 60_000;
    let due = store.due(later, 1).await.unwrap();
    let r = recorder.take();
    rows.push(Row {
        operation: "find due items (16 partitions)".into(),
        budget: "-".into(),
        within: true,
        requests: r,
    });
    store.expire(&due[0], later).await.unwrap();
    let r = recorder.take();
    rows.push(Row {
        operation: "release one due item".into(),
        budget: "<= 2 + 1 count".into(),
        within: r.len() - count(&r, "UpdateItem") <= 2 && count(&r, "UpdateItem") <= 1,
        requests: r,
    });

    store.cancel(&offers[5].request.id, later).await.unwrap();
    let r = recorder.take();
    rows.push(Row {
        operation: "cancel".into(),
        budget: "-".into(),
        within: true,
        requests: r,
    });

    println!("\n| operation | budget | requests | breakdown |\n|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {} |",
            row.operation,
            row.budget,
            row.requests.len(),
            summary(&row.requests)
        );
    }
    let over: Vec<_> = rows
        .iter()
        .filter(|r| !r.within)
        .map(|r| &r.operation)
        .collect();
    assert!(over.is_empty(), "over budget: {over:?}");
}
