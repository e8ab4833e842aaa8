//! Sending one message, whatever it is (a notice, a confirmation, a reminder):
//! the send schedule's pacing, the phrase Bedrock wrote for the restock, the
//! provider's refusals pausing all sending, and the notice's fate recorded.

use std::time::{Duration, Instant};

use restock_core::notice::{NoticeInput, Phrase, phrase_prompt};
use restock_core::{
    CatalogueEntry, Message, OptOutVia, RequestState, Settings, Sku, Texts, Window,
};
use restock_store::{Claim, NoticeOutcome, Offer};

use super::{DEADLINE_MARGIN, NotifyReport, PACE_BLOCK, SENDER_BACKOFF, wall_clock_ms};
use crate::metrics::{self, Metric};
use crate::ports::SendError;
use crate::{AppError, Services, alerts};

/// Send turns on the account-wide schedule: slots are reserved a block at
/// a time (concurrent passes together keep to `sends_per_second`), and a
/// turn is refused when the block would end past the pass's deadline.
pub(crate) struct Pacer<'a> {
    s: &'a Services,
    interval_ms: u64,
    deadline: Instant,
    slots: std::collections::VecDeque<Instant>,
}

impl<'a> Pacer<'a> {
    pub(crate) fn new(s: &'a Services, settings: &Settings, deadline: Instant) -> Self {
        let rate = u64::from(settings.sends_per_second.max(1));
        Self {
            s,
            interval_ms: 1_000u64.div_ceil(rate),
            deadline,
            slots: std::collections::VecDeque::new(),
        }
    }

    /// Waits for the next send slot, `left` sends still to go; false when
    /// the pass's time is nearly up (the caller hands the rest on).
    pub(crate) async fn turn(&mut self, left: usize) -> Result<bool, AppError> {
        if self.slots.is_empty() {
            let block = left.clamp(1, PACE_BLOCK);
            // Real time, not the business clock: the provider's rate is per second.
            let now = wall_clock_ms();
            let first = self
                .s
                .store
                .reserve_sends(block as u32, self.interval_ms as i64, now)
                .await?;
            let start = Instant::now() + Duration::from_millis((first - now).max(0) as u64);
            let interval = Duration::from_millis(self.interval_ms);
            if start + interval * block as u32 + DEADLINE_MARGIN > self.deadline {
                return Ok(false);
            }
            self.slots = (0..block as u32).map(|j| start + interval * j).collect();
        }
        let at = self.slots.pop_front().expect("filled above");
        tokio::time::sleep_until(at.into()).await;
        Ok(true)
    }
}

/// The restock's phrase in one language: stored, else one model call asking
/// for that language, checked by the core (its script too), else the fixed
/// sentence in that language. Whatever is used is stored for later waves.
pub(crate) async fn phrase_for(
    s: &Services,
    settings: &Settings,
    entry: &CatalogueEntry,
    episode: u32,
    texts: &Texts,
) -> Result<(Phrase, bool), AppError> {
    let language = texts.language();
    if let Some(stored) = s
        .store
        .restock_phrase(&entry.sku, episode, language)
        .await?
        && let Ok(phrase) = Phrase::check_in(&stored, language)
    {
        return Ok((phrase, false));
    }
    let (system, user) =
        phrase_prompt(&settings.store_name, &settings.voice, &entry.name, language);
    let (phrase, by_model) = match tokio::time::timeout(
        s.phrase_timeout,
        s.phraser.phrase(&system, &user),
    )
    .await
    {
        Ok(Ok(text)) => match Phrase::check_in(&text, language) {
            Ok(phrase) => (phrase, true),
            Err(why) => {
                tracing::warn!(sku = %entry.sku, %language, %why, "model's sentence refused; using the fixed template");
                metrics::phrase_fell_back("refused");
                (Phrase::fallback(texts), false)
            }
        },
        Ok(Err(e)) => {
            tracing::warn!(sku = %entry.sku, %language, error = %e, "model unavailable; using the fixed template");
            metrics::phrase_fell_back("unavailable");
            (Phrase::fallback(texts), false)
        }
        Err(_) => {
            tracing::warn!(sku = %entry.sku, %language, timeout_ms = s.phrase_timeout.as_millis() as u64, "model too slow; using the fixed template");
            metrics::phrase_fell_back("slow");
            (Phrase::fallback(texts), false)
        }
    };
    s.store
        .save_restock_phrase(&entry.sku, episode, language, phrase.as_str())
        .await?;
    Ok((phrase, by_model))
}

/// Opens the sender's pause (once) and tells the team the first time.
pub(crate) async fn pause_sending(
    s: &Services,
    reason: &str,
    sku: &Sku,
    now: restock_core::Millis,
) -> Result<(), AppError> {
    let until = now + SENDER_BACKOFF.as_millis();
    if s.store.pause_sender(reason, until, sku, now).await? {
        metrics::count(Metric::SendingPaused, 1);
        s.alert(alerts::sender_paused(
            reason,
            sku,
            &SENDER_BACKOFF.to_string(),
        ))
        .await;
    }
    Ok(())
}

pub(crate) async fn send_one(
    s: &Services,
    settings: &Settings,
    entry: &CatalogueEntry,
    offer: &Offer,
    episode: u32,
    (phrase, texts): (&Phrase, &Texts),
    report: &mut NotifyReport,
) -> Result<(), AppError> {
    let r = &offer.request;
    let now = s.clock.now_ms();
    let RequestState::Offered { expires_ms, .. } = r.state else {
        return Ok(());
    };
    // A slow wave (paced sends, a retried batch) can reach an offer after
    // its link has run out: a dead link is never sent, and a live one says
    // the time actually left, not the whole window.
    let Some(left) = Window::remaining(now, expires_ms) else {
        tracing::info!(sku = %r.sku, request = %r.id, "offer expired before its notice; not sent");
        report.expired += 1;
        return Ok(());
    };
    // One round trip: the claim (at most once, with this link) and the
    // opt-out check together; then the send, then its record.
    match s
        .store
        .claim_notice(
            &r.sku,
            &r.id,
            episode,
            &offer.reserve.secret_hash(),
            &r.contact_key,
        )
        .await?
    {
        Claim::Claimed => {}
        // (Covered is a confirmation's answer, never a notice's.)
        Claim::NotClaimable | Claim::Covered { .. } => return Ok(()),
        Claim::OptedOut => {
            // Opted out between the restock and now (recorded then): end it, free the unit (I5).
            s.opt_out(&r.contact_key, OptOutVia::Link, now).await?;
            report.opted_out += 1;
            return Ok(());
        }
    }
    let reserve_url = settings.link("r", &offer.reserve);
    let optout_url = settings.link("o", &offer.optout);
    let manage_url = settings.link("m", &offer.manage);
    let input = NoticeInput {
        store: &settings.store_name,
        product: &entry.name,
        shopper: r.name.as_str(),
        phrase,
        reserve_url: &reserve_url,
        optout_url: &optout_url,
        manage_url: &manage_url,
        window: left,
        texts,
        reminder: false,
    };
    // An email is tagged, so the provider's bounces and complaints name the offer.
    let tags = restock_core::feedback::tags(&r.id, episode, &r.contact_key);
    let message = Message::notice(r.contact.channel(), settings, &input, tags);
    // The provider's words, which may name the recipient, masked once here.
    let sent = s
        .sender
        .send(&r.contact, &message)
        .await
        .map_err(SendError::masked);
    if sent.is_ok()
        && let Some(before) = settings.remind_before
    {
        // The one reminder, `remind_before` the offer's end; the sweep sends it.
        let at = expires_ms - before.as_millis();
        record_notice_sent(s, entry, r, episode, sent, now, report).await?;
        s.store.schedule_reminder(&r.id, episode, at).await?;
        return Ok(());
    }
    record_notice_sent(s, entry, r, episode, sent, now, report).await
}

/// What a notice's send came to, on record: sent; given back to be sent
/// again (a transient failure, or the sender refused and sending pauses);
/// kept claimed and never resent (an unknown outcome); an opt-out for good;
/// or failed for good, the unit passing on and the team told.
pub(crate) async fn record_notice_sent(
    s: &Services,
    entry: &CatalogueEntry,
    r: &restock_store::Request,
    episode: u32,
    sent: Result<String, SendError>,
    now: restock_core::Millis,
    report: &mut NotifyReport,
) -> Result<(), AppError> {
    if let Err(e) = &sent {
        metrics::send_failed(e);
    }
    match sent {
        Ok(message_id) => {
            tracing::info!(sku = %r.sku, contact = %r.contact.masked(), channel = r.contact.channel().as_str(), "notice sent");
            s.store
                .record_notice(&r.id, episode, NoticeOutcome::Sent { message_id }, now)
                .await?;
            report.sent += 1;
            report.texts += usize::from(r.contact.channel() == restock_core::Channel::Sms);
        }
        Err(SendError::Transient(reason)) => {
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), %reason, "send failed transiently; will retry");
            s.store.release_notice(&r.sku, &r.id, episode).await?;
            report.transient += 1;
        }
        Err(SendError::Sender(reason)) => {
            // Not this shopper's fault: the claim is given back (the offer
            // stays live, re-armed on resume) and sending stops.
            tracing::error!(sku = %r.sku, %reason, "the provider refused the sender; sending paused");
            s.store.release_notice(&r.sku, &r.id, episode).await?;
            pause_sending(s, &reason, &r.sku, now).await?;
            report.paused = true;
        }
        Err(SendError::Unknown(reason)) => {
            // The claim stays: at most once per offer. An undelivered offer
            // lapses at its expiry and the sweep passes the unit on.
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), %reason, "send outcome unknown; not resending");
            report.uncertain += 1;
        }
        Err(SendError::OptedOut) => {
            // The number opted out at SNS: an opt-out for good (I5), which
            // ends the offer; the unit passes on.
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), "number opted out at SNS; opted out for good");
            s.opt_out(&r.contact_key, OptOutVia::Carrier, now).await?;
            report.opted_out += 1;
        }
        Err(e) => {
            let reason = e.to_string();
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), %reason, "send failed for good; the unit passes on");
            s.store
                .record_notice(
                    &r.id,
                    episode,
                    NoticeOutcome::Failed {
                        reason: reason.clone(),
                    },
                    now,
                )
                .await?;
            let waiting = s.store.stats(&r.sku, entry.shards).await?.waiting;
            s.alert(alerts::undeliverable(
                entry,
                &r.contact.masked(),
                &reason,
                waiting,
            ))
            .await;
            report.failed += 1;
        }
    }
    Ok(())
}
