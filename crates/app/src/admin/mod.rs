//! The operator's commands, one implementation for two front ends: the
//! `restock` CLI runs them on a DynamoDB store directly, and the local server
//! runs the same [`Command`]s it receives from the CLI on its own store
//! (`POST /_admin/run`, loopback only).
//!
//! Every command answers an [`Output`]: a line for people, a table's columns
//! and rows, and the same figures as JSON for scripts (`--json`). Drawing
//! the table is the front end's business.
//!
//! One module per group of commands, each an `impl Admin` of its own:
//! - `catalogue`: the settings and the catalogue;
//! - `queue`: one item's line, and its live offers and holds;
//! - `show`: one request's story, or every request of a contact;
//! - `oncall`: release, reject, rewake, pause and resume, escalations,
//!   reconcile;
//! - `stats`: the figures per item;
//! - `contacts`: opt-outs and forgetting a contact;
//! - [`export`]: the export's rows, a page at a time;
//! - [`dashboard`]: the team's web page over the same commands;
//! - [`webhooks`]: correctly signed test deliveries (`restock sign-webhook`,
//!   the local demo's buttons).

mod catalogue;
mod contacts;
pub mod dashboard;
pub mod export;
mod oncall;
mod queue;
mod show;
mod stats;
pub mod webhooks;

use std::sync::Arc;

use restock_core::{CatalogueEntry, Contact, Email, Millis, Phone, Sku};
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
pub(super) fn by_language(counts: &std::collections::BTreeMap<String, u32>) -> String {
    let mut counts: Vec<_> = counts.iter().collect();
    counts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shown: Vec<_> = counts.iter().map(|(l, n)| format!("{l} {n}")).collect();
    if shown.is_empty() {
        "-".into()
    } else {
        shown.join(" · ")
    }
}

pub(super) fn contact(text: &str) -> Result<Contact, AdminError> {
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

    pub(super) async fn entry(&self, sku: &Sku) -> Result<CatalogueEntry, AdminError> {
        self.store.catalogue_entry(sku).await?.ok_or_else(|| {
            AdminError::NotFound(format!(
                "{sku} is not in the catalogue (restock catalogue import FILE.csv adds it)"
            ))
        })
    }

    pub(super) async fn skus(&self, skus: Vec<Sku>) -> Result<Vec<CatalogueEntry>, AdminError> {
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
}
