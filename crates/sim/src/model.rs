//! The model of DynamoDB's limits: what a partition key takes and serves
//! each second, transactions in flight, and what the model counted (see
//! the crate's description).

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use restock_core::Sku;
use tokio::time::Instant;

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
    /// Read units (strongly consistent, 4 KB) a partition key serves a second.
    pub partition_rcu: u32,
}

impl Default for Model {
    /// DynamoDB's usual figures from a function in the same region: reads
    /// 4 ms, writes 6 ms, transactions 12 ms; 1,000 write units and 3,000
    /// read units a second per partition.
    fn default() -> Self {
        Self {
            read: Duration::from_millis(4),
            write: Duration::from_millis(6),
            in_flight: Duration::from_millis(12),
            partition_wcu: 1_000,
            partition_rcu: 3_000,
        }
    }
}

/// What the model did, for the benchmark's report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Transactions cancelled for a conflict.
    pub conflicts: u64,
    /// Writes refused for a partition's write units (before the SDK's retries).
    pub throttles: u64,
    /// Reads refused for a partition's read units (before the SDK's retries).
    pub read_throttles: u64,
    /// Write units taken (index entries included).
    pub write_units: u64,
    /// Read units taken, in halves (an eventually consistent read is half a unit).
    pub read_half_units: u64,
    /// Transactions cancelled for a failed condition (a ticket or a slot taken).
    pub conditions: u64,
    /// Join transactions sent (every attempt).
    pub join_attempts: u64,
    /// Click transactions sent (every attempt).
    pub click_attempts: u64,
}

/// An item as DynamoDB names it: its partition key and sort key.
pub(crate) type Name = (String, String);

/// Why a request was not applied.
pub(crate) enum Lost {
    Conflict,
    Throttled,
}

/// The units a partition key took in the last second, as a running sum.
#[derive(Default)]
struct Rate {
    window: VecDeque<(Instant, u32)>,
    sum: u32,
}

impl Rate {
    /// The units of the second up to `now`.
    fn at(&mut self, now: Instant) -> u32 {
        while let Some((at, units)) = self.window.front().copied()
            && now.duration_since(at) >= Duration::from_secs(1)
        {
            self.window.pop_front();
            self.sum -= units;
        }
        self.sum
    }

    fn add(&mut self, now: Instant, units: u32) {
        self.window.push_back((now, units));
        self.sum += units;
    }
}

/// The most units a key took in any one second, and which key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hottest {
    /// Read units, in halves.
    pub read_half_units: u32,
    /// The key read most.
    pub read_key: String,
    /// Write units.
    pub write_units: u32,
    /// The key written most.
    pub write_key: String,
}

#[derive(Default)]
pub(crate) struct Dynamo {
    /// Items a transaction has in flight, until when.
    busy: HashMap<Name, Instant>,
    /// Per partition key, the write units of the last second.
    writes: HashMap<String, Rate>,
    /// Per partition key, the read units (in halves) of the last second.
    reads: HashMap<String, Rate>,
    /// Per SKU and shard, the next ticket.
    pub(crate) tickets: HashMap<(Sku, u16), u64>,
    /// Per SKU, its hold slots' allowances.
    pub(crate) slots: HashMap<Sku, Vec<i64>>,
    pub(crate) counts: Counts,
    /// Throttles per partition key.
    pub(crate) throttled: HashMap<String, u64>,
    pub(crate) hottest: Hottest,
}

impl Dynamo {
    /// Admits a write of `units` per partition key (a transaction naming
    /// `names` when `transactional`), or says why not; an admitted
    /// transaction is in flight from now.
    pub(crate) fn admit(
        &mut self,
        names: &[Name],
        units: &[(String, u32)],
        transactional: bool,
        in_flight: Duration,
        wcu: u32,
    ) -> std::result::Result<(), Lost> {
        let now = Instant::now();
        let mut per_partition: HashMap<&str, u32> = HashMap::new();
        for (pk, add) in units {
            *per_partition.entry(pk).or_default() += add;
        }
        for (pk, add) in &per_partition {
            if self.writes.entry((*pk).to_owned()).or_default().at(now) + add > wcu {
                self.counts.throttles += 1;
                *self.throttled.entry((*pk).to_owned()).or_default() += 1;
                return Err(Lost::Throttled);
            }
        }
        if transactional {
            self.busy.retain(|_, until| *until > now);
            if names.iter().any(|n| self.busy.contains_key(n)) {
                self.counts.conflicts += 1;
                return Err(Lost::Conflict);
            }
        }
        for (pk, add) in per_partition {
            let rate = self.writes.get_mut(pk).expect("counted above");
            rate.add(now, add);
            self.counts.write_units += u64::from(add);
            if rate.sum > self.hottest.write_units {
                self.hottest.write_units = rate.sum;
                self.hottest.write_key = pk.to_owned();
            }
        }
        if transactional {
            for n in names {
                self.busy.insert(n.clone(), now + in_flight);
            }
        }
        Ok(())
    }

    /// Admits a read of `half_units` on `pk`, or throttles it.
    pub(crate) fn admit_read(&mut self, pk: &str, half_units: u32, rcu: u32) -> bool {
        let now = Instant::now();
        let rate = self.reads.entry(pk.to_owned()).or_default();
        if rate.at(now) + half_units > rcu * 2 {
            self.counts.read_throttles += 1;
            *self.throttled.entry(pk.to_owned()).or_default() += 1;
            return false;
        }
        rate.add(now, half_units);
        self.counts.read_half_units += u64::from(half_units);
        if rate.sum > self.hottest.read_half_units {
            self.hottest.read_half_units = rate.sum;
            self.hottest.read_key = pk.to_owned();
        }
        true
    }
}

/// Write units for an item of `bytes` (a unit per started KB).
pub(crate) fn write_units(bytes: usize) -> u32 {
    bytes.div_ceil(1024).max(1) as u32
}

/// Half read units for a strongly consistent read of `bytes` (a unit per
/// started 4 KB).
pub(crate) fn read_half_units(bytes: usize) -> u32 {
    2 * bytes.div_ceil(4096).max(1) as u32
}
