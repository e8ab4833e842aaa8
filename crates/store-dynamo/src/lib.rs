//! # restock-store-dynamo
//!
//! The DynamoDB store: one table, conditional writes and transactions for
//! every contended change, sparse indexes instead of scans.
//!
//! The rule throughout: read (consistently) what the core needs to decide,
//! let the core decide, then write the decision with conditions that hold
//! only if nothing it depended on has moved. A failed condition comes back
//! as the outcome it means (`ReturnValuesOnConditionCheckFailure = ALL_OLD`
//! gives the item that failed, read by its label in the transaction), or as
//! a re-read and a bounded retry. How each operation maps onto items is in
//! `docs/TABLE.md`.
//!
//! ## Layout
//! - [`table`]: the table's one definition, and `create_table`.
//! - [`attr`]: every attribute name, once.
//! - `keys`: every item's key, and the item layout (its doc is the table of
//!   items).
//! - `codec`: records to items and back.
//! - `tx`: the update builder, labelled transactions, conflict retries.
//! - `queue`: reading a SKU's sharded queue oldest-first, and counting it.
//! - `tickets`, `slots`: positions by ticket and presence block; the hold
//!   slots.
//! - `lifecycle`: the writes that end a request or wake notify, shared by
//!   the sections.
//! - one file per section of the port, each an `impl` of it: `catalogue`,
//!   `capture`, `detect`, `notify`, `abuse`, `sweep`, `figures`; and the
//!   operations they lean on, each in a file of its own: `confirm` (a
//!   confirmation's writes), `hold` (a click's), `wave` (a wave's offers),
//!   `import`, `events` (what a write was, from the stream).
//! - [`sizes`]: items' sizes as DynamoDB counts them (the load simulator's).
//! - [`testing`]: a store on a fresh table for tests (moto in CI).
#![warn(missing_docs)]

/// The service this adapter names in its errors.
pub(crate) const DYNAMODB: &str = "DynamoDB";

pub mod attr;
mod codec;
pub mod events;
mod keys;
mod lifecycle;
mod queue;
pub mod sizes;
mod slots;
pub mod table;
pub mod testing;
mod tx;

mod abuse;
mod capture;
mod catalogue;
mod confirm;
mod detect;
mod figures;
mod hold;
mod import;
mod notify;
mod sweep;
mod tickets;
mod wave;

pub use import::Imported;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use restock_store::port::Result;
use restock_store::{Request, StoreError};

use crate::codec::*;
use crate::tx::{MAX_ATTEMPTS, backoff};

/// An item as the SDK holds it. Defined here, beneath the modules that
/// read, write and partition items (`codec`, `tx`, `table`), so none of
/// them imports another for it.
pub(crate) type Item = std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>;

/// The DynamoDB adapter.
#[derive(Clone, Debug)]
pub struct DynamoStore {
    client: Client,
    table: String,
}

impl DynamoStore {
    /// A store on `table` through `client`.
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    /// A client from the usual AWS configuration (profile, region, and
    /// `AWS_ENDPOINT_URL`), with `endpoint` overriding the endpoint if given.
    pub async fn client(endpoint: Option<&str>) -> Client {
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
        if let Some(url) = endpoint {
            loader = loader.endpoint_url(url);
        }
        Client::new(&loader.load().await)
    }

    /// The SDK client.
    pub fn sdk(&self) -> &Client {
        &self.client
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Creates the table (for tests, local mode and the admin CLI).
    ///
    /// # Errors
    /// [`StoreError::Backend`] when DynamoDB refuses.
    pub async fn create_table(&self) -> Result<()> {
        table::create_table(&self.client, &self.table).await
    }

    /// Imports waiting requests (a migrated waitlist, a benchmark's queue)
    /// into SKUs nobody has joined yet: per SKU, tickets dealt in join order
    /// per shard, then each request with its place, queue entry, ticket and
    /// presence bit, a chunk per transaction (see `import`). Idempotent and
    /// resumable: run again after an interruption, or twice at once, the
    /// same requests go in once, and a live join during the import comes
    /// after every imported request. Unlike `join` it checks no opt-outs, so
    /// it is for trusted, already-deduplicated input only.
    ///
    /// # Errors
    /// [`StoreError::Backend`] when DynamoDB refuses;
    /// [`StoreError::Refused`] when a SKU had joins or another import before
    /// this one, or a request or its shopper's place is stored already.
    pub async fn import_waiting(&self, requests: &[Request], shards: u16) -> Result<Imported> {
        self.import_some(requests, shards, None).await
    }

    /// [`import_waiting`](Self::import_waiting), stopping after `stop_after`
    /// chunks per SKU (an import cut short, for tests).
    pub(crate) async fn import_some(
        &self,
        requests: &[Request],
        shards: u16,
        stop_after: Option<usize>,
    ) -> Result<Imported> {
        let mut total = Imported::default();
        for (sku, requests) in import::by_sku(requests) {
            let one = self.import_sku(&sku, requests, shards, stop_after).await?;
            total.written += one.written;
            total.already += one.already;
        }
        Ok(total)
    }

    /// Writes `item` whole, unconditionally (documents and markers no one
    /// races on: the settings, an opt-out).
    async fn put_item(&self, item: Item) -> Result<()> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| StoreError::backend(crate::DYNAMODB, "PutItem", e))?;
        Ok(())
    }

    // --- reading -------------------------------------------------------------

    /// One item, strongly consistent.
    async fn get(&self, pk: String, sk: &str) -> Result<Option<Item>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| StoreError::backend(crate::DYNAMODB, "GetItem", e))?;
        Ok(out.item)
    }

    /// Items by key, strongly consistent (`BatchGetItem`, 100 keys a call,
    /// unprocessed keys asked again); missing items are left out.
    async fn get_consistent(&self, keys: impl IntoIterator<Item = Item>) -> Result<Vec<Item>> {
        use aws_sdk_dynamodb::types::KeysAndAttributes;
        let keys: Vec<Item> = keys.into_iter().collect();
        let mut found = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(100) {
            let mut pending = chunk.to_vec();
            for attempt in 0..MAX_ATTEMPTS {
                let request = KeysAndAttributes::builder()
                    .set_keys(Some(pending))
                    .consistent_read(true)
                    .build()
                    .map_err(|e| StoreError::backend(crate::DYNAMODB, "BatchGetItem", e))?;
                let out = self
                    .client
                    .batch_get_item()
                    .request_items(&self.table, request)
                    .send()
                    .await
                    .map_err(|e| StoreError::backend(crate::DYNAMODB, "BatchGetItem", e))?;
                found.extend(
                    out.responses
                        .and_then(|mut r| r.remove(&self.table))
                        .unwrap_or_default(),
                );
                pending = out
                    .unprocessed_keys
                    .and_then(|mut u| u.remove(&self.table))
                    .map(|k| k.keys)
                    .unwrap_or_default();
                if pending.is_empty() {
                    break;
                }
                backoff(attempt).await;
            }
            if !pending.is_empty() {
                return Err(StoreError::Contention("BatchGetItem".into()));
            }
        }
        Ok(found)
    }

    /// A query on this table, to be finished by the caller.
    fn query(&self) -> QueryFluentBuilder {
        self.client.query().table_name(&self.table)
    }

    /// Every item `query` matches, reading page after page.
    async fn query_all(&self, query: QueryFluentBuilder) -> Result<Vec<Item>> {
        self.query_up_to(query, usize::MAX).await
    }

    /// Up to `limit` items `query` matches after its filter, reading page
    /// after page (a filter is applied after a page's `Limit`).
    async fn query_up_to(&self, query: QueryFluentBuilder, limit: usize) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let left = i32::try_from(limit - items.len()).ok();
            let page = query
                .clone()
                .set_limit(left)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "Query", e))?;
            items.extend(page.items.unwrap_or_default());
            start = page.last_evaluated_key;
            if start.is_none() || items.len() >= limit {
                items.truncate(limit);
                return Ok(items);
            }
        }
    }

    /// Every item of one partition of the table, strongly consistent.
    async fn partition(&self, pk: String) -> Result<Vec<Item>> {
        self.query_all(
            self.query()
                .key_condition_expression(format!("{} = :p", attr::PK))
                .expression_attribute_values(":p", s(pk))
                .consistent_read(true),
        )
        .await
    }

    /// A SKU's unit markers (only those of `marker` if given), every
    /// partition read strongly consistent, side by side.
    async fn units(&self, sku: &restock_core::Sku, marker: Option<Marker>) -> Result<Vec<Item>> {
        let queries = (0..table::SPREAD).map(|p| {
            let query = self
                .query()
                .consistent_read(true)
                .expression_attribute_values(":u", s(unit_pk(sku, p)));
            self.query_all(match marker {
                None => query.key_condition_expression(format!("{} = :u", attr::PK)),
                Some(marker) => query
                    .key_condition_expression(format!(
                        "{} = :u AND begins_with({}, :p)",
                        attr::PK,
                        attr::SK
                    ))
                    .expression_attribute_values(":p", s(unit_prefix(marker))),
            })
        });
        Ok(futures::future::try_join_all(queries)
            .await?
            .into_iter()
            .flatten()
            .collect())
    }

    async fn request_item(&self, id: &restock_core::RequestId) -> Result<Option<Item>> {
        self.get(request_pk(id), REQUEST_SK).await
    }

    /// The SKU's state item, catalogue entry and hold slots: one
    /// `BatchGetItem` (state, entry, slot 0), and one more for the other
    /// slots of a SKU that uses several.
    async fn sku_item(&self, sku: &restock_core::Sku) -> Result<SkuItem> {
        Ok(self.sku_with_entry(sku).await?.0)
    }

    /// [`Self::sku_item`] and the queue shards of the SKU's catalogue entry
    /// (1 without one).
    async fn sku_with_entry(&self, sku: &restock_core::Sku) -> Result<(SkuItem, u16)> {
        let (mut state, mut entry, mut slot0) = (None, None, 0);
        for item in self
            .get_consistent([
                key(sku_pk(sku), STATE_SK),
                key(sku_pk(sku), CATALOGUE_SK),
                hold_slot_key(sku, 0),
            ])
            .await?
        {
            match get_s(&item, attr::SK)? {
                STATE_SK => state = Some(item),
                CATALOGUE_SK => entry = Some(item),
                _ => slot0 = slots::allowance_of(&item)?,
            }
        }
        let count = hold_slots(state.as_ref())?;
        let mut slots = vec![slot0];
        if count > 1 {
            slots.extend(self.slots(sku, 1..count).await?);
        }
        let shards = entry
            .as_ref()
            .map(catalogue::read_entry)
            .transpose()?
            .map_or(1, |e| e.shards);
        Ok((read_sku(state.as_ref(), slots)?, shards))
    }
}
