//! The operator's commands, one implementation for two front ends: the
//! `restock` CLI runs them on a DynamoDB store directly, and the local server
//! runs the same [`Command`]s it receives from the CLI on its own store
//! (`POST /_admin/run`, loopback only).
//!
//! Every command answers an [`Output`]: a line for people, a table's columns
//! and rows, and the same figures as JSON for scripts (`--json`). Drawing
//! the table is the front end's business.
//!
//! - [`webhooks`]: correctly signed test deliveries (`restock sign-webhook`,
//!   the local demo's buttons).

pub mod dashboard;
pub mod export;
mod show;
pub mod webhooks;

use std::sync::Arc;

use restock_core::{CatalogueEntry, Contact, Email, Millis, Phone, Settings, Sku};
use restock_store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The keys the local server runs with, which `restock sign-webhook` signs
/// with by default. For a laptop only: a deployed stack's keys live in its
/// Secrets Manager secret.
pub const DEV_SECRETS_JSON: &str = r#"{"shopify": ["shpss_restock_local_key"], "woocommerce": ["wc_restock_local_key"], "stock": ["whsec_cmVzdG9jay1sb2NhbC1zdG9jay1rZXk="], "contact_pepper": "restock-local-contact-pepper"}"#;

/// The local server's current key for `platform`.
pub fn dev_key(platform: restock_core::Platform) -> String {
    let keys: Value = serde_json::from_str(DEV_SECRETS_JSON).expect("the dev keys are JSON");
    keys[platform.name()][0]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// One operator command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// The settings document.
    SettingsShow,
    /// Replaces the settings with a TOML document (validated first).
    SettingsPut {
        /// The document.
        toml: String,
    },
    /// Adds or replaces catalogue entries.
    CataloguePut {
        /// The entries.
        entries: Vec<CatalogueEntry>,
    },
    /// Every catalogue entry.
    CatalogueList,
    /// One entry, with its stock and counters.
    CatalogueShow {
        /// The SKU.
        sku: Sku,
    },
    /// The item's live offers and holds, soonest to run out first, with
    /// who (masked) and when each runs out.
    Holds {
        /// The SKU.
        sku: Sku,
    },
    /// The waiting list, oldest first.
    Queue {
        /// The SKU.
        sku: Sku,
        /// At most this many.
        limit: usize,
    },
    /// Approves a paused (suspicious) restock.
    Release {
        /// The SKU.
        sku: Sku,
    },
    /// Rejects a paused restock: its level is not believed, the item is
    /// sold out until the shop reports again (judged afresh).
    Reject {
        /// The SKU.
        sku: Sku,
    },
    /// Every restock held back for the team's review, across items.
    Escalations,
    /// Per-SKU figures (every SKU when empty).
    Stats {
        /// The SKUs.
        skus: Vec<Sku>,
    },
    /// Recounts offers and holds and fixes counter drift (every SKU when empty).
    Reconcile {
        /// The SKUs.
        skus: Vec<Sku>,
    },
    /// Stops notices: for one item (`sku`), or for everything (a pause of
    /// all sending, as a refusing provider opens, for up to
    /// [`TEAM_PAUSE_DAYS`] days). Sign-ups, places and holds are kept; an
    /// offer already sent stays good.
    Pause {
        /// The item; every item when `None`.
        #[serde(default)]
        sku: Option<Sku>,
        /// Why, for the rest of the team.
        reason: String,
    },
    /// Lifts a pause: one item's (`sku`), or all sending's (a sender-side
    /// pause too, once the problem is fixed); wakes what was held back, so
    /// a restock that came meanwhile is offered in full, oldest first.
    Resume {
        /// The item; all sending when `None`.
        #[serde(default)]
        sku: Option<Sku>,
    },
    /// Wakes items again, as a restock would: notify offers whatever units
    /// are free to whoever waits (a lost wake, a dead-lettered pass). Safe
    /// to run twice or beside a live pass: a pass offers only free units.
    Rewake {
        /// The SKUs (at least one).
        skus: Vec<Sku>,
    },
    /// Opts a contact out for good (ends their live requests).
    OptOutAdd {
        /// An email address or phone number.
        contact: String,
    },
    /// Lifts an opt-out.
    OptOutRemove {
        /// An email address or phone number.
        contact: String,
    },
    /// Every request of a contact (an email address or phone number, which
    /// needs the pepper) or the one request an id names, each with why it
    /// stands where it does and its story: masked unless `with_contacts`.
    Show {
        /// An email address, a phone number or a request id.
        who: String,
        /// Contacts in the clear instead of masked (logged).
        #[serde(default)]
        with_contacts: bool,
    },
    /// Erases everything held about a contact but its opt-out hash.
    Forget {
        /// An email address or phone number.
        contact: String,
    },
    /// One page of the requests export (`export::COLUMNS`); the answer's
    /// JSON `next` is where the following page starts.
    ExportPage {
        /// Only these items (every item when empty).
        skus: Vec<Sku>,
        /// The previous page's `next`; `None` for the first.
        after: Option<String>,
        /// Contacts in the clear instead of masked (logged).
        with_contacts: bool,
    },
}

/// What a command answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Output {
    /// One line (or a document) for people.
    pub message: String,
    /// Column names, when the answer is a table.
    pub columns: Vec<String>,
    /// Table rows.
    pub rows: Vec<Vec<String>>,
    /// The answer for scripts.
    pub json: Value,
}

impl Output {
    /// A one-line (or one-document) answer.
    pub fn message(message: impl Into<String>, json: Value) -> Self {
        Self {
            message: message.into(),
            columns: vec![],
            rows: vec![],
            json,
        }
    }

    /// A table with a line under it.
    pub fn table(
        message: impl Into<String>,
        columns: &[&str],
        rows: Vec<Vec<String>>,
        json: Value,
    ) -> Self {
        Self {
            message: message.into(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            rows,
            json,
        }
    }
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The store refused or could not be reached.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The input is not usable; the message says why.
    #[error("{0}")]
    Invalid(String),
    /// Nothing by that name.
    #[error("{0}")]
    NotFound(String),
    /// The command needs the contact pepper, which this connection lacks.
    #[error(
        "opt-outs are keyed by the contact pepper: pass --secret-id with the stack's keys secret (the KeysSecretArn output)"
    )]
    NoPepper,
}

/// How long a pause of all sending by the team lasts at most, in days
/// (`restock resume` ends it sooner).
pub const TEAM_PAUSE_DAYS: i64 = 30;

/// What a failed command amounts to, for whoever reacts to it: a script
/// by the CLI's exit code and JSON `error`, a page by its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Nothing by that name (an item, a request, a contact).
    NotFound,
    /// Lost to other writers at the same moment: run it again.
    Conflict,
    /// The backend refused what was asked; the message says why.
    Refused,
    /// The backend could not be reached or could not answer.
    Unavailable,
}

impl ErrorKind {
    /// The stable code: `not_found`, `conflict`, `refused`, `unavailable`.
    pub fn code(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::Refused => "refused",
            Self::Unavailable => "unavailable",
        }
    }

    /// The HTTP status a page or an endpoint answers with.
    pub fn status(self) -> axum::http::StatusCode {
        use axum::http::StatusCode;
        match self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Conflict => StatusCode::CONFLICT,
            Self::Refused => StatusCode::BAD_REQUEST,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl AdminError {
    /// What the failure amounts to.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::NotFound(_) | Self::Store(StoreError::Missing(_)) => ErrorKind::NotFound,
            Self::Store(StoreError::Contention(_)) => ErrorKind::Conflict,
            Self::Store(e @ StoreError::Backend { .. }) => backend_kind(e),
            Self::Store(StoreError::Corrupt { .. }) => ErrorKind::Unavailable,
            Self::Store(StoreError::Refused(_)) | Self::Invalid(_) | Self::NoPepper => {
                ErrorKind::Refused
            }
        }
    }
}

/// A backend's failure by what the service said, through the error's
/// causes: a table or resource that is not there is not found, a refusal
/// (access, validation) is refused, anything else (throttling, no answer)
/// is unavailable.
fn backend_kind(e: &(dyn std::error::Error + 'static)) -> ErrorKind {
    let mut said = String::new();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        said += &format!("{c:?} ");
        cause = c.source();
    }
    if said.contains("ResourceNotFound") {
        ErrorKind::NotFound
    } else if said.contains("AccessDenied")
        || said.contains("UnrecognizedClient")
        || said.contains("ValidationException")
    {
        ErrorKind::Refused
    } else {
        ErrorKind::Unavailable
    }
}

/// The commands, on one store.
pub struct Admin {
    /// The store.
    pub store: Arc<dyn Store>,
    /// The contact pepper, for opt-outs.
    pub pepper: Option<Vec<u8>>,
}

/// The waiting by language, most first: "de 3 · en 2".
fn by_language(counts: &std::collections::BTreeMap<String, u32>) -> String {
    let mut counts: Vec<_> = counts.iter().collect();
    counts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shown: Vec<_> = counts.iter().map(|(l, n)| format!("{l} {n}")).collect();
    if shown.is_empty() {
        "-".into()
    } else {
        shown.join(" · ")
    }
}

fn contact(text: &str) -> Result<Contact, AdminError> {
    let text = text.trim();
    let parsed = if text.contains('@') {
        Email::try_from(text).map(Contact::Email)
    } else {
        Phone::parse(text).map(Contact::Sms)
    };
    parsed.map_err(|e| AdminError::Invalid(format!("`{text}`: {e}")))
}

impl Admin {
    /// The most a queue listing shows (`restock queue --limit`), whatever
    /// the caller asks: a listing is for people, an export for the rest.
    pub const MAX_QUEUE_LIMIT: usize = 10_000;

    async fn entry(&self, sku: &Sku) -> Result<CatalogueEntry, AdminError> {
        self.store.catalogue_entry(sku).await?.ok_or_else(|| {
            AdminError::NotFound(format!(
                "{sku} is not in the catalogue (restock catalogue import FILE.csv adds it)"
            ))
        })
    }

    async fn skus(&self, skus: Vec<Sku>) -> Result<Vec<CatalogueEntry>, AdminError> {
        if skus.is_empty() {
            return Ok(self.store.catalogue().await?);
        }
        let mut entries = Vec::with_capacity(skus.len());
        for sku in &skus {
            entries.push(self.entry(sku).await?);
        }
        Ok(entries)
    }

    /// Runs `command` at `now`.
    ///
    /// # Errors
    /// [`AdminError`] with a message that says what to do.
    pub async fn run(&self, command: Command, now: Millis) -> Result<Output, AdminError> {
        match command {
            Command::SettingsShow => self.settings_show().await,
            Command::SettingsPut { toml } => self.settings_put(toml).await,
            Command::CataloguePut { entries } => self.catalogue_put(entries).await,
            Command::CatalogueList => self.catalogue_list().await,
            Command::CatalogueShow { sku } => self.catalogue_show(sku).await,
            Command::Queue { sku, limit } => self.queue(sku, limit).await,
            Command::Release { sku } => self.release(sku, now).await,
            Command::Reject { sku } => self.reject(sku, now).await,
            Command::Escalations => self.escalations().await,
            Command::Holds { sku } => self.holds(sku, now).await,
            Command::Pause { sku, reason } => self.pause(sku, reason, now).await,
            Command::Resume { sku: None } => self.resume(now).await,
            Command::Resume { sku: Some(sku) } => self.resume_item(sku, now).await,
            Command::Rewake { skus } => self.rewake(skus, now).await,
            Command::Stats { skus } => self.stats(skus, now).await,
            Command::Reconcile { skus } => self.reconcile(skus, now).await,
            Command::OptOutAdd { contact } => self.opt_out_add(contact, now).await,
            Command::Forget { contact } => self.forget(contact, now).await,
            Command::Show { who, with_contacts } => self.show(who, with_contacts, now).await,
            Command::OptOutRemove { contact } => self.opt_out_remove(contact).await,
            Command::ExportPage {
                skus,
                after,
                with_contacts,
            } => self.export_page(&skus, after, with_contacts).await,
        }
    }

    /// A page of every request as export rows.
    async fn export_page(
        &self,
        skus: &[Sku],
        after: Option<String>,
        with_contacts: bool,
    ) -> Result<Output, AdminError> {
        let page = self
            .store
            .requests_page(after.as_deref(), export::PAGE)
            .await?;
        let rows: Vec<_> = page
            .requests
            .iter()
            .filter(|r| export::wanted(r, skus))
            .map(|r| export::row(r, with_contacts))
            .collect();
        if with_contacts && !rows.is_empty() {
            tracing::warn!(
                rows = rows.len(),
                "requests exported with their contacts in the clear"
            );
        }
        Ok(Output {
            message: String::new(),
            columns: export::COLUMNS.map(str::to_owned).to_vec(),
            rows,
            json: json!({ "next": page.next }),
        })
    }

    /// The settings document, as TOML.
    async fn settings_show(&self) -> Result<Output, AdminError> {
        let Some(settings) = self.store.settings().await? else {
            return Err(AdminError::NotFound(
                "no settings yet: restock settings put FILE.toml (examples/settings.toml is a start)"
                    .into(),
            ));
        };
        Ok(Output::message(
            settings.to_toml(),
            serde_json::to_value(&settings).unwrap_or_default(),
        ))
    }

    /// Validates and stores a settings document.
    async fn settings_put(&self, toml: String) -> Result<Output, AdminError> {
        let settings =
            Settings::from_toml(&toml).map_err(|e| AdminError::Invalid(e.to_string()))?;
        self.store.put_settings(&settings).await?;
        Ok(Output::message(
            format!(
                "settings saved for {} (the functions pick them up within 30 s)",
                settings.store_name
            ),
            json!({ "saved": true }),
        ))
    }

    /// Adds or replaces catalogue entries.
    async fn catalogue_put(&self, entries: Vec<CatalogueEntry>) -> Result<Output, AdminError> {
        // Checked as the CSV import checks them, however they came: none
        // is saved unless all are good.
        restock_core::catalogue::check_entries(&entries)
            .map_err(|e| AdminError::Invalid(e.to_string()))?;
        for entry in &entries {
            // A team's pause outlives an import (lifting it is `resume`).
            let mut entry = entry.clone();
            if entry.paused.is_none() {
                entry.paused = self
                    .store
                    .catalogue_entry(&entry.sku)
                    .await?
                    .and_then(|old| old.paused);
            }
            self.store.put_catalogue_entry(&entry).await?;
        }
        Ok(Output::message(
            format!("{} catalogue entries saved", entries.len()),
            json!({ "saved": entries.len() }),
        ))
    }

    /// Every catalogue entry.
    async fn catalogue_list(&self) -> Result<Output, AdminError> {
        let entries = self.store.catalogue().await?;
        let rows = entries
            .iter()
            .map(|e| {
                vec![
                    e.sku.to_string(),
                    e.name.clone(),
                    e.threshold.map_or("default".into(), |t| t.to_string()),
                    e.shards.to_string(),
                ]
            })
            .collect();
        Ok(Output::table(
            format!("{} entries", entries.len()),
            &["sku", "name", "threshold", "shards"],
            rows,
            serde_json::to_value(&entries).unwrap_or_default(),
        ))
    }

    /// One entry, with its stock and counters.
    async fn catalogue_show(&self, sku: Sku) -> Result<Output, AdminError> {
        let entry = self.entry(&sku).await?;
        let snapshot = self.store.snapshot(&sku).await?;
        let level = snapshot.stock.level();
        let mut rows = vec![
            vec!["sku".into(), entry.sku.to_string()],
            vec!["name".into(), entry.name.clone()],
            vec![
                "product url".into(),
                entry
                    .product_url
                    .as_ref()
                    .map_or(String::new(), ToString::to_string),
            ],
            vec![
                "checkout url".into(),
                entry.checkout_url.clone().unwrap_or_default(),
            ],
            vec![
                "threshold".into(),
                entry.threshold.map_or("default".into(), |t| t.to_string()),
            ],
        ];
        for platform in restock_core::Platform::ALL
            .into_iter()
            .filter(|p| p.id_column().is_some())
        {
            let id = entry
                .ids
                .get(platform)
                .map_or(String::new(), |i| i.to_string());
            rows.push(vec![format!("{platform} {}", platform.id_noun()), id]);
        }
        rows.extend([
            vec![
                "notices".into(),
                entry.paused.as_ref().map_or("on".into(), |p| {
                    format!(
                        "paused by the team since {}: {}",
                        restock_core::rfc3339(p.since_ms),
                        p.reason
                    )
                }),
            ],
            vec![
                "ended".into(),
                entry.ended.map_or("no: listed".into(), |at| {
                    format!(
                        "since {}: no longer listed, takes no sign-ups, tells nobody",
                        restock_core::rfc3339(at)
                    )
                }),
            ],
            vec![
                "launch".into(),
                entry.launch_at.map_or("none scheduled".into(), |at| {
                    format!(
                        "{}: stock reported before it waits; the first wave goes at it",
                        restock_core::rfc3339(at)
                    )
                }),
            ],
            vec!["queue shards".into(), entry.shards.to_string()],
            vec!["level".into(), level.to_string()],
            vec!["in stock".into(), snapshot.stock.in_stock.to_string()],
            vec!["restocks".into(), snapshot.stock.episode.to_string()],
            vec![
                "paused for the team".into(),
                snapshot.stock.paused.to_string(),
            ],
            vec![
                "offered / held / bought".into(),
                format!(
                    "{} / {} / {}",
                    snapshot.counters.offered, snapshot.counters.held, snapshot.bought
                ),
            ],
        ]);
        Ok(Output::table(
            "",
            &["field", "value"],
            rows,
            json!({ "entry": entry, "stock": snapshot.stock, "counters": snapshot.counters, "bought": snapshot.bought }),
        ))
    }

    /// The waiting list, oldest first.
    /// The item's live offers and holds.
    async fn holds(&self, sku: Sku, now: Millis) -> Result<Output, AdminError> {
        self.entry(&sku).await?;
        let live = self.store.live_units(&sku).await?;
        let runs_out = |expires: Millis| {
            if expires <= now {
                "ran out; the sweep passes it on within a minute".to_owned()
            } else {
                format!("in {} min", (expires - now + 59_999) / 60_000)
            }
        };
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for r in &live {
            let expires = r.state.unit_expires().unwrap_or_default();
            let (what, hold) = match &r.state {
                restock_core::RequestState::Held { hold, .. } => ("held", Some(hold.to_string())),
                _ => ("offered", None),
            };
            let notice = match &r.notice {
                None => "not sent yet",
                Some(restock_store::NoticeOutcome::Sending) => "sending (outcome unknown)",
                Some(restock_store::NoticeOutcome::Sent { .. }) => "sent",
                Some(restock_store::NoticeOutcome::Failed { .. }) => "failed",
            };
            rows.push(vec![
                what.to_owned(),
                r.id.to_string(),
                r.contact.masked(),
                notice.to_owned(),
                hold.clone().unwrap_or_default(),
                restock_core::rfc3339(expires),
                runs_out(expires),
            ]);
            json.push(json!({
                "state": what, "request_id": r.id, "contact": r.contact.masked(),
                "channel": r.contact.channel().as_str(), "notice": notice, "hold": hold,
                "expires_ms": expires,
            }));
        }
        let held = live
            .iter()
            .filter(|r| matches!(r.state, restock_core::RequestState::Held { .. }))
            .count();
        Ok(Output::table(
            format!("{sku}: {} offered, {held} held", live.len() - held),
            &[
                "state", "request", "contact", "notice", "hold", "runs out", "",
            ],
            rows,
            Value::Array(json),
        ))
    }

    async fn queue(&self, sku: Sku, limit: usize) -> Result<Output, AdminError> {
        let limit = limit.clamp(1, Self::MAX_QUEUE_LIMIT);
        let entry = self.entry(&sku).await?;
        let waiting = self.store.queue(&sku, entry.shards, limit).await?;
        let rows: Vec<Vec<String>> = waiting
            .iter()
            .enumerate()
            .map(|(i, r)| {
                vec![
                    (i + 1).to_string(),
                    r.id.to_string(),
                    r.contact.masked(),
                    restock_core::rfc3339(r.key.joined_ms),
                    r.state.status().to_string(),
                    r.language
                        .as_ref()
                        .map_or_else(|| "default".to_owned(), ToString::to_string),
                ]
            })
            .collect();
        let json = waiting
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({
                    "position": i + 1, "request_id": r.id, "contact": r.contact.masked(),
                    "channel": r.contact.channel().as_str(), "joined_ms": r.key.joined_ms,
                    "status": r.state.status().to_string(),
                    "language": r.language.as_ref().map(ToString::to_string),
                })
            })
            .collect();
        Ok(Output::table(
            format!(
                "{} waiting for {sku} (showing at most {limit})",
                waiting.len()
            ),
            &[
                "position", "request", "contact", "joined", "status", "language",
            ],
            rows,
            Value::Array(json),
        ))
    }

    /// Releases a restock paused for review.
    async fn release(&self, sku: Sku, now: Millis) -> Result<Output, AdminError> {
        self.entry(&sku).await?;
        match self.store.release_paused(&sku, now).await? {
            Some(outcome) => Ok(Output::message(
                format!("{sku}: released ({outcome}); notify offers its units now"),
                json!({ "released": true, "outcome": outcome }),
            )),
            None => Ok(Output::message(
                format!("{sku}: nothing is paused, nothing changed"),
                json!({ "released": false }),
            )),
        }
    }

    /// Wakes each item: a wake record notify takes as it takes a restock's.
    async fn rewake(&self, skus: Vec<Sku>, now: Millis) -> Result<Output, AdminError> {
        if skus.is_empty() {
            return Err(AdminError::Invalid(
                "name the items to wake: `restock rewake SKU…`".into(),
            ));
        }
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for entry in self.skus(skus).await? {
            let sku = &entry.sku;
            let snapshot = self.store.snapshot(sku).await?;
            let c = snapshot.counters;
            let free = c.level.saturating_sub(c.offered + c.held);
            let waiting = self.store.counts(sku, entry.shards).await?.waiting;
            self.store
                .wake_again(sku, snapshot.stock.episode, now)
                .await?;
            let said = match (free, waiting) {
                (0, _) => "woken; no unit is free, so nobody is offered one".to_owned(),
                (_, 0) => format!("woken; {free} units free and nobody waiting"),
                (f, w) => format!(
                    "woken; notify offers {} of {f} free units to the {w} waiting, oldest first",
                    f.min(w)
                ),
            };
            rows.push(vec![sku.to_string(), said]);
            json.push(json!({
                "sku": sku, "episode": snapshot.stock.episode, "free": free, "waiting": waiting,
            }));
        }
        Ok(Output::table(
            "",
            &["sku", "result"],
            rows,
            Value::Array(json),
        ))
    }

    /// Stops notices for one item or for everything.
    async fn pause(
        &self,
        sku: Option<Sku>,
        reason: String,
        now: Millis,
    ) -> Result<Output, AdminError> {
        let reason = reason.trim().to_owned();
        if reason.is_empty() || reason.chars().count() > 200 {
            return Err(AdminError::Invalid(
                "say why in 1 to 200 characters (--reason): the rest of the team reads it".into(),
            ));
        }
        let Some(sku) = sku else {
            // All sending: the sender's pause, which notify already keeps
            // (each item it holds back is noted and woken on resume).
            let catalogue = self.store.catalogue().await?;
            let Some(first) = catalogue.first() else {
                return Err(AdminError::Invalid(
                    "the catalogue is empty: nothing to pause".into(),
                ));
            };
            let until = now + TEAM_PAUSE_DAYS * 86_400_000;
            let opened = self
                .store
                .pause_sender(
                    &format!("{}{reason}", crate::notify::TEAM_PAUSE_PREFIX),
                    until,
                    &first.sku,
                    now,
                )
                .await?;
            return Ok(Output::message(
                if opened {
                    format!(
                        "all notices paused until `restock resume` (or {} at the latest): {reason}",
                        restock_core::rfc3339(until)
                    )
                } else {
                    "sending was already paused; nothing changed (`restock resume` ends it)".into()
                },
                json!({ "paused": opened, "until_ms": until }),
            ));
        };
        let mut entry = self.entry(&sku).await?;
        if let Some(pause) = &entry.paused {
            return Ok(Output::message(
                format!(
                    "{sku} was already paused since {}: {}; nothing changed",
                    restock_core::rfc3339(pause.since_ms),
                    pause.reason
                ),
                json!({ "paused": false }),
            ));
        }
        entry.paused = Some(restock_core::catalogue::ItemPause {
            reason: reason.clone(),
            since_ms: now,
        });
        self.store.put_catalogue_entry(&entry).await?;
        Ok(Output::message(
            format!(
                "{sku}: notices paused ({reason}); sign-ups and places are kept, offers already sent stay good; `restock resume --sku {sku}` lifts it"
            ),
            json!({ "paused": true, "sku": sku }),
        ))
    }

    /// Lifts an item's pause and wakes it.
    async fn resume_item(&self, sku: Sku, now: Millis) -> Result<Output, AdminError> {
        let mut entry = self.entry(&sku).await?;
        if entry.paused.take().is_none() {
            return Ok(Output::message(
                format!("{sku} was not paused; nothing changed"),
                json!({ "resumed": false }),
            ));
        }
        self.store.put_catalogue_entry(&entry).await?;
        let episode = self.store.snapshot(&sku).await?.stock.episode;
        self.store.wake_again(&sku, episode, now).await?;
        Ok(Output::message(
            format!("{sku}: notices resumed; notify offers its free units now, oldest first"),
            json!({ "resumed": true, "sku": sku }),
        ))
    }

    /// Rejects a held-back restock.
    async fn reject(&self, sku: Sku, now: Millis) -> Result<Output, AdminError> {
        self.entry(&sku).await?;
        let level = self.store.snapshot(&sku).await?.counters.level;
        if self.store.reject_paused(&sku, now).await? {
            Ok(Output::message(
                format!(
                    "{sku}: the restock at {level} units is rejected; the item counts as sold out and nobody is offered one until the shop reports its level again, which is judged afresh"
                ),
                json!({ "rejected": true, "level": level }),
            ))
        } else {
            Ok(Output::message(
                format!("{sku}: nothing is paused, nothing changed"),
                json!({ "rejected": false }),
            ))
        }
    }

    /// Every restock waiting for the team, across items.
    async fn escalations(&self) -> Result<Output, AdminError> {
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for entry in self.store.catalogue().await? {
            let snapshot = self.store.snapshot(&entry.sku).await?;
            if !snapshot.stock.paused {
                continue;
            }
            let reported = snapshot
                .stock
                .locations
                .values()
                .map(|r| r.at_ms)
                .max()
                .unwrap_or_default();
            let waiting = self.store.counts(&entry.sku, entry.shards).await?.waiting;
            rows.push(vec![
                entry.sku.to_string(),
                entry.name.clone(),
                format!("#{}", snapshot.stock.episode),
                snapshot.counters.level.to_string(),
                restock_core::rfc3339(reported),
                waiting.to_string(),
            ]);
            json.push(json!({
                "sku": entry.sku, "name": entry.name, "restock": snapshot.stock.episode,
                "level": snapshot.counters.level, "reported_ms": reported, "waiting": waiting,
            }));
        }
        let message = if rows.is_empty() {
            "no restock waits for the team".to_owned()
        } else {
            format!(
                "{} restocks wait for the team: `restock release SKU` offers one, `restock reject SKU` refuses its level",
                rows.len()
            )
        };
        Ok(Output::table(
            message,
            &["sku", "name", "restock", "level", "reported", "waiting"],
            rows,
            Value::Array(json),
        ))
    }

    /// Ends the sender's pause.
    async fn resume(&self, now: Millis) -> Result<Output, AdminError> {
        match crate::notify::resume_sending(self.store.as_ref(), now).await? {
            Some(skus) => Ok(Output::message(
                format!(
                    "sending resumed; {} woken: {}",
                    skus.len(),
                    skus.iter().map(Sku::as_str).collect::<Vec<_>>().join(", ")
                ),
                json!({ "resumed": true, "woken": skus }),
            )),
            None => Ok(Output::message(
                "sending was not paused; nothing changed",
                json!({ "resumed": false }),
            )),
        }
    }

    /// Figures per SKU.
    async fn stats(&self, skus: Vec<Sku>, now: Millis) -> Result<Output, AdminError> {
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for entry in self.skus(skus).await? {
            let s = self.store.stats(&entry.sku, entry.shards).await?;
            // Of the offers decided so far, the share somebody clicked.
            let decided = s.held + s.bought + s.lapsed;
            let claim = (decided > 0).then(|| f64::from(s.held + s.bought) / f64::from(decided));
            rows.push(vec![
                entry.sku.to_string(),
                s.waiting.to_string(),
                s.unconfirmed.to_string(),
                s.offered.to_string(),
                s.held.to_string(),
                s.bought.to_string(),
                s.lapsed.to_string(),
                claim.map_or("-".into(), |c| format!("{:.0}%", c * 100.0)),
                restock_core::money::totals(&s.revenue),
                format!(
                    "{} {}",
                    s.assisted,
                    restock_core::money::totals(&s.assisted_revenue)
                ),
                by_language(&s.waiting_by_language),
            ]);
            json.push(json!({ "sku": entry.sku, "stats": s, "claim_rate": claim }));
        }
        let day = restock_core::feedback::day_of(now);
        let mail = self.store.mail_day(&day).await?;
        let percent = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{:.2}%", r * 100.0));
        Ok(Output::table(
            format!(
                "claim rate: offers clicked (held or bought) among offers decided; assisted: orders without a hold by a contact told within the attribution window\n\
                 mail on {day} (UTC): {} sent ({} of them texts), bounce rate {} of emails (SES reviews near 5%), complaint rate {} (near 0.1%)\n\
                 sign-ups on {day}: {} confirmations sent, {} confirmed, {} ran out unconfirmed\n\
                 stock deliveries on {day} for items not in the catalogue: {} (the team is alerted once per item a day)",
                mail.sent,
                mail.texts_sent,
                percent(mail.bounce_rate()),
                percent(mail.complaint_rate()),
                mail.confirm_sent,
                mail.confirmed,
                mail.confirm_expired,
                mail.unknown_items,
            ),
            &[
                "sku",
                "waiting",
                "to confirm",
                "offered",
                "held",
                "bought",
                "lapsed",
                "claim rate",
                "revenue (holds)",
                "assisted (orders, revenue)",
                "waiting by language",
            ],
            rows,
            json!({
                "skus": json,
                "mail": {
                    "day": day,
                    "sent": mail.sent,
                    "texts_sent": mail.texts_sent,
                    "bounced": mail.bounced,
                    "complained": mail.complained,
                    "soft_bounced": mail.soft_bounced,
                    "confirmations_sent": mail.confirm_sent,
                    "confirmed": mail.confirmed,
                    "unconfirmed_expired": mail.confirm_expired,
                    "unknown_item_deliveries": mail.unknown_items,
                    "bounce_rate": mail.bounce_rate(),
                    "complaint_rate": mail.complaint_rate(),
                },
            }),
        ))
    }

    /// Recounts the counters from the unit markers and corrects drift.
    async fn reconcile(&self, skus: Vec<Sku>, now: Millis) -> Result<Output, AdminError> {
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for entry in self.skus(skus).await? {
            let drift = self.store.reconcile(&entry.sku, now).await?;
            let line = match &drift {
                None => "counters match".to_owned(),
                Some(d) => format!(
                    "fixed: offered {} -> {}, held {} -> {}",
                    d.stored.offered, d.counted.offered, d.stored.held, d.counted.held
                ),
            };
            rows.push(vec![entry.sku.to_string(), line]);
            json.push(json!({ "sku": entry.sku, "drift": drift }));
        }
        Ok(Output::table(
            "",
            &["sku", "result"],
            rows,
            Value::Array(json),
        ))
    }

    /// Opts a contact out for good.
    async fn opt_out_add(&self, text: String, now: Millis) -> Result<Output, AdminError> {
        let pepper = self.pepper.as_deref().ok_or(AdminError::NoPepper)?;
        let contact = contact(&text)?;
        // Under every key it may be on record under, live requests kept
        // under a former one included.
        let mut ended = 0;
        for key in contact.keys(pepper) {
            ended += self.store.opt_out_contact(&key, now).await?;
        }
        Ok(Output::message(
            format!(
                "{} opted out for good; {ended} live requests ended",
                contact.masked()
            ),
            json!({ "opted_out": true, "ended": ended }),
        ))
    }

    /// Erases everything held about a contact but its opt-out.
    async fn forget(&self, text: String, now: Millis) -> Result<Output, AdminError> {
        let pepper = self.pepper.as_deref().ok_or(AdminError::NoPepper)?;
        let contact = contact(&text)?;
        let mut f = restock_store::Forgotten::default();
        for key in contact.keys(pepper) {
            let of = self.store.forget_contact(&key, now).await?;
            f.erased += of.erased;
            f.ended += of.ended;
            f.opt_out_kept |= of.opt_out_kept;
        }
        let kept = if f.opt_out_kept {
            "kept: their opt-out, as a keyed hash (so they are never mailed)"
        } else {
            "nothing is kept"
        };
        Ok(Output::message(
            format!(
                "{}: erased {} requests (name, address or number, consent record, links); {} live ones ended first, their units passed on; {kept}",
                contact.masked(),
                f.erased,
                f.ended
            ),
            json!({ "erased": f.erased, "ended": f.ended, "opt_out_kept": f.opt_out_kept }),
        ))
    }

    /// Lifts a contact's opt-out.
    async fn opt_out_remove(&self, text: String) -> Result<Output, AdminError> {
        let pepper = self.pepper.as_deref().ok_or(AdminError::NoPepper)?;
        let contact = contact(&text)?;
        let mut removed = false;
        for key in contact.keys(pepper) {
            removed |= self.store.remove_opt_out(&key).await?;
        }
        let message = if removed {
            format!("{}'s opt-out lifted: they may join again", contact.masked())
        } else {
            format!("{} had not opted out", contact.masked())
        };
        Ok(Output::message(message, json!({ "removed": removed })))
    }
}
