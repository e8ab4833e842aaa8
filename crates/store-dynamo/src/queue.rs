//! Reading a SKU's write-sharded queue: oldest-first across shards, a page at
//! a time, and counting it. The queue entries live in the base table
//! (`Q#<sku>#<shard>`, sorted by join key), so every read here is strongly
//! consistent: a wave sees every join that committed before it looked, and a
//! position counts exactly the people still ahead.

use std::collections::{BTreeMap, VecDeque};

use aws_sdk_dynamodb::types::Select;
use restock_core::Sku;
use restock_store::port::Result;
use restock_store::{Request, StoreError, language_tag};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;

/// Items per queue page read.
const PAGE: i32 = 500;

/// A shard's cursor over its queue entries.
struct ShardCursor {
    pk: String,
    buffer: VecDeque<Request>,
    start: Option<Item>,
    done: bool,
}

/// Reads a SKU's queue oldest-first across shards, a page at a time: a
/// k-way merge over each shard's pages, pulling a shard's next page only when
/// the merge reaches the end of the one it has.
pub(crate) struct QueueReader {
    shards: Vec<ShardCursor>,
    page: i32,
}

impl QueueReader {
    /// A reader over the `shards` of `sku`'s queue, paging by about `want`.
    pub(crate) fn new(sku: &Sku, shards: u16, want: usize) -> Self {
        let shards = (0..shards.max(1))
            .map(|shard| ShardCursor {
                pk: queue_pk(sku, shard),
                buffer: VecDeque::new(),
                start: None,
                done: false,
            })
            .collect();
        Self {
            shards,
            page: i32::try_from(want).unwrap_or(PAGE).clamp(16, PAGE),
        }
    }

    /// The next `n` waiting requests in join order (fewer at the end).
    pub(crate) async fn take(&mut self, store: &DynamoStore, n: usize) -> Result<Vec<Request>> {
        // Room for a page at first, however many are asked for: `n` may be
        // far more than are waiting.
        let mut out = Vec::with_capacity(n.min(self.page as usize));
        // A caller asking for more than a page's worth a shard reads in
        // bigger pages from here on (up to DynamoDB's 1 MB).
        let per_shard = n.div_ceil(self.shards.len());
        self.page = self
            .page
            .max(i32::try_from(per_shard).unwrap_or(PAGE).min(PAGE));
        while out.len() < n {
            for cursor in &mut self.shards {
                if cursor.buffer.is_empty() && !cursor.done {
                    let page = store
                        .query()
                        .consistent_read(true)
                        .key_condition_expression(format!("{PK} = :q"))
                        .expression_attribute_values(":q", s(&cursor.pk))
                        .set_exclusive_start_key(cursor.start.take())
                        .limit(self.page)
                        .send()
                        .await
                        .map_err(|e| StoreError::backend(crate::DYNAMODB, "Query", e))?;
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

impl DynamoStore {
    /// Counts waiting requests of a SKU ahead of `before` (or all of them).
    pub(crate) async fn count_waiting(
        &self,
        sku: &Sku,
        shards: u16,
        before: Option<&str>,
    ) -> Result<usize> {
        self.count_items((0..shards.max(1)).map(|shard| queue_pk(sku, shard)), before)
            .await
    }

    /// Counts the items of partitions `pks` (with a sort key below `before`,
    /// if given): strongly consistent `Select::Count` pages, the partitions
    /// side by side.
    pub(crate) async fn count_items(
        &self,
        pks: impl Iterator<Item = String>,
        before: Option<&str>,
    ) -> Result<usize> {
        let counts = pks.map(|pk| async move {
            let mut total = 0usize;
            let mut start = None;
            loop {
                let mut q = self
                    .query()
                    .consistent_read(true)
                    .select(Select::Count)
                    .set_exclusive_start_key(start)
                    .expression_attribute_values(":q", s(&pk));
                q = match before {
                    Some(jk) => q
                        .key_condition_expression(format!("{PK} = :q AND {SK} < :k"))
                        .expression_attribute_values(":k", s(jk)),
                    None => q.key_condition_expression(format!("{PK} = :q")),
                };
                let out = q
                    .send()
                    .await
                    .map_err(|e| StoreError::backend(crate::DYNAMODB, "Query", e))?;
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

    /// The waiting requests by language (`SkuStats::waiting_by_language`):
    /// the same strongly consistent pages a count reads, with only each
    /// entry's language returned.
    pub(crate) async fn waiting_by_language(
        &self,
        sku: &Sku,
        shards: u16,
    ) -> Result<BTreeMap<String, u32>> {
        let tallies = (0..shards.max(1)).map(|shard| async move {
            let mut tally = BTreeMap::<String, u32>::new();
            let mut start = None;
            loop {
                let out = self
                    .query()
                    .consistent_read(true)
                    .key_condition_expression(format!("{PK} = :q"))
                    .expression_attribute_values(":q", s(queue_pk(sku, shard)))
                    .projection_expression(LANGUAGE)
                    .set_exclusive_start_key(start)
                    .send()
                    .await
                    .map_err(|e| StoreError::backend(crate::DYNAMODB, "Query", e))?;
                for entry in out.items() {
                    let language = opt_s(entry, LANGUAGE).and_then(|l| l.parse().ok());
                    *tally.entry(language_tag(language.as_ref())).or_default() += 1;
                }
                start = out.last_evaluated_key;
                if start.is_none() {
                    return Ok::<_, StoreError>(tally);
                }
            }
        });
        let mut total = BTreeMap::new();
        for tally in futures::future::try_join_all(tallies).await? {
            for (language, n) in tally {
                *total.entry(language).or_default() += n;
            }
        }
        Ok(total)
    }
}
