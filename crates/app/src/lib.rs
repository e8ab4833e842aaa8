//! # restock-app
//!
//! The handlers of restock's four functions, on the store port and the ports
//! in [`ports`]. Lambda binaries, the local server and the tests all run
//! these same handlers; only the adapters behind the ports differ.
//!
//! - [`capture`]: the shopper-facing router (notify-me, status, reserve links,
//!   opt-out), with CORS, rate limits and a body limit.
//! - [`detect`]: the store-facing router (Shopify, WooCommerce, generic stock
//!   and order webhooks).
//! - [`notify`]: wakes from the DynamoDB stream → offers → one phrase → sends.
//! - [`events`]: restock's events, from the stream to the shop's event bus.
//! - [`sweep`]: the scheduled sweep.
//! - [`admin`]: the operator's commands, shared by the `restock` CLI and the
//!   local server, and signed test webhooks.
//! - [`alerts`]: what the team is told, and how it reads.
//! - [`health`]: what stands between a deployment and its shoppers
//!   (`restock doctor`, the dashboard's banner).
//! - [`metrics`]: what is counted for the team's CloudWatch dashboard.
//! - `pages`: the small HTML pages shoppers see.
//! - [`ports`]: sender, phraser, keyring, alerts, clock, entropy, and the
//!   adapters that need no cloud.
#![warn(missing_docs)]

pub mod admin;
pub mod alerts;
pub mod capture;
pub mod detect;
pub mod events;
pub mod feedback;
pub mod health;
pub mod inbound;
pub(crate) mod levels;
pub mod metrics;
pub mod notify;
pub(crate) mod pages;
pub mod ports;
pub mod privacy;
pub mod pull;
pub mod sweep;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use restock_core::Settings;
use restock_store::{Store, StoreError};

use crate::ports::{Alert, Alerts, Clock, Entropy, KeyError, Keyring, Phraser, Sender};

/// How long the settings document is cached in a warm function.
const SETTINGS_TTL: Duration = Duration::from_secs(30);

/// How long a warm function keeps an item's catalogue entry for the
/// shopper's paths ([`Services::entry`]): a hot item's one entry is asked
/// about on every sign-up, page and status read (a click reads the table).
/// An entry changed by the team (ended, shards raised, a new checkout URL)
/// is seen within it.
pub const ENTRY_TTL: Duration = Duration::from_secs(10);

/// The most entries a warm function keeps (an unknown SKU is never kept,
/// so a caller naming made-up items cannot grow it).
const ENTRIES_KEPT: usize = 1_024;

/// The most offers one notify invocation makes (the rest wait for the next wake).
pub const MAX_OFFERS_PER_WAVE: u32 = 1_000;

/// Everything a handler needs, built once per process.
pub struct Services {
    /// Where state lives.
    pub store: Arc<dyn Store>,
    /// Sends notices.
    pub sender: Arc<dyn Sender>,
    /// Writes the batch's sentence.
    pub phraser: Arc<dyn Phraser>,
    /// Webhook keys and the contact pepper.
    pub keyring: Arc<dyn Keyring>,
    /// Tells the team.
    pub alerts: Arc<dyn Alerts>,
    /// The time.
    pub clock: Arc<dyn Clock>,
    /// Randomness.
    pub entropy: Arc<dyn Entropy>,
    /// The most offers one notify pass makes ([`MAX_OFFERS_PER_WAVE`]).
    pub max_offers_per_wave: u32,
    /// How long the model may take before the fixed template is used.
    pub phrase_timeout: Duration,
    /// The shop platforms' Admin APIs, for the stock pull ([`ports::NoPlatforms`]
    /// unless the function pulls).
    pub platforms: Arc<dyn ports::Platforms>,
    /// The shop's event bus ([`ports::NoEventBus`] unless the function
    /// publishes restock's events).
    pub events: Arc<dyn ports::EventSink>,
    /// Where a privacy erasure goes to be carried out (the sweep, in
    /// production); none: it is carried out where it is asked.
    pub erasures: Option<Arc<dyn privacy::ErasureQueue>>,
    settings: Mutex<Option<(Instant, Arc<Settings>)>>,
    entries: Mutex<
        std::collections::HashMap<
            restock_core::Sku,
            (restock_core::Millis, restock_core::CatalogueEntry),
        >,
    >,
}

/// A handler failure that is not the caller's fault.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The keys could not be had.
    #[error(transparent)]
    Keys(#[from] KeyError),
    /// No settings document is stored yet.
    #[error("no settings are stored yet: run `restock settings put settings.toml`")]
    NoSettings,
    /// Work could not be handed on (a shop's erasure's next pages).
    #[error(transparent)]
    HandOn(#[from] ports::PublishError),
}

impl AppError {
    /// Whether a retry can help (Lambda retries; HTTP callers get a 503).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Store(e) => e.is_retryable(),
            Self::Keys(_) => true,
            Self::NoSettings => false,
            Self::HandOn(_) => true,
        }
    }
}

impl Services {
    /// Wires the ports together.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Arc<dyn Store>,
        sender: Arc<dyn Sender>,
        phraser: Arc<dyn Phraser>,
        keyring: Arc<dyn Keyring>,
        alerts: Arc<dyn Alerts>,
        clock: Arc<dyn Clock>,
        entropy: Arc<dyn Entropy>,
    ) -> Self {
        Self {
            store,
            sender,
            phraser,
            keyring,
            alerts,
            clock,
            entropy,
            max_offers_per_wave: MAX_OFFERS_PER_WAVE,
            phrase_timeout: Duration::from_secs(2),
            platforms: Arc::new(ports::NoPlatforms),
            events: Arc::new(ports::NoEventBus),
            erasures: None,
            settings: Mutex::new(None),
            entries: Mutex::default(),
        }
    }

    /// Opts `contact` out for good, recorded as coming `via` (the first
    /// record stands), and ends its live requests; how many it ended.
    ///
    /// # Errors
    /// Store failures.
    pub async fn opt_out(
        &self,
        contact: &restock_core::ContactKey,
        via: restock_core::OptOutVia,
        now: restock_core::Millis,
    ) -> Result<u32, AppError> {
        Ok(self.store.opt_out_contact(contact, via, now).await?)
    }

    /// The settings, cached for a short while so a warm function does not
    /// read them on every request.
    ///
    /// # Errors
    /// [`AppError::NoSettings`] before the operator stores them.
    pub async fn settings(&self) -> Result<Arc<Settings>, AppError> {
        if let Some((at, settings)) = self.settings.lock().expect("settings lock").as_ref()
            && at.elapsed() < SETTINGS_TTL
        {
            return Ok(settings.clone());
        }
        let settings = Arc::new(self.store.settings().await?.ok_or(AppError::NoSettings)?);
        *self.settings.lock().expect("settings lock") = Some((Instant::now(), settings.clone()));
        Ok(settings)
    }

    /// `sku`'s catalogue entry, kept for [`ENTRY_TTL`] in a warm function:
    /// what a shopper's request reads of its item. Decisions that gate a
    /// unit are the store's, on its own items, never on this copy.
    ///
    /// # Errors
    /// The store's, when it cannot read the entry.
    pub async fn entry(
        &self,
        sku: &restock_core::Sku,
    ) -> Result<Option<restock_core::CatalogueEntry>, StoreError> {
        let now = self.clock.now_ms();
        let ttl = ENTRY_TTL.as_millis() as restock_core::Millis;
        if let Some((at, entry)) = self.entries.lock().expect("entries lock").get(sku)
            && (*at..*at + ttl).contains(&now)
        {
            return Ok(Some(entry.clone()));
        }
        let entry = self.store.catalogue_entry(sku).await?;
        if let Some(entry) = &entry {
            let mut kept = self.entries.lock().expect("entries lock");
            if kept.len() >= ENTRIES_KEPT {
                kept.clear();
            }
            kept.insert(sku.clone(), (now, entry.clone()));
        }
        Ok(entry)
    }

    /// Raises an alert; a failure to alert is logged, never fatal.
    pub async fn alert(&self, alert: Alert) {
        if let Err(e) = self.alerts.alert(&alert).await {
            tracing::error!(error = %e, subject = %alert.subject, "could not alert the team");
        }
    }

    /// 16 random bytes.
    pub fn random(&self) -> [u8; 16] {
        self.entropy.bytes16()
    }
}
