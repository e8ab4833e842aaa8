//! How an adapter whose writes can lose races retries them: one policy,
//! shared by the DynamoDB store and the simulated one the load benchmarks
//! run on (`crates/sim`), so what the benchmarks measure is what runs.
//!
//! The adapter sleeps; this only says how long and how often.

use std::time::Duration;

/// How many times a lost race is retried before giving up with
/// `Contention` (a transaction keeps trying for [`CONFLICT_BUDGET`] too).
pub const MAX_ATTEMPTS: u32 = 8;

/// How long a transaction keeps retrying lost races (`TransactionConflict`)
/// before answering `Contention`: well inside a function's timeout, long
/// enough for a burst of writes on one item to drain.
pub const CONFLICT_BUDGET: Duration = Duration::from_secs(4);

/// How long a join keeps dealing again after losing its shard's ticket to
/// another join (capture's timeout is 10 s): then 503 with `Retry-After`,
/// nothing written.
pub const JOIN_BUDGET: Duration = Duration::from_secs(6);

/// How long a click keeps trying while it loses races (each loss is another
/// shopper's hold, so the units run out or it gets one): a click ends in a
/// hold or "sold out again", not an error, while the function has time.
pub const CLICK_BUDGET: Duration = Duration::from_secs(8);

/// How long a request's end (a cancel, an opt-out, a forget) keeps going
/// while it loses races to other writers on its presence block and the
/// item's counters: each loss is someone else's progress, and a shopper's
/// cancel during a drop should land, not answer 503.
pub const LEAVE_BUDGET: Duration = Duration::from_secs(8);

/// How many times a click re-reads the hold slots after losing a unit to
/// another click before it gives up with `Contention`.
pub const DRY_ATTEMPTS: u32 = 64;

/// The first backoff ceiling.
const BACKOFF_BASE_MS: u64 = 10;

/// The wait after losing race number `attempt` (from 0): "full jitter", a
/// uniformly random wait up to a ceiling that doubles with each attempt,
/// 10 ms to 160 ms, drawn from `random` (the operating system's random
/// source in production), so clients that collided once (every Lambda
/// sandbox has the same process id) do not collide again in step. The
/// ceiling stays low: a writer that has lost many times must not wait far
/// longer than one that just arrived, or it starves (measured: with 640 ms
/// a join from eight clients on one shard could lose for 6 s).
#[must_use]
pub fn backoff(attempt: u32, random: u64) -> Duration {
    let ceiling = BACKOFF_BASE_MS << attempt.min(4);
    Duration::from_millis(random % (ceiling + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_doubles_to_160_ms() {
        assert_eq!(backoff(0, u64::MAX), Duration::from_millis(u64::MAX % 11));
        assert_eq!(backoff(0, 10), Duration::from_millis(10));
        assert_eq!(backoff(4, 160), Duration::from_millis(160));
        assert_eq!(backoff(9, 160), Duration::from_millis(160));
        assert_eq!(backoff(9, 161), Duration::from_millis(0));
    }
}
