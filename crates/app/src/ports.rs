//! The ports the handlers speak through, one small trait per capability, and
//! the adapters that need no cloud: an outbox sender, a fixed phraser, a
//! static keyring, recorded alerts, a system or manual clock, OS entropy.
//! The AWS adapters live in `restock-aws`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use restock_core::notice::{EmailNotice, SmsNotice};
use restock_core::webhook::WebhookKeys;
use restock_core::{Contact, Message, Platform};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// Why a send did not go out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// It never will (rejected address, unverified sender): the unit passes on.
    #[error("permanent send failure: {0}")]
    Permanent(String),
    /// The number or address opted out at the provider: recorded as an opt-out.
    #[error("the recipient opted out at the provider")]
    OptedOut,
    /// It may next time (throttling, a service error): it was not accepted.
    #[error("transient send failure: {0}")]
    Transient(String),
    /// The sender cannot send to anyone right now (the account is paused or
    /// in the sandbox, the identity is unverified, a quota or rate is
    /// exhausted): not the recipient's fault. Sending stops for a back-off
    /// and every request keeps its place.
    #[error("the sender cannot send: {0}")]
    Sender(String),
    /// The provider may have accepted it (a timeout or a dropped connection
    /// after the request went out). Never resent, so nobody is told twice; if
    /// it never arrives, the offer lapses and its unit passes on.
    #[error("send outcome unknown: {0}")]
    Unknown(String),
}

impl SendError {
    /// The same failure with every address and number in the provider's
    /// text masked ([`restock_core::contact::mask_personal`]): what notify
    /// keeps, logs, alerts and publishes.
    pub fn masked(self) -> Self {
        use restock_core::contact::mask_personal;
        match self {
            Self::Permanent(t) => Self::Permanent(mask_personal(&t)),
            Self::Transient(t) => Self::Transient(mask_personal(&t)),
            Self::Sender(t) => Self::Sender(mask_personal(&t)),
            Self::Unknown(t) => Self::Unknown(mask_personal(&t)),
            Self::OptedOut => Self::OptedOut,
        }
    }
}

/// Sends messages: SES v2 and SNS in production, an outbox locally.
#[async_trait]
pub trait Sender: Send + Sync {
    /// Sends `message` to `to` by its channel; gives the provider's message
    /// id. A message for another channel than the contact's is refused
    /// ([`SendError::Permanent`]).
    async fn send(&self, to: &Contact, message: &Message) -> Result<String, SendError>;
}

/// The refusal for a message whose channel is not the contact's.
pub fn wrong_channel(to: &Contact, message: &Message) -> SendError {
    SendError::Permanent(format!(
        "a {} message cannot go to a {} contact",
        message.channel().as_str(),
        to.channel().as_str()
    ))
}

/// Why the model gave no words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("phrasing failed: {0}")]
pub struct PhraseError(pub String);

/// Writes one sentence for a notice: Bedrock in production.
#[async_trait]
pub trait Phraser: Send + Sync {
    /// The model's raw answer to a system prompt and a user message.
    async fn phrase(&self, system: &str, user: &str) -> Result<String, PhraseError>;
}

/// Why the webhook keys could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("webhook keys unavailable: {0}")]
pub struct KeyError(pub String);

/// The webhook keys and the contact pepper: Secrets Manager in production.
#[async_trait]
pub trait Keyring: Send + Sync {
    /// The current keys (cached by the adapter).
    async fn keys(&self) -> Result<Arc<Secrets>, KeyError>;
}

/// The secret's contents: webhook keys per platform, the pepper that keys
/// contact hashes, and each platform's Admin API access for the stock pull.
#[derive(Clone)]
pub struct Secrets {
    /// Webhook keys, current first.
    pub webhooks: WebhookKeys,
    /// The key for contact hashes (never changes once shoppers have joined).
    pub contact_pepper: Vec<u8>,
    /// Admin API access per platform, as the secret has it under
    /// [`Platform::api_secret_key`] (`shopify_admin`, `woocommerce_api`);
    /// the platform's API adapter reads it.
    pub platform_api: BTreeMap<Platform, serde_json::Value>,
    /// Klaviyo's API access (`klaviyo`: `private_key`), when the shop hands
    /// restock's events to Klaviyo; its adapter reads it.
    pub klaviyo: Option<serde_json::Value>,
}

/// Why a platform's level could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    /// No API access for this platform in the keys secret.
    #[error("no {0} API access in the keys secret")]
    NotConfigured(Platform),
    /// The platform could not be reached or answered with an error.
    #[error("{platform} API: {reason}")]
    Failed {
        /// The platform.
        platform: Platform,
        /// What went wrong (never a credential).
        reason: String,
    },
    /// The platform could not be reached, or said it cannot serve now (a
    /// 5xx, a 429, GraphQL's `THROTTLED` after its retries): worth trying
    /// again later.
    #[error("{platform} API: {reason}")]
    Unavailable {
        /// The platform.
        platform: Platform,
        /// What went wrong (never a credential).
        reason: String,
    },
    /// The platform does not know the item.
    #[error("{platform} has no item {id}")]
    NotFound {
        /// The platform.
        platform: Platform,
        /// The platform's id.
        id: u64,
    },
}

/// A level the platform reported at one of its locations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PulledLevel {
    /// The location, named as the platform's stock webhooks name it.
    pub location: String,
    /// The level there.
    pub level: restock_core::Level,
}

/// One of the shop's locations, as its platform describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShopLocation {
    /// Its id, as the platform's stock webhooks name it.
    pub id: String,
    /// Whether it fulfils online orders.
    pub online: bool,
}

/// The shop platforms' Admin APIs, read for the stock pull.
#[async_trait]
pub trait Platforms: Send + Sync {
    /// The item's level at each of the platform's locations, read with
    /// `access` (the platform's entry in the keys secret).
    async fn levels(
        &self,
        platform: Platform,
        access: &serde_json::Value,
        id: u64,
    ) -> Result<Vec<PulledLevel>, PlatformError>;

    /// The shop's locations and whether each fulfils online orders, read
    /// with `access`; none for a platform whose stock has no locations
    /// (WooCommerce: a site's stock is the stock it sells).
    async fn locations(
        &self,
        _platform: Platform,
        _access: &serde_json::Value,
    ) -> Result<Vec<ShopLocation>, PlatformError> {
        Ok(Vec::new())
    }
}

/// No platform APIs (the functions that do not pull, local mode without
/// access): every read says so.
pub struct NoPlatforms;

#[async_trait]
impl Platforms for NoPlatforms {
    async fn levels(
        &self,
        platform: Platform,
        _: &serde_json::Value,
        _: u64,
    ) -> Result<Vec<PulledLevel>, PlatformError> {
        Err(PlatformError::NotConfigured(platform))
    }
}

impl Secrets {
    /// Reads the secret's JSON: the operator's webhook keys plus
    /// `contact_pepper`, which the template generates.
    ///
    /// # Errors
    /// [`KeyError`] naming what is wrong, never echoing a key.
    pub fn from_json(json: &str) -> Result<Self, KeyError> {
        let webhooks = WebhookKeys::from_json(json).map_err(|e| KeyError(e.to_string()))?;
        let secret: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(json).map_err(|_| KeyError("the secret is not JSON".into()))?;
        let contact_pepper = secret
            .get("contact_pepper")
            .and_then(serde_json::Value::as_str)
            .filter(|p| p.len() >= 16)
            .ok_or_else(|| {
                KeyError("the secret needs a contact_pepper of at least 16 characters".into())
            })?;
        let platform_api = Platform::ALL
            .into_iter()
            .filter_map(|p| {
                let access = secret.get(p.api_secret_key()?)?;
                (!access.is_null()).then(|| (p, access.clone()))
            })
            .collect();
        Ok(Self {
            webhooks,
            contact_pepper: contact_pepper.as_bytes().to_vec(),
            platform_api,
            klaviyo: secret.get("klaviyo").filter(|k| !k.is_null()).cloned(),
        })
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let api: Vec<_> = self.platform_api.keys().map(|p| p.name()).collect();
        write!(
            f,
            "Secrets {{ webhooks: {:?}, contact_pepper: redacted, platform_api: {api:?}, klaviyo: {} }}",
            self.webhooks,
            if self.klaviyo.is_some() {
                "redacted"
            } else {
                "none"
            },
        )
    }
}

/// A message for the shop's team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alert {
    /// One line: what needs attention.
    pub subject: String,
    /// The item, the queue, what happened and what to do.
    pub body: String,
}

/// Why an alert could not be raised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("alert not delivered: {0}")]
pub struct AlertError(pub String);

/// Tells the team: an SNS topic in production.
#[async_trait]
pub trait Alerts: Send + Sync {
    /// Publishes one alert.
    async fn alert(&self, alert: &Alert) -> Result<(), AlertError>;
}

/// The time.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> OffsetDateTime;

    /// Now in ms since the epoch.
    fn now_ms(&self) -> i64 {
        (self.now().unix_timestamp_nanos() / 1_000_000) as i64
    }
}

/// Random bytes for ids and link secrets.
pub trait Entropy: Send + Sync {
    /// 16 fresh random bytes.
    fn bytes16(&self) -> [u8; 16];
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// A clock that moves only when told: tests and demos.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock stopped at `ms` since the epoch.
    pub fn at_ms(ms: i64) -> Self {
        Self(AtomicI64::new(ms))
    }

    /// Moves the clock forward.
    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock.
    pub fn set_ms(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        let ms = self.0.load(Ordering::SeqCst);
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).expect("ms in range")
    }
}

/// The operating system's randomness.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsEntropy;

impl Entropy for OsEntropy {
    fn bytes16(&self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the OS has randomness");
        bytes
    }
}

/// A notice as the outbox keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "channel", rename_all = "lowercase")]
pub enum Sent {
    /// An email.
    Email {
        /// The recipient.
        to: String,
        /// What was sent.
        notice: EmailNotice,
    },
    /// An SMS.
    Sms {
        /// The recipient.
        to: String,
        /// What was sent.
        notice: SmsNotice,
    },
}

impl Sent {
    /// The reserve link the notice carries.
    pub fn reserve_link(&self) -> Option<String> {
        self.link("r")
    }

    /// The confirmation link a confirmation carries (double opt-in).
    pub fn confirm_link(&self) -> Option<String> {
        self.link("c")
    }

    /// The first link under `/{prefix}/` in the message's text.
    pub fn link(&self, prefix: &str) -> Option<String> {
        let text = match self {
            Self::Email { notice, .. } => &notice.text,
            Self::Sms { notice, .. } => &notice.text,
        };
        let marker = format!("/{prefix}/");
        text.split_whitespace()
            .find(|w| w.contains(&marker))
            .map(|w| w.trim_end_matches(['.', ',']).to_owned())
    }

    /// The recipient.
    pub fn to(&self) -> &str {
        match self {
            Self::Email { to, .. } | Self::Sms { to, .. } => to,
        }
    }
}

/// A sender that keeps what it sends: local mode and tests. Addresses listed
/// in `fail_permanently` are refused, to exercise the failure path.
#[derive(Default)]
pub struct Outbox {
    sent: Mutex<Vec<Sent>>,
    /// Addresses that bounce for good.
    pub fail_permanently: Mutex<Vec<String>>,
    /// Addresses that fail transiently.
    pub fail_transiently: Mutex<Vec<String>>,
    /// While set, every send is refused for this sender-side reason (an
    /// account in the SES sandbox, a paused account).
    pub sender_refused: Mutex<Option<String>>,
}

impl Outbox {
    /// Everything sent so far.
    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().expect("outbox lock").clone()
    }

    fn refuse(&self, to: &str) -> Result<(), SendError> {
        if let Some(reason) = self.sender_refused.lock().expect("outbox lock").clone() {
            return Err(SendError::Sender(reason));
        }
        if self
            .fail_permanently
            .lock()
            .expect("outbox lock")
            .iter()
            .any(|a| a == to)
        {
            return Err(SendError::Permanent(format!("{} rejected", mask(to))));
        }
        if self
            .fail_transiently
            .lock()
            .expect("outbox lock")
            .iter()
            .any(|a| a == to)
        {
            return Err(SendError::Transient("throttled".into()));
        }
        Ok(())
    }
}

fn mask(to: &str) -> String {
    to.chars().take(2).collect::<String>() + "***"
}

#[async_trait]
impl Sender for Outbox {
    async fn send(&self, to: &Contact, message: &Message) -> Result<String, SendError> {
        let kept = match (to, message) {
            (Contact::Email(address), Message::Email { notice, .. }) => Sent::Email {
                to: address.as_str().to_owned(),
                notice: notice.clone(),
            },
            (Contact::Sms(number), Message::Sms { notice, .. }) => Sent::Sms {
                to: number.as_str().to_owned(),
                notice: notice.clone(),
            },
            _ => return Err(wrong_channel(to, message)),
        };
        self.refuse(kept.to())?;
        let mut sent = self.sent.lock().expect("outbox lock");
        sent.push(kept);
        Ok(format!("outbox-{}", sent.len()))
    }
}

/// A phraser with a fixed answer (or a fixed failure): the fixed template
/// path, and tests.
pub struct FixedPhraser(pub Result<String, PhraseError>);

#[async_trait]
impl Phraser for FixedPhraser {
    async fn phrase(&self, _: &str, _: &str) -> Result<String, PhraseError> {
        self.0.clone()
    }
}

/// Keys held in memory: local mode and tests.
pub struct StaticKeyring(pub Arc<Secrets>);

#[async_trait]
impl Keyring for StaticKeyring {
    async fn keys(&self) -> Result<Arc<Secrets>, KeyError> {
        Ok(self.0.clone())
    }
}

/// Alerts kept in memory (and logged): local mode and tests.
#[derive(Default)]
pub struct RecordedAlerts(Mutex<Vec<Alert>>);

impl RecordedAlerts {
    /// Every alert raised so far.
    pub fn all(&self) -> Vec<Alert> {
        self.0.lock().expect("alerts lock").clone()
    }
}

#[async_trait]
impl Alerts for RecordedAlerts {
    async fn alert(&self, alert: &Alert) -> Result<(), AlertError> {
        tracing::warn!(subject = %alert.subject, "team alert");
        self.0.lock().expect("alerts lock").push(alert.clone());
        Ok(())
    }
}

/// Stands in for a capability a function must not have (capture cannot send
/// mail or call the model; detect cannot send mail): every call is refused.
#[derive(Debug, Default, Clone, Copy)]
pub struct Disabled;

#[async_trait]
impl Sender for Disabled {
    async fn send(&self, _: &Contact, _: &Message) -> Result<String, SendError> {
        Err(SendError::Permanent(
            "this function does not send notices".into(),
        ))
    }
}

#[async_trait]
impl Phraser for Disabled {
    async fn phrase(&self, _: &str, _: &str) -> Result<String, PhraseError> {
        Err(PhraseError("this function does not call the model".into()))
    }
}

#[async_trait]
impl Keyring for Disabled {
    async fn keys(&self) -> Result<Arc<Secrets>, KeyError> {
        Err(KeyError(
            "this function does not read the webhook keys".into(),
        ))
    }
}

#[async_trait]
impl Alerts for Disabled {
    async fn alert(&self, alert: &Alert) -> Result<(), AlertError> {
        tracing::warn!(subject = %alert.subject, "team alert (no topic configured for this function)");
        Ok(())
    }
}

/// Why no event could be published.
#[derive(Debug, Clone, thiserror::Error)]
#[error("events could not be published: {0}")]
pub struct PublishError(pub String);

/// Puts restock's events on the shop's event bus: EventBridge in
/// production (`restock_aws::EventBridgeSink`).
#[async_trait]
pub trait EventSink: Send + Sync {
    /// Publishes `events`; answers, for each in order, whether the bus
    /// took it.
    async fn publish(&self, events: &[crate::events::Published])
    -> Result<Vec<bool>, PublishError>;
}

/// No event bus: every publish fails, so nothing is taken as published.
/// The functions other than notify are never handed events.
pub struct NoEventBus;

#[async_trait]
impl EventSink for NoEventBus {
    async fn publish(&self, _: &[crate::events::Published]) -> Result<Vec<bool>, PublishError> {
        Err(PublishError("this function has no event bus".into()))
    }
}

/// Keeps what it is given: tests.
#[derive(Default)]
pub struct EventLog {
    /// Everything published so far.
    pub published: Mutex<Vec<crate::events::Published>>,
    /// While set, the bus refuses every event.
    pub refusing: std::sync::atomic::AtomicBool,
}

#[async_trait]
impl EventSink for EventLog {
    async fn publish(
        &self,
        events: &[crate::events::Published],
    ) -> Result<Vec<bool>, PublishError> {
        if self.refusing.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(vec![false; events.len()]);
        }
        self.published
            .lock()
            .expect("event log lock")
            .extend_from_slice(events);
        Ok(vec![true; events.len()])
    }
}
