//! The confirmations a double opt-in asks for: each claimed once, rendered in
//! the shopper's language and sent paced, with the links that confirm it.

use restock_core::{CatalogueEntry, Message, OptOutVia, Settings, Window};
use restock_store::Claim;

use super::send::pause_sending;
use super::{CONFIRMATIONS_PER_PASS, NotifyReport, Pacer};
use crate::metrics::{self, Metric};
use crate::ports::SendError;
use crate::{AppError, Services};

/// Then confirmations (double opt-in), after the notices: a unit waits on a
/// notice, nothing waits on a confirmation. A bounded batch per pass; a
/// full batch hands the rest on with a wake.
pub(super) async fn send_confirmations(
    s: &Services,
    settings: &Settings,
    entry: &CatalogueEntry,
    pacer: &mut Pacer<'_>,
    report: &mut NotifyReport,
) -> Result<(), AppError> {
    let sku = &entry.sku;
    let mut random = || s.random();
    let pending = s
        .store
        .pending_confirmations(sku, CONFIRMATIONS_PER_PASS, s.clock.now_ms())
        .await?;
    if pending.len() >= CONFIRMATIONS_PER_PASS {
        s.store.wake_again(sku, 0, s.clock.now_ms()).await?;
        report.handed_on = true;
    }
    let pending = awake(s, settings, sku, &pending, report).await?;
    for (i, request) in pending.iter().enumerate() {
        if !pacer.turn(pending.len() - i).await? {
            s.store.wake_again(sku, 0, s.clock.now_ms()).await?;
            report.handed_on = true;
            tracing::info!(%sku, left = pending.len() - i, "the pass's time is nearly up; the rest handed to the next pass");
            break;
        }
        send_confirmation(s, settings, entry, request, &mut random, report).await?;
        if report.paused {
            break;
        }
    }
    Ok(())
}

/// The sign-ups awake now: a confirmation keeps the quiet hours a notice
/// keeps (a text at 3am is no less a text at 3am), so a sleeper's waits,
/// unclaimed, and the item is woken when the first of them wakes.
async fn awake<'a>(
    s: &Services,
    settings: &Settings,
    sku: &restock_core::Sku,
    pending: &'a [restock_store::Request],
    report: &mut NotifyReport,
) -> Result<Vec<&'a restock_store::Request>, AppError> {
    let now = s.clock.now_ms();
    let mut sleepers = restock_core::Sleepers::new(&settings.quiet_hours, &settings.time_zone, now);
    let mut first_wake: Option<restock_core::Millis> = None;
    let mut awake = Vec::with_capacity(pending.len());
    for r in pending {
        match sleepers.asleep_until(&r.contact, r.zone.as_ref()) {
            Some(until) => {
                first_wake = Some(first_wake.map_or(until, |w| w.min(until)));
                report.asleep += 1;
            }
            None => awake.push(r),
        }
    }
    if let Some(at) = first_wake {
        tracing::info!(%sku, asleep = pending.len() - awake.len(), wake_at = at, "confirmations wait for their shoppers' morning");
        s.store.wake_at(sku, at).await?;
    }
    Ok(awake)
}

/// Sends one sign-up its confirmation (double opt-in): claimed first, at
/// most once, with fresh links whose hashes the claim keeps.
pub(super) async fn send_confirmation(
    s: &Services,
    settings: &Settings,
    entry: &CatalogueEntry,
    r: &restock_store::Request,
    random: &mut (dyn FnMut() -> [u8; 16] + Send),
    report: &mut NotifyReport,
) -> Result<(), AppError> {
    let now = s.clock.now_ms();
    let Some(left) = Window::remaining(now, r.stale_at) else {
        return Ok(());
    };
    let mut token = || restock_core::LinkToken::new(r.sku.clone(), r.id, random());
    let (confirm, manage, optout) = (token(), token(), token());
    let links = restock_store::ConfirmLinks {
        confirm: confirm.secret_hash(),
        manage: manage.secret_hash(),
        optout: optout.secret_hash(),
    };
    match s
        .store
        .claim_confirmation(&r.sku, &r.id, &links, &r.contact_key, now)
        .await?
    {
        Claim::Claimed => {}
        Claim::NotClaimable => return Ok(()),
        Claim::Covered { until } => {
            // One mail a day to an address that has not confirmed: this
            // sign-up's own goes when the day ends (a tap confirms only what
            // it was sent for).
            tracing::info!(sku = %r.sku, contact = %r.contact.masked(), until, "address asked to confirm within the day; this sign-up's own confirmation goes when the day ends");
            s.store.wake_at(&r.sku, until).await?;
            report.covered += 1;
            return Ok(());
        }
        Claim::OptedOut => {
            // Recorded already, when it came: that record stands.
            s.opt_out(&r.contact_key, OptOutVia::Link, now).await?;
            report.opted_out += 1;
            return Ok(());
        }
    }
    let (confirm_url, manage_url, optout_url) = (
        settings.link("c", &confirm),
        settings.link("m", &manage),
        settings.link("o", &optout),
    );
    let together = paired_contact(s, r).await?;
    let input = restock_core::confirm::ConfirmInput {
        store: &settings.store_name,
        product: &entry.name,
        confirm_url: &confirm_url,
        manage_url: &manage_url,
        optout_url: &optout_url,
        window: left,
        texts: &settings.texts(&settings.language_for(r.language.as_ref())),
        together: together.as_deref(),
    };
    let message = Message::confirmation(r.contact.channel(), settings, &input);
    // The provider's words, which may name the recipient, masked once here.
    let sent = s
        .sender
        .send(&r.contact, &message)
        .await
        .map_err(SendError::masked);
    if let Err(e) = &sent {
        metrics::send_failed(e);
        metrics::count(Metric::ConfirmationsFailed, 1);
    }
    settle(s, r, &links.confirm, sent, now, report).await
}

/// What a confirmation's send leads to: counted as sent; the claim given
/// back for a retry (transient) or for after the sender's pause; never
/// resent when the outcome is unknown; the contact opted out; the sign-up
/// ended when the address cannot take messages.
async fn settle(
    s: &Services,
    r: &restock_store::Request,
    claim: &restock_core::TokenHash,
    sent: Result<String, SendError>,
    now: restock_core::Millis,
    report: &mut NotifyReport,
) -> Result<(), AppError> {
    match sent {
        Ok(_) => {
            tracing::info!(sku = %r.sku, contact = %r.contact.masked(), "confirmation sent");
            report.confirmations += 1;
        }
        Err(SendError::Transient(reason)) => {
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), %reason, "confirmation failed transiently; will retry");
            s.store.release_confirmation(&r.sku, &r.id, claim).await?;
            report.transient += 1;
        }
        Err(SendError::Sender(reason)) => {
            tracing::error!(sku = %r.sku, %reason, "the provider refused the sender; sending paused");
            s.store.release_confirmation(&r.sku, &r.id, claim).await?;
            pause_sending(s, &reason, &r.sku, now).await?;
            report.paused = true;
        }
        Err(SendError::Unknown(reason)) => {
            // Maybe delivered: never resent; unconfirmed, it ends with its window.
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), %reason, "confirmation outcome unknown; not resending");
            report.uncertain += 1;
        }
        Err(SendError::OptedOut) => {
            s.opt_out(&r.contact_key, OptOutVia::Carrier, now).await?;
            report.opted_out += 1;
        }
        Err(e) => {
            // The address or number cannot take messages: the sign-up ends.
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), reason = %e, "confirmation undeliverable; sign-up ended");
            s.store.cancel(&r.id, now).await?;
            report.failed += 1;
        }
    }
    Ok(())
}

/// Told on both channels: the other request's contact, masked, so the
/// shopper sees what an opt-out or a hold there ends here (one read, for
/// a pair's sign-ups only).
async fn paired_contact(
    s: &Services,
    r: &restock_store::Request,
) -> Result<Option<String>, AppError> {
    let Some(other) = r.consent.as_ref().and_then(|c| c.together) else {
        return Ok(None);
    };
    let mate = s.store.request(&other).await?;
    Ok(mate
        .filter(|m| m.paired_with(r))
        .map(|m| m.contact.masked()))
}
