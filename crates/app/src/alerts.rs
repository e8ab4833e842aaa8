//! What the team is told: the item, the queue, what happened, what to do.
//! Contacts appear masked, links and keys never.

use restock_core::webhook::ItemRef;
use restock_core::{CatalogEntry, Escalation, Sku};
use restock_store::Drift;

use crate::ports::Alert;

/// A webhook named an item the catalogue does not know.
pub fn unknown_item(item: &ItemRef, source: &str) -> Alert {
    Alert {
        subject: format!("restock: unknown item from {source}: {item}"),
        body: format!(
            "What happened: a {source} inventory webhook reported a level for {item}, which is not in the catalogue. \
             Nothing was recorded and nobody was told.\n\
             What to do: if shoppers should be able to wait for this item, add it to the catalogue CSV \
             (with its platform id) and run `restock catalog import catalogue.csv`. Otherwise ignore this."
        ),
    }
}

/// A restock too large to trust waits for the team.
pub fn paused_restock(
    entry: &CatalogEntry,
    level: u32,
    jump: u32,
    reason: Escalation,
    waiting: u32,
) -> Alert {
    let why = match reason {
        Escalation::Jump => {
            format!("the level rose by {jump} at once, more than the escalation rule allows")
        }
        Escalation::AbsurdLevel => {
            format!("the level {level} is above the escalation rule's maximum")
        }
    };
    Alert {
        subject: format!(
            "restock: {} ({}) restock paused for review",
            entry.name, entry.sku
        ),
        body: format!(
            "Item: {name} ({sku})\nQueue: {waiting} waiting\nLevel now: {level}\n\
             What happened: {why}, so nobody has been told yet.\n\
             What to do: if the stock is real, release it and the queue will be told in order:\n\
             \n    restock release {sku}\n\n\
             If it is a mistake, fix the level in the shop; the next report replaces it.",
            name = entry.name,
            sku = entry.sku,
        ),
    }
}

/// A notice could not be delivered; its unit passed to the next person.
pub fn undeliverable(
    entry: &CatalogEntry,
    masked_contact: &str,
    reason: &str,
    waiting: u32,
) -> Alert {
    Alert {
        subject: format!("restock: a notice for {} could not be delivered", entry.sku),
        body: format!(
            "Item: {name} ({sku})\nQueue: {waiting} waiting\nRecipient: {masked_contact}\n\
             What happened: the provider refused the notice for good ({reason}). Their offer ended and the unit \
             passed to the next person in line.\n\
             What to do: nothing for this shopper; if many notices fail, check the SES sender identity or the \
             SMS settings.",
            name = entry.name,
            sku = entry.sku,
        ),
    }
}

/// The sweep met a request it could not read and set it aside.
pub fn unreadable(sku: &Sku, reason: &str) -> Alert {
    Alert {
        subject: format!("restock: an unreadable request for {sku} was set aside"),
        body: format!(
            "Item: {sku}\nWhat happened: the sweep met a stored request it could not read ({reason}). \
             It was taken out of the sweep's listing so the rest of the line keeps moving; the item \
             itself is unchanged. If it held an offer or a hold, that unit stays counted until a reconcile.\n\
             What to do: look at the item in the table (its key is above), fix or delete it, then run \
             `restock reconcile {sku}`."
        ),
    }
}

/// The sweep found counters that disagreed with a recount.
pub fn drift(sku: &Sku, drift: &Drift) -> Alert {
    Alert {
        subject: format!("restock: counters corrected for {sku}"),
        body: format!(
            "Item: {sku}\nWhat happened: the stored counts (offered {}, held {}) disagreed with a recount \
             (offered {}, held {}) and were corrected.\n\
             What to do: nothing now; if this repeats, run `restock reconcile` and report it.",
            drift.stored.offered, drift.stored.held, drift.counted.offered, drift.counted.held
        ),
    }
}
