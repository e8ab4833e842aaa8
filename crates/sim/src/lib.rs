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
//! - a partition key takes `partition_wcu` write units a second (an item
//!   write 1 unit, 2 in a transaction); past that, `ThrottlingException`,
//!   which the SDK retries twice (its standard mode: 1 s, then 2 s ceilings,
//!   full jitter) before the store sees the error.
//!
//! A join, a click and a rate-limit count follow the DynamoDB store's own
//! protocol (read the counters, then a conditional transaction; the hold
//! slots and their refill), with its retry policy
//! ([`restock_store::retry`], the same constants and backoff): what they
//! decide is then done by the in-memory store. Everything else costs one
//! read and is done by the in-memory store.
//!
//! ## Layout
//! - this module: the model ([`Model`]) and [`SimStore`]'s modelled
//!   operations (a join, a click, a rate-limit count);
//! - `port`: the store port on [`SimStore`], the rest passed through;
//! - [`drive`]: the runs that drive capture's router at a rate.

pub mod drive;
mod port;

use std::collections::{HashMap, VecDeque};
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

/// DynamoDB's timings and limits.
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// A read's round trip.
    pub read: Duration,
    /// A single-item write's round trip.
    pub write: Duration,
    /// How long a transaction is in flight (its round trip).
    pub in_flight: Duration,
    /// Write units a partition key takes a second.
    pub partition_wcu: u32,
}

impl Default for Model {
    /// DynamoDB's usual figures from a function in the same region: reads
    /// 4 ms, writes 6 ms, transactions 12 ms; 1,000 write units a second per
    /// partition.
    fn default() -> Self {
        Self {
            read: Duration::from_millis(4),
            write: Duration::from_millis(6),
            in_flight: Duration::from_millis(12),
            partition_wcu: 1_000,
        }
    }
}

/// What the model did, for the benchmark's report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Transactions cancelled for a conflict.
    pub conflicts: u64,
    /// Requests refused for a partition's throughput (before the SDK's retries).
    pub throttles: u64,
    /// Transactions cancelled for a failed condition (a ticket or a slot taken).
    pub conditions: u64,
    /// Join transactions sent (every attempt).
    pub join_attempts: u64,
    /// Click transactions sent (every attempt).
    pub click_attempts: u64,
}

/// An item as DynamoDB names it: its partition key and sort key.
type Name = (String, String);

/// Why a request was not applied.
enum Lost {
    Conflict,
    Throttled,
}

#[derive(Default)]
struct Dynamo {
    /// Items a transaction has in flight, until when.
    busy: HashMap<Name, Instant>,
    /// Per partition key, the write units of the last second.
    writes: HashMap<String, VecDeque<(Instant, u32)>>,
    /// Per SKU and shard, the next ticket.
    tickets: HashMap<(Sku, u16), u64>,
    /// Per SKU, its hold slots' allowances.
    slots: HashMap<Sku, Vec<i64>>,
    counts: Counts,
    /// Throttles per partition key.
    throttled: HashMap<String, u64>,
}

impl Dynamo {
    /// Admits a request naming `names` (a transaction when `units` is 2), or
    /// says why not; an admitted transaction is in flight from now.
    fn admit(
        &mut self,
        names: &[Name],
        units: u32,
        in_flight: Duration,
        wcu: u32,
    ) -> std::result::Result<(), Lost> {
        let now = Instant::now();
        let mut per_partition: HashMap<&str, u32> = HashMap::new();
        for (pk, _) in names {
            *per_partition.entry(pk).or_default() += units;
        }
        for (pk, add) in &per_partition {
            let window = self.writes.entry((*pk).to_owned()).or_default();
            while window
                .front()
                .is_some_and(|(at, _)| now.duration_since(*at) >= Duration::from_secs(1))
            {
                window.pop_front();
            }
            if window.iter().map(|(_, u)| u).sum::<u32>() + add > wcu {
                self.counts.throttles += 1;
                *self.throttled.entry((*pk).to_owned()).or_default() += 1;
                return Err(Lost::Throttled);
            }
        }
        let transactional = units == 2;
        if transactional {
            self.busy.retain(|_, until| *until > now);
            if names.iter().any(|n| self.busy.contains_key(n)) {
                self.counts.conflicts += 1;
                return Err(Lost::Conflict);
            }
        }
        for (pk, add) in per_partition {
            self.writes
                .get_mut(pk)
                .expect("counted above")
                .push_back((now, add));
        }
        if transactional {
            for n in names {
                self.busy.insert(n.clone(), now + in_flight);
            }
        }
        Ok(())
    }
}

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

    /// The partition keys throttled most, with how often.
    pub fn hottest(&self, n: usize) -> Vec<(String, u64)> {
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

    /// One single-item write on `item`.
    async fn write_one(&self, item: Name) -> Result<()> {
        let (wcu, in_flight) = (self.model.partition_wcu, self.model.in_flight);
        let _ = self
            .sdk("UpdateItem", |d| {
                d.admit(std::slice::from_ref(&item), 1, in_flight, wcu)
            })
            .await?;
        sleep(self.model.write).await;
        Ok(())
    }

    /// A transaction naming `names`, as `DynamoStore::transact` sends it:
    /// conflicts retried with the shared backoff for [`CONFLICT_BUDGET`];
    /// `condition` decides, when it is applied, whether it holds.
    async fn transact(
        &self,
        names: &[Name],
        retry: Retry,
        mut condition: impl FnMut(&mut Dynamo) -> bool,
    ) -> Result<Sent> {
        let started = Instant::now();
        let (wcu, in_flight) = (self.model.partition_wcu, self.model.in_flight);
        let mut attempt = 0;
        loop {
            let applied = self
                .sdk("TransactWriteItems", |d| {
                    d.admit(names, 2, in_flight, wcu)?;
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
            // The counters, one BatchGetItem.
            sleep(self.model.read).await;
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
            let sent = self
                .transact(&names, Retry::Never, |d| {
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
            let take = from;
            let sent = match self
                .transact(&names, Retry::Conflicts, |d| {
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
