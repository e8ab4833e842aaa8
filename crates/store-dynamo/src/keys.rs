//! Every item's key: the partition and sort keys of each record restock
//! keeps, and the fixed keys of its singletons (attribute names in
//! [`crate::attr`], the rules in docs/TABLE.md).
//!
//! | item | `pk` | `sk` | attributes | lives |
//! |---|---|---|---|---|
//! | settings | `SETTINGS` | `_` | `doc` (the TOML document) | for good |
//! | catalogue entry | `SKU#<sku>` | `CATALOG` | `ent` (JSON) | for good |
//! | catalogue listing | `CATALOG` | `<sku>` | `ent` (the same JSON, written in the same transaction) — `restock stats` and the local storefront list the catalogue with one Query | for good |
//! | platform id map | `SHOPIFY#<inventory_item_id>` / `WOO#<product_id>` | `_` | `sku` | while the entry names the id |
//! | SKU state | `SKU#<sku>` | `STATE` | `stock` (JSON: the newest reading per location, pending sales, in-stock flag, episode, paused, the threshold last applied), `lvl` (always the level `stock` implies), `units_out` (live offers and holds), `hs` (hold slots in use), `bought`, `lapsed`, `drifts` (corrections by reconcile), `rev_<currency>` (what bought holds brought in, thousandths of the unit, where the order gave the item's price), `assisted` and `arev_<currency>` (orders without a hold by a contact told within the attribution window, and what they paid for the item: added in the transaction that writes the assisted order's item), `ver`, `touched`, `phrase_<tag>` and `phrase_epi_<tag>` (the restock's sentence in each language and the restock it was written for; `-` in a tag becomes `_`) | for good |
//! | hold slot | `HS#<sku>#<slot>` | `_` | `fr`: this slot's share of the hold allowance `lvl − held` (see Holds) | for good; slots `0..hs` |
//! | queue entry | `Q#<sku>#<shard>` | join key | the request as it joined (its attributes, no index keys) | while the request waits: written and deleted in the same transaction as every move into and out of waiting |
//! | ticket counter | `QT#<sku>#<shard>` | `_` | `nx` (the next ticket), `lk` (the last ticket's join key) | for good; each join takes the next ticket, conditional on `nx` |
//! | ticket log | `QK#<sku>#<shard>` | ticket (12 digits) | `jk` (the join key holding it) | 400 days (TTL) |
//! | presence block | `QP#<sku>#<shard>` | block `t / 1024` (12 digits) | `b<w>` (`w` = 0–15): bit `t % 64` of `b<(t % 1024) / 64>` is set while ticket `t`'s request waits; `n`: the bits set | while a request of its 1,024 tickets waits: changed (`ADD` of the bit and of ±1 to `n`) in the same transaction as every move into and out of waiting; deleted at `n = 0` (conditional) after the leave or the wave that emptied it, and written again by the next `ADD`. The dashboard's count of the waiting adds up the bits set in every block of each shard (one consistent `Query` a shard) |
//! | import marker | `QI#<sku>` | `_` | `imp` (the import's size, first and last request id), `done` (how many of its requests are in) | for good: a finished import run again writes nothing |
//! | unit marker | `UNITS#<sku>#<p>` (`p`: the request id's partition of 16, `table::SPREAD`) | `0#<request id>` while an offer's notice is unsent, `1#<request id>` once claimed or held | `rid` | while the request is offered or held: exactly one of the two, moved in the same transaction as every move into, within and out of offered and held (reconcile's recount and re-arming read it strongly consistent) |
//! | pending confirmation | `CONFIRM#<sku>#<p>` (`p` as for unit markers; notify reads all 16 side by side) | `<request id>` | `rid` | double opt-in: from the sign-up until notify claims its confirmation for sending; again if the claim is given back |
//! | sign-up to confirm | `UNCONFIRMED#<sku>#<p>` (`p` as for unit markers) | `<request id>` | — | double opt-in: from the sign-up until it is confirmed, ends or runs out, in the same transaction as each; `restock stats` and the dashboard count them (a `Select: COUNT` Query per partition, strongly consistent) |
//! | item history | `HISTORY#<sku>#<p>` (`p` as for unit markers: the request's) | `D#<YYYY-MM-DD>` (a UTC day) / `R#<restock>` (10 digits) | a day's `sign_ups`, `told`, `bought`; a restock's `told`, `held`, `bought`, `lapsed`, `released`, `reminded` and `first_told` (ms) | for good (a few small items per item a day). Each is an `ADD` of its own once the write it counts has committed (the join, a notice recorded as sent, a reminder recorded as sent, a hold, a purchase, a lapse, a hold run out, an import chunk), never in that write's transaction, where it would make every click on an item contend for one of 16 items; a function that dies in between leaves that moment uncounted. The dashboard's item page reads the 16 partitions from the first day it charts (`sk >= D#<day>`, which also takes every `R#`), strongly consistent |
//! | request | `REQ#<request id>` | `REQ` | `rid`, `sku`, `nm`, `ch`, `addr`, `ckey`, `jk` (join key), `shd` (shard), `st` (status), `epi`, `exp`, `hid`, `stale_at`, `last_epi`, `rh`/`oh` (SHA-256 of the reserve/opt-out secrets), `mh` (the joining browser's manage secret), `ih` (set: manage links sent to the inbox), `cfh` (the confirmation link's), `consent` (JSON: wording version, time, keyed hash of the client address, time confirmed), `lg` (the language the shopper is spoken to in, a BCP 47 tag; absent: the shop's default), `rmd_at` (ms: when the offer's one reminder is due; gone once it is claimed or dropped), `rmh` (SHA-256 of the reminder's reserve link secret: it holds as `rh` does), `rmd_id` (the reminder's provider message id), `tz` (the shopper's clock for quiet hours: a tz database name, or a country code for every zone of it; absent: the shop's `time_zone`), `notice`, `tk` (its ticket: `7\|3,5,2-4`, see Positions), `told_at` / `held_at` / `ended_at` (ms: when its notice was accepted, it took a hold, it ended; for exports), `story_<slot>` (JSON: a chapter of its story, set by the write that makes it happen, with no read; see docs/DESIGN.md §7); index attributes below | until 400 days after it ends (`expires_at`); an unconfirmed sign-up is deleted when its confirmation window ends; `restock forget` deletes every request of a contact |
//! | place | `CONTACT#<contact hash>` | `SKU#<sku>` | `rid` | while the request is live |
//! | opt-out | `OPTOUT#<contact hash>` | `_` | `wat`, `via` (the first kept) | for good |
//! | address's day | `ASKED#<contact hash>` | `_` | `rid` (the sign-up whose confirmation was sent), `ask_until` (ms: a day after it was claimed for sending) | double opt-in: written with the claim of each confirmation sent (conditional: absent, `ask_until <= now`, or this sign-up's own); deleted when the address confirms or the claim is given back; TTL after `ask_until` |
//! | rate-limit window | `RATE#<key>`: the client's network (sign-ups), `read:<network>`, `contact:<hash>`, `signups:<sku>:<shard>`, `signups-alerted:…`, `feedback:…`, `inbound:…` (a help text answered), `sms-spend:…`, `unknown-item:<sku>` | window start (ms) | `hits` | TTL a minute after the window ends; one `ADD` a hit |
//! | delivery | `DELIVERY#<source>:<delivery id>` | `_` | — | 7 days (TTL) |
//! | hold pointer | `HOLD#<hold id>` | `_` | `rid`, `sku` | 400 days (TTL) |
//! | send schedule | `SENDER` | `PACE` | `next_send` (ms: the next free slot) | for good; each pass moves it on by the slots it reserves, conditional on the value it read |
//! | mail figures | `MAIL#<YYYY-MM-DD>` | `_` | `sent`, `bounced`, `complained`, `soft_bounced`, `confirm_sent`, `confirmed`, `confirm_expired`, `unknown_items` (stock deliveries for items not in the catalogue) | for good (one small item a day) |
//! | told marker | `TOLD#<contact key>` | `<sku>` | `told` (ms: the contact's latest notice for the item, recorded as sent) | 90 days (TTL: the longest attribution window); `restock forget` deletes a contact's |
//! | assisted order | `ASSIST#<sku>` | `<order id>` (the delivery's id when the order has none) | — (its presence counts the order once) | 400 days (TTL) |
//! | sleepers' wake | `SKU#<sku>` | `SLEEPERS` | `dpk` = `SLEEPERS`, `due` (ms: when the first shopper a wave passed over asleep, with units left over, wakes; an earlier time is never replaced by a later one), `sku` | until the sweep records its wake (a `WAKE#` item of kind `awake`), in one transaction conditional on `due` |
//! | sender pause | `SENDER` | `PAUSE` | `pause_from`, `pause_to`, `why`, `held_skus` (string set) | while sending is paused after a sender-side failure (the circuit breaker; the sweep or `restock resume` deletes it) |
//! | stock source heard | `HEARD` | `shopify` / `woocommerce` / `stock` | `wat` (the latest verified stock delivery), `alerted` (when its silence was reported) | for good |
//! | wake | `WAKE#<sku>#<p>` (`p`: a hash of the discriminator, of 16) | `<ms>#<kind>#<discriminator>` | `sku`, `kind` (`restock`, `top_up`, `freed`, `continue`, `confirm`, `awake`), `epi`, `wat` | 7 days (TTL) |

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use restock_core::{ContactKey, HoldId, RequestId, Sku};

use crate::Item;
use crate::attr;
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
/// The key of an unconfirmed sign-up's pending confirmation: present from
/// the sign-up until notify claims its confirmation for sending, read
/// strongly consistent like the unsent markers.
pub(crate) fn confirm_key(sku: &Sku, id: &RequestId) -> Item {
    key(confirm_pk(sku, id.shard(SPREAD)), id.to_string())
}
pub(crate) fn confirm_pk(sku: &Sku, partition: u16) -> String {
    format!("CONFIRM#{sku}#{partition}")
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
    HashMap::from([
        (attr::PK.to_owned(), AttributeValue::S(pk.into())),
        (attr::SK.to_owned(), AttributeValue::S(sk.into())),
    ])
}
