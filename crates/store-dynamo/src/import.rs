//! Importing a waitlist: idempotent, resumable, safe beside live joins.
//!
//! An import of one SKU's requests first claims, in one transaction, an
//! import marker (`QI#<sku>`: the import's fingerprint and how many of its
//! requests are in) and every shard's ticket counter, at the number of
//! tickets the import deals there. From then on a live join takes the
//! tickets after the imported ones. The requests then go in, in join order,
//! a chunk per transaction: each request, its place, its queue entry, its
//! ticket log entry, the presence bits of the chunk (an `ADD`, which
//! commutes with live joins' bits) and the marker's count moved on
//! (conditional on where it was). So a chunk is in exactly once: an import
//! cut short and run again, or run twice at once, continues from the marker,
//! and never writes a request again (which would undo what happened to it
//! since, a wave's offer or a cancel).

use std::collections::BTreeMap;

use restock_core::Sku;
use restock_store::port::Result;
use restock_store::{Counted, Request, ShardMark, StoreError, Ticket};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::tickets::{Presence, fit, log_item};
use crate::tx::{Change, Outcome, PutIf};

/// What an import of one SKU did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Imported {
    /// Requests this run wrote.
    pub written: usize,
    /// Requests an earlier run of the same import had written when this
    /// one started (one running beside it may write some after).
    pub already: usize,
}

/// `requests` (one SKU's, in join order) with their tickets dealt per shard
/// from 0, and each shard's counter afterwards (shards with no ticket are
/// left out).
fn deal(requests: &mut [Request], shards: u16) -> Vec<(u16, u64, restock_core::JoinKey)> {
    requests.sort_by_key(|r| r.key);
    let mut next = vec![0u64; usize::from(shards)];
    let mut last = vec![None; usize::from(shards)];
    for r in requests.iter_mut() {
        // Walking in join order, each shard's count so far is exactly how
        // many of its tickets joined earlier.
        let marks = next
            .iter()
            .map(|&n| ShardMark { ahead: n, dealt: n })
            .collect();
        let shard = usize::from(r.shard);
        r.ticket = Some(Ticket {
            number: next[shard],
            shards: marks,
        });
        next[shard] += 1;
        last[shard] = Some(r.key);
    }
    (0..shards)
        .filter_map(|sh| last[usize::from(sh)].map(|k| (sh, next[usize::from(sh)], k)))
        .collect()
}

/// Names one import: the same requests give the same fingerprint.
fn fingerprint(requests: &[Request]) -> String {
    let id = |r: Option<&Request>| r.map(|r| r.id.to_string()).unwrap_or_default();
    format!(
        "{}:{}:{}",
        requests.len(),
        id(requests.first()),
        id(requests.last())
    )
}

impl DynamoStore {
    /// Imports one SKU's waiting requests (see the module's description).
    pub(crate) async fn import_sku(
        &self,
        sku: &Sku,
        mut requests: Vec<Request>,
        shards: u16,
        stop_after: Option<usize>,
    ) -> Result<Imported> {
        let shards = requests
            .iter()
            .map(|r| r.shard + 1)
            .max()
            .unwrap_or(1)
            .max(shards);
        let counters = deal(&mut requests, shards);
        let print = fingerprint(&requests);
        let mut done = self.claim_import(sku, &print, &counters).await?;
        let mut imported = Imported {
            written: 0,
            already: done,
        };
        let mut chunks = 0;
        while done < requests.len() && stop_after.is_none_or(|stop| chunks < stop) {
            let rest = &requests[done..];
            // The marker, and four items per request.
            let chunk = &rest[..fit(rest, 1, 4)];
            match self.import_chunk(sku, &print, done, chunk).await? {
                Some(found) => done = found,
                None => {
                    done += chunk.len();
                    imported.written += chunk.len();
                }
            }
            chunks += 1;
        }
        Ok(imported)
    }

    /// Claims the SKU for the import, with its ticket counters, or finds the
    /// claim an earlier run of the same import made: answers how many of its
    /// requests are in.
    async fn claim_import(
        &self,
        sku: &Sku,
        print: &str,
        counters: &[(u16, u64, restock_core::JoinKey)],
    ) -> Result<usize> {
        let mut tx = self.tx();
        let mut marker = import_key(sku);
        marker.insert(IMPORT.into(), s(print));
        marker.insert(IMPORTED.into(), n(0));
        tx.put("marker", marker, PutIf::Absent)?;
        for (shard, next, last) in counters {
            tx.update(
                "counter",
                Change::on(ticket_counter_key(sku, *shard))
                    .set(NEXT_TICKET, n(next))
                    .set(LAST_KEY, s(last.to_string()))
                    .when(format!("attribute_not_exists({NEXT_TICKET})")),
            )?;
        }
        match self.transact(tx).await? {
            Outcome::Done => Ok(0),
            Outcome::Cancelled(c) if c.failed("marker") => {
                let found = c.item("marker").unwrap_or_default();
                if opt_s(&found, IMPORT) == Some(print) {
                    Ok(opt_n(&found, IMPORTED)?.unwrap_or(0))
                } else {
                    Err(StoreError::Refused(format!(
                        "{sku} has had another import ({}): an import goes into an item nobody has joined yet",
                        opt_s(&found, IMPORT).unwrap_or("?")
                    )))
                }
            }
            Outcome::Cancelled(_) => Err(StoreError::Refused(format!(
                "{sku} has a queue already: an import goes into an item nobody has joined yet"
            ))),
        }
    }

    /// Writes one chunk, from the `from`th request of the import: `None`
    /// once written, or how many of its requests are in when another run of
    /// the same import got there first.
    async fn import_chunk(
        &self,
        sku: &Sku,
        print: &str,
        from: usize,
        chunk: &[Request],
    ) -> Result<Option<usize>> {
        let mut tx = self.tx();
        tx.update(
            "marker",
            Change::on(import_key(sku))
                .set(IMPORTED, n(from + chunk.len()))
                .when(format!("{IMPORT} = :print AND {IMPORTED} = :from"))
                .value(":print", s(print))
                .value(":from", n(from)),
        )?;
        let mut presence = Presence::default();
        for r in chunk {
            tx.put("request", request_item(r), PutIf::Absent)?;
            tx.put("place", place_item(r), PutIf::Absent)?;
            tx.put("entry", queue_entry(r), PutIf::Always)?;
            tx.put("ticket-log", log_item(r), PutIf::Always)?;
            presence.arrive(r);
        }
        presence.write(&mut tx, sku)?;
        match self.transact(tx).await? {
            Outcome::Done => {
                // Each sign-up in its item's history on the day it joined.
                let mut days: BTreeMap<(u16, String), (u64, i64)> = BTreeMap::new();
                for r in chunk {
                    let at = r.key.joined_ms;
                    let partition = r.id.shard(crate::table::SPREAD);
                    let day = restock_core::feedback::day_of(at);
                    days.entry((partition, day)).or_insert((0, at)).0 += 1;
                }
                for ((partition, _), (times, at)) in days {
                    self.count_many(sku, partition, Counted::SignUp, at, times)
                        .await;
                }
                Ok(None)
            }
            Outcome::Cancelled(c) if c.failed("marker") => {
                let found = c.item("marker").unwrap_or_default();
                Ok(Some(opt_n(&found, IMPORTED)?.unwrap_or(0)))
            }
            Outcome::Cancelled(c) => {
                let which = chunk
                    .iter()
                    .enumerate()
                    .find(|(i, _)| c.failed_nth("request", *i) || c.failed_nth("place", *i));
                Err(StoreError::Refused(match which {
                    Some((_, r)) => format!(
                        "request {} of the import: it, or its shopper's place for {sku}, is stored already",
                        r.id
                    ),
                    None => format!("a chunk of the import into {sku} was refused"),
                }))
            }
        }
    }
}

/// Groups `requests` by SKU.
pub(crate) fn by_sku(requests: &[Request]) -> BTreeMap<Sku, Vec<Request>> {
    let mut by_sku: BTreeMap<Sku, Vec<Request>> = BTreeMap::new();
    for r in requests {
        by_sku.entry(r.sku.clone()).or_default().push(r.clone());
    }
    by_sku
}
