//! A wave of offers, written in chunks: each chunk one transaction with the
//! SKU's counter (guarded by its version, so the free units cannot move
//! under the wave) and each request (guarded on still waiting and not yet
//! offered in this restock).

use std::collections::HashMap;

use restock_core::story::Event;
use restock_core::{
    LinkToken, Millis, Plan, RequestId, RequestState, SkipReason, Sku, plan_offers,
};
use restock_store::port::Result;
use restock_store::{Offer, Random, Request, StoreError, Wave, WaveParams};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::Ended;
use crate::queue::QueueReader;
use crate::tickets::{Presence, fit};
use crate::tx::{Change, MAX_ATTEMPTS, Outcome, PutIf, backoff};

/// What writing a chunk of offers came to.
pub(crate) enum Chunk {
    /// Written (empty when every request dropped out and nothing was),
    /// with the presence blocks it took bits from.
    Done(Vec<Offer>, Vec<Item>),
    /// The SKU moved (another wave, a level change): start over from a fresh read.
    Moved,
}

impl DynamoStore {
    /// Reads the queue oldest-first, just enough for the core to plan `free`
    /// offers: more only when skipped requests left it short.
    pub(crate) async fn plan(
        &self,
        sku: &Sku,
        params: &WaveParams,
        free: u32,
        episode: u32,
        now: Millis,
    ) -> Result<(Vec<Request>, Plan<RequestId>)> {
        let mut reader = QueueReader::new(sku, params.shards, free as usize);
        let mut seen: Vec<Request> = reader.take(self, free as usize).await?;
        let mut sleepers = params.sleepers(now);
        loop {
            // The opt-out is checked as each notice is claimed (I5).
            let candidates = seen
                .iter()
                .map(|r| WaveParams::candidate(r, false, &mut sleepers));
            let plan = plan_offers(free, episode, now, candidates);
            let short = free as usize - plan.offers.len();
            if short == 0 {
                return Ok((seen, plan));
            }
            // Each sleeper passed over was a read that offered nothing: read
            // on in pages that grow with them, so a queue mostly asleep
            // costs a few round trips per shard, not one per unit left.
            let more = reader.take(self, short.max(plan.asleep as usize)).await?;
            if more.is_empty() {
                return Ok((seen, plan));
            }
            seen.extend(more);
        }
    }

    /// Writes one chunk of offers at the SKU's `version`. Requests no longer
    /// waiting (cancelled, opted out, just offered by an index that lagged)
    /// drop out and the rest are written again.
    pub(crate) async fn write_chunk(
        &self,
        sku: &Sku,
        mut chunk: Vec<Pending<'_>>,
        version: u64,
        episode: u32,
        params: &WaveParams,
        now: Millis,
    ) -> Result<Chunk> {
        while !chunk.is_empty() {
            let mut tx = self.tx();
            tx.update(
                "counter",
                Change::on(key(sku_pk(sku), STATE_SK))
                    .set_expr(format!("{OUT} = {OUT} + :n"))
                    .value(":n", n(chunk.len()))
                    .set(VERSION, n(version + 1))
                    .set(TOUCHED, n(now))
                    .when(format!("{VERSION} = :v"))
                    .value(":v", n(version)),
            )?;
            let mut offered = Vec::with_capacity(chunk.len());
            let mut presence = Presence::default();
            for (r, reserve, optout, manage) in &chunk {
                let state = r
                    .state
                    .offer(episode, now, params.offer_window)
                    .map_err(|e| corrupt(&request_item(r), e))?;
                let RequestState::Offered { expires_ms, .. } = state else {
                    unreachable!("offer() gives an offered state")
                };
                tx.update(
                    "offer",
                    offer_change(r, (reserve, optout, manage), episode, expires_ms, now),
                )?;
                tx.delete("entry", queue_entry_key(r))?;
                presence.leave(r);
                tx.put(
                    "unsent",
                    unit_marker(sku, &r.id, Marker::Unsent),
                    PutIf::Always,
                )?;
                offered.push(offer(r, state, episode, (reserve, optout, manage)));
            }
            let left = presence.write(&mut tx, sku)?;
            // No ClientRequestToken of ours: the SDK draws one per call and
            // resends it only with the identical request (its own retries).
            // A token derived from the SKU and version would come back with
            // fresh link secrets or a smaller chunk, which DynamoDB refuses
            // for ten minutes (IdempotentParameterMismatch).
            match self.transact(tx).await? {
                Outcome::Done => return Ok(Chunk::Done(offered, left)),
                Outcome::Cancelled(c) if c.failed("counter") => return Ok(Chunk::Moved),
                Outcome::Cancelled(c) => {
                    let mut i = 0;
                    chunk.retain(|_| {
                        i += 1;
                        !c.failed_nth("offer", i - 1)
                    });
                }
            }
        }
        Ok(Chunk::Done(Vec::new(), Vec::new()))
    }
}

impl DynamoStore {
    /// A wave's offers (see [`NotifyStore::create_offers`]); the presence
    /// blocks its chunks took bits from go to `emptier`.
    pub(crate) async fn offer_wave(
        &self,
        sku: &Sku,
        params: &WaveParams,
        now: Millis,
        random: Random<'_>,
        emptier: &mut Vec<Item>,
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
            let (seen, plan) = self.plan(sku, params, free, stock.episode, now).await?;
            (wave.asleep, wave.wake_at) = (plan.asleep, plan.wake_at);
            let by_id: HashMap<RequestId, &Request> = seen.iter().map(|r| (r.id, r)).collect();
            self.end_skipped(&plan, now, &mut wave).await?;
            let mut chosen: &[&Request] = &plan
                .offers
                .iter()
                .map(|c| by_id[&c.request])
                .collect::<Vec<_>>();
            while !chosen.is_empty() {
                // The SKU counter, and three items per offer.
                let (chunk, rest) = chosen.split_at(fit(chosen.iter().copied(), 1, 3));
                chosen = rest;
                let chunk: Vec<Pending<'_>> = chunk
                    .iter()
                    .map(|r| {
                        (
                            *r,
                            LinkToken::new(sku.clone(), r.id, random()),
                            LinkToken::new(sku.clone(), r.id, random()),
                            LinkToken::new(sku.clone(), r.id, random()),
                        )
                    })
                    .collect();
                match self
                    .write_chunk(sku, chunk, version, stock.episode, params, now)
                    .await?
                {
                    // Every request of the chunk dropped out: nothing was written.
                    Chunk::Done(offered, _) if offered.is_empty() => {}
                    Chunk::Done(offered, left) => {
                        emptier.extend(left);
                        version += 1;
                        wave.offers.extend(offered);
                    }
                    Chunk::Moved => {
                        backoff(attempt).await;
                        continue 'attempts;
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
}

/// A request to offer, with its reserve, opt-out and manage links.
pub(crate) type Pending<'a> = (&'a Request, LinkToken, LinkToken, LinkToken);

impl DynamoStore {
    /// The requests the plan skipped as stale or opted out, ended (one that
    /// moved meanwhile is left as it is).
    async fn end_skipped(
        &self,
        plan: &Plan<RequestId>,
        now: Millis,
        wave: &mut Wave,
    ) -> Result<()> {
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
        Ok(())
    }
}

/// A request's links: reserve, opt-out, manage.
type Links<'a> = (&'a LinkToken, &'a LinkToken, &'a LinkToken);

/// The offer's write to its request: offered in this restock until
/// `expires_ms`, its links' hashes kept, the notice not yet claimed; only
/// while it still waits.
fn offer_change(
    r: &Request,
    (reserve, optout, manage): Links<'_>,
    episode: u32,
    expires_ms: Millis,
    now: Millis,
) -> Change {
    Change::on(key(request_pk(&r.id), REQUEST_SK))
        .set(STATUS, s("offered"))
        .set(EPISODE, n(episode))
        .set(EXPIRES, n(expires_ms))
        .set(LAST_EPISODE, n(episode))
        .set(RESERVE_HASH, s(reserve.secret_hash().to_hex()))
        .add(OPTOUT_HASH, hash_set(&[optout.secret_hash()]))
        .add(INBOX_HASH, hash_set(&[manage.secret_hash()]))
        .set(DUE, n(expires_ms))
        .tell(
            now,
            Event::Offered {
                episode,
                expires_ms,
            },
        )
        .remove(NOTICE)
        .remove_all([REMIND_AT, REMIND_HASH, REMINDED])
        // Waiting is the whole condition: every return to the queue clears
        // `last_epi`, so a waiting request was never offered in this
        // restock (a clause on it could never fail).
        .when(format!("{STATUS} = :waiting"))
        .value(":waiting", s("waiting"))
}

/// The offer as written: the request in its offered state, with its links.
fn offer(r: &Request, state: RequestState, episode: u32, links: Links<'_>) -> Offer {
    let (reserve, optout, manage) = links;
    Offer {
        request: Request {
            state,
            last_offered_episode: Some(episode),
            reserve_hash: Some(reserve.secret_hash()),
            optout_hashes: [r.optout_hashes.as_slice(), &[optout.secret_hash()]].concat(),
            inbox_hashes: [r.inbox_hashes.as_slice(), &[manage.secret_hash()]].concat(),
            notice: None,
            ..r.clone()
        },
        reserve: reserve.clone(),
        optout: optout.clone(),
        manage: manage.clone(),
    }
}
