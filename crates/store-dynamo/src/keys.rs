//! Every item's key: the partition and sort keys of each record restock
//! keeps, and the fixed keys of its singletons (attribute names in
//! [`crate::attr`], the layout in docs/TABLE.md).

use std::collections::HashMap;

use restock_core::{ContactKey, HoldId, RequestId, Sku};

use crate::Item;
use crate::attr;
use crate::codec::s;
use crate::table::{DUE_SHARDS, SPREAD, WAKE_PK_PREFIX};

pub(crate) fn request_pk(id: &RequestId) -> String {
    format!("REQ#{id}")
}
pub(crate) fn sku_pk(sku: &Sku) -> String {
    format!("SKU#{sku}")
}
pub(crate) fn place_pk(contact: &ContactKey) -> String {
    format!("CONTACT#{contact}")
}
pub(crate) fn optout_pk(contact: &ContactKey) -> String {
    format!("OPTOUT#{contact}")
}
/// A contact's told markers (`sk`: the SKU): when it was last sent a
/// notice for each item, for assisted revenue.
pub(crate) fn told_pk(contact: &ContactKey) -> String {
    format!("TOLD#{contact}")
}
/// The orders of an item counted as assisted (`sk`: the order).
pub(crate) fn assisted_pk(sku: &Sku) -> String {
    format!("ASSIST#{sku}")
}
/// How long a told marker is kept: the longest attribution window.
pub(crate) const TOLD_TTL_SECS: i64 = 90 * 86_400;
/// The key of an address's day: present while a confirmation sent to it
/// is under a day old and it has not confirmed.
pub(crate) fn asked_key(contact: &ContactKey) -> Item {
    key(format!("ASKED#{contact}"), ONE_SK)
}
pub(crate) fn delivery_pk(id: &str) -> String {
    format!("DELIVERY#{id}")
}
pub(crate) fn hold_pk(hold: &HoldId) -> String {
    format!("HOLD#{hold}")
}
/// The partition of the wake `discriminator` names, one of [`SPREAD`].
pub(crate) fn wake_pk(sku: &Sku, discriminator: &str) -> String {
    format!(
        "{WAKE_PK_PREFIX}{sku}#{}",
        crate::table::wake_partition(discriminator)
    )
}
/// Every partition of a SKU's wakes.
pub(crate) fn wake_pks(sku: &Sku) -> impl Iterator<Item = String> {
    let sku = sku.clone();
    (0..SPREAD).map(move |p| format!("{WAKE_PK_PREFIX}{sku}#{p}"))
}
pub(crate) fn queue_pk(sku: &Sku, shard: u16) -> String {
    format!("Q#{sku}#{shard}")
}
/// A shard's ticket counter: `nx` (the next ticket), `lk` (the last ticket's join key).
pub(crate) fn ticket_counter_key(sku: &Sku, shard: u16) -> Item {
    key(format!("QT#{sku}#{shard}"), ONE_SK)
}
/// A shard's ticket log: one item per ticket dealt (`jk`: its join key), so a
/// position can read "who holds ticket t" by key.
pub(crate) fn ticket_log_pk(sku: &Sku, shard: u16) -> String {
    format!("QK#{sku}#{shard}")
}
pub(crate) fn ticket_log_key(sku: &Sku, shard: u16, ticket: u64) -> Item {
    key(ticket_log_pk(sku, shard), format!("{ticket:012}"))
}
/// A shard's presence blocks, one item per 1,024 tickets (see
/// [`presence_block_key`]).
pub(crate) fn presence_pk(sku: &Sku, shard: u16) -> String {
    format!("QP#{sku}#{shard}")
}
/// Presence block `block` of a shard: bit `t % 64` of word `b<(t % 1024) / 64>`
/// is set while the request holding ticket `t = 1024 × block + …` waits; `n`
/// counts the bits set. Sort keys are the block number, zero-padded.
pub(crate) fn presence_block_key(sku: &Sku, shard: u16, block: u64) -> Item {
    key(presence_pk(sku, shard), format!("{block:012}"))
}
/// A SKU's import marker (see `import`).
pub(crate) fn import_key(sku: &Sku) -> Item {
    key(format!("QI#{sku}"), ONE_SK)
}
/// One of a SKU's hold slots: `fr`, its share of the hold allowance.
pub(crate) fn hold_slot_key(sku: &Sku, slot: usize) -> Item {
    key(format!("HS#{sku}#{slot}"), ONE_SK)
}
/// Which marker a live unit has under `UNITS#<sku>#<p>` (see [`unit_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    /// `0#<id>`: an offer whose notice is not claimed (from the wave, and
    /// again when a claim is given back): what re-arming reads.
    Unsent,
    /// `1#<id>`: an offer whose notice was claimed, or a hold.
    Claimed,
}

/// The key of a live unit's marker: every offered or held request has
/// exactly one, written and deleted in the same transaction as each move
/// into, within and out of offered and held, so a strongly consistent read
/// of the partitions names every live unit of the SKU (reconcile's recount;
/// re-arming reads the unsent ones), never through a lagging index. A
/// request's markers are in partition `id.shard(SPREAD)`.
pub(crate) fn unit_key(sku: &Sku, id: &RequestId, marker: Marker) -> Item {
    key(unit_pk(sku, id.shard(SPREAD)), unit_sk(id, marker))
}
pub(crate) fn unit_sk(id: &RequestId, marker: Marker) -> String {
    format!("{}{id}", unit_prefix(marker))
}
pub(crate) fn unit_prefix(marker: Marker) -> &'static str {
    match marker {
        Marker::Unsent => "0#",
        Marker::Claimed => "1#",
    }
}
pub(crate) fn unit_pk(sku: &Sku, partition: u16) -> String {
    format!("UNITS#{sku}#{partition}")
}
pub(crate) fn unit_marker(sku: &Sku, id: &RequestId, marker: Marker) -> Item {
    let mut item = unit_key(sku, id, marker);
    item.insert(attr::REQUEST_ID.into(), s(id.to_string()));
    item
}
/// The key of an unconfirmed sign-up's pending confirmation: present from
/// the sign-up until notify claims its confirmation for sending, read
/// strongly consistent like the unsent markers.
pub(crate) fn confirm_key(sku: &Sku, id: &RequestId) -> Item {
    key(confirm_pk(sku, id.shard(SPREAD)), id.to_string())
}
pub(crate) fn confirm_pk(sku: &Sku, partition: u16) -> String {
    format!("CONFIRM#{sku}#{partition}")
}
pub(crate) fn confirm_marker(sku: &Sku, id: &RequestId) -> Item {
    let mut item = confirm_key(sku, id);
    item.insert(attr::REQUEST_ID.into(), s(id.to_string()));
    item
}
/// The key of an unconfirmed sign-up's marker: present from the sign-up
/// until it is confirmed, ends or runs out, so the team's figures count the
/// sign-ups still to confirm with a `Query` (one of [`SPREAD`] partitions).
pub(crate) fn unconfirmed_key(sku: &Sku, id: &RequestId) -> Item {
    key(unconfirmed_pk(sku, id.shard(SPREAD)), id.to_string())
}
pub(crate) fn unconfirmed_pk(sku: &Sku, partition: u16) -> String {
    format!("UNCONFIRMED#{sku}#{partition}")
}
/// The partition of an item's history ([`restock_store::ItemHistory`])
/// request `id`'s moments are counted in: one of [`SPREAD`], so a drop's
/// clicks spread their counts as they spread everything else. Its items
/// are `D#<day>` (a UTC day's figures) and `R#<restock>` (a restock's).
pub(crate) fn history_pk(sku: &Sku, partition: u16) -> String {
    format!("HISTORY#{sku}#{partition}")
}
/// The sort key of a UTC day's figures in a history partition.
pub(crate) fn history_day_sk(day: &str) -> String {
    format!("D#{day}")
}
/// The sort key of a restock's figures in a history partition.
pub(crate) fn history_restock_sk(episode: u32) -> String {
    format!("R#{episode:010}")
}
/// The sender's pause (the circuit breaker): one item.
pub(crate) const SENDER_PK: &str = "SENDER";
pub(crate) const PAUSE_SK: &str = "PAUSE";
/// The account-wide send schedule: the next free slot (`SENDER`, `PACE`).
pub(crate) const PACE_SK: &str = "PACE";
/// The partition of the stock delivery sources heard from (`sk` = source).
pub(crate) const HEARD_PK: &str = "HEARD";
pub(crate) fn due_pk(id: &RequestId) -> String {
    format!("DUE#{}", id.tie_break() % u64::from(DUE_SHARDS))
}

pub(crate) const STATE_SK: &str = "STATE";
/// An item's wake for shoppers passed over asleep (`SKU#<sku>`,
/// `SLEEPERS`), listed in the `due` index under [`SLEEPERS_DUE_PK`].
pub(crate) const SLEEPERS_SK: &str = "SLEEPERS";
/// The `due` index partition of the sleepers' wakes (one item per SKU at most).
pub(crate) const SLEEPERS_DUE_PK: &str = "SLEEPERS";
pub(crate) const CATALOGUE_SK: &str = "CATALOG";
/// The partition listing every catalogue entry (sort key: the SKU).
pub(crate) const CATALOGUE_PK: &str = "CATALOG";
pub(crate) const REQUEST_SK: &str = "REQ";
pub(crate) const ONE_SK: &str = "_";

pub(crate) fn key(pk: impl Into<String>, sk: impl Into<String>) -> Item {
    HashMap::from([(attr::PK.to_owned(), s(pk)), (attr::SK.to_owned(), s(sk))])
}
