//! What several suites share.

use restock_core::{ItemRef, Level, RequestId, Rules, Sku, StockEvent};
use restock_store::prelude::*;
use restock_store_dynamo::DynamoStore;
use time::OffsetDateTime;

/// Rules that accept any level a test posts (threshold 1, no escalation).
pub const ANY_LEVEL: Rules = Rules {
    threshold: 1,
    max_jump: 100_000,
    max_level: 100_000,
};

/// Posts `level` for `sku` from its one location at `at`, as the shop's
/// webhook would, and applies it.
pub async fn set_level(store: &DynamoStore, sku: &Sku, level: u32, at: i64) {
    let event = StockEvent {
        delivery_id: format!("level-{level}-{at}"),
        item: ItemRef::Sku { sku: sku.clone() },
        location: "default".into(),
        level: Level::Tracked(level),
        at: OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).unwrap(),
        untimed: false,
    };
    store
        .apply_stock(sku, &event, &ANY_LEVEL, at)
        .await
        .unwrap();
}

/// Writes a request's status straight to the table, as a concurrent writer
/// (or a manual edit) would, behind the store's back.
pub async fn set_status_behind_the_store(store: &DynamoStore, id: &RequestId, status: &str) {
    use aws_sdk_dynamodb::types::AttributeValue;
    store
        .sdk()
        .update_item()
        .table_name(store.table())
        .key("pk", AttributeValue::S(format!("REQ#{id}")))
        .key("sk", AttributeValue::S("REQ".into()))
        .update_expression("SET st = :st")
        .expression_attribute_values(":st", AttributeValue::S(status.into()))
        .send()
        .await
        .unwrap();
}

/// Shopper `i`'s sign-up (`fan{i}@example.com`, its id drawn from
/// `testing::random(i + 1)`) for `sku` on one shard at `now`: with double
/// opt-in (`confirming`, a 48h window) or without.
pub fn new_shopper(sku: &Sku, i: usize, confirming: bool, now: i64) -> restock_store::NewRequest {
    use restock_core::{Contact, Email};
    let contact = Contact::Email(Email::try_from(format!("fan{i}@example.com").as_str()).unwrap());
    restock_store::NewRequest {
        id: RequestId::from_random(restock_store_dynamo::testing::random(i as u64 + 1)()),
        sku: sku.clone(),
        name: "Fan".try_into().unwrap(),
        contact_key: contact.key(b"pepper"),
        contact,
        now,
        shards: 1,
        lifetime_ms: 90 * 86_400_000,
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: confirming.then_some(2 * 86_400_000),
        consent: None,
    }
}

/// Shopper `i` joins `sku` ([`new_shopper`]): unconfirmed with double
/// opt-in (`confirming`), else waiting.
pub async fn join_shopper(
    store: &DynamoStore,
    sku: &Sku,
    i: usize,
    confirming: bool,
    now: i64,
) -> restock_store::Request {
    match store
        .join(new_shopper(sku, i, confirming, now))
        .await
        .unwrap()
    {
        restock_store::JoinOutcome::Joined(r) => r,
        other => panic!("shopper {i} did not join: {other:?}"),
    }
}
