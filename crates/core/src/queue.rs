//! Queue order: who joined first, across write-sharded queue partitions.
//!
//! A request's place is its [`JoinKey`]: the millisecond it joined, then a
//! tie-break drawn from its random id, so two requests never compare equal
//! and every reader agrees on the order. A hot SKU spreads its queue over
//! several partitions (shards); each shard is read oldest-first and
//! [`merge_oldest_first`] interleaves them into the one true order.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ids::RequestId;

/// A total order on requests: join time in milliseconds, then the tie-break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct JoinKey {
    /// When the request joined, in milliseconds since the Unix epoch.
    pub joined_ms: crate::Millis,
    /// Deterministic tie-break for requests in the same millisecond.
    pub tie: u64,
}

impl JoinKey {
    /// The key of `request`, joining at `joined_ms`.
    pub fn new(joined_ms: crate::Millis, request: &RequestId) -> Self {
        Self {
            joined_ms,
            tie: request.tie_break(),
        }
    }
}

/// The sortable text form (`0001767225600000#00ff...`), used as a sort key:
/// byte order equals queue order for every time from 1970 to the year 2286.
impl fmt::Display for JoinKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:013}#{:016x}", self.joined_ms.max(0), self.tie)
    }
}

/// Why a stored join key could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a join key: {0:?}")]
pub struct JoinKeyError(String);

impl FromStr for JoinKey {
    type Err = JoinKeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || JoinKeyError(s.to_owned());
        let (ms, tie) = s.split_once('#').ok_or_else(err)?;
        if ms.len() != 13 || tie.len() != 16 {
            return Err(err());
        }
        Ok(Self {
            joined_ms: ms.parse().map_err(|_| err())?,
            tie: u64::from_str_radix(tie, 16).map_err(|_| err())?,
        })
    }
}

/// Anything that has a place in the queue.
pub trait Queued {
    /// Its place.
    fn join_key(&self) -> JoinKey;
}

impl Queued for JoinKey {
    fn join_key(&self) -> JoinKey {
        *self
    }
}

/// Interleaves shards that are each oldest-first into one oldest-first
/// sequence. Lazy: reading the first `n` entries pulls about `n` entries from
/// the shards, so a batch never reads the whole queue.
pub fn merge_oldest_first<T, I>(shards: impl IntoIterator<Item = I>) -> impl Iterator<Item = T>
where
    T: Queued,
    I: IntoIterator<Item = T>,
{
    itertools::kmerge_by(shards, |a: &T, b: &T| a.join_key() < b.join_key())
}

/// A request's position: 1 for the front of the line. `ahead` is how many
/// waiting requests have a smaller join key.
pub fn position(ahead: usize) -> usize {
    ahead + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn text_form_sorts_like_the_key() {
        let a = JoinKey {
            joined_ms: 9_999,
            tie: u64::MAX,
        };
        let b = JoinKey {
            joined_ms: 10_000,
            tie: 0,
        };
        assert!(a < b);
        assert!(a.to_string() < b.to_string());
        assert_eq!(a.to_string().parse::<JoinKey>().unwrap(), a);
        assert!("nope".parse::<JoinKey>().is_err());
        // Both halves must have their full width: a stored key was cut.
        assert!("1700000000000#00ab".parse::<JoinKey>().is_err());
        assert!("170000000000#00000000000000ab".parse::<JoinKey>().is_err());
    }

    #[test]
    fn the_front_of_the_line_is_position_one() {
        assert_eq!(position(0), 1);
        assert_eq!(position(3), 4);
    }

    #[test]
    fn same_millisecond_is_broken_by_the_id() {
        let x = RequestId::from_random([1; 16]);
        let y = RequestId::from_random([2; 16]);
        let (kx, ky) = (JoinKey::new(5, &x), JoinKey::new(5, &y));
        assert_ne!(kx, ky);
        assert!(kx < ky);
    }

    proptest! {
        #[test]
        fn merging_shards_equals_sorting_the_union(
            keys in proptest::collection::vec((0i64..1_000, any::<u64>()), 0..300),
            shards in 1usize..17,
        ) {
            let keys: Vec<JoinKey> = keys.into_iter().map(|(joined_ms, tie)| JoinKey { joined_ms, tie }).collect();
            let mut parts = vec![Vec::new(); shards];
            for (i, k) in keys.iter().enumerate() {
                parts[(k.tie as usize ^ i) % shards].push(*k);
            }
            for p in &mut parts { p.sort(); }
            let merged: Vec<JoinKey> = merge_oldest_first(parts).collect();
            let mut sorted = keys.clone();
            sorted.sort();
            prop_assert_eq!(merged, sorted);
        }

        #[test]
        fn text_order_is_key_order(a in (0i64..9_999_999_999_999, any::<u64>()), b in (0i64..9_999_999_999_999, any::<u64>())) {
            let (a, b) = (JoinKey { joined_ms: a.0, tie: a.1 }, JoinKey { joined_ms: b.0, tie: b.1 });
            prop_assert_eq!(a.cmp(&b), a.to_string().cmp(&b.to_string()));
        }
    }
}
