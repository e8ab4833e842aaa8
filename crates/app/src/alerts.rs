//! What the team is told: the item, the queue, what happened, what to do.
//! Contacts appear masked, links and keys never.

use restock_core::webhook::ItemRef;
use restock_core::{CatalogueEntry, Escalation, Sku};
use restock_store::Drift;

use crate::ports::Alert;

/// A webhook named an item the catalogue does not know.
pub(crate) fn unknown_item(item: &ItemRef, source: &str) -> Alert {
    Alert {
        subject: format!("restock: unknown item from {source}: {item}"),
        body: format!(
            "What happened: a {source} inventory webhook reported a level for {item}, which is not in the catalogue. \
             Nothing was recorded and nobody was told.\n\
             What to do: if shoppers should be able to wait for this item, add it to the catalogue CSV \
             (with its platform id) and run `restock catalogue import catalogue.csv`. Otherwise ignore this."
        ),
    }
}

/// `restock catalogue sync` ended items their platform no longer lists:
/// each with how many were waiting (they are told nothing). One alert per
/// sync that ends any; an item already ended is not named again.
pub fn items_ended(platform: &str, ended: &[(CatalogueEntry, u32)]) -> Alert {
    let waiting: u32 = ended.iter().map(|(_, w)| w).sum();
    let lines: String = ended
        .iter()
        .map(|(e, w)| format!("  {} ({}): {w} waiting\n", e.name, e.sku))
        .collect();
    Alert {
        subject: format!(
            "restock: {} items no longer listed on {platform} were ended",
            ended.len()
        ),
        body: format!(
            "What happened: `restock catalogue sync` found that {platform} no longer lists these items, \
             so they were ended: they take no sign-ups and nobody waiting is told anything. \
             {waiting} people were waiting on them; their places are kept.\n{lines}\
             What to do: nothing, if the items are gone for good. If one was unlisted by mistake, \
             list it again on {platform} and run `restock catalogue sync --stack restock`: \
             it carries on with the queue it had."
        ),
    }
}

/// Items a platform lists that `catalogue sync` could not take as they are
/// (`held`: a line each, with what to do).
pub fn items_held(platform: &str, held: &[String]) -> Alert {
    Alert {
        subject: format!(
            "restock: {} items on {platform} need the team before they can come in",
            held.len()
        ),
        body: format!(
            "What happened: `restock catalogue sync` read {platform}'s items; every other item came in, \
             but these could not be taken as they are and were left as they were:\n{}\
             What to do: as each line says, then run `restock catalogue sync --stack restock`.",
            held.iter().map(|l| format!("  {l}\n")).collect::<String>()
        ),
    }
}

/// Who a privacy request names, for the team: the platform's customer id
/// and the masked contacts.
fn who(masked: &[String], customer_id: Option<u64>) -> (String, String) {
    (
        customer_id.map_or_else(|| "a customer".to_owned(), |id| format!("customer {id}")),
        if masked.is_empty() {
            "no address given".to_owned()
        } else {
            masked.join(", ")
        },
    )
}

/// A customer asked the shop to erase them (Shopify's `customers/redact`).
pub fn customer_erasure(masked: &[String], customer_id: Option<u64>, erased: Option<u32>) -> Alert {
    let (customer, contacts) = who(masked, customer_id);
    let done = match erased {
        Some(n) => format!("What restock did: erased their {n} requests (live ones ended first, their units passed on); only an opt-out is kept, as a keyed hash."),
        None => "What restock does: the sweep function erases every request of theirs within a minute (live ones ended first) and says so here; \
                 if that message does not come, look in the dead-letter queue (`restock dlq list`)."
            .to_owned(),
    };
    Alert {
        subject: match erased {
            Some(_) => format!("restock: {customer} is erased"),
            None => format!("restock: {customer} is being erased"),
        },
        body: format!(
            "What happened: Shopify forwarded an erasure request for {customer} ({contacts}).\n{done}\n\
             By hand: `restock forget <their email or number> --table <TableName> --secret-id <KeysSecretArn>` does the same (the stack's outputs)."
        ),
    }
}

/// A customer asked the shop what restock holds about them (Shopify's
/// `customers/data_request`).
pub fn data_request(masked: &[String], customer_id: Option<u64>, request_id: Option<u64>) -> Alert {
    let (customer, contacts) = who(masked, customer_id);
    Alert {
        subject: format!("restock: {customer} asked what restock holds about them"),
        body: format!(
            "What happened: Shopify forwarded a data request{} for {customer} ({contacts}).\n\
             What to do: find the customer in Shopify's admin, run `restock show <their email or number> --with-contacts --table <TableName> --secret-id <KeysSecretArn>` \
             (the stack's outputs; it prints each request and its story) and send them what it says within 30 days.",
            request_id.map(|r| format!(" ({r})")).unwrap_or_default(),
        ),
    }
}

/// The shop asked for its data to be erased (Shopify's `shop/redact`, sent
/// 48 hours after the app was uninstalled): being erased, or erased.
pub fn shop_erasure(domain: &str, erased: Option<u32>) -> Alert {
    let done = match erased {
        Some(n) => format!(
            "What restock did: erased every shopper's request, {n} in all (live ones ended first); only opt-outs are kept, as keyed hashes."
        ),
        None => "What restock does: the sweep function erases every shopper's request, a thousand per run, each run handing the rest to the next, and says so here when none is left; \
                 if that message does not come, look in the dead-letter queue (`restock dlq list`)."
            .to_owned(),
    };
    Alert {
        subject: match erased {
            Some(_) => format!("restock: {domain}'s shoppers are erased"),
            None => format!("restock: {domain}'s shoppers are being erased"),
        },
        body: format!(
            "What happened: Shopify sent shop/redact for {domain}: the app was uninstalled 48 hours ago and the shop's data is to be erased.\n{done}\n\
             The rest is the shop's own settings and catalogue. To remove restock altogether: `sam delete`, then the table and the keys secret it keeps \
             (`aws dynamodb delete-table --table-name <TableName>`, `aws secretsmanager delete-secret --secret-id <KeysSecretArn>`)."
        ),
    }
}

/// A restock too large to trust waits for the team.
pub fn paused_restock(
    entry: &CatalogueEntry,
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
             If it is a mistake, reject it: the item counts as sold out until the shop reports again, \
             and that report is judged afresh:\n\n    restock reject {sku}\n\n\
             Every restock waiting for the team: `restock escalations`.",
            name = entry.name,
            sku = entry.sku,
        ),
    }
}

/// A notice could not be delivered; its unit passed to the next person.
pub fn undeliverable(
    entry: &CatalogueEntry,
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

/// An order carried a hold for an item the order does not have.
pub(crate) fn hold_not_in_order(
    sku: &Sku,
    hold: &restock_core::HoldId,
    source: &str,
    order_id: Option<&str>,
) -> Alert {
    let order = order_id.unwrap_or("(no id)");
    Alert {
        subject: format!("restock: order {order} carried a hold for {sku} without the item"),
        body: format!(
            "Item: {sku}\nOrder: {order} ({source})\nHold: {hold}\n\
             What happened: the order named this hold but has no line item for {sku}, so the hold \
             was not ended as bought and the level was not touched. The hold runs out at its \
             usual time and its unit passes to the next person in line.\n\
             What to do: check the order in the shop. If the shopper did buy the item under another \
             SKU, nothing is needed; if the checkout link is being reused, look at how the hold \
             reaches the checkout."
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

/// The stock pull found a restock the platform's webhooks never reported.
pub(crate) fn missed_restock(
    entry: &CatalogueEntry,
    platform: restock_core::Platform,
    level: u32,
) -> Alert {
    Alert {
        subject: format!(
            "restock: {} ({}) restock found by the stock pull, not by a webhook",
            entry.name, entry.sku
        ),
        body: format!(
            "Item: {name} ({sku})\nLevel now: {level} (read from the {platform} API)\n\
             Queue: people waiting (the pull reads only items someone waits for)\n\
             What happened: the scheduled stock pull read the level from {platform} and found the item \
             back in stock, but no {platform} webhook had said so. The restock has been applied \
             (the queue is being told in order).\n\
             What to do: check the {platform} webhook subscriptions (docs/DEPLOY.md, After deploying) and \
             detect's logs for refused deliveries; a subscription that kept failing may have been \
             removed by the platform.",
            name = entry.name,
            sku = entry.sku,
        ),
    }
}

/// A platform that used to deliver stock webhooks has gone quiet while
/// people wait.
pub fn webhook_silence(source: &str, silent_for: &str, waiting_items: usize) -> Alert {
    Alert {
        subject: format!("restock: no {source} stock webhook for {silent_for}"),
        body: format!(
            "What happened: {source} used to deliver stock webhooks, but none has arrived for {silent_for}, \
             while people wait on {waiting_items} of its items. A restock in that time would not have been seen \
             by a webhook (the stock pull still reads levels every 15 minutes where API access is set).\n\
             What to do: check the webhook subscriptions in {source}'s admin (a subscription that keeps \
             failing is removed or disabled by the platform) and detect's logs for refused deliveries. \
             This alert is sent once per silence."
        ),
    }
}

/// A source people wait on has never delivered a stock webhook.
pub fn never_delivered(source: &str, waited_for: &str, waiting_items: usize) -> Alert {
    Alert {
        subject: format!("restock: {source} has never delivered a stock webhook"),
        body: format!(
            "What happened: people have waited {waited_for} on {waiting_items} of {source}'s items, and \
             {source} has never delivered a stock webhook that restock could verify. A restock would not be \
             seen by a webhook (the stock pull still reads levels every 15 minutes where API access is set).\n\
             What to do: subscribe the stock webhook to this stack's DetectUrl (docs/DEPLOY.md, \"Webhooks\"), \
             and check that the key in the keys secret is the one {source} signs with: detect's \
             `WebhooksRefused` metric counts deliveries refused for a wrong key. \
             This alert is repeated once a week while it stays so."
        ),
    }
}

/// Sending stopped: the provider refused the sender, not a recipient.
pub(crate) fn sender_paused(reason: &str, held_sku: &Sku, resumes_in: &str) -> Alert {
    Alert {
        subject: "restock: sending paused - the mail or SMS provider refused the sender".into(),
        body: format!(
            "What happened: a notice for {held_sku} was refused for a reason that is about the sending \
             account, not the shopper:\n\n    {reason}\n\n\
             restock stopped sending. Nobody lost their place: offers already made stay live and \
             are sent when sending resumes (an offer that runs out meanwhile passes its unit on).\n\
             What to do: check the SES account (still in the sandbox? request production access), \
             the sender identity's verification, and the sending quota or SMS spending limit. \
             Sending resumes by itself in {resumes_in}; once it is fixed, `restock resume` resumes at once. \
             This alert is sent once per pause."
        ),
    }
}

/// Sign-ups for one item burst past the settings' `signup_burst`.
pub fn signup_burst(entry: &CatalogueEntry, burst: u32, window: restock_core::Window) -> Alert {
    Alert {
        subject: format!(
            "restock: {} ({}) more than {burst} sign-ups in {window}",
            entry.name, entry.sku
        ),
        body: format!(
            "Item: {name} ({sku})\n\
             What happened: more than {burst} people asked to be told about this item within {window}. \
             Nothing was refused.\n\
             What to do: if you announced a drop, nothing — this is the crowd. If not, it may be a bot \
             signing up other people's addresses: look at `restock queue {sku}` for repeated patterns, \
             lower `[limits] joins_per_ip` in the settings, and opt addresses out with \
             `restock optout add`. This alert is sent once per {window}.",
            name = entry.name,
            sku = entry.sku,
        ),
    }
}

/// A day's bounce or complaint rate is near SES's review threshold.
pub(crate) fn mail_health(
    warning: restock_core::feedback::HealthWarning,
    day: &str,
    totals: &restock_core::feedback::MailDay,
) -> Alert {
    use restock_core::feedback::HealthWarning;
    let percent = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{:.2}%", r * 100.0));
    let (what, rate, review) = match warning {
        HealthWarning::Bounces => ("bounce", percent(totals.bounce_rate()), "5%"),
        HealthWarning::Complaints => ("complaint", percent(totals.complaint_rate()), "0.1%"),
    };
    Alert {
        subject: format!(
            "restock: the {what} rate is {rate} on {day} (SES reviews accounts near {review})"
        ),
        body: format!(
            "What happened: on {day} restock sent {sent} notice emails; {bounced} bounced for good and {complained} \
             were marked as spam. SES starts reviewing an account near a 5% bounce rate or a 0.1% complaint \
             rate, and may pause its sending.\n\
             What to do: bounced addresses and complainers are already never mailed again. Look for where \
             bad addresses come from (a bot signing up other people: `restock queue SKU`, lower \
             `[limits] joins_per_ip`), and check the SES console's reputation page. `restock stats` shows \
             today's rates. This alert is sent once per day.",
            sent = totals.emails_sent(),
            bounced = totals.bounced,
            complained = totals.complained,
        ),
    }
}

/// SNS stopped texting because the account's monthly SMS spending limit is reached.
pub(crate) fn sms_spending_limit(day: &str, detail: &str) -> Alert {
    Alert {
        subject: format!("restock: texts are not going out ({detail})"),
        body: format!(
            "What happened: on {day} SNS reported a text as not delivered because the account's SMS \
             spending limit is reached (\"{detail}\"). Every text after it fails the same way until the \
             limit is raised or the month ends; shoppers who asked for email are not affected.\n\
             What to do: raise the account's SMS spending limit (SNS console, Text messaging, or a \
             service quota request), then `restock resume`. This alert is sent once per day."
        ),
    }
}
