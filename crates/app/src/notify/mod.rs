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
//!
//! The pass is here; `confirm` sends the confirmations and `send` one
//! message of any kind (the pacing, the provider's refusals, the fate).

mod confirm;
mod send;

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::time::{Duration, Instant};

use confirm::send_confirmations;
use restock_core::feedback::{MailDay, day_of};
use restock_core::notice::Phrase;
use restock_core::{CatalogueEntry, Language, RequestState, Settings, Sku, Texts, Window};
use restock_store::{Offer, WaveParams};
use send::phrase_for;
use send::send_one;
pub(crate) use send::{Pacer, pause_sending};

use crate::metrics::{self, Metric};
use crate::{AppError, Services};

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
    let now = s.clock.now_ms();
    match gate(s, &entry, now).await? {
        Gate::Open => {}
        Gate::Ended => {
            tracing::info!(%sku, "woken for an item the shop no longer sells; nobody is told");
            return Ok(report);
        }
        Gate::PausedByTeam(reason) => {
            tracing::info!(%sku, %reason, "notices paused by the team; this item waits for the resume");
            metrics::count(Metric::HeldByTeam, 1);
            report.paused = true;
            return Ok(report);
        }
        Gate::SendingPaused(pause) => {
            // Noted, and woken when sending resumes.
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

/// Whether anything may be sent about an item now: the one gate a notice,
/// a confirmation and a reminder all pass, so they cannot drift apart.
pub(crate) enum Gate {
    /// Nothing stops it.
    Open,
    /// The shop no longer sells the item: nobody is told (its queue is kept
    /// for the day it is listed again).
    Ended,
    /// The team paused the item's notices; `restock resume --sku` lifts it.
    PausedByTeam(String),
    /// All sending is paused (by the team, or by the provider's refusal).
    SendingPaused(restock_store::SenderPause),
}

/// The [`Gate`] for `entry` at `now`.
pub(crate) async fn gate(
    s: &Services,
    entry: &CatalogueEntry,
    now: restock_core::Millis,
) -> Result<Gate, AppError> {
    if entry.ended.is_some() {
        return Ok(Gate::Ended);
    }
    if let Some(pause) = &entry.paused {
        return Ok(Gate::PausedByTeam(pause.reason.clone()));
    }
    Ok(match s.store.sender_pause().await? {
        Some(pause) if pause.until > now => Gate::SendingPaused(pause),
        _ => Gate::Open,
    })
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
        quiet_hours: settings.quiet_hours.clone(),
        shop_zone: settings.time_zone.clone(),
    };
    let now = s.clock.now_ms();
    // An unsent offer whose shopper has fallen asleep since is not sent: it
    // runs out unsent and its shopper goes back to their place, the unit
    // to the next person awake.
    let mut sleepers = params.sleepers(now);
    let mut offers = s.store.reissue_unsent(sku, &mut random).await?;
    offers.retain(|o| {
        let asleep = sleepers.asleep_until(&o.request.contact, o.request.zone.as_ref());
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
