//! notify: turns wakes on the DynamoDB stream into offers and notices.
//!
//! For each SKU woken: re-arm any live offer whose notice never went out
//! (fresh link secrets, since the old ones were never sent), make a new wave
//! of offers for the free units, find the restock's phrase (stored, else one
//! Bedrock call, else the fixed template), then send each notice in join
//! order, paced to the configured rate. Each notice is claimed before it is
//! sent, so a redelivered record never sends twice; a permanent failure ends
//! the offer (the unit passes on) and tells the team; a transient failure
//! gives the claim back and reports the records as batch item failures so
//! Lambda retries them. Then the item's pending confirmations (double
//! opt-in) go out on the same paced schedule, each claimed once.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::time::{Duration, Instant};

use restock_core::feedback::{MailDay, day_of};
use restock_core::notice::{NoticeInput, Phrase, phrase_prompt};
use restock_core::{CatalogueEntry, Language, Message, RequestState, Settings, Sku, Texts, Window};
use restock_store::{Claim, NoticeOutcome, Offer, WaveParams};

use crate::metrics::{self, Metric};
use crate::ports::SendError;
use crate::{AppError, Services, alerts};

/// What one SKU's notify pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NotifyReport {
    /// Confirmations sent (double opt-in).
    pub confirmations: usize,
    /// Sign-ups whose address was sent a confirmation within the day: no
    /// second mail; confirming that one confirms them.
    pub covered: usize,
    /// Offers made or re-armed.
    pub offers: usize,
    /// Notices accepted by the provider.
    pub sent: usize,
    /// Of those, texts.
    pub texts: usize,
    /// Notices refused for good (their units passed on).
    pub failed: usize,
    /// Offers skipped because the contact opted out.
    pub opted_out: usize,
    /// People passed over in their quiet hours (places kept), and unsent
    /// offers kept back because their shopper fell asleep.
    pub asleep: usize,
    /// Notices that failed transiently (to be retried).
    pub transient: usize,
    /// Notices whose fate the provider left unknown (not resent).
    pub uncertain: usize,
    /// Offers that had expired before their notice could go (never sent:
    /// the sweep lapses them and the unit passes on).
    pub expired: usize,
    /// Whether the phrase came from the model this time.
    pub phrased_by_model: bool,
    /// The item's launch is still to come: nothing was offered, and it is
    /// woken at the launch.
    pub before_launch: bool,
    /// Whether the wave hit its cap and handed the rest to a new pass.
    pub handed_on: bool,
    /// Whether sending is paused (a sender-side failure, this pass or
    /// before): nothing more was sent, the SKU is woken on resume.
    pub paused: bool,
}

/// How a pause of all sending by the team begins its reason (a provider's
/// refusal names the provider instead).
pub const TEAM_PAUSE_PREFIX: &str = "paused by the team: ";

/// How long sending stays paused after a sender-side failure before it
/// resumes by itself (shorter than an offer window, so held-back offers are
/// re-armed and sent before they run out).
pub const SENDER_BACKOFF: Window = Window::from_mins(5);

/// Ends the sender's pause and wakes every item it held back; the items
/// (`None` when sending was not paused). The sweep calls it once the pause's
/// time is up, `restock resume` at once.
///
/// # Errors
/// Store failures.
pub(crate) async fn resume_sending(
    store: &dyn restock_store::Store,
    now: restock_core::Millis,
) -> Result<Option<Vec<Sku>>, restock_store::StoreError> {
    let Some(skus) = store.resume_sender().await? else {
        return Ok(None);
    };
    for sku in &skus {
        let episode = store.snapshot(sku).await?.stock.episode;
        store.wake_again(sku, episode, now).await?;
    }
    tracing::info!(?skus, "sending resumed");
    Ok(Some(skus))
}

/// A SKU woken by one or more records of the stream. The AWS adapter decodes
/// stream records into these (`restock_aws::stream`); local mode makes them
/// from the store's wake log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Woken {
    /// The item.
    pub sku: Sku,
    /// The ids of the records that woke it (their sequence numbers), to be
    /// reported for retry if the pass fails.
    pub records: Vec<String>,
}

/// Runs one notify pass per SKU woken, within the invocation's deadline (the
/// Lambda context's); answers the records whose pass failed (or met a
/// transient send failure), which the stream should redeliver.
pub async fn handle_wakes_until(s: &Services, woken: Vec<Woken>, deadline: Instant) -> Vec<String> {
    let mut retry = Vec::new();
    for Woken { sku, records } in woken {
        let failed = match notify_sku_until(s, &sku, deadline).await {
            Ok(report) => {
                tracing::info!(%sku, ?report, "notify pass");
                report.transient > 0
            }
            Err(e) => {
                tracing::error!(%sku, error = %e, retryable = e.is_retryable(), "notify pass failed");
                true
            }
        };
        if failed {
            retry.extend(records);
        }
    }
    retry
}

/// Milliseconds since the epoch by the machine's clock: the send schedule
/// is kept in real time whatever the business clock says.
fn wall_clock_ms() -> restock_core::Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as restock_core::Millis)
}

/// Send slots reserved on the shared schedule at a time.
const PACE_BLOCK: usize = 50;

/// Confirmations one pass sends at most (the rest go in the next pass).
pub(crate) const CONFIRMATIONS_PER_PASS: usize = 500;

/// How long before its deadline a pass stops sending and hands on.
const DEADLINE_MARGIN: Duration = Duration::from_secs(20);

/// How long a pass may take when no deadline is given (notify's timeout is
/// 300 s).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(240);

/// One notify pass for a SKU, with the default time budget.
///
/// # Errors
/// Store or settings failures; the records are then retried.
pub async fn notify_sku(s: &Services, sku: &Sku) -> Result<NotifyReport, AppError> {
    notify_sku_until(s, sku, Instant::now() + DEFAULT_BUDGET).await
}

/// One notify pass for a SKU that sends nothing past `deadline` (less a
/// margin): what is left is handed to the next pass with a wake.
///
/// # Errors
/// Store or settings failures; the records are then retried.
pub async fn notify_sku_until(
    s: &Services,
    sku: &Sku,
    deadline: Instant,
) -> Result<NotifyReport, AppError> {
    let began = Instant::now();
    let pass = pass(s, sku, deadline).await;
    metrics::pass_took(began.elapsed());
    if let Ok(report) = &pass {
        metrics::count(Metric::NoticesSent, report.sent);
        metrics::count(Metric::ConfirmationsSent, report.confirmations);
        metrics::count(Metric::HandedOn, usize::from(report.handed_on));
    }
    pass
}

/// [`notify_sku_until`]'s work.
async fn pass(s: &Services, sku: &Sku, deadline: Instant) -> Result<NotifyReport, AppError> {
    let settings = s.settings().await?;
    let mut report = NotifyReport::default();
    let Some(entry) = s.store.catalogue_entry(sku).await? else {
        tracing::warn!(%sku, "woken for an item no longer in the catalogue");
        return Ok(report);
    };
    // An item the shop no longer sells tells nobody: no offers, no
    // confirmations. Its queue is kept for the day it is listed again.
    if entry.ended.is_some() {
        tracing::info!(%sku, "woken for an item the shop no longer sells; nobody is told");
        return Ok(report);
    }
    // Paused by the team: nothing is offered or sent (an offer already sent
    // stays good); `restock resume --sku` wakes the item.
    if let Some(pause) = &entry.paused {
        tracing::info!(%sku, reason = %pause.reason, "notices paused by the team; this item waits for the resume");
        metrics::count(Metric::HeldByTeam, 1);
        report.paused = true;
        return Ok(report);
    }
    // Sending paused by a sender-side failure: nothing is offered or sent;
    // the item is noted and woken when sending resumes.
    let now = s.clock.now_ms();
    if let Some(pause) = s.store.sender_pause().await?
        && pause.until > now
    {
        s.store
            .pause_sender(&pause.reason, pause.until, sku, now)
            .await?;
        tracing::warn!(%sku, reason = %pause.reason, "sending paused; this item waits for the resume");
        if pause.reason.starts_with(TEAM_PAUSE_PREFIX) {
            metrics::count(Metric::HeldByTeam, 1);
        }
        report.paused = true;
        return Ok(report);
    }
    let mut pacer = Pacer::new(s, &settings, deadline);
    let (offers, episode) = match entry.launch_at {
        // Before its launch nothing is offered: stock reported early is
        // held back, and the item is woken at the launch for its first
        // wave. Confirmations still go.
        Some(at) if at > now => {
            s.store.wake_at(sku, at).await?;
            tracing::info!(%sku, launch_at = at, "not launched yet; its first wave goes at the launch");
            report.before_launch = true;
            (Vec::new(), 0)
        }
        _ => gather_offers(s, &settings, &entry, &mut report).await?,
    };
    if send_notices(
        s,
        &settings,
        &entry,
        &offers,
        episode,
        &mut pacer,
        &mut report,
    )
    .await?
    {
        send_confirmations(s, &settings, &entry, &mut pacer, &mut report).await?;
    }
    finish_pass(s, report, now).await
}

/// The offers this pass sends, oldest first, and the wave's restock: the
/// unsent ones re-armed first (a fresh wave's offers are unsent too until
/// claimed), then a new wave. A wave stops at the cap so one pass stays
/// well inside its timeout; the units still free go to the next pass, which
/// a wake starts.
async fn gather_offers(
    s: &Services,
    settings: &Settings,
    entry: &CatalogueEntry,
    report: &mut NotifyReport,
) -> Result<(Vec<Offer>, u32), AppError> {
    let sku = &entry.sku;
    let mut random = || s.random();
    let params = WaveParams {
        share: settings.list_share,
        offer_window: settings.offer_window,
        shards: entry.shards,
        max_offers: s.max_offers_per_wave,
        quiet_hours: settings.quiet_hours,
        shop_zone: settings.time_zone.clone(),
    };
    let now = s.clock.now_ms();
    // An unsent offer whose shopper has fallen asleep since is not sent: it
    // runs out unsent and its shopper goes back to their place, the unit
    // to the next person awake.
    let mut sleepers = params.sleepers(now);
    let mut offers = s.store.reissue_unsent(sku, &mut random).await?;
    offers.retain(|o| {
        let asleep = sleepers.asleep_until(o.request.contact.channel(), o.request.zone.as_ref());
        if asleep.is_some() {
            tracing::info!(%sku, request = %o.request.id, "unsent offer kept back: quiet hours");
            report.asleep += 1;
        }
        asleep.is_none()
    });
    let wave = s
        .store
        .create_offers(sku, &params, now, &mut random)
        .await?;
    for (id, reason) in &wave.skipped {
        tracing::info!(%sku, request = %id, ?reason, "passed over");
    }
    report.asleep += wave.asleep as usize;
    if wave.offers.len() >= params.max_offers as usize {
        s.store.wake_again(sku, wave.episode, now).await?;
        report.handed_on = true;
        tracing::info!(%sku, offers = wave.offers.len(), "wave capped; the rest handed to the next pass");
    } else if let Some(at) = wave.wake_at {
        // Units are left over and someone was passed over asleep: the
        // sweep wakes the item when the first of them wakes.
        s.store.wake_at(sku, at).await?;
        tracing::info!(%sku, asleep = wave.asleep, wake_at = at, "units left over while people sleep; woken when the first wakes");
    }
    offers.extend(wave.offers);
    offers.sort_by_key(|o| o.request.key);
    report.offers = offers.len();
    Ok((offers, wave.episode))
}

/// Sends each offer's notice, paced on the account-wide schedule every pass
/// shares (concurrent passes together keep to `sends_per_second`), one
/// phrase per restock. A pass that would send past its deadline hands the
/// rest on; a sender pause leaves them unsent and live. Answers whether the
/// pass goes on to confirmations.
async fn send_notices(
    s: &Services,
    settings: &Settings,
    entry: &CatalogueEntry,
    offers: &[Offer],
    wave_episode: u32,
    pacer: &mut Pacer<'_>,
    report: &mut NotifyReport,
) -> Result<bool, AppError> {
    let mut phrases: HashMap<(u32, Language), Phrase> = HashMap::new();
    let mut words: HashMap<Language, Texts> = HashMap::new();
    for (i, offer) in offers.iter().enumerate() {
        let RequestState::Offered { episode, .. } = offer.request.state else {
            continue;
        };
        // The language it joined in, if the shop still offers it.
        let language = settings.language_for(offer.request.language.as_ref());
        let texts = words
            .entry(language.clone())
            .or_insert_with(|| settings.texts(&language));
        let key = (episode, language);
        if let Entry::Vacant(slot) = phrases.entry(key.clone()) {
            let (phrase, by_model) = phrase_for(s, settings, entry, episode, texts).await?;
            report.phrased_by_model |= by_model;
            slot.insert(phrase);
        }
        if !pacer.turn(offers.len() - i).await? {
            s.store
                .wake_again(&entry.sku, wave_episode, s.clock.now_ms())
                .await?;
            report.handed_on = true;
            tracing::info!(sku = %entry.sku, left = offers.len() - i, "the pass's time is nearly up; the rest handed to the next pass");
            return Ok(false);
        }
        send_one(
            s,
            settings,
            entry,
            offer,
            episode,
            (&phrases[&key], texts),
            report,
        )
        .await?;
        if report.paused {
            // The rest stay unsent and live; the resume re-arms and sends them.
            return Ok(false);
        }
    }
    Ok(true)
}

/// Then confirmations (double opt-in), after the notices: a unit waits on a
/// notice, nothing waits on a confirmation. A bounded batch per pass; a
/// full batch hands the rest on with a wake.
async fn send_confirmations(
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
        .pending_confirmations(sku, CONFIRMATIONS_PER_PASS)
        .await?;
    if pending.len() >= CONFIRMATIONS_PER_PASS {
        s.store.wake_again(sku, 0, s.clock.now_ms()).await?;
        report.handed_on = true;
    }
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

/// The pass's figures: the sender's health, one write per pass, not per message.
async fn finish_pass(
    s: &Services,
    report: NotifyReport,
    now: restock_core::Millis,
) -> Result<NotifyReport, AppError> {
    if report.sent > 0 || report.confirmations > 0 {
        let sent = MailDay {
            sent: report.sent as u32,
            texts_sent: report.texts as u32,
            confirm_sent: report.confirmations as u32,
            ..MailDay::default()
        };
        s.store.count_mail(&day_of(now), sent).await?;
    }
    Ok(report)
}

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
async fn phrase_for(
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

/// Sends one sign-up its confirmation (double opt-in): claimed first, at
/// most once, with fresh links whose hashes the claim keeps.
async fn send_confirmation(
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
        Claim::Covered => {
            tracing::info!(sku = %r.sku, contact = %r.contact.masked(), "address asked to confirm within the day; its confirmation covers this sign-up");
            report.covered += 1;
            return Ok(());
        }
        Claim::OptedOut => {
            s.store.opt_out_contact(&r.contact_key, now).await?;
            report.opted_out += 1;
            return Ok(());
        }
    }
    let (confirm_url, manage_url, optout_url) = (
        settings.link("c", &confirm),
        settings.link("m", &manage),
        settings.link("o", &optout),
    );
    let input = restock_core::confirm::ConfirmInput {
        store: &settings.store_name,
        product: &entry.name,
        confirm_url: &confirm_url,
        manage_url: &manage_url,
        optout_url: &optout_url,
        window: left,
        texts: &settings.texts(&settings.language_for(r.language.as_ref())),
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
    match sent {
        Ok(_) => {
            tracing::info!(sku = %r.sku, contact = %r.contact.masked(), "confirmation sent");
            report.confirmations += 1;
        }
        Err(SendError::Transient(reason)) => {
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), %reason, "confirmation failed transiently; will retry");
            s.store
                .release_confirmation(&r.sku, &r.id, &links.confirm)
                .await?;
            report.transient += 1;
        }
        Err(SendError::Sender(reason)) => {
            tracing::error!(sku = %r.sku, %reason, "the provider refused the sender; sending paused");
            s.store
                .release_confirmation(&r.sku, &r.id, &links.confirm)
                .await?;
            pause_sending(s, &reason, &r.sku, now).await?;
            report.paused = true;
        }
        Err(SendError::Unknown(reason)) => {
            // Maybe delivered: never resent; unconfirmed, it ends with its window.
            tracing::warn!(sku = %r.sku, contact = %r.contact.masked(), %reason, "confirmation outcome unknown; not resending");
            report.uncertain += 1;
        }
        Err(SendError::OptedOut) => {
            s.store.opt_out_contact(&r.contact_key, now).await?;
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

/// Opens the sender's pause (once) and tells the team the first time.
async fn pause_sending(
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

async fn send_one(
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
        Claim::NotClaimable | Claim::Covered => return Ok(()),
        Claim::OptedOut => {
            // Opted out between the restock and now: end it, free the unit (I5).
            s.store.opt_out_contact(&r.contact_key, now).await?;
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
async fn record_notice_sent(
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
            s.store.opt_out_contact(&r.contact_key, now).await?;
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
