//! restock's events, read from the table's stream: each stream record holds
//! an item's image before and after one write (`NEW_AND_OLD_IMAGES`), and
//! [`decode`] says which [`Event`]s that write was. Only the store knows
//! its items, so the reading lives here; `restock_aws::stream` hands the
//! records over and `restock_app::events` publishes what they were.
//!
//! One write is at most one change of a request's state plus its notice,
//! one change of an item's stock state, or one opening of the sender's
//! pause, so a record is decoded once into the same events however often
//! the stream delivers it.

use restock_core::{Status, StockState};
use restock_store::{Event, NoticeOutcome, Request, StoreError};

use crate::attr;
use crate::codec::{
    CATALOGUE_SK, Item, PAUSE_SK, REQUEST_SK, SENDER_PK, STATE_SK, corrupt, opt_n, opt_s,
    read_request,
};

/// The partition key prefixes and sort keys of the items whose writes can
/// be events (`template.yaml`'s filter on the events subscription passes
/// only these).
pub const EVENT_ITEMS: [(&str, &str); 4] = [
    ("REQ#", REQUEST_SK),
    ("SKU#", STATE_SK),
    ("SKU#", CATALOGUE_SK),
    (SENDER_PK, PAUSE_SK),
];

/// [`decode`] from a stream record's images in DynamoDB's JSON shape
/// (`{"pk": {"S": "REQ#…"}, …}`), as Lambda and the streams API deliver
/// them; an absent or empty image is no item.
///
/// # Errors
/// An image that is not an item, or not a readable item of its kind.
pub fn decode_images(
    old: Option<&serde_json::Value>,
    new: Option<&serde_json::Value>,
) -> Result<Vec<Event>, StoreError> {
    let item = |image: Option<&serde_json::Value>| -> Result<Option<Item>, StoreError> {
        let Some(image) = image.filter(|i| i.as_object().is_some_and(|o| !o.is_empty())) else {
            return Ok(None);
        };
        let item: std::collections::HashMap<String, serde_dynamo::AttributeValue> =
            serde_json::from_value(image.clone())
                .map_err(|e| StoreError::corrupt("a stream image", e))?;
        Ok(Some(item.into_iter().map(|(k, v)| (k, v.into())).collect()))
    };
    decode(item(old)?.as_ref(), item(new)?.as_ref())
}

/// The events one write was, from the item before (`None` for a new item)
/// and after it (`None` for a deleted one).
///
/// # Errors
/// An image that is not a readable item of its kind.
pub fn decode(old: Option<&Item>, new: Option<&Item>) -> Result<Vec<Event>, StoreError> {
    let Some(new) = new else {
        return Ok(Vec::new());
    };
    let pk = opt_s(new, attr::PK).unwrap_or_default();
    let sk = opt_s(new, attr::SK).unwrap_or_default();
    Ok(match sk {
        REQUEST_SK if pk.starts_with("REQ#") => {
            request(old.map(read_request).transpose()?, read_request(new)?)
        }
        STATE_SK if pk.starts_with("SKU#") => stock(old, new)?,
        PAUSE_SK if pk == SENDER_PK => pause(old, new)?,
        CATALOGUE_SK if pk.starts_with("SKU#") => item_pause(old, new)?,
        _ => Vec::new(),
    })
}

fn request(old: Option<Request>, new: Request) -> Vec<Event> {
    let was = old.as_ref().map(|r| r.state.status());
    let sent = |r: &Request| matches!(r.notice, Some(NoticeOutcome::Sent { .. }));
    let mut events = Vec::new();
    let notice_sent = sent(&new) && !old.as_ref().is_some_and(sent);
    let episode_of = |r: &Request| match r.state {
        restock_core::RequestState::Offered { episode, .. }
        | restock_core::RequestState::Held { episode, .. } => Some(episode),
        _ => r.last_offered_episode,
    };
    if notice_sent && let Some(episode) = episode_of(&new) {
        events.push(Event::NoticeSent {
            request: Box::new(new.clone()),
            episode,
        });
    }
    let now = new.state.status();
    let change = match (was, now) {
        (None | Some(Status::Unconfirmed), Status::Waiting) => Some(Event::SignUpConfirmed {
            request: Box::new(new),
        }),
        (Some(Status::Offered), Status::Held) => {
            episode_of(&new).map(|episode| Event::HoldCreated {
                request: Box::new(new),
                episode,
            })
        }
        (Some(Status::Held), Status::Bought) => Some(Event::HoldBought {
            request: Box::new(new),
        }),
        (Some(Status::Offered), Status::Lapsed) => {
            old.as_ref()
                .and_then(episode_of)
                .map(|episode| Event::OfferLapsed {
                    request: Box::new(new),
                    episode,
                })
        }
        _ => None,
    };
    events.extend(change);
    events
}

fn stock_state(item: &Item) -> Result<StockState, StoreError> {
    opt_s(item, attr::STOCK)
        .map(|json| serde_json::from_str(json).map_err(|e| corrupt(item, e)))
        .transpose()
        .map(Option::unwrap_or_default)
}

fn stock(old: Option<&Item>, new: &Item) -> Result<Vec<Event>, StoreError> {
    let before = old.map(stock_state).transpose()?.unwrap_or_default();
    let after = stock_state(new)?;
    let sku = restock_core::Sku::try_from(
        opt_s(new, attr::PK)
            .and_then(|pk| pk.strip_prefix("SKU#"))
            .unwrap_or_default(),
    )
    .map_err(|e| corrupt(new, e))?;
    let level = opt_n(new, attr::LEVEL)?.unwrap_or(0);
    let episode = after.episode;
    Ok(if after.paused && !before.paused {
        vec![Event::RestockEscalated {
            sku,
            episode,
            level,
        }]
    } else if !after.paused && after.in_stock && (after.episode > before.episode || before.paused) {
        vec![Event::RestockDetected {
            sku,
            episode,
            level,
        }]
    } else {
        Vec::new()
    })
}

fn pause(old: Option<&Item>, new: &Item) -> Result<Vec<Event>, StoreError> {
    let opened: Option<i64> = opt_n(new, attr::PAUSE_FROM)?;
    let before: Option<i64> = old
        .map(|o| opt_n(o, attr::PAUSE_FROM))
        .transpose()?
        .flatten();
    Ok(match opened {
        Some(from) if before != Some(from) => vec![Event::SendingPaused {
            reason: opt_s(new, attr::PAUSE_WHY).unwrap_or_default().to_owned(),
            until: opt_n(new, attr::PAUSE_TO)?.unwrap_or(from),
        }],
        _ => Vec::new(),
    })
}

/// A catalogue entry's write: the team pausing or resuming the item's
/// notices (any other change to the entry is no event).
fn item_pause(old: Option<&Item>, new: &Item) -> Result<Vec<Event>, StoreError> {
    let before = old
        .map(crate::catalogue::read_entry)
        .transpose()?
        .and_then(|e| e.paused);
    let after = crate::catalogue::read_entry(new)?;
    Ok(match (before, after.paused) {
        (None, Some(pause)) => vec![Event::ItemPaused {
            sku: after.sku,
            reason: pause.reason,
        }],
        (Some(_), None) => vec![Event::ItemResumed { sku: after.sku }],
        _ => Vec::new(),
    })
}
