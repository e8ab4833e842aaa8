//! # restock-sim
//!
//! restock under a drop's load, in simulated time. The DynamoDB API a test
//! can run (moto behind `scripts/dynamo_strict.py`) applies one request at
//! a time and serves about 15 sign-ups a second through the binaries, far
//! below a drop. This runs capture's real router on [`SimStore`]: the
//! in-memory store (the reference every adapter is held to) behind a model
//! of what DynamoDB does to the DynamoDB store's requests, on tokio's
//! virtual clock, so 20,000 sign-ups over 10 simulated seconds take a few
//! seconds of CPU.
//!
//! ## The model ([`Model`])
//! The same rules as the strict double's contention model (`docs/TABLE.md`,
//! "Testing against moto"), on the items the DynamoDB store's requests name
//! (`crates/store-dynamo`; `docs/TABLE.md`, "Operations"):
//!
//! - a read takes `read`; a single-item write `write`;
//! - a transaction is applied when it arrives and is in flight for
//!   `in_flight`, its answer coming back at the end; another transaction
//!   naming one of its items while it is in flight is cancelled
//!   (`TransactionConflict`), and answers after `read`;
//! - a partition key takes `partition_wcu` write units a second and serves
//!   `partition_rcu` read units (DynamoDB's 1,000 and 3,000: a partition's
//!   limits, which adaptive capacity's split for heat never lifts above,
//!   even for an item isolated on a partition of its own, so the model
//!   holds each key to them from the first second); a write costs a unit
//!   per started KB of the item (`restock_store_dynamo::sizes`, from the
//!   items the store writes), twice in a transaction, and a `due` index
//!   entry one more write on its index partition; a strongly consistent
//!   read a unit per started 4 KB (a `BatchGetItem` a unit per item, a
//!   `Query` per started 4 KB of what it reads). Past a limit,
//!   `ThrottlingException`, which the SDK retries twice (its standard mode:
//!   1 s, then 2 s ceilings, full jitter) before the store sees the error;
//!   a batch read asks again for the keys left unprocessed;
//! - the hottest key's read and write units in any one second are kept for
//!   the report ([`SimStore::hottest`]).
//!
//! Reads on the sign-up and click paths are named as the DynamoDB store
//! makes them: the catalogue entry, every shard's counter before each
//! join attempt, a position's ticket boundaries and presence blocks, the
//! request; other operations cost a read's time and no units. capture's
//! warm copies (the settings, an item's entry: [`restock_app::ENTRY_TTL`])
//! are one process's here, where a fleet of functions reads each once per
//! function.
//!
//! A join, a click and a rate-limit count follow the DynamoDB store's own
//! protocol (read the counters, then a conditional transaction; the hold
//! slots and their refill), with its retry policy
//! ([`restock_store::retry`], the same constants and backoff): what they
//! decide is then done by the in-memory store. Everything else costs one
//! read and is done by the in-memory store.
//!
//! ## Layout
//! - `model`: the limits ([`Model`]) and what was counted ([`Counts`],
//!   [`Hottest`]);
//! - this module: [`SimStore`]'s modelled operations (a join, a click, a
//!   rate-limit count) and its named reads;
//! - `port`: the store port on [`SimStore`], the rest passed through;
//! - [`drive`]: the runs that drive capture's router at a rate, as Lambda
//!   runs it ([`drive::Functions`]: the account's concurrency, cold starts).

pub mod drive;
mod model;
mod port;

pub use model::{Counts, Hottest, Model};
use model::{Dynamo, Lost, Name, read_half_units, write_units};

use std::sync::Mutex;
use std::time::Duration;

use restock_core::allowance::{self, Refill};
use restock_core::{HoldId, Millis, RequestId, ReserveToken, Sku, Window};
use restock_store::StoreError;
use restock_store::model::*;
use restock_store::port::Result;
use restock_store::prelude::*;
use restock_store::retry::{
    CLICK_BUDGET, CONFLICT_BUDGET, DRY_ATTEMPTS, JOIN_BUDGET, MAX_ATTEMPTS, backoff,
};
use restock_store_dynamo::table::{SPREAD, wake_partition};
use restock_store_memory::MemoryStore;
use tokio::time::{Instant, sleep};

/// The in-memory store behind DynamoDB's timings and rules (see the crate's
/// description).
pub struct SimStore {
    inner: MemoryStore,
    model: Model,
    dynamo: Mutex<Dynamo>,
}

fn name(pk: impl Into<String>, sk: impl Into<String>) -> Name {
    (pk.into(), sk.into())
}

fn throttled(operation: &'static str) -> StoreError {
    StoreError::backend(
        "DynamoDB",
        operation,
        std::io::Error::other("ThrottlingException: Throughput exceeds the current capacity"),
    )
}

/// What a transaction came to.
enum Sent {
    /// Applied: in flight until its answer.
    Applied,
    /// Its condition failed.
    Cancelled,
    /// Cancelled for a conflict, and not sent again (see [`Retry`]).
    Conflicted,
}

/// What a transaction does when another is in flight on one of its items.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// Sends it again, as `DynamoStore::transact` does.
    Conflicts,
    /// Answers [`Sent::Conflicted`], as `DynamoStore::transact_once` does
    /// (a join: the transaction in flight on its shard's counter is another
    /// join taking the ticket, so the same one again would fail).
    Never,
}

impl SimStore {
    /// `inner` behind `model`.
    pub fn new(inner: MemoryStore, model: Model) -> Self {
        Self {
            inner,
            model,
            dynamo: Mutex::new(Dynamo::default()),
        }
    }

    /// The store underneath, for setting up and checking a run.
    pub fn inner(&self) -> &MemoryStore {
        &self.inner
    }

    /// The most units a key took in any one second, and which key.
    pub fn hottest(&self) -> Hottest {
        self.model_lock().hottest.clone()
    }

    /// The partition keys throttled most, with how often.
    pub fn throttled_most(&self, n: usize) -> Vec<(String, u64)> {
        let mut all: Vec<(String, u64)> = self
            .dynamo
            .lock()
            .expect("model lock")
            .throttled
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        all.sort_by_key(|b| std::cmp::Reverse(b.1));
        all.truncate(n);
        all
    }

    /// What the model did so far.
    pub fn counts(&self) -> Counts {
        self.dynamo.lock().expect("model lock").counts
    }

    /// Splits `units` of `sku`'s hold allowance over `slots` slots, as a
    /// restock leaves them.
    pub fn set_allowance(&self, sku: &Sku, units: i64, slots: u16) {
        let slots = i64::from(slots.max(1));
        let split = (0..slots)
            .map(|i| units / slots + i64::from(i < units % slots))
            .collect();
        self.set_slots(sku, split);
    }

    /// Sets each of `sku`'s hold slots (a spread a restock, sales and
    /// refills can leave).
    pub fn set_slots(&self, sku: &Sku, slots: Vec<i64>) {
        self.model_lock().slots.insert(sku.clone(), slots);
    }

    async fn round_trip(&self) {
        sleep(self.model.read).await;
    }

    /// The SDK's throttling retries (standard mode: three attempts, full
    /// jitter under 1 s, then 2 s) around `attempt`.
    async fn sdk<T>(
        &self,
        operation: &'static str,
        mut attempt: impl FnMut(&mut Dynamo) -> std::result::Result<T, Lost>,
    ) -> Result<std::result::Result<T, ()>> {
        for retry in 0..3u32 {
            let result = attempt(&mut self.dynamo.lock().expect("model lock"));
            match result {
                Ok(t) => return Ok(Ok(t)),
                Err(Lost::Conflict) => return Ok(Err(())),
                Err(Lost::Throttled) if retry < 2 => {
                    let ceiling = 1_000u64 << retry;
                    let wait = getrandom::u64().unwrap_or(0) % ceiling;
                    sleep(Duration::from_millis(wait)).await;
                }
                Err(Lost::Throttled) => return Err(throttled(operation)),
            }
        }
        unreachable!("the last attempt returns")
    }

    /// One single-item write on `item` (under a KB).
    async fn write_one(&self, item: Name) -> Result<()> {
        let (wcu, in_flight) = (self.model.partition_wcu, self.model.in_flight);
        let units = [(item.0.clone(), 1)];
        let _ = self
            .sdk("UpdateItem", |d| {
                d.admit(&[], &units, false, in_flight, wcu)
            })
            .await?;
        sleep(self.model.write).await;
        Ok(())
    }

    /// A strongly consistent read of `items` (partition key, half units),
    /// in one call: the SDK's throttling retries, and a batch's keys left
    /// unprocessed asked again, as the store does.
    async fn read(&self, operation: &'static str, mut items: Vec<(String, u32)>) -> Result<()> {
        let rcu = self.model.partition_rcu;
        for attempt in 0..3u32 {
            {
                let mut d = self.model_lock();
                items.retain(|(pk, half)| !d.admit_read(pk, *half, rcu));
            }
            sleep(self.model.read).await;
            if items.is_empty() {
                return Ok(());
            }
            if attempt < 2 {
                let ceiling = 1_000u64 << attempt;
                sleep(Duration::from_millis(
                    getrandom::u64().unwrap_or(0) % ceiling,
                ))
                .await;
            }
        }
        Err(throttled(operation))
    }

    /// The catalogue entry's read (one item under 4 KB).
    async fn read_entry(&self, sku: &Sku) -> Result<()> {
        self.read("GetItem", vec![(format!("SKU#{sku}"), read_half_units(0))])
            .await
    }

    /// A request's read (one item under 4 KB).
    async fn read_request(&self, id: &RequestId) -> Result<()> {
        self.read("GetItem", vec![(format!("REQ#{id}"), read_half_units(0))])
            .await
    }

    /// A position's reads, as the DynamoDB store makes them for a request
    /// in `shard` of `shards`: the ticket after each other shard's boundary
    /// (one `BatchGetItem`), then each shard's presence blocks below it (a
    /// `Query` each, about 300 bytes a block of 1,024 tickets).
    async fn read_position(&self, sku: &Sku, shard: u16, shards: u16) -> Result<()> {
        if shards > 1 {
            let others = (0..shards)
                .filter(|s| *s != shard)
                .map(|s| (format!("QK#{sku}#{s}"), read_half_units(0)))
                .collect();
            self.read("BatchGetItem", others).await?;
        }
        let blocks: Vec<(String, u32)> = {
            let d = self.model_lock();
            (0..shards)
                .map(|s| {
                    let dealt = d.tickets.get(&(sku.clone(), s)).copied().unwrap_or(0);
                    let bytes = (dealt / 1024 + 1) as usize * 300;
                    (format!("QP#{sku}#{s}"), read_half_units(bytes))
                })
                .collect()
        };
        self.read("Query", blocks).await
    }

    /// A transaction naming `names`, as `DynamoStore::transact` sends it:
    /// conflicts retried with the shared backoff for [`CONFLICT_BUDGET`];
    /// `condition` decides, when it is applied, whether it holds.
    async fn transact(
        &self,
        names: &[Name],
        units: &[(String, u32)],
        retry: Retry,
        mut condition: impl FnMut(&mut Dynamo) -> bool,
    ) -> Result<Sent> {
        let started = Instant::now();
        let (wcu, in_flight) = (self.model.partition_wcu, self.model.in_flight);
        let mut attempt = 0;
        loop {
            let applied = self
                .sdk("TransactWriteItems", |d| {
                    d.admit(names, units, true, in_flight, wcu)?;
                    let holds = condition(d);
                    if !holds {
                        d.counts.conditions += 1;
                    }
                    Ok(holds)
                })
                .await?;
            match applied {
                Ok(holds) => {
                    sleep(in_flight).await;
                    return Ok(if holds {
                        Sent::Applied
                    } else {
                        Sent::Cancelled
                    });
                }
                Err(()) => {
                    sleep(self.model.read).await;
                    if retry == Retry::Never {
                        return Ok(Sent::Conflicted);
                    }
                    attempt += 1;
                    if attempt >= MAX_ATTEMPTS && started.elapsed() >= CONFLICT_BUDGET {
                        return Err(StoreError::Contention("TransactWriteItems".into()));
                    }
                    sleep(backoff(attempt - 1, getrandom::u64().unwrap_or(0))).await;
                }
            }
        }
    }

    fn model_lock(&self) -> std::sync::MutexGuard<'_, Dynamo> {
        self.dynamo.lock().expect("model lock")
    }

    /// A join as the DynamoDB store makes it: read every shard's counter,
    /// then one transaction conditional on the own shard's counter, sent
    /// once; dealt again (with the shared backoff) when another join took
    /// the ticket or was in flight on it, for [`JOIN_BUDGET`].
    async fn modelled_join(&self, new: NewRequest) -> Result<JoinOutcome> {
        let shard = new.id.shard(new.shards);
        let sku = new.sku.clone();
        let ticket = (sku.clone(), shard);
        let started = Instant::now();
        for attempt in 0.. {
            if attempt >= MAX_ATTEMPTS && started.elapsed() >= JOIN_BUDGET {
                break;
            }
            self.model_lock().counts.join_attempts += 1;
            // Every shard's counter, one BatchGetItem.
            let counters = (0..new.shards.max(shard + 1))
                .map(|s| (format!("QT#{sku}#{s}"), read_half_units(0)))
                .collect();
            self.read("BatchGetItem", counters).await?;
            let seen = self.model_lock().tickets.get(&ticket).copied().unwrap_or(0);
            let mut names = vec![
                name(format!("QT#{sku}#{shard}"), "_"),
                name(format!("QK#{sku}#{shard}"), format!("{seen:012}")),
                name(format!("OPTOUT#{}", new.contact_key), "_"),
                name(format!("CONTACT#{}", new.contact_key), format!("SKU#{sku}")),
                name(format!("REQ#{}", new.id), "REQ"),
            ];
            if new.confirm_window_ms.is_some() {
                // Unconfirmed: the pending-confirmation marker and notify's wake.
                names.push(name(
                    format!("CONFIRM#{sku}#{}", new.id.shard(SPREAD)),
                    new.id.to_string(),
                ));
                names.push(name(
                    format!("WAKE#{sku}#{}", wake_partition(&new.id.to_string())),
                    format!("{}#confirm#{}", new.now, new.id),
                ));
            } else {
                names.push(name(format!("Q#{sku}#{shard}"), new.id.to_string()));
                names.push(name(
                    format!("QP#{sku}#{shard}"),
                    format!("{:012}", seen / 1024),
                ));
            }
            let units = join_units(&new, &names, seen);
            let sent = self
                .transact(&names, &units, Retry::Never, |d| {
                    let next = d.tickets.entry(ticket.clone()).or_default();
                    if *next != seen {
                        return false;
                    }
                    *next += 1;
                    true
                })
                .await?;
            match sent {
                Sent::Applied => {
                    let outcome = self.inner.join(new.clone()).await?;
                    if !matches!(outcome, JoinOutcome::Joined(_)) {
                        // The place or the opt-out was there: no ticket taken.
                        *self.model_lock().tickets.entry(ticket).or_default() -= 1;
                    }
                    return Ok(outcome);
                }
                Sent::Cancelled | Sent::Conflicted => {
                    sleep(backoff(attempt, getrandom::u64().unwrap_or(0))).await;
                }
            }
        }
        Err(StoreError::Contention(format!(
            "CONTACT#{}",
            new.contact_key
        )))
    }

    /// A click as the DynamoDB store takes it: one unit from its own hold
    /// slot; a dry slot reads every slot and refills from the fullest, for
    /// [`CLICK_BUDGET`].
    async fn modelled_hold(
        &self,
        token: &ReserveToken,
        hold: HoldId,
        shards: u16,
        now: Millis,
        window: Window,
    ) -> Result<HoldOutcome> {
        let id = token.request();
        let sku = token.sku().clone();
        let own = usize::from(id.shard(shards));
        let mut from = Refill { from: own, take: 1 };
        let (mut attempt, mut dry) = (0u32, 0u32);
        let started = Instant::now();
        while (attempt < MAX_ATTEMPTS && dry < DRY_ATTEMPTS) || started.elapsed() < CLICK_BUDGET {
            self.model_lock().counts.click_attempts += 1;
            let names = hold_names(&id, &sku, from.from, &hold);
            let units = hold_units(&names);
            let take = from;
            let sent = match self
                .transact(&names, &units, Retry::Conflicts, |d| {
                    let slots = d.slots.entry(sku.clone()).or_insert_with(|| vec![0]);
                    slots.get(take.from).is_some_and(|v| *v >= take.take)
                })
                .await
            {
                Ok(sent) => sent,
                Err(StoreError::Contention(_)) if started.elapsed() < CLICK_BUDGET => {
                    attempt += 1;
                    continue;
                }
                Err(e) => return Err(e),
            };
            match sent {
                // A click's conflicts are sent again inside `transact`.
                Sent::Conflicted => attempt += 1,
                Sent::Applied => {
                    let outcome = self
                        .inner
                        .take_hold(token, hold, shards, now, window)
                        .await?;
                    if matches!(outcome, HoldOutcome::Held { .. }) {
                        self.took(&sku, take, own);
                    }
                    return Ok(outcome);
                }
                Sent::Cancelled => {
                    // The request's own condition is read first: a second
                    // tap, or an offer that ended, is answered as it is.
                    let offered = self.inner.request(&id).await?.is_some_and(|r| {
                        matches!(r.state, restock_core::RequestState::Offered { .. })
                    });
                    if !offered {
                        return self.inner.take_hold(token, hold, shards, now, window).await;
                    }
                    dry += 1;
                    if dry > 2 {
                        sleep(backoff((dry / 4).min(3), getrandom::u64().unwrap_or(0))).await;
                    }
                    let slots = self.read_slots(&sku).await;
                    match allowance::refill(&slots, own) {
                        Some(refill) if dry == 1 => from = refill,
                        Some(refill) => {
                            from = Refill {
                                from: refill.from,
                                take: 1,
                            }
                        }
                        // None left: the store's own answer (sold out again).
                        None => {
                            return self.inner.take_hold(token, hold, shards, now, window).await;
                        }
                    }
                }
            }
        }
        Err(StoreError::Contention(format!("REQ#{id}")))
    }

    /// A held unit taken from the slot it came from: `take` units left it,
    /// one held and the rest moved to the request's own slot.
    fn took(&self, sku: &Sku, take: Refill, own: usize) {
        let mut d = self.model_lock();
        let slots = d.slots.entry(sku.clone()).or_default();
        slots[take.from] -= take.take;
        if let Some(mine) = slots.get_mut(own) {
            *mine += take.take - 1;
        }
    }

    /// Every hold slot of `sku`, in one consistent read.
    async fn read_slots(&self, sku: &Sku) -> Vec<i64> {
        sleep(self.model.read).await;
        self.model_lock()
            .slots
            .get(sku)
            .cloned()
            .unwrap_or_default()
    }
}

/// The write units of a join's transaction on `names`: each item's size
/// as the DynamoDB store writes it (the request and its queue entry from
/// `restock_store_dynamo::sizes`, with a ticket marking every shard as
/// `seen`; the rest under a KB), twice, and its `due` index entry once.
fn join_units(new: &NewRequest, names: &[Name], seen: u64) -> Vec<(String, u32)> {
    let mut r = new.clone().into_request();
    let mark = restock_store::model::ShardMark {
        ahead: seen,
        dealt: seen,
    };
    r.ticket = Some(restock_store::model::Ticket {
        number: seen,
        shards: vec![mark; usize::from(new.shards)],
    });
    let items = restock_store_dynamo::sizes::join_items(&r);
    let mut units: Vec<(String, u32)> = names
        .iter()
        .map(|(pk, _)| {
            let bytes = if pk.starts_with("REQ#") {
                items.request
            } else if pk.starts_with("Q#") {
                items.queue_entry.unwrap_or(0)
            } else {
                0
            };
            (pk.clone(), 2 * write_units(bytes))
        })
        .collect();
    units.extend(items.due.map(|(pk, bytes)| (pk, write_units(bytes))));
    units
}

/// The write units of a click's transaction on `names`: small items, and
/// the request's (under 2 KB), twice each.
fn hold_units(names: &[Name]) -> Vec<(String, u32)> {
    names
        .iter()
        .map(|(pk, _)| (pk.clone(), if pk.starts_with("REQ#") { 4 } else { 2 }))
        .collect()
}

/// The items a click's transaction names: the request, the hold slot it
/// takes from, the hold, and the unit markers.
fn hold_names(id: &RequestId, sku: &Sku, slot: usize, hold: &HoldId) -> [Name; 5] {
    [
        name(format!("REQ#{id}"), "REQ"),
        name(format!("HS#{sku}#{slot}"), "_"),
        name(format!("HOLD#{hold}"), "_"),
        name(
            format!("UNITS#{sku}#{}", id.shard(SPREAD)),
            format!("0#{id}"),
        ),
        name(
            format!("UNITS#{sku}#{}", id.shard(SPREAD)),
            format!("1#{id}"),
        ),
    ]
}
