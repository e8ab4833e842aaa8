//! sweep: the scheduled pass (every minute) that keeps the line moving.
//!
//! Wakes the items whose shoppers passed over in their quiet hours woke
//! while units were free. Ends what is due — unclicked offers, unbought
//! holds, requests older than the lifetime — at most `limit` per run, so a
//! backlog continues next tick.
//! Every freed unit writes a wake in the same transaction, which the stream
//! carries to notify. Then it reconciles the counters of the SKUs it touched.

use std::collections::BTreeSet;

use restock_core::OptOutVia;
use restock_store::ExpireOutcome;
use serde::Serialize;

use crate::metrics::{self, Metric};
use crate::ports::SendError;
use crate::{AppError, Services, alerts};

/// The most due items one run ends.
pub const DEFAULT_LIMIT: usize = 500;

/// What one run did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    /// Offers that lapsed (units freed).
    pub lapsed: usize,
    /// Offers whose notice never went out that ran out: back in the queue
    /// with their place (units freed).
    pub requeued: usize,
    /// Holds released (units freed).
    pub released: usize,
    /// Requests gone stale.
    pub stale: usize,
    /// Sign-ups never confirmed: ended, their contact details deleted.
    pub unconfirmed: usize,
    /// Due items another actor had already ended.
    pub skipped: usize,
    /// Counters corrected by reconcile.
    pub corrected: usize,
    /// Due requests that could not be read: taken out of the listing and
    /// reported to the team, once each.
    pub unreadable: usize,
    /// More was due than one run ends.
    pub backlog: bool,
    /// Sending resumed: a sender pause's time was up, its items woken.
    pub resumed: bool,
    /// Items woken because someone passed over in their quiet hours, with
    /// units left over, woke.
    pub awake: usize,
    /// Reminders the provider accepted (offers still unclaimed
    /// `remind_before` their end).
    pub reminded: usize,
}

/// One sweep at the clock's now.
///
/// # Errors
/// Store failures (the schedule retries).
pub async fn run(s: &Services, limit: usize) -> Result<SweepReport, AppError> {
    let now = s.clock.now_ms();
    let resumed = match s.store.sender_pause().await? {
        Some(pause) if pause.until <= now => crate::notify::resume_sending(s.store.as_ref(), now)
            .await?
            .is_some(),
        _ => false,
    };
    let awake = s.store.wake_sleepers(now).await?;
    if !awake.is_empty() {
        tracing::info!(
            ?awake,
            "woken: people passed over in their quiet hours are awake"
        );
    }
    let due = s.store.due(now, limit).await?;
    let mut report = SweepReport {
        backlog: due.len() >= limit,
        resumed,
        awake: awake.len(),
        ..SweepReport::default()
    };
    let mut touched = expire_due(s, &due, now, &mut report).await?;
    metrics::count(Metric::OffersLapsed, report.lapsed + report.requeued);
    metrics::count(Metric::HoldsReleased, report.released);
    if report.unconfirmed > 0 {
        let expired = restock_core::feedback::MailDay {
            confirm_expired: report.unconfirmed as u32,
            ..Default::default()
        };
        s.store
            .count_mail(&restock_core::feedback::day_of(now), expired)
            .await?;
    }
    // Besides the items it just freed units of, every catalogued item gets
    // a recount once every `RECONCILE_EVERY` (each in its own minute of the
    // cycle, so the work spreads), so a drift on a busy item is found too.
    for entry in s.store.catalogue().await? {
        if reconcile_due(&entry.sku, now) {
            touched.insert(entry.sku);
        }
    }
    reconcile(s, &touched, now, &mut report).await?;
    tracing::info!(?report, "sweep");
    Ok(report)
}

/// Each due request moved on as its time says (lapsed, requeued, released,
/// ended, reminded); the items whose units it freed.
async fn expire_due(
    s: &Services,
    due: &[restock_store::Due],
    now: restock_core::Millis,
    report: &mut SweepReport,
) -> Result<BTreeSet<restock_core::Sku>, AppError> {
    let mut touched = BTreeSet::new();
    let mut reminders = Vec::new();
    for item in due {
        match s.store.expire(item, now).await? {
            ExpireOutcome::Remind(episode) => {
                reminders.push((item, episode));
                continue;
            }
            ExpireOutcome::Lapsed => report.lapsed += 1,
            ExpireOutcome::Requeued => report.requeued += 1,
            ExpireOutcome::Released => report.released += 1,
            ExpireOutcome::Stale => {
                report.stale += 1;
                continue;
            }
            ExpireOutcome::Unconfirmed => {
                report.unconfirmed += 1;
                continue;
            }
            ExpireOutcome::Skipped => {
                report.skipped += 1;
                continue;
            }
            ExpireOutcome::Unreadable { reason } => {
                tracing::error!(sku = %item.sku, request = %item.id, %reason, "unreadable request skipped");
                report.unreadable += 1;
                s.alert(alerts::unreadable(&item.sku, &reason)).await;
                continue;
            }
        }
        touched.insert(item.sku.clone());
    }
    send_reminders(s, reminders, now, report).await?;
    Ok(touched)
}

/// The reminders due, oldest place first (first come first told, whatever
/// order the store listed its due work in), paced on the schedule notify's
/// sends share for as long as a run may send; the rest stay due for the
/// next run.
async fn send_reminders(
    s: &Services,
    due: Vec<(&restock_store::Due, u32)>,
    now: restock_core::Millis,
    report: &mut SweepReport,
) -> Result<(), AppError> {
    if due.is_empty() {
        return Ok(());
    }
    let mut offers = Vec::with_capacity(due.len());
    for (item, episode) in due {
        if let Some(r) = s.store.request(&item.id).await? {
            offers.push((r, episode));
        }
    }
    offers.sort_by_key(|(r, _)| (r.key, r.id));
    let settings = s.settings().await?;
    let mut pacer = crate::notify::Pacer::new(s, &settings, std::time::Instant::now() + REMINDING);
    for (r, episode) in offers {
        match remind(s, &settings, &mut pacer, r, episode, now).await? {
            Reminder::Sent => report.reminded += 1,
            Reminder::NotSent => {}
            // The rest are due still: the next run sends them.
            Reminder::Later => break,
        }
    }
    Ok(())
}

/// The items' counters recounted from their unit markers; a drift is
/// corrected and told to the team.
async fn reconcile(
    s: &Services,
    touched: &BTreeSet<restock_core::Sku>,
    now: restock_core::Millis,
    report: &mut SweepReport,
) -> Result<(), AppError> {
    for sku in touched {
        if let Some(drift) = s.store.reconcile(sku, now).await?
            && drift.stored != drift.counted
        {
            tracing::warn!(%sku, ?drift, "counters corrected");
            report.corrected += 1;
            s.alert(alerts::drift(sku, &drift)).await;
        }
    }
    Ok(())
}

/// How often the sweep recounts every item's offers and holds.
pub(crate) const RECONCILE_EVERY_MINUTES: i64 = 15;

/// Whether `now` falls in `sku`'s minute of the reconcile cycle (the sweep
/// runs every minute, so each item is recounted every
/// [`RECONCILE_EVERY_MINUTES`]).
pub(crate) fn reconcile_due(sku: &restock_core::Sku, now: restock_core::Millis) -> bool {
    let slot = sku
        .as_str()
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    (now / 60_000).rem_euclid(RECONCILE_EVERY_MINUTES) == i64::from(slot) % RECONCILE_EVERY_MINUTES
}

/// How long a run may spend sending reminders (the function's timeout is
/// 50 s; the pacer stops 20 s before this).
const REMINDING: std::time::Duration = std::time::Duration::from_secs(45);

/// What became of a reminder due.
enum Reminder {
    /// The provider accepted it.
    Sent,
    /// Dropped (quiet hours, an opt-out), claimed by another run, or its
    /// send failed (not tried again).
    NotSent,
    /// No send slot left in this run: still due, for the next.
    Later,
}

/// The one reminder of an offer still unclaimed `remind_before` its end:
/// on the channel its notice went on, with a reserve link of its own (its
/// secret drawn now; the notice's link is not stored), never inside the
/// shopper's quiet hours and never to a contact that opted out (the
/// reminder is dropped then). Claimed before it is sent, so at most once
/// per offer whatever the retries; a send that fails is not tried again.
/// What became of it ([`Reminder`]).
async fn remind(
    s: &Services,
    settings: &restock_core::Settings,
    pacer: &mut crate::notify::Pacer<'_>,
    r: restock_store::Request,
    episode: u32,
    now: restock_core::Millis,
) -> Result<Reminder, AppError> {
    use restock_core::{LinkToken, RequestState, Window};
    let Some(entry) = s.store.catalogue_entry(&r.sku).await? else {
        return Ok(Reminder::NotSent);
    };
    if held_back(s, settings, &entry, &r, now).await? {
        s.store.claim_reminder(&r.id, episode, None, now).await?;
        return Ok(Reminder::NotSent);
    }
    if !pacer.turn(1).await? {
        return Ok(Reminder::Later);
    }
    let link = || LinkToken::new(r.sku.clone(), r.id, s.random());
    let (reserve, optout, manage) = (link(), link(), link());
    let links = restock_store::ReminderLinks {
        reserve: reserve.secret_hash(),
        optout: optout.secret_hash(),
        manage: manage.secret_hash(),
    };
    let Some(r) = s
        .store
        .claim_reminder(&r.id, episode, Some(&links), now)
        .await?
    else {
        return Ok(Reminder::NotSent);
    };
    let RequestState::Offered { expires_ms, .. } = r.state else {
        return Ok(Reminder::NotSent);
    };
    let Some(left) = Window::remaining(now, expires_ms) else {
        return Ok(Reminder::NotSent);
    };
    let message = reminder_message(
        settings,
        &entry,
        &r,
        episode,
        left,
        [&reserve, &optout, &manage],
    );
    match s.sender.send(&r.contact, &message).await {
        Ok(message_id) => {
            tracing::info!(sku = %r.sku, contact = %r.contact.masked(), "reminder sent");
            s.store
                .record_reminder(&r.id, episode, &message_id, now)
                .await?;
            Ok(Reminder::Sent)
        }
        Err(e) => {
            let e = e.masked();
            metrics::send_failed(&e);
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), error = ?e, "reminder not sent; not tried again");
            // What a refusal means holds for a reminder as for a notice:
            // the sender refused (all sending pauses), or the number
            // opted out (for good).
            match e {
                SendError::Sender(reason) => {
                    crate::notify::pause_sending(s, &reason, &r.sku, now).await?;
                }
                SendError::OptedOut => {
                    s.opt_out(&r.contact_key, OptOutVia::Carrier, now).await?;
                }
                _ => {}
            }
            Ok(Reminder::NotSent)
        }
    }
}

/// Whether a reminder due is dropped: the gate every notice passes (an item
/// ended or paused by the team, or all sending paused), the shopper's quiet
/// hours, an opt-out.
async fn held_back(
    s: &Services,
    settings: &restock_core::Settings,
    entry: &restock_core::CatalogueEntry,
    r: &restock_store::Request,
    now: restock_core::Millis,
) -> Result<bool, AppError> {
    let closed = !matches!(
        crate::notify::gate(s, entry, now).await?,
        crate::notify::Gate::Open
    );
    let mut sleepers = restock_core::Sleepers::new(&settings.quiet_hours, &settings.time_zone, now);
    let asleep = sleepers.asleep_until(&r.contact, r.zone.as_ref()).is_some();
    let held = closed || asleep || s.store.is_opted_out(&r.contact_key).await?;
    if held {
        tracing::info!(sku = %r.sku, request = %r.id, asleep, closed, "reminder dropped");
    }
    Ok(held)
}

/// The reminder as its channel carries it: the notice's words with the
/// reminder's phrase and its own links (reserve, opt-out, manage).
fn reminder_message(
    settings: &restock_core::Settings,
    entry: &restock_core::CatalogueEntry,
    r: &restock_store::Request,
    episode: u32,
    left: restock_core::Window,
    [reserve, optout, manage]: [&restock_core::LinkToken; 3],
) -> restock_core::Message {
    use restock_core::Message;
    use restock_core::notice::{NoticeInput, Phrase};
    let language = settings.language_for(r.language.as_ref());
    let texts = settings.texts(&language);
    let phrase = Phrase::check_in(&texts.word("reminder-phrase"), &language)
        .unwrap_or_else(|_| Phrase::fallback(&texts));
    let (reserve_url, optout_url, manage_url) = (
        settings.link("r", &reserve),
        settings.link("o", &optout),
        settings.link("m", &manage),
    );
    let input = NoticeInput {
        store: &settings.store_name,
        product: &entry.name,
        shopper: r.name.as_str(),
        phrase: &phrase,
        reserve_url: &reserve_url,
        optout_url: &optout_url,
        manage_url: &manage_url,
        window: left,
        texts: &texts,
        reminder: true,
    };
    let tags = restock_core::feedback::tags(&r.id, episode, &r.contact_key);
    Message::notice(r.contact.channel(), settings, &input, tags)
}
