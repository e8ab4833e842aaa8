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
//! Presence is kept in blocks of 1,024 tickets, one small item each, deleted
//! once empty, so every write a join, leave or offer makes is to items of
//! the same small size however many sign-ups the SKU has had.
//!
//! So a join reads one item per shard (the counters, one `BatchGetItem`) and
//! writes one transaction of fixed-size items; a position reads one ticket
//! per other shard (one `BatchGetItem`) and the presence blocks below its
//! boundary (one `Query` per shard, about one item per 1,024 waiting).
//! `docs/TABLE.md` ("Positions") has the items.

use std::collections::{BTreeMap, HashMap};

use restock_core::{JoinKey, Millis, RequestState, Sku};
use restock_store::port::Result;
use restock_store::{Request, ShardMark, StoreError, Ticket};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::tx::{Change, PutIf, Tx};

/// Tickets per presence word (one DynamoDB number holds 64 bits exactly).
const WORD: u64 = 64;

/// Words per presence block: a block item covers 1,024 tickets and is at
/// most ~300 bytes (1 write unit) whatever the shard's lifetime sign-ups.
const WORDS: u64 = 16;

/// Tickets per presence block.
pub(crate) const BLOCK: u64 = WORD * WORDS;

/// Where ticket `t`'s bit lives: its block, the word in that block, the bit.
fn bit(t: u64) -> (u64, u64, i128) {
    (t / BLOCK, (t % BLOCK) / WORD, 1i128 << (t % WORD))
}

fn word_attr(word: u64) -> String {
    format!("{PRESENCE_WORD}{word}")
}

/// One presence block's changes: per word, the bits to set (positive) and
/// clear (negative), and the net change of its count of set bits.
#[derive(Debug, Default)]
struct BlockChange {
    words: BTreeMap<u64, i128>,
    count: i64,
}

/// Presence changes to write in one transaction: per shard and block, the
/// bits to set and clear. A bit is only ever set while clear and cleared
/// while set, because every change rides in the same transaction as the
/// request's own conditional move into or out of waiting, so `ADD` of the
/// bit's value is an exact OR / AND-NOT, and `ADD` of one to the block's
/// count keeps it the number of bits set. `ADD` creates a block that is not
/// there, so a block deleted once empty (see
/// [`DynamoStore::drop_empty_blocks`]) comes back with the next bit.
#[derive(Debug, Default)]
pub(crate) struct Presence {
    blocks: BTreeMap<(u16, u64), BlockChange>,
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

    fn change(&mut self, r: &Request, sign: i8) {
        // A request from before tickets has no bit: positions of such a
        // SKU's older requests are counted from the queue instead.
        let Some(ticket) = &r.ticket else { return };
        let (block, word, value) = bit(ticket.number);
        let change = self.blocks.entry((r.shard, block)).or_default();
        *change.words.entry(word).or_default() += i128::from(sign) * value;
        change.count += i64::from(sign);
    }

    /// Adds one update per block touched, labelled `presence`. Answers the
    /// keys of the blocks that lost bits (which may now be empty).
    pub(crate) fn write(self, tx: &mut Tx<'_>, sku: &Sku) -> Result<Vec<Item>> {
        let mut emptier = Vec::new();
        for ((shard, block), delta) in self.blocks {
            if delta.count == 0 && delta.words.values().all(|bits| *bits == 0) {
                continue;
            }
            let key = presence_block_key(sku, shard, block);
            if delta.count < 0 {
                emptier.push(key.clone());
            }
            let change = delta
                .words
                .iter()
                .filter(|(_, bits)| **bits != 0)
                .fold(Change::on(key), |c, (word, bits)| {
                    c.add(&word_attr(*word), n(bits))
                })
                .add(PRESENCE_COUNT, n(delta.count));
            tx.update("presence", change)?;
        }
        Ok(emptier)
    }
}

/// How many of `requests`, from the first, fit one transaction (100 items)
/// beside `fixed` items of its own, at `per_request` items each plus one
/// presence update per block they touch. A wave's chunk (the SKU counter;
/// each request, its queue entry and its unit marker) holds 32 offers whose
/// tickets share a block, 27 on 16 shards with a block each.
pub(crate) fn fit<'a>(
    requests: impl IntoIterator<Item = &'a Request>,
    fixed: usize,
    per_request: usize,
) -> usize {
    let mut blocks = std::collections::BTreeSet::new();
    let mut len = 0;
    for r in requests {
        if let Some(ticket) = &r.ticket {
            blocks.insert((r.shard, ticket.number / BLOCK));
        }
        if fixed + per_request * (len + 1) + blocks.len() > 100 {
            break;
        }
        len += 1;
    }
    len
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
}

impl DynamoStore {
    /// Deletes each of these presence blocks that is empty (its count is
    /// zero), so a position never reads blocks nobody waits in. Best effort:
    /// a block a join has written since stays, and one left behind holds
    /// only zeros, which count nothing.
    pub(crate) async fn drop_empty_blocks(&self, mut blocks: Vec<Item>) {
        blocks.sort_by_key(pk_sk);
        blocks.dedup_by_key(|b| pk_sk(b));
        let deletes = blocks.into_iter().map(|key| {
            self.client
                .delete_item()
                .table_name(&self.table)
                .set_key(Some(key))
                .condition_expression(format!("{PRESENCE_COUNT} = :zero"))
                .expression_attribute_values(":zero", n(0))
                .send()
        });
        for result in futures::future::join_all(deletes).await {
            if let Err(e) = result
                && !e
                    .as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception())
            {
                tracing::debug!(error = %aws_smithy_types::error::display::DisplayErrorContext(&e), "an empty presence block was left");
            }
        }
    }
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
    /// `BatchGetItem` of the ticket after each other shard's known boundary,
    /// then (rarely) the next tickets of the shards whose boundary moved,
    /// then the presence blocks below each shard's boundary (a `Query` per
    /// shard, side by side).
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
        while !looking.is_empty() {
            let keys = looking
                .iter()
                .map(|&sh| ticket_log_key(&r.sku, sh, bound[usize::from(sh)]));
            let found: HashMap<(String, String), Item> = self
                .get_consistent(keys)
                .await?
                .into_iter()
                .map(|item| (pk_sk(&item), item))
                .collect();
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
        }
        let counts = futures::future::try_join_all(
            (0..shards).map(|shard| self.waiting_below(&r.sku, shard, bound[usize::from(shard)])),
        )
        .await?;
        let ahead = counts.into_iter().sum();
        Ok(restock_core::queue::position(ahead))
    }
}

impl DynamoStore {
    /// How many of a shard's requests with a ticket below `bound` wait: the
    /// bits set in its presence blocks up to `bound`'s (one consistent
    /// `Query`; blocks are deleted once empty, so it reads about one item
    /// per 1,024 waiting).
    pub(crate) async fn waiting_below(&self, sku: &Sku, shard: u16, bound: u64) -> Result<usize> {
        let (last, _, _) = bit(bound);
        let blocks = self
            .query_all(
                self.query()
                    .consistent_read(true)
                    .key_condition_expression(format!("{PK} = :p AND {SK} <= :b"))
                    .expression_attribute_values(":p", s(presence_pk(sku, shard)))
                    .expression_attribute_values(":b", s(format!("{last:012}"))),
            )
            .await?;
        blocks.iter().map(|b| bits_below(b, bound)).sum()
    }
}

/// How many bits of presence block `item` are set for tickets below `bound`.
fn bits_below(item: &Item, bound: u64) -> Result<usize> {
    let block: u64 = get_s(item, SK)?.parse().map_err(|e| corrupt(item, e))?;
    let mut count = 0usize;
    for (name, value) in item {
        let Some(word) = name
            .strip_prefix(PRESENCE_WORD)
            .and_then(|w| w.parse::<u64>().ok())
        else {
            continue;
        };
        let first = block * BLOCK + word * WORD;
        if first >= bound {
            continue;
        }
        let bits: u64 = value
            .as_n()
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| corrupt(item, format!("{name} is not a bitmap")))?;
        let below = bound - first;
        let bits = if below < WORD {
            bits & ((1u64 << below) - 1)
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
    fn bits_below_a_bound_are_counted_across_words() {
        // Block 2: tickets 2048 to 3071.
        let mut item = presence_block_key(&"X".parse().unwrap(), 0, 2);
        item.insert("b0".into(), n(u64::MAX));
        item.insert("b1".into(), n(0b1011u64));
        item.insert("b15".into(), n(1u64 << 63));
        item.insert(PRESENCE_COUNT.into(), n(68));
        let at = |t: u64| bits_below(&item, 2048 + t).unwrap();
        assert_eq!(bits_below(&item, 0).unwrap(), 0);
        assert_eq!(at(0), 0);
        assert_eq!(at(64), 64);
        assert_eq!(at(65), 65);
        assert_eq!(at(66), 66);
        assert_eq!(at(67), 66);
        assert_eq!(at(68), 67);
        assert_eq!(at(1023), 67);
        assert_eq!(at(1024), 68);
        assert_eq!(at(100_000), 68);
    }

    #[test]
    fn a_ticket_s_bit_is_in_its_block_and_word() {
        assert_eq!(bit(0), (0, 0, 1));
        assert_eq!(bit(63), (0, 0, 1 << 63));
        assert_eq!(bit(64), (0, 1, 1));
        assert_eq!(bit(1023), (0, 15, 1 << 63));
        assert_eq!(bit(1024), (1, 0, 1));
        assert_eq!(bit(1_000_000), (976, 9, 1 << 0));
    }

    #[test]
    fn a_chunk_fits_one_transaction_however_its_tickets_spread() {
        let request = |shard: u16, number: u64| {
            let mut r = crate::testing::waiting_request(
                number as usize,
                &"X".parse().unwrap(),
                0,
                16,
                b"pepper",
            );
            r.shard = shard;
            r.ticket = Some(Ticket {
                number,
                shards: Vec::new(),
            });
            r
        };
        let one_block: Vec<Request> = (0..100).map(|t| request(0, t)).collect();
        assert_eq!(fit(&one_block, 1, 3), 32);
        let sixteen: Vec<Request> = (0..100).map(|t| request((t % 16) as u16, t)).collect();
        assert_eq!(fit(&sixteen, 1, 3), 27);
        // Every ticket in a block of its own (the rest of each block left).
        let spread: Vec<Request> = (0..100).map(|t| request(0, t * BLOCK)).collect();
        assert_eq!(fit(&spread, 1, 3), 24);
        assert_eq!(fit(&spread, 1, 4), 19);
        for rs in [&one_block, &sixteen, &spread] {
            let k = fit(rs.iter(), 1, 3);
            let blocks: std::collections::BTreeSet<_> = rs[..k]
                .iter()
                .map(|r| (r.shard, r.ticket.as_ref().unwrap().number / BLOCK))
                .collect();
            assert!(1 + 3 * k + blocks.len() <= 100);
        }
    }
}
