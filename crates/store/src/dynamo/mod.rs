//! The DynamoDB store: one table, conditional writes and transactions for
//! every contended change, sparse indexes instead of scans.
//!
//! - [`table`]: the table's one definition, and `create_table`.
//! - `codec` (private): keys, and records to items and back.
//!
//! How each operation maps onto items is documented in `docs/TABLE.md`. The
//! rule throughout: read (consistently) what the core needs to decide, let the
//! core decide, then write the decision with conditions that hold only if
//! nothing it depended on has moved. A failed condition comes back as the
//! outcome it means (`ReturnValuesOnConditionCheckFailure = ALL_OLD` gives the
//! item that failed), or as a re-read and a bounded retry.

mod codec;
pub mod table;

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, Put, ReturnValuesOnConditionCheckFailure, Select,
    TransactWriteItem, Update,
};
use restock_core::webhook::ItemRef;
use restock_core::{
    Candidate, CatalogEntry, ContactKey, Freed, HoldId, HoldTaken, LinkToken, ListShare,
    OptOutToken, RequestId, RequestState, ReserveToken, Rules, Settings, SkipReason, Sku,
    StockEvent, StockOutcome, Window, plan_offers,
};

use self::codec::*;
use crate::error::StoreError;
use crate::model::*;
use crate::port::{Random, Result, Store};

/// How many times a lost race is retried before giving up with `Contention`.
const MAX_ATTEMPTS: u32 = 8;
/// Requests per offer transaction (plus the SKU's counter item: 100 in all).
const OFFERS_PER_TX: usize = 99;
/// A counter fix that lowers a count waits until the SKU has been quiet this
/// long, so index lag (milliseconds) cannot make a live offer look missing.
const RECONCILE_QUIET_MS: Millis = 60_000;
/// Items per queue page read.
const PAGE: i32 = 500;

/// The DynamoDB adapter.
#[derive(Clone, Debug)]
pub struct DynamoStore {
    client: Client,
    table: String,
}

/// What ending a request came to.
enum Ended {
    /// The transition was written.
    Done,
    /// The request is in a state the transition does not apply to.
    NotApplicable(RequestState),
    /// No such request.
    Missing,
}

/// One reason of a cancelled transaction, per item in order.
#[derive(Debug)]
struct Reason {
    failed: bool,
    item: Option<Item>,
}

enum Tx {
    Done,
    Cancelled(Vec<Reason>),
}

type Values = Vec<(&'static str, AttributeValue)>;

fn values(v: Values) -> Option<HashMap<String, AttributeValue>> {
    if v.is_empty() {
        None
    } else {
        Some(v.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    }
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

    /// Bulk-loads waiting requests (a migrated waitlist, a benchmark's queue)
    /// with `BatchWriteItem`: the request and its place for each. Unlike
    /// [`Store::join`] it checks neither opt-outs nor existing places, so it is
    /// for trusted, already-deduplicated input only.
    ///
    /// # Errors
    /// [`StoreError::Backend`] when DynamoDB refuses.
    pub async fn import_waiting(&self, requests: &[Request]) -> Result<()> {
        use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
        let mut writes = Vec::with_capacity(requests.len() * 2);
        for r in requests {
            let mut place = key(place_pk(&r.contact_key), sku_pk(&r.sku));
            place.insert("rid".into(), s(r.id.to_string()));
            for item in [request_item(r), place] {
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(|e| StoreError::backend("BatchWriteItem", e))?;
                writes.push(WriteRequest::builder().put_request(put).build());
            }
        }
        for chunk in writes.chunks(25) {
            let mut pending = chunk.to_vec();
            for attempt in 0..MAX_ATTEMPTS {
                let out = self
                    .client
                    .batch_write_item()
                    .request_items(&self.table, pending.clone())
                    .send()
                    .await
                    .map_err(|e| StoreError::backend("BatchWriteItem", e))?;
                pending = out
                    .unprocessed_items
                    .and_then(|mut u| u.remove(&self.table))
                    .unwrap_or_default();
                if pending.is_empty() {
                    break;
                }
                backoff(attempt).await;
            }
            if !pending.is_empty() {
                return Err(StoreError::Contention("BatchWriteItem".into()));
            }
        }
        Ok(())
    }

    // --- plumbing ------------------------------------------------------------

    async fn get(&self, pk: String, sk: &str) -> Result<Option<Item>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| StoreError::backend("GetItem", e))?;
        Ok(out.item)
    }

    fn put(&self, item: Item, condition: Option<&str>, v: Values) -> Result<TransactWriteItem> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .set_condition_expression(condition.map(str::to_owned))
            .set_expression_attribute_values(values(v))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(|e| StoreError::backend("TransactWriteItems", e))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    fn update(
        &self,
        key: Item,
        expr: &str,
        condition: Option<&str>,
        v: Values,
    ) -> Result<TransactWriteItem> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key))
            .update_expression(expr)
            .set_condition_expression(condition.map(str::to_owned))
            .set_expression_attribute_values(values(v))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(|e| StoreError::backend("TransactWriteItems", e))?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    fn delete(&self, key: Item) -> Result<TransactWriteItem> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key))
            .build()
            .map_err(|e| StoreError::backend("TransactWriteItems", e))?;
        Ok(TransactWriteItem::builder().delete(delete).build())
    }

    fn check(&self, key: Item, condition: &str) -> Result<TransactWriteItem> {
        let check = ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(key))
            .condition_expression(condition)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(|e| StoreError::backend("TransactWriteItems", e))?;
        Ok(TransactWriteItem::builder().condition_check(check).build())
    }

    /// Runs a transaction. Conflicts with concurrent transactions are retried
    /// here; failed conditions come back as reasons, one per item.
    async fn transact(&self, items: Vec<TransactWriteItem>, token: Option<String>) -> Result<Tx> {
        for attempt in 0..MAX_ATTEMPTS {
            let result = self
                .client
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .set_client_request_token(token.clone())
                .send()
                .await;
            let err = match result {
                Ok(_) => return Ok(Tx::Done),
                Err(err) => err,
            };
            let retry_conflict = match err.as_service_error() {
                Some(TransactWriteItemsError::TransactionCanceledException(ex)) => {
                    let reasons: Vec<Reason> = ex
                        .cancellation_reasons()
                        .iter()
                        .map(|r| Reason {
                            failed: r.code() == Some("ConditionalCheckFailed"),
                            item: r.item().cloned(),
                        })
                        .collect();
                    if reasons.iter().any(|r| r.failed) {
                        return Ok(Tx::Cancelled(reasons));
                    }
                    true
                }
                Some(TransactWriteItemsError::TransactionInProgressException(_)) => true,
                _ => false,
            };
            if !retry_conflict || attempt + 1 == MAX_ATTEMPTS {
                return Err(StoreError::backend("TransactWriteItems", err));
            }
            backoff(attempt).await;
        }
        unreachable!("the loop returns on its last attempt")
    }

    /// Every item `query` matches, reading page after page.
    async fn query_all(&self, query: QueryFluentBuilder) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let page = query
                .clone()
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| StoreError::backend("Query", e))?;
            items.extend(page.items.unwrap_or_default());
            start = page.last_evaluated_key;
            if start.is_none() {
                return Ok(items);
            }
        }
    }

    /// Every item of one partition of the table, strongly consistent.
    async fn partition(&self, pk: String) -> Result<Vec<Item>> {
        self.query_all(
            self.client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :p")
                .expression_attribute_values(":p", s(pk))
                .consistent_read(true),
        )
        .await
    }

    async fn request_item(&self, id: &RequestId) -> Result<Option<Item>> {
        self.get(request_pk(id), REQUEST_SK).await
    }

    async fn sku_item(&self, sku: &Sku) -> Result<SkuItem> {
        read_sku(self.get(sku_pk(sku), STATE_SK).await?.as_ref())
    }

    fn wake(
        &self,
        sku: &Sku,
        kind: WakeKind,
        episode: u32,
        now: Millis,
        discriminator: &str,
    ) -> Result<TransactWriteItem> {
        let mut item = key(
            wake_pk(sku),
            format!("{now:013}#{}#{discriminator}", kind.as_str()),
        );
        item.insert("sku".into(), s(sku.as_str()));
        item.insert("kind".into(), s(kind.as_str()));
        item.insert("epi".into(), n(episode));
        item.insert("wat".into(), n(now));
        item.insert(
            table::TABLE.ttl_attribute.into(),
            ttl(now, DELIVERY_TTL_SECS),
        );
        self.put(item, None, vec![])
    }

    /// The writes that end a live request: its new state, its place freed for
    /// a new tap, and any unit it had given back (with a wake for notify).
    /// Conditional on the request being exactly as read.
    fn finish(
        &self,
        r: &Request,
        to: RequestState,
        freed: Freed,
        now: Millis,
        lapsed: bool,
    ) -> Result<Vec<TransactWriteItem>> {
        let mut set = vec!["expires_at = :ttl".to_owned()];
        let mut v: Values = vec![
            (":from", s(r.state.status().as_str())),
            (":ttl", ttl(now, FINISHED_TTL_SECS)),
        ];
        let names = [":s0", ":s1", ":s2"];
        for (i, (attr, value)) in state_attrs(&to).into_iter().enumerate() {
            set.push(format!("{attr} = {}", names[i]));
            v.push((names[i], value));
        }
        let mut condition = "st = :from".to_owned();
        if let RequestState::Offered { expires_ms, .. } | RequestState::Held { expires_ms, .. } =
            r.state
        {
            condition.push_str(" AND exp = :fromexp");
            v.push((":fromexp", n(expires_ms)));
        }
        let expr = format!("SET {} REMOVE qpk, qsk, dpk, due, upk, usk", set.join(", "));
        let mut items = vec![
            self.update(
                key(request_pk(&r.id), REQUEST_SK),
                &expr,
                Some(&condition),
                v,
            )?,
            self.delete(key(place_pk(&r.contact_key), sku_pk(&r.sku)))?,
        ];
        let counter = match freed {
            Freed::Nothing => None,
            Freed::Offer => Some("offered"),
            Freed::Hold => Some("held"),
        };
        if let Some(counter) = counter {
            let mut expr = format!("SET {counter} = {counter} - :one, touched = :now");
            if lapsed {
                expr.push_str(", lapsed = if_not_exists(lapsed, :zero) + :one");
            }
            items.push(self.update(
                key(sku_pk(&r.sku), STATE_SK),
                &expr,
                None,
                vec![(":one", n(1)), (":now", n(now)), (":zero", n(0))],
            )?);
            let episode = match r.state {
                RequestState::Offered { episode, .. } | RequestState::Held { episode, .. } => {
                    episode
                }
                _ => 0,
            };
            items.push(self.wake(&r.sku, WakeKind::Freed, episode, now, &r.id.to_string())?);
        }
        Ok(items)
    }

    /// Ends a live request with `transition`, re-reading on a lost race.
    async fn end_request(
        &self,
        id: &RequestId,
        now: Millis,
        transition: impl Fn(&Request) -> Option<(RequestState, Freed)> + Send + Sync,
    ) -> Result<Ended> {
        for attempt in 0..MAX_ATTEMPTS {
            let Some(item) = self.request_item(id).await? else {
                return Ok(Ended::Missing);
            };
            let r = read_request(&item)?;
            let Some((to, freed)) = transition(&r) else {
                return Ok(Ended::NotApplicable(r.state));
            };
            let items = self.finish(&r, to, freed, now, to == RequestState::Lapsed)?;
            match self.transact(items, None).await? {
                Tx::Done => return Ok(Ended::Done),
                Tx::Cancelled(_) => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention(request_pk(id)))
    }

    /// Counts waiting requests of a SKU ahead of `before` (or all of them).
    async fn count_waiting(&self, sku: &Sku, shards: u16, before: Option<&str>) -> Result<usize> {
        let counts = (0..shards.max(1)).map(|shard| async move {
            let mut total = 0usize;
            let mut start = None;
            loop {
                let mut q = self
                    .client
                    .query()
                    .table_name(&self.table)
                    .index_name("queue")
                    .select(Select::Count)
                    .set_exclusive_start_key(start)
                    .expression_attribute_values(":q", s(queue_pk(sku, shard)));
                q = match before {
                    Some(jk) => q
                        .key_condition_expression("qpk = :q AND qsk < :k")
                        .expression_attribute_values(":k", s(jk)),
                    None => q.key_condition_expression("qpk = :q"),
                };
                let out = q
                    .send()
                    .await
                    .map_err(|e| StoreError::backend("Query", e))?;
                total += out.count as usize;
                start = out.last_evaluated_key;
                if start.is_none() {
                    return Ok::<_, StoreError>(total);
                }
            }
        });
        Ok(futures::future::try_join_all(counts)
            .await?
            .into_iter()
            .sum())
    }
}

/// A shard's cursor over the `queue` index.
struct ShardCursor {
    pk: String,
    buffer: std::collections::VecDeque<Request>,
    start: Option<Item>,
    done: bool,
}

/// Reads a SKU's queue oldest-first across shards, a page at a time: a
/// k-way merge over each shard's pages, pulling a shard's next page only when
/// the merge reaches the end of the one it has.
struct QueueReader {
    shards: Vec<ShardCursor>,
    page: i32,
}

impl QueueReader {
    /// A reader over the `shards` of `sku`'s queue, paging by about `want`.
    fn new(sku: &Sku, shards: u16, want: usize) -> Self {
        let shards = (0..shards.max(1))
            .map(|shard| ShardCursor {
                pk: queue_pk(sku, shard),
                buffer: Default::default(),
                start: None,
                done: false,
            })
            .collect();
        Self {
            shards,
            page: (want as i32).clamp(16, PAGE),
        }
    }

    /// The next `n` waiting requests in join order (fewer at the end).
    async fn take(&mut self, store: &DynamoStore, n: usize) -> Result<Vec<Request>> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            for cursor in &mut self.shards {
                if cursor.buffer.is_empty() && !cursor.done {
                    let page = store
                        .client
                        .query()
                        .table_name(&store.table)
                        .index_name("queue")
                        .key_condition_expression("qpk = :q")
                        .expression_attribute_values(":q", s(&cursor.pk))
                        .set_exclusive_start_key(cursor.start.take())
                        .limit(self.page)
                        .send()
                        .await
                        .map_err(|e| StoreError::backend("Query", e))?;
                    for item in page.items() {
                        cursor.buffer.push_back(read_request(item)?);
                    }
                    cursor.start = page.last_evaluated_key;
                    cursor.done = cursor.start.is_none();
                }
            }
            // Every shard now has its next entry buffered (or is exhausted), so
            // the smallest head is the next in the one true order.
            let next = self
                .shards
                .iter_mut()
                .filter(|c| !c.buffer.is_empty())
                .min_by_key(|c| c.buffer.front().map(|r| r.key))
                .and_then(|c| c.buffer.pop_front());
            match next {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }
}

async fn backoff(attempt: u32) {
    let jitter = u64::from(std::process::id() % 7) + u64::from(attempt) * 3;
    tokio::time::sleep(Duration::from_millis(5 * (1 << attempt.min(6)) + jitter)).await;
}

#[async_trait]
impl Store for DynamoStore {
    async fn put_settings(&self, settings: &Settings) -> Result<()> {
        let mut item = key("SETTINGS", ONE_SK);
        item.insert("doc".into(), s(settings.to_toml()));
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| StoreError::backend("PutItem", e))?;
        Ok(())
    }

    async fn settings(&self) -> Result<Option<Settings>> {
        let Some(item) = self.get("SETTINGS".into(), ONE_SK).await? else {
            return Ok(None);
        };
        Settings::from_toml(get_s(&item, "doc")?)
            .map(Some)
            .map_err(|e| corrupt(&item, e))
    }

    async fn put_catalog_entry(&self, entry: &CatalogEntry) -> Result<()> {
        let old = self.catalog_entry(&entry.sku).await?;
        if let Some(old) = &old
            && entry.shards < old.shards
        {
            return Err(StoreError::shards_lowered(
                &entry.sku,
                old.shards,
                entry.shards,
            ));
        }
        let ent = s(serde_json::to_string(entry).expect("catalogue entries serialise"));
        let mut item = key(sku_pk(&entry.sku), CATALOG_SK);
        item.insert("ent".into(), ent.clone());
        // The listing copy: the whole catalogue is one partition's Query.
        let mut listed = key(CATALOG_PK.to_owned(), entry.sku.as_str());
        listed.insert("ent".into(), ent);
        let mut items = vec![
            self.put(item, None, vec![])?,
            self.put(listed, None, vec![])?,
        ];
        let map = |pk: String| {
            let mut m = key(pk, ONE_SK);
            m.insert("sku".into(), s(entry.sku.as_str()));
            m
        };
        let old_shopify = old.as_ref().and_then(|o| o.shopify_inventory_item_id);
        let old_woo = old.as_ref().and_then(|o| o.woocommerce_product_id);
        if let Some(id) = old_shopify.filter(|id| Some(*id) != entry.shopify_inventory_item_id) {
            items.push(self.delete(key(format!("SHOPIFY#{id}"), ONE_SK))?);
        }
        if let Some(id) = old_woo.filter(|id| Some(*id) != entry.woocommerce_product_id) {
            items.push(self.delete(key(format!("WOO#{id}"), ONE_SK))?);
        }
        if let Some(id) = entry.shopify_inventory_item_id {
            items.push(self.put(map(format!("SHOPIFY#{id}")), None, vec![])?);
        }
        if let Some(id) = entry.woocommerce_product_id {
            items.push(self.put(map(format!("WOO#{id}")), None, vec![])?);
        }
        match self.transact(items, None).await? {
            Tx::Done => Ok(()),
            Tx::Cancelled(_) => Err(StoreError::Contention(sku_pk(&entry.sku))),
        }
    }

    async fn catalog(&self) -> Result<Vec<CatalogEntry>> {
        self.partition(CATALOG_PK.into())
            .await?
            .iter()
            .map(|item| serde_json::from_str(get_s(item, "ent")?).map_err(|e| corrupt(item, e)))
            .collect()
    }

    async fn catalog_entry(&self, sku: &Sku) -> Result<Option<CatalogEntry>> {
        let Some(item) = self.get(sku_pk(sku), CATALOG_SK).await? else {
            return Ok(None);
        };
        serde_json::from_str(get_s(&item, "ent")?)
            .map(Some)
            .map_err(|e| corrupt(&item, e))
    }

    async fn resolve_item(&self, item: &ItemRef) -> Result<Option<CatalogEntry>> {
        let mapped = |pk: String| async move {
            match self.get(pk, ONE_SK).await? {
                Some(m) => Ok::<_, StoreError>(Some(
                    Sku::try_from(get_s(&m, "sku")?).map_err(|e| corrupt(&m, e))?,
                )),
                None => Ok(None),
            }
        };
        let sku = match item {
            ItemRef::Sku { sku } => Some(sku.clone()),
            ItemRef::Shopify { inventory_item_id } => {
                mapped(format!("SHOPIFY#{inventory_item_id}")).await?
            }
            ItemRef::WooCommerce { product_id, sku } => {
                if let Some(sku) = sku
                    && let Some(entry) = self.catalog_entry(sku).await?
                {
                    return Ok(Some(entry));
                }
                mapped(format!("WOO#{product_id}")).await?
            }
        };
        match sku {
            Some(sku) => self.catalog_entry(&sku).await,
            None => Ok(None),
        }
    }

    async fn join(&self, new: NewRequest) -> Result<JoinOutcome> {
        let request = Request {
            id: new.id,
            sku: new.sku.clone(),
            name: new.name,
            contact: new.contact,
            contact_key: new.contact_key.clone(),
            key: restock_core::JoinKey::new(new.now, &new.id),
            shard: new.id.shard(new.shards),
            state: RequestState::Waiting,
            stale_at: new.now + new.lifetime_ms,
            last_offered_episode: None,
            reserve_hash: None,
            optout_hash: None,
            notice: None,
        };
        let mut place = key(place_pk(&new.contact_key), sku_pk(&new.sku));
        place.insert("rid".into(), s(new.id.to_string()));
        for attempt in 0..MAX_ATTEMPTS {
            let items = vec![
                self.check(
                    key(optout_pk(&new.contact_key), ONE_SK),
                    "attribute_not_exists(pk)",
                )?,
                self.put(place.clone(), Some("attribute_not_exists(pk)"), vec![])?,
                self.put(
                    request_item(&request),
                    Some("attribute_not_exists(pk)"),
                    vec![],
                )?,
            ];
            let reasons = match self.transact(items, None).await? {
                Tx::Done => return Ok(JoinOutcome::Joined(request)),
                Tx::Cancelled(reasons) => reasons,
            };
            if reasons.first().is_some_and(|r| r.failed) {
                return Ok(JoinOutcome::OptedOut);
            }
            let existing = match reasons.get(1).and_then(|r| r.item.clone()) {
                Some(item) => Some(item),
                None => {
                    self.get(place_pk(&new.contact_key), &sku_pk(&new.sku))
                        .await?
                }
            };
            if let Some(place) = existing {
                let rid: RequestId = get_s(&place, "rid")?
                    .parse()
                    .map_err(|e| corrupt(&place, e))?;
                if let Some(item) = self.request_item(&rid).await? {
                    let existing = read_request(&item)?;
                    if existing.state.status().is_live() {
                        return Ok(JoinOutcome::AlreadyWaiting(existing));
                    }
                }
            }
            // The other request finished between our write and our read: try again.
            backoff(attempt).await;
        }
        Err(StoreError::Contention(place_pk(&new.contact_key)))
    }

    async fn request(&self, id: &RequestId) -> Result<Option<Request>> {
        self.request_item(id)
            .await?
            .as_ref()
            .map(read_request)
            .transpose()
    }

    async fn position(&self, request: &Request, shards: u16) -> Result<Option<usize>> {
        if request.state != RequestState::Waiting {
            return Ok(None);
        }
        let ahead = self
            .count_waiting(&request.sku, shards, Some(&request.key.to_string()))
            .await?;
        Ok(Some(restock_core::queue::position(ahead)))
    }

    async fn cancel(&self, id: &RequestId, now: Millis) -> Result<CancelOutcome> {
        Ok(
            match self.end_request(id, now, |r| r.state.cancel().ok()).await? {
                Ended::Done => CancelOutcome::Cancelled,
                Ended::NotApplicable(state) => CancelOutcome::NotLive(state.status()),
                Ended::Missing => CancelOutcome::NotFound,
            },
        )
    }

    async fn take_hold(
        &self,
        token: &ReserveToken,
        hold: HoldId,
        now: Millis,
        window: Window,
    ) -> Result<HoldOutcome> {
        let id = token.request();
        let sku = token.sku();
        let hold_expires = now + window.as_millis();
        let mut pointer = key(hold_pk(&hold), ONE_SK);
        pointer.insert("rid".into(), s(id.to_string()));
        pointer.insert("sku".into(), s(sku.as_str()));
        pointer.insert(
            table::TABLE.ttl_attribute.into(),
            ttl(now, FINISHED_TTL_SECS),
        );
        for attempt in 0..MAX_ATTEMPTS {
            let items = vec![
                self.update(
                    key(request_pk(&id), REQUEST_SK),
                    "SET st = :held, exp = :hexp, hid = :hid, due = :hexp, usk = :us",
                    Some("st = :offered AND rh = :h AND sku = :sku AND exp > :now"),
                    vec![
                        (":held", s("held")),
                        (":offered", s("offered")),
                        (":hexp", n(hold_expires)),
                        (":hid", s(hold.to_string())),
                        (":h", s(token.secret_hash().to_hex())),
                        (":sku", s(sku.as_str())),
                        (":now", n(now)),
                        (":us", s(units_sk(&id, false))),
                    ],
                )?,
                self.update(
                    key(sku_pk(sku), STATE_SK),
                    "SET offered = offered - :one, held = held + :one, touched = :now",
                    Some("held < lvl"),
                    vec![(":one", n(1)), (":now", n(now))],
                )?,
                self.put(pointer.clone(), Some("attribute_not_exists(pk)"), vec![])?,
            ];
            let reasons = match self.transact(items, None).await? {
                Tx::Done => {
                    return Ok(HoldOutcome::Held {
                        hold,
                        expires: hold_expires,
                    });
                }
                Tx::Cancelled(reasons) => reasons,
            };
            if reasons[0].failed {
                let item = match reasons[0].item.clone() {
                    Some(item) => Some(item),
                    None => self.request_item(&id).await?,
                };
                let Some(item) = item else {
                    return Ok(HoldOutcome::Refused(restock_core::HoldRefused::Expired));
                };
                let r = read_request(&item)?;
                if !r.reserve_link_is(token) {
                    return Ok(HoldOutcome::Refused(restock_core::HoldRefused::Expired));
                }
                match r.state.hold(now, hold, window) {
                    Err(refused) => return Ok(HoldOutcome::Refused(refused)),
                    Ok(HoldTaken::Existing { hold, expires_ms }) => {
                        return Ok(HoldOutcome::AlreadyHeld {
                            hold,
                            expires: expires_ms,
                        });
                    }
                    // It changed under us and is takeable again: retry.
                    Ok(HoldTaken::New(_)) => backoff(attempt).await,
                }
            } else if reasons[1].failed {
                // `held < level` failed: the shop sold the units elsewhere. Back to
                // the front of the line, keeping the original join key.
                let Some(item) = self.request_item(&id).await? else {
                    return Ok(HoldOutcome::Refused(restock_core::HoldRefused::Expired));
                };
                let r = read_request(&item)?;
                let RequestState::Offered {
                    episode,
                    expires_ms,
                } = r.state
                else {
                    continue;
                };
                let Ok((waiting, _)) = r.state.sold_out_again() else {
                    continue;
                };
                let back = Request {
                    state: waiting,
                    last_offered_episode: None,
                    reserve_hash: None,
                    notice: None,
                    ..r.clone()
                };
                let mut set = vec!["st = :waiting".to_owned()];
                let mut v: Values = vec![
                    (":waiting", s("waiting")),
                    (":offered", s("offered")),
                    (":h", s(token.secret_hash().to_hex())),
                    (":exp", n(expires_ms)),
                ];
                let names = [":i0", ":i1", ":i2", ":i3"];
                for (i, (attr, value)) in index_attrs(&back).into_iter().enumerate() {
                    set.push(format!("{attr} = {}", names[i]));
                    v.push((names[i], value));
                }
                let expr = format!(
                    "SET {} REMOVE epi, exp, rh, last_epi, notice, upk, usk",
                    set.join(", ")
                );
                let items = vec![
                    self.update(
                        key(request_pk(&id), REQUEST_SK),
                        &expr,
                        Some("st = :offered AND rh = :h AND exp = :exp"),
                        v,
                    )?,
                    self.update(
                        key(sku_pk(sku), STATE_SK),
                        "SET offered = offered - :one, touched = :now",
                        None,
                        vec![(":one", n(1)), (":now", n(now))],
                    )?,
                    self.wake(sku, WakeKind::Freed, episode, now, &id.to_string())?,
                ];
                if let Tx::Done = self.transact(items, None).await? {
                    return Ok(HoldOutcome::SoldOutAgain);
                }
            } else {
                // The hold id collided (128 random bits: practically never); nothing to retry with.
                return Err(StoreError::Contention(hold_pk(&hold)));
            }
        }
        Err(StoreError::Contention(request_pk(&id)))
    }

    async fn mark_bought(&self, hold: &HoldId, now: Millis) -> Result<BuyOutcome> {
        let Some(pointer) = self.get(hold_pk(hold), ONE_SK).await? else {
            return Ok(BuyOutcome::NotHeld);
        };
        let id: RequestId = get_s(&pointer, "rid")?
            .parse()
            .map_err(|e| corrupt(&pointer, e))?;
        for attempt in 0..MAX_ATTEMPTS {
            let Some(item) = self.request_item(&id).await? else {
                return Ok(BuyOutcome::NotHeld);
            };
            let r = read_request(&item)?;
            match r.state {
                RequestState::Bought { hold: h } if &h == hold => {
                    return Ok(BuyOutcome::AlreadyBought);
                }
                RequestState::Held { hold: h, .. } if &h == hold => {}
                _ => return Ok(BuyOutcome::NotHeld),
            }
            let (to, _) = r.state.buy().expect("held");
            let sku_item = self.sku_item(&r.sku).await?;
            let mut items = self.finish(&r, to, Freed::Nothing, now, false)?;
            // The unit left with the shopper: it also comes off the level until
            // the shop's next report, so it is never offered again meanwhile.
            let level = sku_item.snapshot.counters.level;
            items.push(self.update(
                key(sku_pk(&r.sku), STATE_SK),
                "SET held = held - :one, lvl = :lvl, bought = if_not_exists(bought, :zero) + :one, ver = ver + :one, touched = :now",
                Some("lvl = :oldlvl"),
                vec![
                    (":one", n(1)),
                    (":zero", n(0)),
                    (":lvl", n(level.saturating_sub(1))),
                    (":oldlvl", n(level)),
                    (":now", n(now)),
                ],
            )?);
            match self.transact(items, None).await? {
                Tx::Done => return Ok(BuyOutcome::Bought(r.sku)),
                Tx::Cancelled(_) => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention(hold_pk(hold)))
    }

    async fn opt_out(&self, token: &OptOutToken, now: Millis) -> Result<OptOutOutcome> {
        let Some(item) = self.request_item(&token.request()).await? else {
            return Ok(OptOutOutcome::NotFound);
        };
        let r = read_request(&item)?;
        if !r.optout_link_is(token) {
            return Ok(OptOutOutcome::NotFound);
        }
        let ended = self.opt_out_contact(&r.contact_key, now).await?;
        Ok(OptOutOutcome::OptedOut { ended })
    }

    async fn opt_out_contact(&self, contact: &ContactKey, now: Millis) -> Result<u32> {
        let mut item = key(optout_pk(contact), ONE_SK);
        item.insert("wat".into(), n(now));
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| StoreError::backend("PutItem", e))?;
        // The opt-out item exists before the places are read, so a join racing
        // with this either committed first (and is found here) or is refused.
        let mut ended = 0;
        for place in self.partition(place_pk(contact)).await? {
            let rid: RequestId = get_s(&place, "rid")?
                .parse()
                .map_err(|e| corrupt(&place, e))?;
            if let Ended::Done = self
                .end_request(&rid, now, |r| r.state.opt_out().ok())
                .await?
            {
                ended += 1;
            }
        }
        Ok(ended)
    }

    async fn remove_opt_out(&self, contact: &ContactKey) -> Result<bool> {
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(optout_pk(contact), ONE_SK)))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| StoreError::backend("DeleteItem", e))?;
        Ok(out.attributes.is_some_and(|a| !a.is_empty()))
    }

    async fn is_opted_out(&self, contact: &ContactKey) -> Result<bool> {
        Ok(self.get(optout_pk(contact), ONE_SK).await?.is_some())
    }

    async fn apply_stock(
        &self,
        sku: &Sku,
        event: &StockEvent,
        rules: &Rules,
        _share: ListShare,
        now: Millis,
    ) -> Result<ApplyOutcome> {
        let mut delivery = key(delivery_pk(&event.delivery_id), ONE_SK);
        delivery.insert(
            table::TABLE.ttl_attribute.into(),
            ttl(now, DELIVERY_TTL_SECS),
        );
        for attempt in 0..MAX_ATTEMPTS {
            let current = self.sku_item(sku).await?;
            let (next, outcome) =
                current
                    .snapshot
                    .stock
                    .apply(&event.location, event.reading(), rules);
            let mut items =
                vec![self.put(delivery.clone(), Some("attribute_not_exists(pk)"), vec![])?];
            if !matches!(outcome, StockOutcome::Stale | StockOutcome::Unchanged) {
                let version = current.version.unwrap_or(0);
                let condition = if current.version.is_some() {
                    "ver = :v"
                } else {
                    "attribute_not_exists(ver)"
                };
                let mut v: Values = vec![
                    (
                        ":stock",
                        s(serde_json::to_string(&next).expect("stock state serialises")),
                    ),
                    (":lvl", n(next.level().units())),
                    (":v1", n(version + 1)),
                    (":zero", n(0)),
                ];
                if current.version.is_some() {
                    v.push((":v", n(version)));
                }
                items.push(self.update(
                    key(sku_pk(sku), STATE_SK),
                    "SET stock = :stock, lvl = :lvl, ver = :v1, offered = if_not_exists(offered, :zero), held = if_not_exists(held, :zero)",
                    Some(condition),
                    v,
                )?);
                let wake = match outcome {
                    StockOutcome::Restock { episode, .. } => Some((WakeKind::Restock, episode)),
                    StockOutcome::TopUp { episode, .. } => Some((WakeKind::TopUp, episode)),
                    _ => None,
                };
                if let Some((kind, episode)) = wake {
                    items.push(self.wake(
                        sku,
                        kind,
                        episode,
                        now,
                        &format!("{:016x}", fnv(&event.delivery_id)),
                    )?);
                }
            }
            match self.transact(items, None).await? {
                Tx::Done => return Ok(ApplyOutcome::Applied(outcome)),
                Tx::Cancelled(reasons) if reasons[0].failed => return Ok(ApplyOutcome::Duplicate),
                Tx::Cancelled(_) => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention(sku_pk(sku)))
    }

    async fn release_paused(&self, sku: &Sku, now: Millis) -> Result<Option<StockOutcome>> {
        for attempt in 0..MAX_ATTEMPTS {
            let current = self.sku_item(sku).await?;
            let Ok((next, outcome)) = current.snapshot.stock.release() else {
                return Ok(None);
            };
            let version = current.version.unwrap_or(0);
            let items = vec![
                self.update(
                    key(sku_pk(sku), STATE_SK),
                    "SET stock = :stock, ver = :v1",
                    Some("ver = :v"),
                    vec![
                        (
                            ":stock",
                            s(serde_json::to_string(&next).expect("stock state serialises")),
                        ),
                        (":v", n(version)),
                        (":v1", n(version + 1)),
                    ],
                )?,
                self.wake(sku, WakeKind::Restock, next.episode, now, "released")?,
            ];
            match self.transact(items, None).await? {
                Tx::Done => return Ok(Some(outcome)),
                Tx::Cancelled(_) => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention(sku_pk(sku)))
    }

    async fn snapshot(&self, sku: &Sku) -> Result<SkuSnapshot> {
        Ok(self.sku_item(sku).await?.snapshot)
    }

    async fn wakes(&self, sku: &Sku) -> Result<Vec<Wake>> {
        self.partition(wake_pk(sku))
            .await?
            .iter()
            .map(|item| {
                let kind = WakeKind::parse(get_s(item, "kind")?)
                    .ok_or_else(|| corrupt(item, "unknown wake kind"))?;
                Ok(Wake {
                    sku: sku.clone(),
                    kind,
                    episode: get_n(item, "epi")?,
                    at: get_n(item, "wat")?,
                })
            })
            .collect()
    }

    async fn create_offers(
        &self,
        sku: &Sku,
        params: &WaveParams,
        now: Millis,
        random: Random<'_>,
    ) -> Result<Wave> {
        let mut wave = Wave::default();
        'attempts: for attempt in 0..MAX_ATTEMPTS {
            let current = self.sku_item(sku).await?;
            let stock = &current.snapshot.stock;
            wave.episode = stock.episode;
            let (Some(mut version), true, false) = (current.version, stock.in_stock, stock.paused)
            else {
                return Ok(wave);
            };
            let free = current
                .snapshot
                .counters
                .free(params.share)
                .min(params.max_offers.saturating_sub(wave.offers.len() as u32));
            if free == 0 {
                return Ok(wave);
            }
            // Read just enough of the queue: the planner stops at `free` offers,
            // so read more only when skipped requests left it short.
            let mut reader = QueueReader::new(sku, params.shards, free as usize);
            let mut seen: Vec<Request> = reader.take(self, free as usize).await?;
            let plan = loop {
                let candidates = seen.iter().map(|r| Candidate {
                    request: r.id,
                    key: r.key,
                    stale_at_ms: r.stale_at,
                    opted_out: false,
                    last_offered_episode: r.last_offered_episode,
                });
                let plan = plan_offers(free, stock.episode, now, candidates);
                let short = free as usize - plan.offers.len();
                if short == 0 {
                    break plan;
                }
                let more = reader.take(self, short).await?;
                if more.is_empty() {
                    break plan;
                }
                seen.extend(more);
            };
            let by_id: HashMap<RequestId, &Request> = seen.iter().map(|r| (r.id, r)).collect();
            for (c, reason) in &plan.skipped {
                let transition = match reason {
                    SkipReason::Stale => |r: &Request| r.state.expire(i64::MAX, r.stale_at).ok(),
                    SkipReason::OptedOut => |r: &Request| r.state.opt_out().ok(),
                    SkipReason::AlreadyOffered => continue,
                };
                if let Ended::Done = self.end_request(&c.request, now, transition).await? {
                    wave.skipped.push((c.request, *reason));
                }
            }
            let chosen: Vec<&Request> = plan.offers.iter().map(|c| by_id[&c.request]).collect();
            for chunk in chosen.chunks(OFFERS_PER_TX) {
                let mut chunk: Vec<(&Request, LinkToken, LinkToken)> = chunk
                    .iter()
                    .map(|r| {
                        (
                            *r,
                            LinkToken::new(sku.clone(), r.id, random()),
                            LinkToken::new(sku.clone(), r.id, random()),
                        )
                    })
                    .collect();
                while !chunk.is_empty() {
                    let mut items = vec![self.update(
                        key(sku_pk(sku), STATE_SK),
                        "SET offered = offered + :n, ver = :v1, touched = :now",
                        Some("ver = :v"),
                        vec![
                            (":n", n(chunk.len())),
                            (":v", n(version)),
                            (":v1", n(version + 1)),
                            (":now", n(now)),
                        ],
                    )?];
                    let mut offered = Vec::with_capacity(chunk.len());
                    for (r, reserve, optout) in &chunk {
                        let state = r
                            .state
                            .offer(stock.episode, now, params.offer_window)
                            .map_err(|e| corrupt(&request_item(r), e))?;
                        let request = Request {
                            state,
                            last_offered_episode: Some(stock.episode),
                            reserve_hash: Some(reserve.secret_hash()),
                            optout_hash: Some(optout.secret_hash()),
                            notice: None,
                            ..(*r).clone()
                        };
                        let RequestState::Offered { expires_ms, .. } = state else {
                            unreachable!("offer() gives an offered state")
                        };
                        items.push(self.update(
                            key(request_pk(&r.id), REQUEST_SK),
                            "SET st = :offered, epi = :e, exp = :exp, last_epi = :e, rh = :rh, oh = :oh, due = :exp, upk = :u, usk = :us REMOVE qpk, qsk, notice",
                            Some("st = :waiting AND (attribute_not_exists(last_epi) OR last_epi <> :e)"),
                            vec![
                                (":offered", s("offered")),
                                (":waiting", s("waiting")),
                                (":e", n(stock.episode)),
                                (":exp", n(expires_ms)),
                                (":rh", s(reserve.secret_hash().to_hex())),
                                (":oh", s(optout.secret_hash().to_hex())),
                                (":u", s(units_pk(sku))),
                                (":us", s(units_sk(&r.id, true))),
                            ],
                        )?);
                        offered.push(Offer {
                            request,
                            reserve: reserve.clone(),
                            optout: optout.clone(),
                        });
                    }
                    // The same token on a retried call makes DynamoDB answer the
                    // first call's result instead of applying it twice.
                    let token = format!(
                        "{:016x}{:016x}",
                        fnv(sku.as_str()),
                        fnv(&format!("{version}#{}", chunk[0].0.id))
                    );
                    match self.transact(items, Some(token)).await? {
                        Tx::Done => {
                            version += 1;
                            wave.offers.extend(offered);
                            break;
                        }
                        Tx::Cancelled(reasons) if reasons[0].failed => {
                            // Another wave or a level change moved the SKU: start over from a fresh read.
                            backoff(attempt).await;
                            continue 'attempts;
                        }
                        Tx::Cancelled(reasons) => {
                            // Requests no longer waiting (cancelled, opted out, just
                            // offered by an index that lagged) drop out; the rest retry.
                            let mut i = 0;
                            chunk.retain(|_| {
                                i += 1;
                                !reasons.get(i).is_some_and(|r| r.failed)
                            });
                        }
                    }
                }
            }
            return Ok(wave);
        }
        if wave.offers.is_empty() {
            Err(StoreError::Contention(sku_pk(sku)))
        } else {
            Ok(wave)
        }
    }

    async fn claim_notice(&self, id: &RequestId, episode: u32) -> Result<bool> {
        let request = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(request_pk(id), REQUEST_SK)))
            .update_expression("SET notice = :sending, usk = :us")
            .expression_attribute_values(":us", s(units_sk(id, false)))
            .condition_expression("st = :offered AND epi = :e AND attribute_not_exists(notice)")
            .expression_attribute_values(
                ":sending",
                s(serde_json::to_string(&NoticeOutcome::Sending).expect("serialises")),
            )
            .expression_attribute_values(":offered", s("offered"))
            .expression_attribute_values(":e", n(episode));
        update_if(request).await
    }

    async fn record_notice(
        &self,
        id: &RequestId,
        episode: u32,
        outcome: NoticeOutcome,
        now: Millis,
    ) -> Result<()> {
        if matches!(outcome, NoticeOutcome::Failed { .. }) {
            let ended = self
                .end_request(id, now, |r| match r.state {
                    RequestState::Offered { episode: e, .. } if e == episode => {
                        r.state.undeliverable().ok()
                    }
                    _ => None,
                })
                .await?;
            if !matches!(ended, Ended::Done) {
                return Ok(());
            }
        }
        let request = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(request_pk(id), REQUEST_SK)))
            .update_expression("SET notice = :notice")
            .condition_expression("last_epi = :e")
            .expression_attribute_values(
                ":notice",
                s(serde_json::to_string(&outcome).expect("serialises")),
            )
            .expression_attribute_values(":e", n(episode));
        update_if(request).await.map(drop)
    }

    async fn release_notice(&self, id: &RequestId, episode: u32) -> Result<()> {
        let request = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(request_pk(id), REQUEST_SK)))
            .update_expression("REMOVE notice SET usk = :us")
            .expression_attribute_values(":us", s(units_sk(id, true)))
            .condition_expression("st = :offered AND epi = :e AND notice = :sending")
            .expression_attribute_values(
                ":sending",
                s(serde_json::to_string(&NoticeOutcome::Sending).expect("serialises")),
            )
            .expression_attribute_values(":offered", s("offered"))
            .expression_attribute_values(":e", n(episode));
        update_if(request).await.map(drop)
    }

    async fn reissue_unsent(&self, sku: &Sku, random: Random<'_>) -> Result<Vec<Offer>> {
        let items = self
            .query_all(
                self.client
                    .query()
                    .table_name(&self.table)
                    .index_name("units")
                    .key_condition_expression("upk = :u AND begins_with(usk, :unsent)")
                    .expression_attribute_values(":unsent", s("0#"))
                    .filter_expression("st = :offered AND attribute_not_exists(notice)")
                    .expression_attribute_values(":u", s(units_pk(sku)))
                    .expression_attribute_values(":offered", s("offered")),
            )
            .await?;
        let mut unsent = items.iter().map(read_request).collect::<Result<Vec<_>>>()?;
        unsent.sort_by_key(|r| r.key);
        let mut offers = Vec::new();
        for r in unsent {
            let reserve = LinkToken::new(sku.clone(), r.id, random());
            let optout = LinkToken::new(sku.clone(), r.id, random());
            let RequestState::Offered { episode, .. } = r.state else {
                continue;
            };
            let request = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(request_pk(&r.id), REQUEST_SK)))
                .update_expression("SET rh = :rh, oh = :oh")
                .condition_expression("st = :offered AND epi = :e AND attribute_not_exists(notice)")
                .expression_attribute_values(":rh", s(reserve.secret_hash().to_hex()))
                .expression_attribute_values(":oh", s(optout.secret_hash().to_hex()))
                .expression_attribute_values(":offered", s("offered"))
                .expression_attribute_values(":e", n(episode));
            match update_if(request).await {
                Ok(true) => {
                    let request = Request {
                        reserve_hash: Some(reserve.secret_hash()),
                        optout_hash: Some(optout.secret_hash()),
                        ..r
                    };
                    offers.push(Offer {
                        request,
                        reserve,
                        optout,
                    });
                }
                // Claimed, clicked or ended meanwhile: not ours to send.
                Ok(false) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(offers)
    }

    async fn restock_phrase(&self, sku: &Sku, episode: u32) -> Result<Option<String>> {
        let Some(item) = self.get(sku_pk(sku), STATE_SK).await? else {
            return Ok(None);
        };
        let stored_for: Option<u32> = opt_n(&item, "phrase_epi")?;
        Ok(opt_s(&item, "phrase")
            .filter(|_| stored_for == Some(episode))
            .map(str::to_owned))
    }

    async fn save_restock_phrase(&self, sku: &Sku, episode: u32, phrase: &str) -> Result<()> {
        self.client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(sku_pk(sku), STATE_SK)))
            .update_expression("SET phrase = :p, phrase_epi = :e")
            .expression_attribute_values(":p", s(phrase))
            .expression_attribute_values(":e", n(episode))
            .send()
            .await
            .map_err(|e| StoreError::backend("UpdateItem", e))?;
        Ok(())
    }

    async fn rate_limit(
        &self,
        key_text: &str,
        limit: u32,
        window_ms: Millis,
        now: Millis,
    ) -> Result<RateDecision> {
        let start = now - now.rem_euclid(window_ms.max(1));
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(format!("RATE#{key_text}"), start.to_string())))
            .update_expression("ADD hits :one SET expires_at = :ttl")
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":ttl", n((start + window_ms) / 1000 + 60))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew)
            .send()
            .await
            .map_err(|e| StoreError::backend("UpdateItem", e))?;
        let hits: u64 = out
            .attributes
            .as_ref()
            .map(|a| get_n(a, "hits"))
            .transpose()?
            .unwrap_or(1);
        Ok(RateDecision::from_count(hits, limit, start, window_ms, now))
    }

    async fn due(&self, now: Millis, limit: usize) -> Result<Vec<Due>> {
        let shards = (0..table::DUE_SHARDS).map(|shard| async move {
            let mut found = Vec::new();
            let mut start = None;
            loop {
                let page = self
                    .client
                    .query()
                    .table_name(&self.table)
                    .index_name("due")
                    .key_condition_expression("dpk = :d AND due <= :now")
                    .expression_attribute_values(":d", s(format!("DUE#{shard}")))
                    .expression_attribute_values(":now", n(now))
                    .set_exclusive_start_key(start)
                    .limit(limit.clamp(1, 1000) as i32)
                    .send()
                    .await
                    .map_err(|e| StoreError::backend("Query", e))?;
                for item in page.items() {
                    let id: RequestId =
                        get_s(item, "rid")?.parse().map_err(|e| corrupt(item, e))?;
                    let sku = Sku::try_from(get_s(item, "sku")?).map_err(|e| corrupt(item, e))?;
                    found.push(Due {
                        id,
                        sku,
                        due: get_n(item, "due")?,
                    });
                }
                start = page.last_evaluated_key;
                if start.is_none() || found.len() >= limit {
                    return Ok::<_, StoreError>(found);
                }
            }
        });
        let mut due: Vec<Due> = futures::future::try_join_all(shards)
            .await?
            .into_iter()
            .flatten()
            .collect();
        due.sort_by_key(|d| (d.due, d.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn expire(&self, due: &Due, now: Millis) -> Result<ExpireOutcome> {
        let Some(item) = self.request_item(&due.id).await? else {
            return Ok(ExpireOutcome::Skipped);
        };
        let r = read_request(&item)?;
        let Ok((to, freed)) = r.state.expire(now, r.stale_at) else {
            return Ok(ExpireOutcome::Skipped);
        };
        let items = self.finish(&r, to, freed, now, to == RequestState::Lapsed)?;
        match self.transact(items, None).await? {
            // Another sweep, a click or a cancel got there first; theirs stands.
            Tx::Cancelled(_) => Ok(ExpireOutcome::Skipped),
            Tx::Done => Ok(match to {
                RequestState::Stale => ExpireOutcome::Stale,
                RequestState::Lapsed => ExpireOutcome::Lapsed,
                _ => ExpireOutcome::Released,
            }),
        }
    }

    async fn reconcile(&self, sku: &Sku, now: Millis) -> Result<Option<Drift>> {
        let before = self.get(sku_pk(sku), STATE_SK).await?;
        let stored = read_sku(before.as_ref())?;
        let touched: Millis = match &before {
            Some(item) => opt_n(item, "touched")?.unwrap_or(0),
            None => return Ok(None),
        };
        let (mut offered, mut held) = (0u32, 0u32);
        let units = self
            .query_all(
                self.client
                    .query()
                    .table_name(&self.table)
                    .index_name("units")
                    .key_condition_expression("upk = :u")
                    .expression_attribute_values(":u", s(units_pk(sku))),
            )
            .await?;
        for item in &units {
            match get_s(item, "st")? {
                "offered" => offered += 1,
                "held" => held += 1,
                _ => {}
            }
        }
        let counters = stored.snapshot.counters;
        if counters.offered == offered && counters.held == held {
            return Ok(None);
        }
        let counted = restock_core::Counters {
            offered,
            held,
            ..counters
        };
        // Raising a count is always safe; lowering one could invite an extra
        // shopper if the index lagged, so it waits for a quiet SKU.
        let lowers = offered < counters.offered || held < counters.held;
        let quiet = now - touched >= RECONCILE_QUIET_MS;
        if lowers && !quiet {
            return Ok(Some(Drift {
                stored: counters,
                counted: counters,
            }));
        }
        let request = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(sku_pk(sku), STATE_SK)))
            .update_expression("SET offered = :o, held = :h, ver = ver + :one")
            .condition_expression("offered = :oldo AND held = :oldh AND ver = :v")
            .expression_attribute_values(":o", n(offered))
            .expression_attribute_values(":h", n(held))
            .expression_attribute_values(":oldo", n(counters.offered))
            .expression_attribute_values(":oldh", n(counters.held))
            .expression_attribute_values(":v", n(stored.version.unwrap_or(0)))
            .expression_attribute_values(":one", n(1));
        // A failed condition: something moved while counting; the next reconcile looks again.
        Ok(update_if(request).await?.then_some(Drift {
            stored: counters,
            counted,
        }))
    }

    async fn queue(&self, sku: &Sku, shards: u16, limit: usize) -> Result<Vec<Request>> {
        let mut reader = QueueReader::new(sku, shards, limit);
        reader.take(self, limit).await
    }

    async fn stats(&self, sku: &Sku, shards: u16) -> Result<SkuStats> {
        let item = self.sku_item(sku).await?;
        Ok(SkuStats {
            waiting: self.count_waiting(sku, shards, None).await? as u32,
            offered: item.snapshot.counters.offered,
            held: item.snapshot.counters.held,
            bought: item.snapshot.bought,
            lapsed: item.lapsed,
        })
    }
}

/// Sends a conditional `UpdateItem`: `Ok(false)` when its condition failed,
/// which callers treat as an outcome (someone else got there first).
async fn update_if(
    request: aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder,
) -> Result<bool> {
    match request.send().await {
        Ok(_) => Ok(true),
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
        {
            Ok(false)
        }
        Err(e) => Err(StoreError::backend("UpdateItem", e)),
    }
}

/// A stable 64-bit hash for idempotency tokens and key discriminators.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
