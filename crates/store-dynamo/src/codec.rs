//! Items: how records become DynamoDB attribute maps and back (attribute
//! names in [`crate::attr`]; their keys in `crate::keys`, re-exported here).

use std::str::FromStr;

use aws_sdk_dynamodb::types::AttributeValue;
use restock_core::{
    Channel, Contact, ContactKey, Counters, HoldId, RequestId, RequestState, ShopperName, Sku,
    Status, StockState, TokenHash,
};

use restock_core::Millis;
use restock_core::story::{Chapter, Story};
use restock_store::{Consent, NoticeOutcome, Request, ShardMark, SkuSnapshot, StoreError, Ticket};

use crate::attr;

pub(crate) use crate::Item;
pub(crate) use crate::keys::*;

/// How long finished requests stay readable (status page, opt-out link)
/// before TTL cleans them up.
pub(crate) const FINISHED_TTL_SECS: i64 = 400 * 86_400;
/// How long delivery ids are remembered for dedup: longer than any shop retries.
pub(crate) const DELIVERY_TTL_SECS: i64 = 7 * 86_400;

pub(crate) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub(crate) fn n(v: impl std::fmt::Display) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

// --- keys ------------------------------------------------------------------
// --- reading ---------------------------------------------------------------

pub(crate) fn unit_marker(sku: &Sku, id: &RequestId, marker: Marker) -> Item {
    let mut item = unit_key(sku, id, marker);
    item.insert(attr::REQUEST_ID.into(), s(id.to_string()));
    item
}

pub(crate) fn confirm_marker(sku: &Sku, id: &RequestId) -> Item {
    let mut item = confirm_key(sku, id);
    item.insert(attr::REQUEST_ID.into(), s(id.to_string()));
    item
}

pub(crate) fn get_s<'a>(item: &'a Item, name: &str) -> Result<&'a str, StoreError> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
        .ok_or_else(|| corrupt(item, format!("missing {name}")))
}

pub(crate) fn opt_s<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
}

pub(crate) fn get_n<T: FromStr>(item: &Item, name: &str) -> Result<T, StoreError> {
    opt_n(item, name)?.ok_or_else(|| corrupt(item, format!("missing {name}")))
}

pub(crate) fn opt_n<T: FromStr>(item: &Item, name: &str) -> Result<Option<T>, StoreError> {
    match item.get(name).and_then(|v| v.as_n().ok()) {
        None => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|_| corrupt(item, format!("{name} is not a number"))),
    }
}

pub(crate) fn corrupt(item: &Item, reason: impl ToString) -> StoreError {
    let pk = opt_s(item, attr::PK).unwrap_or("?");
    let sk = opt_s(item, attr::SK).unwrap_or("?");
    StoreError::corrupt(format!("{pk}/{sk}"), reason)
}

fn parse<T: FromStr>(item: &Item, name: &str) -> Result<T, StoreError> {
    get_s(item, name)?
        .parse()
        .map_err(|_| corrupt(item, format!("{name} is malformed")))
}

// --- requests --------------------------------------------------------------

/// The attributes a request's state sets (status, episode, expiry, hold).
pub(crate) fn state_attrs(state: &RequestState) -> Vec<(&'static str, AttributeValue)> {
    let mut attrs = vec![(attr::STATUS, s(state.status().as_str()))];
    match state {
        RequestState::Offered {
            episode,
            expires_ms,
        } => {
            attrs.push((attr::EPISODE, n(episode)));
            attrs.push((attr::EXPIRES, n(expires_ms)));
        }
        RequestState::Held {
            episode,
            hold,
            expires_ms,
        } => {
            attrs.push((attr::EPISODE, n(episode)));
            attrs.push((attr::EXPIRES, n(expires_ms)));
            attrs.push((attr::HOLD, s(hold.to_string())));
        }
        RequestState::Bought { hold } => attrs.push((attr::HOLD, s(hold.to_string()))),
        _ => {}
    }
    attrs
}

pub(crate) fn request_item(r: &Request) -> Item {
    let mut item = key(request_pk(&r.id), REQUEST_SK);
    item.insert(attr::REQUEST_ID.into(), s(r.id.to_string()));
    item.insert(attr::SKU.into(), s(r.sku.as_str()));
    item.insert(attr::NAME.into(), s(r.name.as_str()));
    item.insert(attr::CHANNEL.into(), s(r.contact.channel().as_str()));
    item.insert(attr::ADDRESS.into(), s(r.contact.address()));
    item.insert(attr::CONTACT_KEY.into(), s(r.contact_key.as_str()));
    item.insert(attr::JOIN_KEY.into(), s(r.key.to_string()));
    item.insert(attr::SHARD.into(), n(r.shard));
    item.insert(attr::STALE_AT.into(), n(r.stale_at));
    for (k, v) in state_attrs(&r.state) {
        item.insert(k.into(), v);
    }
    if let Some(e) = r.last_offered_episode {
        item.insert(attr::LAST_EPISODE.into(), n(e));
    }
    if let Some(h) = &r.reserve_hash {
        item.insert(attr::RESERVE_HASH.into(), s(h.to_hex()));
    }
    if let Some(h) = &r.manage_hash {
        item.insert(attr::MANAGE_HASH.into(), s(h.to_hex()));
    }
    if !r.optout_hashes.is_empty() {
        item.insert(attr::OPTOUT_HASH.into(), hash_set(&r.optout_hashes));
    }
    if !r.inbox_hashes.is_empty() {
        item.insert(attr::INBOX_HASH.into(), hash_set(&r.inbox_hashes));
    }
    if let Some(h) = &r.confirm_hash {
        item.insert(attr::CONFIRM_HASH.into(), s(h.to_hex()));
    }
    if let Some(consent) = &r.consent {
        item.insert(
            attr::CONSENT.into(),
            s(serde_json::to_string(consent).expect("consent serialises")),
        );
    }
    if let Some(language) = &r.language {
        item.insert(attr::LANGUAGE.into(), s(language.to_string()));
    }
    if let Some(at) = r.remind_at {
        item.insert(attr::REMIND_AT.into(), n(at));
    }
    if let Some(h) = &r.remind_hash {
        item.insert(attr::REMIND_HASH.into(), s(h.to_hex()));
    }
    if let Some(zone) = &r.zone {
        item.insert(attr::ZONE.into(), s(zone.as_str()));
    }
    if let Some(ticket) = &r.ticket {
        item.insert(attr::TICKET.into(), s(write_ticket(ticket)));
    }
    for (name, at) in [
        (attr::TOLD_AT, r.moments.told_ms),
        (attr::HELD_AT, r.moments.held_ms),
        (attr::ENDED_AT, r.moments.ended_ms),
    ] {
        if let Some(at) = at {
            item.insert(name.into(), n(at));
        }
    }
    for (slot, chapter) in r.story.slots() {
        item.insert(format!("{}{slot}", attr::STORY), chapter_value(chapter));
    }
    if let Some(notice) = &r.notice {
        item.insert(
            attr::NOTICE.into(),
            s(serde_json::to_string(notice).expect("notice serialises")),
        );
    }
    for (k, v) in index_attrs(r) {
        item.insert(k.into(), v);
    }
    item
}

/// The key of a waiting request's queue entry: its SKU's shard, then its
/// join key, so a shard reads oldest-first.
pub(crate) fn queue_entry_key(r: &Request) -> Item {
    key(queue_pk(&r.sku, r.shard), r.key.to_string())
}

/// A waiting request's queue entry: the request as it joined the line (no
/// index attributes), in the base table so a wave and a position read it
/// strongly consistent. Written and deleted in the same transaction as every
/// move into and out of waiting; the request item stays the truth (each offer
/// is conditional on it).
pub(crate) fn queue_entry(r: &Request) -> Item {
    let mut item = request_item(r);
    for name in attr::INDEX_KEYS {
        item.remove(name);
    }
    // The story stays on the request item alone: an entry is read to plan.
    item.retain(|name, _| !name.starts_with(attr::STORY));
    item.extend(queue_entry_key(r));
    item
}

/// A contact's place for a SKU: one per person per item (I4), naming the request.
pub(crate) fn place_item(r: &Request) -> Item {
    let mut item = key(place_pk(&r.contact_key), sku_pk(&r.sku));
    item.insert(attr::REQUEST_ID.into(), s(r.id.to_string()));
    item
}

/// The sparse index attributes a request carries in its current state.
pub(crate) fn index_attrs(r: &Request) -> Vec<(&'static str, AttributeValue)> {
    let mut attrs = Vec::new();
    if let Some(due) = r.due() {
        attrs.push((attr::DUE_PK, s(due_pk(&r.id))));
        attrs.push((attr::DUE, n(due)));
    }
    attrs
}

/// A string set of token hashes (DynamoDB `SS`: unique, added to with `ADD`).
pub(crate) fn hash_set(hashes: &[TokenHash]) -> AttributeValue {
    AttributeValue::Ss(hashes.iter().map(TokenHash::to_hex).collect())
}

/// A set of token hashes, or the single hash older items kept (`S`).
fn read_hash_set(item: &Item, name: &str) -> Result<Vec<TokenHash>, StoreError> {
    let texts: Vec<&str> = match item.get(name) {
        None => Vec::new(),
        Some(AttributeValue::Ss(set)) => set.iter().map(String::as_str).collect(),
        Some(AttributeValue::S(one)) => vec![one.as_str()],
        Some(_) => return Err(corrupt(item, format!("{name} is not a set of hashes"))),
    };
    let mut hashes = texts
        .into_iter()
        .map(|h| TokenHash::from_hex(h).map_err(|e| corrupt(item, e)))
        .collect::<Result<Vec<_>, _>>()?;
    hashes.sort_by_key(TokenHash::to_hex);
    Ok(hashes)
}

/// A story chapter as stored (`story_<slot>`).
pub(crate) fn chapter_value(chapter: &Chapter) -> AttributeValue {
    s(serde_json::to_string(chapter).expect("chapters serialise"))
}

/// The story chapters an item carries.
fn read_story(item: &Item) -> Result<Story, StoreError> {
    let mut chapters = Vec::new();
    for (name, value) in item {
        if !name.starts_with(attr::STORY) {
            continue;
        }
        let AttributeValue::S(json) = value else {
            return Err(corrupt(item, format!("{name} is not a string")));
        };
        chapters.push(serde_json::from_str::<Chapter>(json).map_err(|e| corrupt(item, e))?);
    }
    Ok(Story::from_chapters(chapters))
}

pub(crate) fn read_request(item: &Item) -> Result<Request, StoreError> {
    let id: RequestId = parse(item, attr::REQUEST_ID)?;
    let status: Status = parse(item, attr::STATUS)?;
    let hold = || -> Result<HoldId, StoreError> { parse(item, attr::HOLD) };
    let state = match status {
        Status::Unconfirmed => RequestState::Unconfirmed,
        Status::Waiting => RequestState::Waiting,
        Status::Offered => RequestState::Offered {
            episode: get_n(item, attr::EPISODE)?,
            expires_ms: get_n(item, attr::EXPIRES)?,
        },
        Status::Held => RequestState::Held {
            episode: get_n(item, attr::EPISODE)?,
            hold: hold()?,
            expires_ms: get_n(item, attr::EXPIRES)?,
        },
        Status::Bought => RequestState::Bought { hold: hold()? },
        Status::Lapsed => RequestState::Lapsed,
        Status::Released => RequestState::Released,
        Status::Cancelled => RequestState::Cancelled,
        Status::OptedOut => RequestState::OptedOut,
        Status::Stale => RequestState::Stale,
        Status::Undeliverable => RequestState::Undeliverable,
    };
    let addr = get_s(item, attr::ADDRESS)?;
    let channel = get_s(item, attr::CHANNEL)?;
    let channel: Channel = channel
        .parse()
        .map_err(|_| corrupt(item, format!("unknown channel {channel}")))?;
    let contact = Contact::on(channel, addr).map_err(|e| corrupt(item, e))?;
    let hash = |name: &str| {
        opt_s(item, name)
            .map(|h| TokenHash::from_hex(h).map_err(|e| corrupt(item, e)))
            .transpose()
    };
    let notice = opt_s(item, attr::NOTICE)
        .map(|j| serde_json::from_str::<NoticeOutcome>(j).map_err(|e| corrupt(item, e)))
        .transpose()?;
    let consent = opt_s(item, attr::CONSENT)
        .map(|j| serde_json::from_str::<Consent>(j).map_err(|e| corrupt(item, e)))
        .transpose()?;
    Ok(Request {
        id,
        sku: Sku::try_from(get_s(item, attr::SKU)?).map_err(|e| corrupt(item, e))?,
        name: ShopperName::try_from(get_s(item, attr::NAME)?).map_err(|e| corrupt(item, e))?,
        contact,
        contact_key: ContactKey::from_stored(get_s(item, attr::CONTACT_KEY)?),
        key: parse(item, attr::JOIN_KEY)?,
        shard: get_n(item, attr::SHARD)?,
        state,
        stale_at: get_n(item, attr::STALE_AT)?,
        last_offered_episode: opt_n(item, attr::LAST_EPISODE)?,
        reserve_hash: hash(attr::RESERVE_HASH)?,
        remind_at: opt_n(item, attr::REMIND_AT)?,
        remind_hash: hash(attr::REMIND_HASH)?,
        optout_hashes: read_hash_set(item, attr::OPTOUT_HASH)?,
        manage_hash: hash(attr::MANAGE_HASH)?,
        inbox_hashes: read_hash_set(item, attr::INBOX_HASH)?,
        confirm_hash: hash(attr::CONFIRM_HASH)?,
        consent,
        notice,
        language: opt_s(item, attr::LANGUAGE)
            .map(|l| l.parse().map_err(|e| corrupt(item, e)))
            .transpose()?,
        // A zone the tz database no longer knows reads as the shop's: it
        // only times quiet hours, and never makes a request unreadable.
        zone: opt_s(item, attr::ZONE).and_then(|z| restock_core::Zone::from_stored(z).ok()),
        ticket: opt_s(item, attr::TICKET)
            .map(|t| read_ticket(t).ok_or_else(|| corrupt(item, "tk is malformed")))
            .transpose()?,
        moments: restock_store::Moments {
            told_ms: opt_n(item, attr::TOLD_AT)?,
            held_ms: opt_n(item, attr::HELD_AT)?,
            ended_ms: opt_n(item, attr::ENDED_AT)?,
        },
        story: read_story(item)?,
    })
}

/// A ticket's text form: the number, `|`, then per shard `ahead`, or
/// `ahead-dealt` when they differ (`7|3,5,2-4`). Compact: it rides on every
/// request item and queue entry.
pub(crate) fn write_ticket(t: &Ticket) -> String {
    let shards: Vec<String> = t
        .shards
        .iter()
        .map(|m| {
            if m.ahead == m.dealt {
                m.ahead.to_string()
            } else {
                format!("{}-{}", m.ahead, m.dealt)
            }
        })
        .collect();
    format!("{}|{}", t.number, shards.join(","))
}

pub(crate) fn read_ticket(text: &str) -> Option<Ticket> {
    let (number, shards) = text.split_once('|')?;
    let shards = if shards.is_empty() {
        Vec::new()
    } else {
        shards
            .split(',')
            .map(|m| match m.split_once('-') {
                Some((a, d)) => Some(ShardMark {
                    ahead: a.parse().ok()?,
                    dealt: d.parse().ok()?,
                }),
                None => {
                    let a = m.parse().ok()?;
                    Some(ShardMark { ahead: a, dealt: a })
                }
            })
            .collect::<Option<Vec<_>>>()?
    };
    Some(Ticket {
        number: number.parse().ok()?,
        shards,
    })
}

// --- SKU state -------------------------------------------------------------

/// A SKU's state item and hold slots, read back with its version.
#[derive(Debug, Clone, Default)]
pub(crate) struct SkuItem {
    pub(crate) snapshot: SkuSnapshot,
    pub(crate) lapsed: u32,
    pub(crate) drifts: u32,
    /// What bought holds brought in, per currency (thousandths).
    pub(crate) revenue: std::collections::BTreeMap<String, i64>,
    /// Orders counted as assisted, and what they paid, per currency.
    pub(crate) assisted: u32,
    pub(crate) assisted_revenue: std::collections::BTreeMap<String, i64>,
    /// Bumped by every write that can raise `units_out` or change the level, so a
    /// wave's offers are conditional on nothing having moved.
    pub(crate) version: Option<u64>,
    /// `units_out` as stored: live offers and holds.
    pub(crate) out: u32,
    /// Each hold slot in use (`hs` of them), as read.
    pub(crate) slots: Vec<i64>,
}

/// The SKU's state from its state item and its hold slots: `held` is the
/// level less the slots' allowance, `offered` what else is out.
pub(crate) fn read_sku(item: Option<&Item>, slots: Vec<i64>) -> Result<SkuItem, StoreError> {
    let Some(item) = item else {
        return Ok(SkuItem {
            slots,
            ..SkuItem::default()
        });
    };
    let stock: StockState = match opt_s(item, attr::STOCK) {
        Some(json) => serde_json::from_str(json).map_err(|e| corrupt(item, e))?,
        None => StockState::default(),
    };
    let level: u32 = opt_n(item, attr::LEVEL)?.unwrap_or(0);
    let out: u32 = opt_n(item, attr::OUT)?.unwrap_or(0);
    let allowance: i64 = slots.iter().sum();
    let held = u32::try_from((i64::from(level) - allowance).max(0)).unwrap_or(u32::MAX);
    Ok(SkuItem {
        snapshot: SkuSnapshot {
            stock,
            counters: Counters {
                level,
                offered: out.saturating_sub(held),
                held,
            },
            bought: opt_n(item, attr::BOUGHT)?.unwrap_or(0),
        },
        lapsed: opt_n(item, attr::LAPSED)?.unwrap_or(0),
        drifts: opt_n(item, attr::DRIFTS)?.unwrap_or(0),
        revenue: per_currency(item, attr::REVENUE_PREFIX)?,
        assisted: opt_n(item, attr::ASSISTED)?.unwrap_or(0),
        assisted_revenue: per_currency(item, attr::ASSISTED_REVENUE_PREFIX)?,
        version: opt_n(item, attr::VERSION)?,
        out,
        slots,
    })
}

/// The amounts under `prefix` and a currency (`rev_EUR`), by currency.
fn per_currency(
    item: &Item,
    prefix: &str,
) -> Result<std::collections::BTreeMap<String, i64>, StoreError> {
    item.keys()
        .filter_map(|name| name.strip_prefix(prefix).map(|c| (name, c)))
        .map(|(name, currency)| Ok((currency.to_owned(), opt_n(item, name)?.unwrap_or(0))))
        .collect()
}

/// How many hold slots a state item says are in use.
pub(crate) fn hold_slots(item: Option<&Item>) -> Result<usize, StoreError> {
    Ok(item
        .map(|i| opt_n::<usize>(i, attr::HOLD_SLOTS))
        .transpose()?
        .flatten()
        .unwrap_or(1)
        .max(1))
}

pub(crate) fn ttl(now: Millis, secs: i64) -> AttributeValue {
    n(now / 1000 + secs)
}
