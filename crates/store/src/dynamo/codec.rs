//! Items and keys: how records become DynamoDB attribute maps and back.
//!
//! Attribute names are short and avoid DynamoDB's reserved words (`hold`,
//! `name`, `level`, `at` are reserved), so expressions need no aliases.

use std::collections::HashMap;
use std::str::FromStr;

use aws_sdk_dynamodb::types::AttributeValue;
use restock_core::{
    Contact, ContactKey, Counters, Email, HoldId, Phone, RequestId, RequestState, ShopperName, Sku,
    Status, StockState, TokenHash,
};

use super::table::{DUE_SHARDS, WAKE_PK_PREFIX};
use crate::error::StoreError;
use crate::model::{Millis, NoticeOutcome, Request, SkuSnapshot};

/// An item as the SDK holds it.
pub type Item = HashMap<String, AttributeValue>;

/// How long finished requests stay readable (status page, opt-out link)
/// before TTL cleans them up.
pub const FINISHED_TTL_SECS: i64 = 400 * 86_400;
/// How long delivery ids are remembered for dedup: longer than any shop retries.
pub const DELIVERY_TTL_SECS: i64 = 7 * 86_400;

pub fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub fn n(v: impl std::fmt::Display) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

// --- keys ------------------------------------------------------------------

pub fn request_pk(id: &RequestId) -> String {
    format!("REQ#{id}")
}
pub fn sku_pk(sku: &Sku) -> String {
    format!("SKU#{sku}")
}
pub fn place_pk(contact: &ContactKey) -> String {
    format!("CONTACT#{contact}")
}
pub fn optout_pk(contact: &ContactKey) -> String {
    format!("OPTOUT#{contact}")
}
pub fn delivery_pk(id: &str) -> String {
    format!("DELIVERY#{id}")
}
pub fn hold_pk(hold: &HoldId) -> String {
    format!("HOLD#{hold}")
}
pub fn wake_pk(sku: &Sku) -> String {
    format!("{WAKE_PK_PREFIX}{sku}")
}
pub fn queue_pk(sku: &Sku, shard: u16) -> String {
    format!("Q#{sku}#{shard}")
}
pub fn units_pk(sku: &Sku) -> String {
    format!("U#{sku}")
}
/// The `units` index sort key: unsent offers sort under `0#`, the rest `1#`.
pub fn units_sk(id: &RequestId, unsent: bool) -> String {
    format!("{}#{id}", if unsent { 0 } else { 1 })
}
pub fn due_pk(id: &RequestId) -> String {
    format!("DUE#{}", id.tie_break() % u64::from(DUE_SHARDS))
}

pub const STATE_SK: &str = "STATE";
pub const CATALOG_SK: &str = "CATALOG";
/// The partition listing every catalogue entry (sort key: the SKU).
pub const CATALOG_PK: &str = "CATALOG";
pub const REQUEST_SK: &str = "REQ";
pub const ONE_SK: &str = "_";

pub fn key(pk: impl Into<String>, sk: impl Into<String>) -> Item {
    HashMap::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(sk))])
}

// --- reading ---------------------------------------------------------------

pub fn get_s<'a>(item: &'a Item, name: &str) -> Result<&'a str, StoreError> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
        .ok_or_else(|| corrupt(item, format!("missing {name}")))
}

pub fn opt_s<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
}

pub fn get_n<T: FromStr>(item: &Item, name: &str) -> Result<T, StoreError> {
    opt_n(item, name)?.ok_or_else(|| corrupt(item, format!("missing {name}")))
}

pub fn opt_n<T: FromStr>(item: &Item, name: &str) -> Result<Option<T>, StoreError> {
    match item.get(name).and_then(|v| v.as_n().ok()) {
        None => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|_| corrupt(item, format!("{name} is not a number"))),
    }
}

pub fn corrupt(item: &Item, reason: impl ToString) -> StoreError {
    let pk = opt_s(item, "pk").unwrap_or("?");
    let sk = opt_s(item, "sk").unwrap_or("?");
    StoreError::corrupt(format!("{pk}/{sk}"), reason)
}

fn parse<T: FromStr>(item: &Item, name: &str) -> Result<T, StoreError> {
    get_s(item, name)?
        .parse()
        .map_err(|_| corrupt(item, format!("{name} is malformed")))
}

// --- requests --------------------------------------------------------------

/// The attributes a request's state sets (status, episode, expiry, hold).
pub fn state_attrs(state: &RequestState) -> Vec<(&'static str, AttributeValue)> {
    let mut attrs = vec![("st", s(state.status().as_str()))];
    match state {
        RequestState::Offered {
            episode,
            expires_ms,
        } => {
            attrs.push(("epi", n(episode)));
            attrs.push(("exp", n(expires_ms)));
        }
        RequestState::Held {
            episode,
            hold,
            expires_ms,
        } => {
            attrs.push(("epi", n(episode)));
            attrs.push(("exp", n(expires_ms)));
            attrs.push(("hid", s(hold.to_string())));
        }
        RequestState::Bought { hold } => attrs.push(("hid", s(hold.to_string()))),
        _ => {}
    }
    attrs
}

pub fn request_item(r: &Request) -> Item {
    let mut item = key(request_pk(&r.id), REQUEST_SK);
    item.insert("rid".into(), s(r.id.to_string()));
    item.insert("sku".into(), s(r.sku.as_str()));
    item.insert("nm".into(), s(r.name.as_str()));
    item.insert("ch".into(), s(r.contact.channel().as_str()));
    item.insert("addr".into(), s(r.contact.address()));
    item.insert("ckey".into(), s(r.contact_key.as_str()));
    item.insert("jk".into(), s(r.key.to_string()));
    item.insert("shd".into(), n(r.shard));
    item.insert("stale_at".into(), n(r.stale_at));
    for (k, v) in state_attrs(&r.state) {
        item.insert(k.into(), v);
    }
    if let Some(e) = r.last_offered_episode {
        item.insert("last_epi".into(), n(e));
    }
    if let Some(h) = &r.reserve_hash {
        item.insert("rh".into(), s(h.to_hex()));
    }
    if let Some(h) = &r.optout_hash {
        item.insert("oh".into(), s(h.to_hex()));
    }
    if let Some(notice) = &r.notice {
        item.insert(
            "notice".into(),
            s(serde_json::to_string(notice).expect("notice serialises")),
        );
    }
    for (k, v) in index_attrs(r) {
        item.insert(k.into(), v);
    }
    item
}

/// The sparse index attributes a request carries in its current state.
pub fn index_attrs(r: &Request) -> Vec<(&'static str, AttributeValue)> {
    let mut attrs = Vec::new();
    if r.state == RequestState::Waiting {
        attrs.push(("qpk", s(queue_pk(&r.sku, r.shard))));
        attrs.push(("qsk", s(r.key.to_string())));
    }
    if let Some(due) = r.due() {
        attrs.push(("dpk", s(due_pk(&r.id))));
        attrs.push(("due", n(due)));
    }
    if matches!(
        r.state,
        RequestState::Offered { .. } | RequestState::Held { .. }
    ) {
        attrs.push(("upk", s(units_pk(&r.sku))));
        let unsent = matches!(r.state, RequestState::Offered { .. }) && r.notice.is_none();
        attrs.push(("usk", s(units_sk(&r.id, unsent))));
    }
    attrs
}

pub fn read_request(item: &Item) -> Result<Request, StoreError> {
    let id: RequestId = parse(item, "rid")?;
    let status: Status = parse(item, "st")?;
    let hold = || -> Result<HoldId, StoreError> { parse(item, "hid") };
    let state = match status {
        Status::Waiting => RequestState::Waiting,
        Status::Offered => RequestState::Offered {
            episode: get_n(item, "epi")?,
            expires_ms: get_n(item, "exp")?,
        },
        Status::Held => RequestState::Held {
            episode: get_n(item, "epi")?,
            hold: hold()?,
            expires_ms: get_n(item, "exp")?,
        },
        Status::Bought => RequestState::Bought { hold: hold()? },
        Status::Lapsed => RequestState::Lapsed,
        Status::Released => RequestState::Released,
        Status::Cancelled => RequestState::Cancelled,
        Status::OptedOut => RequestState::OptedOut,
        Status::Stale => RequestState::Stale,
        Status::Undeliverable => RequestState::Undeliverable,
    };
    let addr = get_s(item, "addr")?;
    let contact = match get_s(item, "ch")? {
        "email" => Contact::Email(Email::try_from(addr).map_err(|e| corrupt(item, e))?),
        "sms" => Contact::Sms(Phone::parse(addr).map_err(|e| corrupt(item, e))?),
        other => return Err(corrupt(item, format!("unknown channel {other}"))),
    };
    let hash = |name| {
        opt_s(item, name)
            .map(|h| TokenHash::from_hex(h).map_err(|e| corrupt(item, e)))
            .transpose()
    };
    let notice = opt_s(item, "notice")
        .map(|j| serde_json::from_str::<NoticeOutcome>(j).map_err(|e| corrupt(item, e)))
        .transpose()?;
    Ok(Request {
        id,
        sku: Sku::try_from(get_s(item, "sku")?).map_err(|e| corrupt(item, e))?,
        name: ShopperName::try_from(get_s(item, "nm")?).map_err(|e| corrupt(item, e))?,
        contact,
        contact_key: ContactKey::from_stored(get_s(item, "ckey")?),
        key: parse(item, "jk")?,
        shard: get_n(item, "shd")?,
        state,
        stale_at: get_n(item, "stale_at")?,
        last_offered_episode: opt_n(item, "last_epi")?,
        reserve_hash: hash("rh")?,
        optout_hash: hash("oh")?,
        notice,
    })
}

// --- SKU state -------------------------------------------------------------

/// A SKU's state item, read back with its version.
#[derive(Debug, Clone, Default)]
pub struct SkuItem {
    pub snapshot: SkuSnapshot,
    pub lapsed: u32,
    /// Bumped by every write that can raise `offered + held` or change the
    /// level, so a wave's offers are conditional on nothing having moved.
    pub version: Option<u64>,
}

pub fn read_sku(item: Option<&Item>) -> Result<SkuItem, StoreError> {
    let Some(item) = item else {
        return Ok(SkuItem::default());
    };
    let stock: StockState = match opt_s(item, "stock") {
        Some(json) => serde_json::from_str(json).map_err(|e| corrupt(item, e))?,
        None => StockState::default(),
    };
    Ok(SkuItem {
        snapshot: SkuSnapshot {
            stock,
            counters: Counters {
                level: opt_n(item, "lvl")?.unwrap_or(0),
                offered: opt_n(item, "offered")?.unwrap_or(0),
                held: opt_n(item, "held")?.unwrap_or(0),
            },
            bought: opt_n(item, "bought")?.unwrap_or(0),
        },
        lapsed: opt_n(item, "lapsed")?.unwrap_or(0),
        version: opt_n(item, "ver")?,
    })
}

pub fn ttl(now: Millis, secs: i64) -> AttributeValue {
    n(now / 1000 + secs)
}
