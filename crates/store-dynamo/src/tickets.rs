//! Positions at constant cost.
//!
//! Counting the queue entries ahead of a request reads every one of them:
//! O(n) items per join and per status call. Instead each shard of a SKU's
//! queue deals tickets in join order (a ticket counter, taken in the join
//! transaction), keeps one presence bit per ticket (set while its request
//! waits, in the same transaction as every move into and out of waiting), and
//! logs which join key holds each ticket. A request's position is then the
//! number of presence bits set below one boundary per shard:
//!
//! - in its own shard, its own ticket (tickets there are dealt in join order);
//! - in another shard, the first ticket whose join key is after its own. The
//!   join read every shard's counter, so it knows the boundary up to the
//!   tickets dealt after that read (its [`ShardMark`]s); a position reads the
//!   ticket log from there on, one ticket per shard per round, until a ticket
//!   is missing or joined later (usually at once: only a join racing this one
//!   in another shard can have an earlier key and a later ticket).
//!
//! So a join reads one item per shard (the counters, one `BatchGetItem`) and
//! a position one presence item per shard plus one ticket per other shard
//! (one `BatchGetItem`), whatever the depth of the queue. `docs/TABLE.md`
//! ("Positions") has the items.

use std::collections::{BTreeMap, HashMap};

use restock_core::{JoinKey, Millis, RequestState, Sku};
use restock_store::port::Result;
use restock_store::{Request, ShardMark, StoreError, Ticket};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::tx::{Change, PutIf, Tx};

/// Tickets per presence bitmap (one DynamoDB number holds 64 bits exactly).
const BLOCK: u64 = 64;

/// The presence attribute and bit of ticket `t`.
fn bit(t: u64) -> (u64, i128) {
    (t / BLOCK, 1i128 << (t % BLOCK))
}

fn block_attr(block: u64) -> String {
    format!("{PRESENCE_BLOCK}{block}")
}

/// Presence changes to write in one transaction: per shard, per block, the
/// bits to set (positive) and clear (negative). A bit is only ever set while
/// clear and cleared while set, because every change rides in the same
/// transaction as the request's own conditional move into or out of waiting,
/// so `ADD` of the bit's value is an exact OR / AND-NOT.
#[derive(Debug, Default)]
pub(crate) struct Presence {
    by_shard: BTreeMap<u16, BTreeMap<u64, i128>>,
}

impl Presence {
    /// The change of `r` starting to wait.
    pub(crate) fn arriving(r: &Request) -> Self {
        let mut p = Self::default();
        p.arrive(r);
        p
    }

    /// The change of `r` no longer waiting.
    pub(crate) fn leaving(r: &Request) -> Self {
        let mut p = Self::default();
        p.leave(r);
        p
    }

    /// `r` starts waiting.
    pub(crate) fn arrive(&mut self, r: &Request) {
        self.change(r, 1);
    }

    /// `r` stops waiting.
    pub(crate) fn leave(&mut self, r: &Request) {
        self.change(r, -1);
    }

    fn change(&mut self, r: &Request, sign: i128) {
        // A request from before tickets has no bit: positions of such a
        // SKU's older requests are counted from the queue instead.
        let Some(ticket) = &r.ticket else { return };
        let (block, value) = bit(ticket.number);
        *self
            .by_shard
            .entry(r.shard)
            .or_default()
            .entry(block)
            .or_default() += sign * value;
    }

    /// Adds one update per shard touched, labelled `presence`.
    pub(crate) fn write(self, tx: &mut Tx<'_>, sku: &Sku) -> Result<()> {
        for (shard, blocks) in self.by_shard {
            let mut change = Change::on(presence_key(sku, shard));
            let mut any = false;
            for (block, delta) in blocks {
                if delta != 0 {
                    change = change.add(&block_attr(block), n(delta));
                    any = true;
                }
            }
            if any {
                tx.update("presence", change)?;
            }
        }
        Ok(())
    }
}

/// How many offers fit one transaction (100 items) on a SKU of `shards`: the
/// SKU counter, three items per offer (the request, its queue entry, its
/// unsent marker) and one presence update per shard the chunk touches.
pub fn offers_per_tx(shards: u16) -> usize {
    (99 - usize::from(shards.clamp(1, 33))) / 3
}

/// A shard's ticket counter as a join read it.
#[derive(Debug, Clone, Copy, Default)]
struct Counter {
    next: u64,
    last: Option<JoinKey>,
}

fn read_counter(item: &Item) -> Result<Counter> {
    Ok(Counter {
        next: opt_n(item, NEXT_TICKET)?.unwrap_or(0),
        last: opt_s(item, LAST_KEY)
            .map(|k| k.parse().map_err(|e| corrupt(item, e)))
            .transpose()?,
    })
}

fn pk_sk(item: &Item) -> (String, String) {
    (
        opt_s(item, PK).unwrap_or_default().to_owned(),
        opt_s(item, SK).unwrap_or_default().to_owned(),
    )
}

impl DynamoStore {
    /// Deals `r` its ticket: reads every shard's counter (one
    /// `BatchGetItem`), moves its join key one millisecond past its own
    /// shard's last ticket if that joined in the same millisecond with a
    /// larger tie-break or on a clock ahead of ours (tickets in a shard
    /// follow join order), and records what it saw of every shard. Adds the
    /// counter update (labelled `ticket`: it fails when another join took
    /// the ticket first, and the join tries again) and the ticket log entry
    /// to `tx`.
    pub(crate) async fn deal_ticket(
        &self,
        tx: &mut Tx<'_>,
        r: &mut Request,
        shards: u16,
        now: Millis,
    ) -> Result<()> {
        let shards = shards.max(r.shard + 1);
        let keys: Vec<Item> = (0..shards)
            .map(|shard| ticket_counter_key(&r.sku, shard))
            .collect();
        let found: HashMap<(String, String), Item> = self
            .get_consistent(keys.clone())
            .await?
            .into_iter()
            .map(|item| (pk_sk(&item), item))
            .collect();
        let counters = keys
            .iter()
            .map(|k| {
                found
                    .get(&pk_sk(k))
                    .map_or(Ok(Counter::default()), read_counter)
            })
            .collect::<Result<Vec<_>>>()?;
        let own = counters[usize::from(r.shard)];
        if let Some(last) = own.last
            && last >= r.key
        {
            r.key.joined_ms = last.joined_ms + 1;
        }
        let mut marks = Vec::with_capacity(counters.len());
        for (shard, counter) in counters.iter().enumerate() {
            let shard = shard as u16;
            let ahead = match counter.last {
                Some(last) if shard != r.shard && last > r.key => {
                    self.tickets_before(&r.sku, shard, counter.next, r.key)
                        .await?
                }
                _ => counter.next,
            };
            marks.push(ShardMark {
                ahead,
                dealt: counter.next,
            });
        }
        r.ticket = Some(Ticket {
            number: own.next,
            shards: marks,
        });
        let taken = Change::on(ticket_counter_key(&r.sku, r.shard))
            .set(NEXT_TICKET, n(own.next + 1))
            .set(LAST_KEY, s(r.key.to_string()));
        tx.update(
            "ticket",
            if own.next == 0 {
                taken.when(format!("attribute_not_exists({NEXT_TICKET})"))
            } else {
                taken
                    .when(format!("{NEXT_TICKET} = :dealt"))
                    .value(":dealt", n(own.next))
            },
        )?;
        tx.put("ticket-log", log_item_at(r, now), PutIf::Always)?;
        Ok(())
    }

    /// Deals tickets to requests being imported (see `import_waiting`): per
    /// SKU and shard in join order, from 0. Answers the requests with their
    /// tickets and what each shard's counter and presence item must hold.
    pub(crate) async fn deal_import(
        &self,
        requests: &[Request],
        shards: u16,
    ) -> Result<(Vec<Request>, Vec<ImportedShard>)> {
        let mut by_sku: BTreeMap<Sku, Vec<Request>> = BTreeMap::new();
        for r in requests {
            by_sku.entry(r.sku.clone()).or_default().push(r.clone());
        }
        let mut out = Vec::with_capacity(requests.len());
        let mut counters = Vec::new();
        for (sku, mut rs) in by_sku {
            let shards = rs
                .iter()
                .map(|r| r.shard + 1)
                .max()
                .unwrap_or(1)
                .max(shards);
            let dealt = self
                .get_consistent((0..shards).map(|sh| ticket_counter_key(&sku, sh)))
                .await?;
            if !dealt.is_empty() {
                return Err(StoreError::Refused(format!(
                    "{sku} has a queue already: an import goes into an item nobody has joined yet"
                )));
            }
            rs.sort_by_key(|r| r.key);
            // Walking in join order, each shard's count so far is exactly
            // how many of its tickets joined earlier.
            let mut next = vec![0u64; usize::from(shards)];
            let mut last = vec![None; usize::from(shards)];
            let mut presence: Vec<BTreeMap<u64, i128>> = vec![BTreeMap::new(); usize::from(shards)];
            for mut r in rs {
                let marks = next
                    .iter()
                    .map(|&n| ShardMark { ahead: n, dealt: n })
                    .collect();
                let shard = usize::from(r.shard);
                let number = next[shard];
                r.ticket = Some(Ticket {
                    number,
                    shards: marks,
                });
                let (block, value) = bit(number);
                *presence[shard].entry(block).or_default() += value;
                next[shard] += 1;
                last[shard] = Some(r.key);
                out.push(r);
            }
            for shard in 0..shards {
                let i = usize::from(shard);
                if let Some(last) = last[i] {
                    counters.push(ImportedShard {
                        sku: sku.clone(),
                        shard,
                        next: next[i],
                        last,
                        presence: std::mem::take(&mut presence[i]),
                    });
                }
            }
        }
        Ok((out, counters))
    }
}

/// What an import leaves in one shard: its counter and presence bits.
#[derive(Debug)]
pub(crate) struct ImportedShard {
    sku: Sku,
    shard: u16,
    next: u64,
    last: JoinKey,
    presence: BTreeMap<u64, i128>,
}

/// Writes each imported shard's counter (only where no join has dealt a
/// ticket since the import read it) and presence bits.
pub(crate) async fn write_import_counters(
    store: &DynamoStore,
    shards: Vec<ImportedShard>,
) -> Result<()> {
    for imported in shards {
        let counter = Change::on(ticket_counter_key(&imported.sku, imported.shard))
            .set(NEXT_TICKET, n(imported.next))
            .set(LAST_KEY, s(imported.last.to_string()))
            .when(format!("attribute_not_exists({NEXT_TICKET})"));
        if !counter.apply(store).await? {
            return Err(StoreError::Refused(format!(
                "{} was joined during the import: its positions are not exact",
                imported.sku
            )));
        }
        // One update per 50 blocks keeps each request small.
        let blocks: Vec<(u64, i128)> = imported.presence.into_iter().collect();
        for part in blocks.chunks(50) {
            let mut change = Change::on(presence_key(&imported.sku, imported.shard));
            for (block, bits) in part {
                change = change.add(&block_attr(*block), n(bits));
            }
            change.apply(store).await?;
        }
    }
    Ok(())
}

/// The ticket log entry of `r`'s ticket.
pub(crate) fn log_item(r: &Request) -> Item {
    log_item_at(r, r.key.joined_ms)
}

fn log_item_at(r: &Request, now: Millis) -> Item {
    let number = r.ticket.as_ref().map_or(0, |t| t.number);
    let mut log = ticket_log_key(&r.sku, r.shard, number);
    log.insert(JOIN_KEY.into(), s(r.key.to_string()));
    log.insert(TTL.into(), ttl(now, FINISHED_TTL_SECS));
    log
}

impl DynamoStore {
    /// How many of a shard's first `dealt` tickets joined before `key`: the
    /// ticket log read newest first until a ticket before `key` (only the
    /// tickets after `key` are read: a join in the same millisecond or on a
    /// clock ahead of ours).
    async fn tickets_before(&self, sku: &Sku, shard: u16, dealt: u64, key: JoinKey) -> Result<u64> {
        let mut start = None;
        loop {
            let page = self
                .query()
                .consistent_read(true)
                .key_condition_expression(format!("{PK} = :q AND {SK} < :t"))
                .expression_attribute_values(":q", s(ticket_log_pk(sku, shard)))
                .expression_attribute_values(":t", s(format!("{dealt:012}")))
                .scan_index_forward(false)
                .set_exclusive_start_key(start)
                .limit(16)
                .send()
                .await
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "Query", e))?;
            for item in page.items() {
                let theirs: JoinKey = get_s(item, JOIN_KEY)?
                    .parse()
                    .map_err(|e| corrupt(item, e))?;
                if theirs < key {
                    let ticket: u64 = get_s(item, SK)?.parse().map_err(|e| corrupt(item, e))?;
                    return Ok(ticket + 1);
                }
            }
            start = page.last_evaluated_key;
            if start.is_none() {
                return Ok(0);
            }
        }
    }

    /// The position of `r` (waiting or unconfirmed, with a ticket): one
    /// `BatchGetItem` of every shard's presence item and the ticket after
    /// each other shard's known boundary, then (rarely) the next tickets of
    /// the shards whose boundary moved.
    pub(crate) async fn ticket_position(
        &self,
        r: &Request,
        ticket: &Ticket,
        shards: u16,
    ) -> Result<usize> {
        debug_assert!(matches!(
            r.state,
            RequestState::Waiting | RequestState::Unconfirmed
        ));
        let shards = shards.max(r.shard + 1).max(ticket.shards.len() as u16);
        let mut bound: Vec<u64> = Vec::with_capacity(usize::from(shards));
        let mut looking: Vec<u16> = Vec::new();
        for shard in 0..shards {
            let mark = ticket.shards.get(usize::from(shard));
            if shard == r.shard {
                bound.push(ticket.number);
                continue;
            }
            let mark = mark.copied().unwrap_or(ShardMark { ahead: 0, dealt: 0 });
            bound.push(mark.ahead);
            // Tickets from `ahead` to `dealt` are known to be later; from
            // `dealt` on (dealt after the join read the shard) they may not be.
            if mark.ahead == mark.dealt {
                looking.push(shard);
            }
        }
        let presence_keys: Vec<Item> = (0..shards).map(|sh| presence_key(&r.sku, sh)).collect();
        let mut keys = presence_keys.clone();
        let mut presence: HashMap<(String, String), Item> = HashMap::new();
        let mut first = true;
        loop {
            keys.extend(
                looking
                    .iter()
                    .map(|&sh| ticket_log_key(&r.sku, sh, bound[usize::from(sh)])),
            );
            if keys.is_empty() {
                break;
            }
            let found: HashMap<(String, String), Item> = self
                .get_consistent(std::mem::take(&mut keys))
                .await?
                .into_iter()
                .map(|item| (pk_sk(&item), item))
                .collect();
            if first {
                for k in &presence_keys {
                    if let Some(item) = found.get(&pk_sk(k)) {
                        presence.insert(pk_sk(k), item.clone());
                    }
                }
                first = false;
            }
            let mut still = Vec::new();
            for &sh in &looking {
                let at = &mut bound[usize::from(sh)];
                let Some(item) = found.get(&pk_sk(&ticket_log_key(&r.sku, sh, *at))) else {
                    continue;
                };
                let theirs: JoinKey = get_s(item, JOIN_KEY)?
                    .parse()
                    .map_err(|e| corrupt(item, e))?;
                if theirs < r.key {
                    *at += 1;
                    still.push(sh);
                }
            }
            looking = still;
            if looking.is_empty() {
                break;
            }
        }
        let mut ahead = 0usize;
        for (shard, k) in presence_keys.iter().enumerate() {
            if let Some(item) = presence.get(&pk_sk(k)) {
                ahead += waiting_below(item, bound[shard])?;
            }
        }
        Ok(restock_core::queue::position(ahead))
    }
}

/// How many presence bits below ticket `bound` are set in `item`.
fn waiting_below(item: &Item, bound: u64) -> Result<usize> {
    let (last_block, _) = bit(bound);
    let mut count = 0usize;
    for (name, value) in item {
        let Some(block) = name
            .strip_prefix(PRESENCE_BLOCK)
            .and_then(|b| b.parse::<u64>().ok())
        else {
            continue;
        };
        if block > last_block {
            continue;
        }
        let bits: u64 = value
            .as_n()
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| corrupt(item, format!("{name} is not a bitmap")))?;
        let bits = if block == last_block {
            bits & ((1u64 << (bound % BLOCK)) - 1)
        } else {
            bits
        };
        count += bits.count_ones() as usize;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_below_a_bound_are_counted_across_blocks() {
        let mut item = Item::new();
        item.insert(PK.into(), s("QP#X#0"));
        item.insert("b0".into(), n(u64::MAX));
        item.insert("b1".into(), n(0b1011u64));
        item.insert("b2".into(), n(1u64 << 63));
        assert_eq!(waiting_below(&item, 0).unwrap(), 0);
        assert_eq!(waiting_below(&item, 64).unwrap(), 64);
        assert_eq!(waiting_below(&item, 65).unwrap(), 65);
        assert_eq!(waiting_below(&item, 66).unwrap(), 66);
        assert_eq!(waiting_below(&item, 67).unwrap(), 66);
        assert_eq!(waiting_below(&item, 68).unwrap(), 67);
        assert_eq!(waiting_below(&item, 191).unwrap(), 67);
        assert_eq!(waiting_below(&item, 192).unwrap(), 68);
        assert_eq!(waiting_below(&item, 10_000).unwrap(), 68);
    }

    #[test]
    fn a_chunk_of_offers_fits_one_transaction() {
        for shards in [1u16, 2, 16, 33, 64] {
            let per = offers_per_tx(shards);
            let touched = per.min(usize::from(shards));
            assert!(1 + 3 * per + touched <= 100, "{shards} shards: {per}");
            assert!(per >= 22);
        }
        assert_eq!(offers_per_tx(1), 32);
    }
}
