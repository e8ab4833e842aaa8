//! The table's definition, in one place: the store, the tests, the admin CLI
//! and `template.yaml` all agree with [`TABLE`] (a test checks the template).
//!
//! One table, generic keys `pk`/`sk` (a SKU's queue is base-table entries
//! `Q#<sku>#<shard>` sorted by join key, read strongly consistent; a SKU's
//! live offers and holds are base-table unit markers `UNITS#<sku>`, read
//! the same way), one sparse index:
//! - `due`: live requests by deadline, over [`DUE_SHARDS`] partitions (`dpk`, `due`).
//!
//! See `docs/TABLE.md` for every item and which operation touches it.

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, SseSpecification, StreamSpecification, StreamViewType,
    TimeToLiveSpecification,
};
use serde::Serialize;

use restock_store::StoreError;

use crate::attr;

/// The partition key prefix of wake records, the only items notify's stream
/// subscription passes on (`template.yaml` filters on it).
pub const WAKE_PK_PREFIX: &str = "WAKE#";

/// Partitions of the `due` index: enough that a hyped drop's writes to the
/// index spread over several partitions, few enough that a sweep reads them all.
pub const DUE_SHARDS: u16 = 16;

/// Partitions of each item-wide collection a sign-up or a click writes to
/// (unit markers, pending confirmations, wakes): DynamoDB takes about 1,000
/// write units a second per partition key, and one partition per item
/// capped a drop near 250 holds and 500 double-opt-in sign-ups a second
/// (`docs/PERFORMANCE.md`, "Load in simulated time"). Readers read them all.
pub const SPREAD: u16 = 16;

/// The partition of [`SPREAD`] a wake with this discriminator goes to.
pub fn wake_partition(discriminator: &str) -> u64 {
    fnv(discriminator) % u64::from(SPREAD)
}

/// A stable 64-bit hash for key discriminators (two wakes of one millisecond).
pub(crate) fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IndexDef {
    /// Its name.
    pub name: &'static str,
    /// Partition key attribute.
    pub partition_key: &'static str,
    /// Sort key attribute.
    pub sort_key: &'static str,
    /// Projection (`ALL`).
    pub projection: &'static str,
}

/// The table's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TableDef {
    /// Partition key attribute (string).
    pub partition_key: &'static str,
    /// Sort key attribute (string).
    pub sort_key: &'static str,
    /// Every key attribute and its type (`S` or `N`).
    pub attributes: &'static [(&'static str, &'static str)],
    /// The global secondary indexes.
    pub indexes: &'static [IndexDef],
    /// The stream view notify reads (wakes from the new image; events from
    /// the change between the two).
    pub stream_view: &'static str,
    /// The TTL attribute (seconds since the epoch).
    pub ttl_attribute: &'static str,
}

/// The one definition.
pub const TABLE: TableDef = TableDef {
    partition_key: attr::PK,
    sort_key: attr::SK,
    attributes: &[
        (attr::PK, "S"),
        (attr::SK, "S"),
        (attr::DUE_PK, "S"),
        (attr::DUE, "N"),
    ],
    indexes: &[IndexDef {
        name: "due",
        partition_key: attr::DUE_PK,
        sort_key: attr::DUE,
        projection: "ALL",
    }],
    stream_view: "NEW_AND_OLD_IMAGES",
    ttl_attribute: attr::TTL,
};

fn key_element(name: &str, kind: KeyType) -> Result<KeySchemaElement, StoreError> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .map_err(|e| StoreError::backend(crate::DYNAMODB, "CreateTable", e))
}

/// Creates the table as [`TABLE`] describes it (on-demand, encrypted, with
/// its stream and TTL), and waits until it is active.
///
/// # Errors
/// [`StoreError::Backend`] when DynamoDB refuses.
pub async fn create_table(client: &Client, name: &str) -> Result<(), StoreError> {
    let mut req = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key_element(TABLE.partition_key, KeyType::Hash)?)
        .key_schema(key_element(TABLE.sort_key, KeyType::Range)?)
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::from(TABLE.stream_view))
                .build()
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "CreateTable", e))?,
        )
        .sse_specification(SseSpecification::builder().enabled(true).build());
    for (attr, kind) in TABLE.attributes {
        req = req.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(*attr)
                .attribute_type(ScalarAttributeType::from(*kind))
                .build()
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "CreateTable", e))?,
        );
    }
    for index in TABLE.indexes {
        req = req.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(index.name)
                .key_schema(key_element(index.partition_key, KeyType::Hash)?)
                .key_schema(key_element(index.sort_key, KeyType::Range)?)
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::from(index.projection))
                        .build(),
                )
                .build()
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "CreateTable", e))?,
        );
    }
    req.send()
        .await
        .map_err(|e| StoreError::backend(crate::DYNAMODB, "CreateTable", e))?;
    client
        .update_time_to_live()
        .table_name(name)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name(TABLE.ttl_attribute)
                .build()
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "UpdateTimeToLive", e))?,
        )
        .send()
        .await
        .map_err(|e| StoreError::backend(crate::DYNAMODB, "UpdateTimeToLive", e))?;
    for _ in 0..100 {
        let described = client
            .describe_table()
            .table_name(name)
            .send()
            .await
            .map_err(|e| StoreError::backend(crate::DYNAMODB, "DescribeTable", e))?;
        let active = described
            .table()
            .and_then(|t| t.table_status())
            .is_some_and(|s| s.as_str() == "ACTIVE");
        if active {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(StoreError::Missing(format!(
        "table {name} did not become active"
    )))
}
