//! Writing: one way to build an update ([`Change`]), transactions whose items
//! carry labels so a cancellation reason is read by name ([`Tx`],
//! [`Cancelled`]), and the retry policy for conflicts.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, Put, ReturnValue, ReturnValuesOnConditionCheckFailure,
    TransactWriteItem, Update,
};
use restock_store::StoreError;
use restock_store::port::Result;

use crate::DynamoStore;
use crate::Item;

pub(crate) use restock_store::retry::{CONFLICT_BUDGET, MAX_ATTEMPTS};

/// When a put may go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PutIf {
    /// Only where no item is at its key: the transaction is cancelled otherwise.
    Absent,
    /// Whatever is there is replaced.
    Always,
}

/// One `UpdateItem`: what it sets and removes, and the conditions it needs.
///
/// `set(attr, value)` writes `attr = :new_attr`; `set_expr` takes an
/// expression with placeholders of its own (`offered = offered + :n`), bound
/// with `value`. Conditions are AND-ed.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    key: Item,
    set: Vec<String>,
    add: Vec<String>,
    remove: Vec<&'static str>,
    conditions: Vec<String>,
    values: HashMap<String, AttributeValue>,
}

impl Change {
    /// An update of the item at `key`.
    pub fn on(key: Item) -> Self {
        Self {
            key,
            set: Vec::new(),
            add: Vec::new(),
            remove: Vec::new(),
            conditions: Vec::new(),
            values: HashMap::new(),
        }
    }

    /// `SET attr = value`.
    pub fn set(mut self, attr: &str, value: AttributeValue) -> Self {
        let placeholder = format!(":new_{attr}");
        self.set.push(format!("{attr} = {placeholder}"));
        self.values.insert(placeholder, value);
        self
    }

    /// Keeps `event`, which happened `at`, in the request's story: sets its
    /// slot's chapter (`story_<slot>`), with no read.
    pub fn tell(self, at: restock_core::Millis, event: restock_core::story::Event) -> Self {
        let chapter = restock_core::story::Chapter { at, event };
        let name = format!("{}{}", crate::attr::STORY, chapter.slot());
        self.set(&name, crate::codec::chapter_value(&chapter))
    }

    /// Sets every `(attr, value)` pair.
    pub fn set_all(self, attrs: impl IntoIterator<Item = (&'static str, AttributeValue)>) -> Self {
        attrs.into_iter().fold(self, |c, (a, v)| c.set(a, v))
    }

    /// `SET expr`, with placeholders bound by [`Change::value`].
    pub fn set_expr(mut self, expr: impl Into<String>) -> Self {
        self.set.push(expr.into());
        self
    }

    /// `ADD attr value`: a counter that starts at zero, with no read.
    pub fn add(mut self, attr: &str, value: AttributeValue) -> Self {
        let placeholder = format!(":add_{attr}");
        self.add.push(format!("{attr} {placeholder}"));
        self.values.insert(placeholder, value);
        self
    }

    /// `REMOVE attr`.
    pub fn remove(mut self, attr: &'static str) -> Self {
        self.remove.push(attr);
        self
    }

    /// Removes every attribute named.
    pub fn remove_all(mut self, attrs: impl IntoIterator<Item = &'static str>) -> Self {
        self.remove.extend(attrs);
        self
    }

    /// Applies only if `condition` holds (AND-ed with any other).
    pub fn when(mut self, condition: impl Into<String>) -> Self {
        self.conditions.push(condition.into());
        self
    }

    /// Binds a placeholder used in a `set_expr` or a condition.
    pub fn value(mut self, placeholder: &str, value: AttributeValue) -> Self {
        self.values.insert(placeholder.to_owned(), value);
        self
    }

    fn expression(&self) -> String {
        let mut expr = String::new();
        if !self.set.is_empty() {
            expr = format!("SET {}", self.set.join(", "));
        }
        if !self.add.is_empty() {
            expr.push_str(&format!(" ADD {}", self.add.join(", ")));
        }
        if !self.remove.is_empty() {
            expr.push_str(&format!(" REMOVE {}", self.remove.join(", ")));
        }
        expr.trim().to_owned()
    }

    fn condition(&self) -> Option<String> {
        (!self.conditions.is_empty()).then(|| {
            self.conditions
                .iter()
                .map(|c| format!("({c})"))
                .collect::<Vec<_>>()
                .join(" AND ")
        })
    }

    fn values(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }

    /// Sends it on its own: `Ok(false)` when its condition failed, which
    /// callers treat as an outcome (someone else got there first).
    pub async fn apply(self, store: &DynamoStore) -> Result<bool> {
        Ok(self.apply_returning(store).await?.is_some())
    }

    /// Sends it on its own and answers the item as it is now (`ALL_NEW`:
    /// an `ADD` of zero is no change to report under `UPDATED_NEW`); `None`
    /// when its condition failed.
    pub async fn apply_returning(self, store: &DynamoStore) -> Result<Option<Item>> {
        for attempt in 0..MAX_ATTEMPTS {
            let sent = store
                .client
                .update_item()
                .table_name(&store.table)
                .set_key(Some(self.key.clone()))
                .update_expression(self.expression())
                .set_condition_expression(self.condition())
                .set_expression_attribute_values(self.values())
                .return_values(ReturnValue::AllNew)
                .send()
                .await;
            let conflict = match &sent {
                Ok(_) => false,
                Err(e) => e
                    .as_service_error()
                    .is_some_and(|e| e.is_transaction_conflict_exception()),
            };
            match sent {
                Ok(out) => return Ok(Some(out.attributes.unwrap_or_default())),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
                {
                    return Ok(None);
                }
                // A transaction in flight on the item refused it: again, later.
                Err(_) if conflict && attempt + 1 < MAX_ATTEMPTS => backoff(attempt).await,
                Err(e) if conflict => {
                    return Err(StoreError::Contention(format!(
                        "UpdateItem lost {MAX_ATTEMPTS} races with transactions: {}",
                        aws_smithy_types::error::display::DisplayErrorContext(&e)
                    )));
                }
                Err(e) => return Err(StoreError::backend(crate::DYNAMODB, "UpdateItem", e)),
            }
        }
        unreachable!("the loop returns on its last attempt")
    }
}

/// A transaction under construction: each item carries a label, so a
/// cancellation reason is read by name rather than by position.
pub(crate) struct Tx<'a> {
    table: &'a str,
    items: Vec<TransactWriteItem>,
    labels: Vec<&'static str>,
    /// Presence blocks to delete if empty once it commits.
    emptier: Vec<Item>,
}

fn built<T, E: std::error::Error + Send + Sync + 'static>(
    r: std::result::Result<T, E>,
) -> Result<T> {
    r.map_err(|e| StoreError::backend(crate::DYNAMODB, "TransactWriteItems", e))
}

impl<'a> Tx<'a> {
    /// An empty transaction on `table`.
    pub fn new(table: &'a str) -> Self {
        Self {
            table,
            items: Vec::new(),
            labels: Vec::new(),
            emptier: Vec::new(),
        }
    }

    /// Once it commits, deletes each of these presence blocks that is empty.
    pub fn tidy(&mut self, blocks: Vec<Item>) {
        self.emptier.extend(blocks);
    }

    fn push(&mut self, label: &'static str, item: TransactWriteItem) {
        self.items.push(item);
        self.labels.push(label);
    }

    /// An update.
    pub fn update(&mut self, label: &'static str, change: Change) -> Result<()> {
        let update = built(
            Update::builder()
                .table_name(self.table)
                .set_key(Some(change.key.clone()))
                .update_expression(change.expression())
                .set_condition_expression(change.condition())
                .set_expression_attribute_values(change.values())
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .build(),
        )?;
        self.push(label, TransactWriteItem::builder().update(update).build());
        Ok(())
    }

    /// A put: only where no item is, or over whatever is there.
    pub fn put(&mut self, label: &'static str, item: Item, when: PutIf) -> Result<()> {
        let new_only = when == PutIf::Absent;
        let put = built(
            Put::builder()
                .table_name(self.table)
                .set_item(Some(item))
                .set_condition_expression(
                    new_only.then(|| format!("attribute_not_exists({})", crate::attr::PK)),
                )
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .build(),
        )?;
        self.push(label, TransactWriteItem::builder().put(put).build());
        Ok(())
    }

    /// A delete.
    pub fn delete(&mut self, label: &'static str, key: Item) -> Result<()> {
        let delete = built(
            Delete::builder()
                .table_name(self.table)
                .set_key(Some(key))
                .build(),
        )?;
        self.push(label, TransactWriteItem::builder().delete(delete).build());
        Ok(())
    }

    /// A delete only where the item's `attr` is `value`.
    pub fn delete_if(
        &mut self,
        label: &'static str,
        key: Item,
        attr: &str,
        value: AttributeValue,
    ) -> Result<()> {
        let delete = built(
            Delete::builder()
                .table_name(self.table)
                .set_key(Some(key))
                .condition_expression("#a = :v")
                .expression_attribute_names("#a", attr)
                .expression_attribute_values(":v", value)
                .build(),
        )?;
        self.push(label, TransactWriteItem::builder().delete(delete).build());
        Ok(())
    }

    /// Deletes the item at `key` if `condition` holds (its placeholders
    /// given by `values`).
    pub fn delete_when(
        &mut self,
        label: &'static str,
        key: Item,
        condition: String,
        values: impl IntoIterator<Item = (&'static str, AttributeValue)>,
    ) -> Result<()> {
        let delete = built(
            Delete::builder()
                .table_name(self.table)
                .set_key(Some(key))
                .condition_expression(condition)
                .set_expression_attribute_values(Some(
                    values.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                ))
                .build(),
        )?;
        self.push(label, TransactWriteItem::builder().delete(delete).build());
        Ok(())
    }

    /// A check that no item is at `key`, writing nothing.
    pub fn check_absent(&mut self, label: &'static str, key: Item) -> Result<()> {
        let check = built(
            ConditionCheck::builder()
                .table_name(self.table)
                .set_key(Some(key))
                .condition_expression(format!("attribute_not_exists({})", crate::attr::PK))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .build(),
        )?;
        self.push(
            label,
            TransactWriteItem::builder().condition_check(check).build(),
        );
        Ok(())
    }
}

/// A transaction that did not apply because a condition failed.
#[derive(Debug)]
pub(crate) struct Cancelled {
    reasons: Vec<(&'static str, bool, Option<Item>)>,
}

impl Cancelled {
    /// Whether an item labelled `label` failed its condition.
    pub fn failed(&self, label: &str) -> bool {
        self.reasons
            .iter()
            .any(|(l, failed, _)| *l == label && *failed)
    }

    /// Whether the `n`th item labelled `label` failed its condition.
    pub fn failed_nth(&self, label: &str, n: usize) -> bool {
        self.reasons
            .iter()
            .filter(|(l, _, _)| *l == label)
            .nth(n)
            .is_some_and(|(_, failed, _)| *failed)
    }

    /// The item as it was when the item labelled `label` failed (ALL_OLD).
    pub fn item(&self, label: &str) -> Option<Item> {
        self.reasons
            .iter()
            .find(|(l, failed, _)| *l == label && *failed)
            .and_then(|(_, _, item)| item.clone())
    }
}

/// What a transaction came to.
pub(crate) enum Outcome {
    Done,
    Cancelled(Cancelled),
}

impl DynamoStore {
    /// A new transaction on this store's table.
    pub(crate) fn tx(&self) -> Tx<'_> {
        Tx::new(&self.table)
    }

    /// Runs a transaction. Conflicts with concurrent transactions are retried
    /// here; failed conditions come back as [`Cancelled`].
    pub(crate) async fn transact(&self, tx: Tx<'_>) -> Result<Outcome> {
        let started = tokio::time::Instant::now();
        let mut attempt = 0;
        loop {
            let err = match self.transact_once(&tx).await? {
                Sent::Done => {
                    if !tx.emptier.is_empty() {
                        self.drop_empty_blocks(tx.emptier).await;
                    }
                    return Ok(Outcome::Done);
                }
                Sent::Cancelled(cancelled) => return Ok(Outcome::Cancelled(cancelled)),
                Sent::Conflict(err) => err,
            };
            attempt += 1;
            // Every race lost is another writer's progress on the same
            // items, so keep going for a while, not a fixed count (a drop's
            // writes on one item come in bursts).
            if attempt >= MAX_ATTEMPTS && started.elapsed() >= CONFLICT_BUDGET {
                // Nothing was written; the caller may try again.
                return Err(StoreError::Contention(format!(
                    "TransactWriteItems lost {attempt} races in {} ms: {err}",
                    started.elapsed().as_millis(),
                )));
            }
            backoff(attempt - 1).await;
        }
    }

    /// Sends a transaction once: a conflict with a transaction in flight
    /// comes back as [`Sent::Conflict`], for a caller whose transaction
    /// would fail its condition if sent again (a join: what is in flight on
    /// its shard's ticket counter is another join taking the ticket).
    pub(crate) async fn transact_once(&self, tx: &Tx<'_>) -> Result<Sent> {
        let err = match self
            .client
            .transact_write_items()
            .set_transact_items(Some(tx.items.clone()))
            .send()
            .await
        {
            Ok(_) => return Ok(Sent::Done),
            Err(err) => err,
        };
        match err.as_service_error() {
            Some(TransactWriteItemsError::TransactionCanceledException(ex)) => {
                let reasons: Vec<_> = ex
                    .cancellation_reasons()
                    .iter()
                    .zip(&tx.labels)
                    .map(|(r, label)| {
                        (
                            *label,
                            r.code() == Some("ConditionalCheckFailed"),
                            r.item().cloned(),
                        )
                    })
                    .collect();
                if reasons.iter().any(|(_, failed, _)| *failed) {
                    return Ok(Sent::Cancelled(Cancelled { reasons }));
                }
            }
            Some(TransactWriteItemsError::TransactionInProgressException(_)) => {}
            _ => {
                return Err(StoreError::backend(
                    crate::DYNAMODB,
                    "TransactWriteItems",
                    err,
                ));
            }
        }
        Ok(Sent::Conflict(
            aws_smithy_types::error::display::DisplayErrorContext(&err).to_string(),
        ))
    }
}

/// What one send of a transaction came to.
pub(crate) enum Sent {
    /// Applied.
    Done,
    /// A condition failed.
    Cancelled(Cancelled),
    /// Another transaction was in flight on one of its items: nothing was
    /// written (the service's message).
    Conflict(String),
}

/// Waits after losing race number `attempt` (the shared policy,
/// [`restock_store::retry::backoff`]), drawn from the operating system's
/// random source.
pub(crate) async fn backoff(attempt: u32) {
    let random = getrandom::u64().unwrap_or(u64::from(attempt));
    tokio::time::sleep(restock_store::retry::backoff(attempt, random)).await;
}
