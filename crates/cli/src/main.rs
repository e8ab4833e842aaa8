//! `restock`: the operator's CLI. Against a deployed stack's table
//! (`--table`, the usual AWS profile and region, `--endpoint-url` for a local
//! DynamoDB API) or against the local server (`--local`, the default).

mod dlq;
mod stack;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use restock_app::admin::webhooks::{TestEvent, curl, delivery_id, sign};
use restock_app::admin::{Admin, Command, ErrorKind, Output, dev_key};
use restock_app::ports::Keyring;
use restock_app::ports::{Entropy, OsEntropy};
use restock_aws::SecretsKeyring;
use restock_core::catalogue::parse_csv;
use restock_core::{Platform, Sku};
use restock_store_dynamo::DynamoStore;

#[derive(Parser)]
#[command(
    name = "restock",
    version,
    about = "Run a restock shop: settings, catalogue, queues, releases, stats, opt-outs, test webhooks."
)]
struct Cli {
    /// The stack's DynamoDB table (the TableName output). Without it, the
    /// commands go to the local server.
    #[arg(long, env = "RESTOCK_TABLE", global = true)]
    table: Option<String>,
    /// A DynamoDB endpoint other than AWS's (a local DynamoDB API).
    #[arg(long, env = "AWS_ENDPOINT_URL_DYNAMODB", global = true)]
    endpoint_url: Option<String>,
    /// The stack's keys secret (the KeysSecretArn output), for opt-outs.
    #[arg(long, env = "RESTOCK_SECRET_ID", global = true)]
    secret_id: Option<String>,
    /// The local server.
    #[arg(
        long,
        env = "RESTOCK_LOCAL_URL",
        default_value = "http://127.0.0.1:3000",
        global = true
    )]
    local: String,
    /// Answer in JSON, for scripts.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Show or replace the settings document.
    Settings {
        #[command(subcommand)]
        action: SettingsCmd,
    },
    /// Import or show the catalogue.
    #[command(alias = "catalog")]
    Catalogue {
        #[command(subcommand)]
        action: CatalogueCmd,
    },
    /// The waiting list for a SKU, oldest first, contacts masked.
    Queue {
        sku: String,
        /// Show at most this many (1 to 10,000).
        #[arg(long, default_value_t = 50,
              value_parser = clap::value_parser!(u64).range(1..=Admin::MAX_QUEUE_LIMIT as u64))]
        limit: u64,
    },
    /// The item's live offers and holds, soonest to run out first: who
    /// (masked), whether the notice went, the hold id, when each runs out.
    Holds { sku: String },
    /// Approve a restock that was paused as suspicious.
    Release { sku: String },
    /// Reject a restock that was paused as suspicious: its level is not
    /// believed, the item counts as sold out until the shop reports again.
    Reject { sku: String },
    /// Every restock held back for the team's review, across items.
    Escalations,
    /// Stop notices for one item (--sku) or for everything, saying why:
    /// sign-ups, places and holds are kept, offers already sent stay good.
    Pause {
        /// The item; every item without it.
        #[arg(long)]
        sku: Option<String>,
        /// Why, for the rest of the team.
        #[arg(long)]
        reason: String,
    },
    /// Lift a pause: one item's (--sku), or all sending's, including a
    /// sender-side pause once the SES or SNS problem the alert named is
    /// fixed. What was held back is offered in full, oldest first.
    Resume {
        /// The item; all sending without it.
        #[arg(long)]
        sku: Option<String>,
    },
    /// Wake items again, as a restock would: their free units are offered
    /// to whoever waits (a lost wake, a dead-lettered notify batch). Safe
    /// to run twice, and beside a pass already running.
    Rewake {
        #[arg(required = true)]
        skus: Vec<String>,
    },
    /// Per SKU: waiting, offered, held, bought, lapsed, claim rate.
    Stats { skus: Vec<String> },
    /// Recount offers and holds and fix counter drift.
    Reconcile { skus: Vec<String> },
    /// Opt a contact out for good, or lift an opt-out.
    Optout {
        #[command(subcommand)]
        action: OptoutCmd,
    },
    /// Why was this shopper not told? Every request of an email address or
    /// phone number (needs --secret-id), or the one request an id names:
    /// where each stands and why, and its story (joined, confirmed,
    /// offered, the notice with the provider's message id, held, ended).
    /// Masked unless --with-contacts.
    Show {
        /// An email address, a phone number (+E.164) or a request id.
        who: String,
        /// Contacts in the clear instead of masked. It is logged.
        #[arg(long)]
        with_contacts: bool,
    },
    /// Erase everything held about an email address or phone number
    /// (requests, consent records), all but an opt-out's hash.
    Forget { contact: String },
    /// Write CSV: every request kept (item, state, joined, confirmed, told,
    /// held, bought, ended, language, contact masked), or per-day figures
    /// (`days`: sign-ups, confirmed, told, held, bought per day and item).
    /// Page by page: any number of rows in constant memory.
    Export {
        /// `requests` or `days`.
        #[arg(value_enum)]
        what: ExportKind,
        /// Only these items (every item without any).
        skus: Vec<String>,
        /// Contacts in the clear instead of masked. The export is logged.
        #[arg(long)]
        with_contacts: bool,
        /// Write here instead of standard output.
        #[arg(long)]
        out: Option<String>,
    },
    /// Serve the team's dashboard on this machine (127.0.0.1 only) with
    /// these credentials, and open it in the browser. With the local server,
    /// open its own (`/admin`).
    Dashboard {
        /// The port to listen on (0: any free one).
        #[arg(long, default_value_t = 7878)]
        port: u16,
        /// The deployed stack's name (its table and keys secret, unless
        /// given): the banner then shows what `restock doctor` finds (run
        /// again every 5 minutes), not only the table's own checks.
        #[arg(long)]
        stack: Option<String>,
        /// Print the address without opening a browser.
        #[arg(long)]
        no_open: bool,
    },
    /// Connect a shop to a deployed stack: its Admin API access into the
    /// keys secret, its webhooks subscribed at the stack's DetectUrl, every
    /// item into the catalogue. Run it again to sync; it changes only what
    /// differs.
    Connect {
        #[command(subcommand)]
        platform: ConnectCmd,
    },
    /// The stack's dead-letter queue: what failed after every retry, by
    /// where it came from, and each thing done again where it can be.
    Dlq {
        #[command(subcommand)]
        action: DlqCmd,
    },
    /// Check a deployed stack end to end, each finding with its fix:
    /// settings, catalogue, each platform's webhook key, API access and
    /// webhooks at the DetectUrl, the model, the mail and text senders,
    /// dead letters and alarms in ALARM. Exits 1 when something blocks
    /// notices.
    Doctor {
        /// The deployed stack's name.
        #[arg(long)]
        stack: String,
    },
    /// Print a correctly signed test webhook as a curl command.
    SignWebhook {
        /// A platform's name (`shopify`, `woocommerce`, `stock`) for a stock
        /// level; with `-order` (`shopify-order`, `woocommerce-order`, or
        /// `order` for the generic format) for a paid order that used a hold.
        #[arg(value_parser = parse_format)]
        format: Format,
        /// The signing key (default: the stack's current key with `--stack`,
        /// or from `--secret-id` with `--table`; else the local server's).
        #[arg(long)]
        key: Option<String>,
        /// Where detect listens (default: the stack's DetectUrl with
        /// `--stack`; else the local server).
        #[arg(long)]
        url: Option<String>,
        /// A deployed stack's name: sign with its current key, read from its
        /// keys secret, for its DetectUrl.
        #[arg(long)]
        stack: Option<String>,
        /// stock: the SKU; woocommerce: the product's SKU.
        #[arg(long)]
        sku: Option<String>,
        /// stock, shopify, woocommerce: the new level.
        #[arg(long, default_value_t = 5)]
        level: i64,
        /// shopify: the inventory item id; woocommerce: the product id.
        #[arg(long)]
        id: Option<u64>,
        /// shopify: the location id; stock: the location name.
        #[arg(long)]
        location: Option<String>,
        /// order, shopify-order, woocommerce-order: the hold id from the checkout URL.
        #[arg(long)]
        hold: Option<String>,
    },
}

/// What `restock export` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ExportKind {
    /// One row per request.
    Requests,
    /// One row per day and item.
    Days,
    /// One row per item: what it brought in, through holds and assisted.
    Items,
}

#[derive(Subcommand)]
enum SettingsCmd {
    /// Print the settings as TOML.
    Show,
    /// Validate and store a TOML settings file.
    Put { file: String },
}

#[derive(Subcommand)]
enum CatalogueCmd {
    /// Import a CSV file (sku,name,product_url,checkout_url,threshold,shopify_inventory_item_id,woocommerce_product_id,shards,launch_at).
    Import { file: String },
    /// One entry with its stock and counters; every entry without a SKU.
    Show { sku: Option<String> },
    /// Re-read every connected platform (its API access in the stack's
    /// keys secret) and apply what changed: new variants, new names and
    /// URLs; each item's own threshold and shards stay. Items a platform
    /// no longer lists are ended (no sign-ups, nobody told, the queue kept)
    /// and the team told once; listing one again carries on.
    Sync {
        /// The deployed stack's name.
        #[arg(long)]
        stack: String,
        /// Say what would change, and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Subcommand)]
enum DlqCmd {
    /// Each message, oldest first: when, where it came from, why it failed
    /// and what a redrive would do. Nothing is taken out.
    List {
        /// The deployed stack's name.
        #[arg(long)]
        stack: String,
    },
    /// Take each message out and do again what it names: wake the items of
    /// a notify batch (every item someone waits for, if the stream no
    /// longer has it), publish its events again, put a refused event back
    /// on the bus, apply a bounce. What cannot be done stays in the queue.
    Redrive {
        /// The deployed stack's name.
        #[arg(long)]
        stack: String,
    },
}

#[derive(Subcommand)]
enum ConnectCmd {
    /// Klaviyo: its private key into the keys secret, once Klaviyo takes
    /// it; restock's events go there while the stack's KlaviyoEvents is on.
    Klaviyo {
        /// The deployed stack's name.
        #[arg(long)]
        stack: String,
        /// A Klaviyo private key with the events:write scope (better from
        /// the environment, out of the shell's history).
        #[arg(long, env = "KLAVIYO_PRIVATE_KEY", hide_env_values = true)]
        private_key: String,
        /// Say what would change, and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Klaviyo's API at another address (a stand-in, for tests).
        #[arg(long, hide = true)]
        api: Option<String>,
    },
    /// A Shopify shop, through its Dev Dashboard app (client id and
    /// secret; a legacy custom app's `shpat_` token also works).
    Shopify {
        /// The shop's domain (`your-shop.myshopify.com`).
        #[arg(long)]
        shop: String,
        /// The deployed stack's name.
        #[arg(long)]
        stack: String,
        /// The Dev Dashboard app's client id.
        #[arg(long, required_unless_present = "access_token")]
        client_id: Option<String>,
        /// The app's client secret (better from the environment, out of
        /// the shell's history).
        #[arg(long, env = "SHOPIFY_CLIENT_SECRET", hide_env_values = true)]
        client_secret: Option<String>,
        /// Instead of the app: a legacy custom app's Admin API token.
        #[arg(
            long,
            env = "SHOPIFY_ACCESS_TOKEN",
            hide_env_values = true,
            conflicts_with = "client_id"
        )]
        access_token: Option<String>,
        /// Say what would change, and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// A WooCommerce site, through a REST API key with Read/Write access
    /// (it registers the webhooks).
    Woocommerce {
        /// The site's address (`https://your-shop.example`).
        #[arg(long)]
        site: String,
        /// The deployed stack's name.
        #[arg(long)]
        stack: String,
        /// The REST key's consumer key (`ck_…`).
        #[arg(long)]
        consumer_key: String,
        /// The REST key's consumer secret (`cs_…`; better from the
        /// environment, out of the shell's history).
        #[arg(long, env = "WOOCOMMERCE_CONSUMER_SECRET", hide_env_values = true)]
        consumer_secret: String,
        /// Also write the WordPress plugin to this file: the notify-me form
        /// on sold-out products and variations, and the hold carried into
        /// the order (upload it under Plugins → Add New).
        #[arg(long)]
        plugin: Option<String>,
        /// Say what would change, and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Subcommand)]
enum OptoutCmd {
    /// Opt an email address or phone number out for good.
    Add { contact: String },
    /// Lift an opt-out.
    Remove { contact: String },
}

/// What `sign-webhook` signs: a platform's stock level or paid order.
#[derive(Debug, Clone, Copy)]
struct Format {
    platform: Platform,
    order: bool,
}

fn parse_format(text: &str) -> Result<Format, String> {
    let (name, order) = match text {
        "order" => (Platform::Standard.name(), true),
        _ => match text.strip_suffix("-order") {
            Some(name) => (name, true),
            None => (text, false),
        },
    };
    let platform = Platform::from_name(name).ok_or_else(|| {
        let names: Vec<_> = Platform::ALL.iter().map(|p| p.name()).collect();
        format!("expected one of {} (or NAME-order)", names.join(", "))
    })?;
    Ok(Format { platform, order })
}

/// Why a command did not run, as the operator reads it (after `restock: `).
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// A SKU argument that is not one.
    #[error("`{text}` is not a SKU: {reason}")]
    Sku { text: String, reason: String },
    /// A file that could not be read.
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    /// A file that could not be created.
    #[error("cannot create {file}: {source}")]
    Create {
        file: String,
        source: std::io::Error,
    },
    /// A catalogue CSV with a bad row.
    #[error("{file}: {source}")]
    Catalogue {
        file: String,
        source: restock_core::catalogue::CatalogueError,
    },
    /// An import cut short; the entries before it are in.
    #[error("stopped after {done} entries: {source}")]
    Import { done: u64, source: Box<CliError> },
    /// The command's arguments do not fit together.
    #[error("{0}")]
    Usage(String),
    /// A report that ends in failure (`doctor` found what blocks notices):
    /// printed as it is, exit 1.
    #[error("{0}")]
    Failed(String),
    /// The local server could not be reached.
    #[error(
        "the local server at {base} did not answer ({reason}); start it with `cargo run -p restock-local`, or pass --table for a deployed stack"
    )]
    LocalUnreachable { base: String, reason: String },
    /// The local server answered with something that is not an answer.
    #[error("the local server's answer is not JSON: {0}")]
    LocalAnswer(String),
    /// The local server refused the command; its message says why.
    #[error("{message}")]
    LocalRefused { kind: ErrorKind, message: String },
    /// The command failed on the stack's store, with every cause.
    #[error("{}", with_causes(.0))]
    Admin(#[from] restock_app::admin::AdminError),
    /// The keys secret could not be read, with every cause.
    #[error("{}", with_causes(.0))]
    Keys(#[from] restock_app::ports::KeyError),
    /// A test delivery that could not be signed.
    #[error(transparent)]
    Sign(#[from] restock_app::admin::webhooks::SignError),
    /// The dashboard could not be served.
    #[error("the dashboard stopped: {0}")]
    Serve(String),
    /// The export could not be written.
    #[error("cannot write the export: {0}")]
    Write(#[from] csv::Error),
    /// An AWS service or a platform's API failed or refused; `kind` says
    /// how.
    #[error("{message}")]
    Backend { kind: ErrorKind, message: String },
}

/// How the CLI ends, for scripts: the exit code and, with `--json`, the
/// `error` code (docs/CLI.md lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exit {
    /// The command ran and reports a failure (`doctor` found what blocks notices).
    Failed,
    /// The command line, or a file it names, is wrong.
    Usage,
    /// The backend's own kinds of failure.
    Backend(ErrorKind),
}

impl Exit {
    fn code(self) -> u8 {
        match self {
            Self::Failed => 1,
            Self::Usage => 2,
            Self::Backend(ErrorKind::NotFound) => 3,
            Self::Backend(ErrorKind::Conflict) => 4,
            Self::Backend(ErrorKind::Refused) => 5,
            Self::Backend(ErrorKind::Unavailable) => 6,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Failed => "failed",
            Self::Usage => "usage",
            Self::Backend(kind) => kind.code(),
        }
    }
}

impl CliError {
    /// What the failure amounts to.
    fn exit(&self) -> Exit {
        match self {
            Self::Sku { .. }
            | Self::Read { .. }
            | Self::Create { .. }
            | Self::Catalogue { .. }
            | Self::Usage(_)
            | Self::Write(_) => Exit::Usage,
            Self::Import { source, .. } => source.exit(),
            Self::Failed(_) => Exit::Failed,
            Self::LocalUnreachable { .. } | Self::LocalAnswer(_) | Self::Serve(_) => {
                Exit::Backend(ErrorKind::Unavailable)
            }
            Self::LocalRefused { kind, .. } | Self::Backend { kind, .. } => Exit::Backend(*kind),
            Self::Admin(e) => Exit::Backend(e.kind()),
            Self::Keys(_) => Exit::Backend(ErrorKind::Unavailable),
            Self::Sign(_) => Exit::Usage,
        }
    }

    /// A failed AWS call, `doing` what (`could not read the stack X`):
    /// not found, refused or unavailable by what the service answered (or
    /// did not), and what it said, in a line.
    fn aws<E, R>(e: &aws_smithy_runtime_api::client::result::SdkError<E, R>, doing: &str) -> Self
    where
        E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
        R: std::fmt::Debug,
    {
        let message = format!("{doing}: {}", aws_said(e));
        use aws_smithy_runtime_api::client::result::SdkError;
        let kind = match e {
            SdkError::ServiceError(failure) => {
                let err = failure.err();
                let code = err.code().unwrap_or_default();
                let said = err.message().unwrap_or_default();
                if code.contains("NotFound") || said.contains("does not exist") {
                    ErrorKind::NotFound
                } else if code.contains("Throttl") || code.contains("Unavailable") {
                    ErrorKind::Unavailable
                } else if code.contains("Conflict") || code.contains("ConditionalCheck") {
                    ErrorKind::Conflict
                } else {
                    ErrorKind::Refused
                }
            }
            _ => ErrorKind::Unavailable,
        };
        Self::Backend { kind, message }
    }
}

/// What a failed AWS call said, in one line: the service's error code and
/// message, or why no answer came (never the raw response).
pub(crate) fn aws_said<E, R>(e: &aws_smithy_runtime_api::client::result::SdkError<E, R>) -> String
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    if let SdkError::ServiceError(failure) = e {
        let err = failure.err();
        match (err.code(), err.message()) {
            (Some(code), Some(said)) => return format!("{code}: {said}"),
            (Some(code), None) => return code.to_owned(),
            _ => {}
        }
    }
    aws_smithy_types::error::display::DisplayErrorContext(e).to_string()
}

/// Where commands run.
enum Target {
    Dynamo(Admin),
    Local(String),
}

impl Target {
    async fn run(&self, command: Command) -> Result<Output, CliError> {
        match self {
            Self::Dynamo(admin) => Ok(admin.run(command, now_ms()).await?),
            Self::Local(base) => {
                let url = format!("{}/_admin/run", base.trim_end_matches('/'));
                let base = base.clone();
                tokio::task::spawn_blocking(move || {
                    let mut response = ureq::post(&url)
                        .config()
                        .http_status_as_error(false)
                        .build()
                        .send_json(&command)
                        .map_err(|e| CliError::LocalUnreachable {
                            base,
                            reason: e.to_string(),
                        })?;
                    let ok = response.status().is_success();
                    let value: serde_json::Value = response
                        .body_mut()
                        .read_json()
                        .map_err(|e| CliError::LocalAnswer(e.to_string()))?;
                    if ok {
                        serde_json::from_value(value)
                            .map_err(|e| CliError::LocalAnswer(e.to_string()))
                    } else {
                        Err(CliError::LocalRefused {
                            kind: serde_json::from_value(value["error"].clone())
                                .unwrap_or(ErrorKind::Refused),
                            message: value["message"]
                                .as_str()
                                .unwrap_or("the local server refused")
                                .to_owned(),
                        })
                    }
                })
                .await
                .map_err(|e| CliError::LocalAnswer(e.to_string()))?
            }
        }
    }
}

/// An error and what caused it, for people: "DynamoDB GetItem failed:
/// service error: ResourceNotFoundException: …", not just the first link.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// An answer as people read it: the table (if any), then the message.
fn render(output: &Output) -> String {
    let mut out = String::new();
    if !output.columns.is_empty() {
        let mut table = comfy_table::Table::new();
        table
            .load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
            .set_header(&output.columns);
        for row in &output.rows {
            table.add_row(row);
        }
        out.push_str(&table.to_string());
        out.push('\n');
    }
    if !output.message.is_empty() {
        out.push_str(&output.message);
        if !output.message.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn now_ms() -> i64 {
    let now = time::OffsetDateTime::now_utc();
    i64::try_from(now.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

fn sku(text: &str) -> Result<Sku, CliError> {
    Sku::try_from(text).map_err(|e| CliError::Sku {
        text: text.to_owned(),
        reason: e.to_string(),
    })
}

fn skus(texts: &[String]) -> Result<Vec<Sku>, CliError> {
    texts.iter().map(|s| sku(s)).collect()
}

fn read(file: &str) -> Result<String, CliError> {
    std::fs::read_to_string(file).map_err(|source| CliError::Read {
        file: file.to_owned(),
        source,
    })
}

async fn target(cli: &Cli) -> Result<Target, CliError> {
    target_on(cli, cli.table.as_deref(), cli.secret_id.as_deref()).await
}

/// [`target`] on `table` (the local server without one), with `secret_id`'s
/// pepper.
async fn target_on(
    cli: &Cli,
    table: Option<&str>,
    secret_id: Option<&str>,
) -> Result<Target, CliError> {
    let Some(table) = table else {
        return Ok(Target::Local(cli.local.clone()));
    };
    let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
    let store = Arc::new(DynamoStore::new(aws_sdk_dynamodb::Client::new(&sdk), table));
    let pepper = match secret_id {
        Some(id) => {
            let keyring =
                SecretsKeyring::new(aws_sdk_secretsmanager::Client::new(&sdk), id.to_owned());
            Some(keyring.keys().await?.contact_pepper.clone())
        }
        None => None,
    };
    Ok(Target::Dynamo(Admin { store, pepper }))
}

async fn import(target: &Target, file: &str, json: bool) -> Result<Output, CliError> {
    let entries = parse_csv(&read(file)?).map_err(|source| CliError::Catalogue {
        file: file.to_owned(),
        source,
    })?;
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(entries.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} importing [{bar:30}] {pos}/{len} entries ({eta} left)",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    for chunk in entries.chunks(25) {
        target
            .run(Command::CataloguePut {
                entries: chunk.to_vec(),
            })
            .await
            .map_err(|e| CliError::Import {
                done: bar.position(),
                source: Box::new(e),
            })?;
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    Ok(Output::message(
        format!("{} catalogue entries imported from {file}", entries.len()),
        serde_json::json!({ "imported": entries.len() }),
    ))
}

/// `restock export`: the rows a page at a time, each page written before
/// the next is asked for (`restock_app::admin::export::write`).
async fn export(target: &Target, cmd: &Cmd, json: bool) -> Result<Output, CliError> {
    use restock_app::admin::export::{self, ExportError, Kind};
    let Cmd::Export {
        what,
        skus: s,
        with_contacts,
        out,
    } = cmd
    else {
        unreachable!("called for export only")
    };
    let skus = skus(s)?;
    let sink: Box<dyn std::io::Write> = match out {
        Some(file) => Box::new(
            std::fs::File::create(file).map_err(|source| CliError::Create {
                file: file.clone(),
                source,
            })?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    if *with_contacts {
        eprintln!("restock: contacts are in the clear in this export; keep the file safe");
    }
    let bar = if json || out.is_none() {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    let kind = match what {
        ExportKind::Requests => Kind::Requests,
        ExportKind::Days => Kind::Days,
        ExportKind::Items => {
            let stats = target.run(Command::Stats { skus }).await?;
            let rows = export::write_items(&stats.json, sink).map_err(CliError::Write)?;
            let message = match out {
                Some(file) => format!("{rows} items exported to {file}"),
                None => String::new(),
            };
            return Ok(Output::message(
                message,
                serde_json::json!({ "items": rows }),
            ));
        }
    };
    let rows = export::write(
        kind,
        sink,
        |after| {
            target.run(Command::ExportPage {
                skus: skus.clone(),
                after,
                with_contacts: *with_contacts,
            })
        },
        |rows| bar.set_message(format!("{rows} requests")),
    )
    .await
    .map_err(|e| match e {
        ExportError::Page(e) => e,
        ExportError::Write(e) => CliError::Write(e),
    })?;
    bar.finish_and_clear();
    let message = match out {
        Some(file) => format!("{rows} requests exported to {file}"),
        None => String::new(),
    };
    Ok(Output::message(
        message,
        serde_json::json!({ "requests": rows }),
    ))
}

/// `restock dashboard`: serves the dashboard on 127.0.0.1 until Ctrl-C, or
/// points at the local server's.
async fn dashboard(
    target: Target,
    port: u16,
    no_open: bool,
    health: Option<Arc<dyn restock_app::health::Health>>,
) -> Result<String, CliError> {
    use restock_app::admin::dashboard::{Dashboard, router};
    let admin = match target {
        Target::Dynamo(admin) => admin,
        Target::Local(base) => {
            let url = format!("{}/admin", base.trim_end_matches('/'));
            if !no_open {
                let _ = open::that_detached(&url);
            }
            return Ok(format!("the local server serves the dashboard at {url}\n"));
        }
    };
    let clock: std::sync::Arc<dyn restock_app::ports::Clock> =
        std::sync::Arc::new(restock_app::ports::SystemClock);
    let mut dashboard = Dashboard::new(admin, clock, "");
    if let Some(health) = health {
        dashboard = dashboard.with_health(health);
    }
    let app = router(std::sync::Arc::new(dashboard));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| {
            CliError::Serve(format!(
                "cannot listen on 127.0.0.1:{port}: {e} (pass --port)"
            ))
        })?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::Serve(e.to_string()))?;
    let url = format!("http://{addr}/");
    eprintln!("restock: the dashboard is at {url} (this machine only; Ctrl-C stops it)");
    if !no_open && open::that_detached(&url).is_err() {
        eprintln!("restock: no browser could be opened: open {url} yourself");
    }
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| CliError::Serve(e.to_string()))?;
    Ok(String::new())
}

/// `restock dlq list | redrive`.
async fn dead_letters(cli: &Cli, action: &DlqCmd) -> Result<String, CliError> {
    let (DlqCmd::List { stack } | DlqCmd::Redrive { stack }) = action;
    let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
    let deployed = stack::outputs(&sdk, stack).await?;
    let now = now_ms();
    match action {
        DlqCmd::List { .. } => {
            let Some(queue) = &deployed.dead_letters else {
                return Err(CliError::Usage(format!(
                    "the stack {stack} has no DeadLetterQueueUrl output: redeploy it with the current template"
                )));
            };
            let letters = dlq::list(&sdk, queue).await?;
            let rows: Vec<Vec<String>> = letters
                .iter()
                .map(|l| {
                    vec![
                        restock_core::rfc3339(l.sent_ms),
                        l.from(),
                        l.why.clone(),
                        l.plan(now).to_owned(),
                    ]
                })
                .collect();
            let json: Vec<serde_json::Value> = letters
                .iter()
                .map(|l| {
                    serde_json::json!({
                        "id": l.id, "sent_ms": l.sent_ms, "from": l.from(), "why": l.why,
                        "redrive": l.plan(now),
                    })
                })
                .collect();
            let message = if letters.is_empty() {
                "the dead-letter queue is empty".to_owned()
            } else {
                format!(
                    "{} messages; `restock dlq redrive --stack {stack}` does each again (a notify batch's records stay in the stream 24 hours)",
                    letters.len()
                )
            };
            let output = Output::table(
                message,
                &["reached the queue", "from", "why", "a redrive"],
                rows,
                serde_json::Value::Array(json),
            );
            Ok(answer(&output, cli.json))
        }
        DlqCmd::Redrive { .. } => {
            let Target::Dynamo(admin) = target_on(
                cli,
                Some(&deployed.stack.table),
                Some(&deployed.stack.keys_secret),
            )
            .await?
            else {
                unreachable!("a table gives a DynamoDB target")
            };
            let done = dlq::redrive(&sdk, &deployed, &admin, now).await?;
            let left = done.iter().filter(|d| !d.deleted).count();
            let rows = done
                .iter()
                .map(|d| vec![d.from.clone(), d.done.clone()])
                .collect();
            let message = if done.is_empty() {
                "the dead-letter queue is empty; nothing to do".to_owned()
            } else {
                format!(
                    "{} messages done again and deleted, {left} left in the queue",
                    done.len() - left
                )
            };
            let output = Output::table(
                message,
                &["from", "done"],
                rows,
                serde_json::to_value(&done).unwrap_or_default(),
            );
            let text = answer(&output, cli.json);
            if left > 0 {
                Err(CliError::Failed(text))
            } else {
                Ok(text)
            }
        }
    }
}

/// `restock connect klaviyo`.
async fn connect_klaviyo(
    cli: &Cli,
    stack: &str,
    private_key: &str,
    api: Option<&str>,
    dry_run: bool,
) -> Result<String, CliError> {
    let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
    let deployed = stack::outputs(&sdk, stack).await?;
    let said = restock_aws::connect::klaviyo(&sdk, &deployed.stack, private_key, api, dry_run)
        .await
        .map_err(|e| CliError::Backend {
            kind: ErrorKind::Refused,
            message: e.to_string(),
        })?;
    let on = if deployed.klaviyo {
        "KlaviyoEvents is on: restock's events go to Klaviyo (docs/EVENTS.md, Klaviyo)".to_owned()
    } else {
        format!(
            "KlaviyoEvents is off on {stack}: add \"KlaviyoEvents=on\" to samconfig.toml's parameter_overrides and run `sam deploy`"
        )
    };
    Ok(format!("{}\n{on}\n", said.join("\n")))
}

/// `restock connect shopify|woocommerce|klaviyo`.
async fn connect(cli: &Cli) -> Result<String, CliError> {
    let Cmd::Connect { platform } = &cli.command else {
        unreachable!("called for connect only")
    };
    let (done, dry_run, plugin) = match platform {
        ConnectCmd::Klaviyo {
            stack,
            private_key,
            dry_run,
            api,
        } => return connect_klaviyo(cli, stack, private_key, api.as_deref(), *dry_run).await,
        ConnectCmd::Shopify {
            shop,
            stack,
            client_id,
            client_secret,
            access_token,
            dry_run,
        } => {
            let access = shopify_access(client_id, client_secret, access_token)?;
            let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
            let outputs = stack::outputs(&sdk, stack).await?.stack;
            let alerts = outputs.alerts(&sdk);
            let done =
                restock_aws::connect::shopify(&sdk, &outputs, shop, access, *dry_run, &alerts)
                    .await
                    .map_err(|e| CliError::Backend {
                        kind: ErrorKind::Refused,
                        message: e.to_string(),
                    })?;
            (done, *dry_run, None)
        }
        ConnectCmd::Woocommerce {
            site,
            stack,
            consumer_key,
            consumer_secret,
            plugin,
            dry_run,
        } => {
            let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
            let outputs = stack::outputs(&sdk, stack).await?.stack;
            let done = restock_aws::connect::woocommerce(
                &sdk,
                &outputs,
                site,
                consumer_key,
                consumer_secret,
                *dry_run,
                &outputs.alerts(&sdk),
            )
            .await
            .map_err(|e| CliError::Backend {
                kind: ErrorKind::Refused,
                message: e.to_string(),
            })?;
            if let Some(file) = plugin {
                let plugin = restock_aws::platforms::woocommerce::plugin(&outputs.capture_url);
                std::fs::write(file, plugin).map_err(|source| CliError::Create {
                    file: file.clone(),
                    source,
                })?;
            }
            (done, *dry_run, Some(plugin.clone()))
        }
    };
    if cli.json {
        let json = serde_json::json!({
            "dry_run": dry_run,
            "secret": done.secret,
            "webhooks": done.webhooks,
            "catalogue": done.catalogue.iter().map(|c| c.describe()).collect::<Vec<_>>(),
            "without_sku": done.without_sku,
        });
        return Ok(serde_json::to_string_pretty(&json).unwrap_or_default() + "\n");
    }
    let mut text = done.describe(dry_run);
    match plugin {
        Some(Some(file)) => {
            text += &format!(
                "plugin: {file} written; upload it under Plugins → Add New → Upload Plugin and activate it (it shows the notify-me form on sold-out products and variations, and carries the hold from the reserve link into the order)\n"
            )
        }
        Some(None) => {
            text += "plugin: run again with --plugin restock.php to write the WordPress plugin (the notify-me form, and the hold carried into the order)\n"
        }
        None => {}
    }
    Ok(text)
}

/// The Shopify access the arguments give.
fn shopify_access(
    client_id: &Option<String>,
    client_secret: &Option<String>,
    access_token: &Option<String>,
) -> Result<restock_aws::connect::ShopifyAccess, CliError> {
    Ok(match (client_id, client_secret, access_token) {
        (Some(id), Some(secret), _) => restock_aws::connect::ShopifyAccess::App {
            client_id: id.clone(),
            client_secret: secret.clone(),
        },
        (Some(_), None, _) => {
            return Err(CliError::Usage(
                "--client-id needs the app's client secret: set SHOPIFY_CLIENT_SECRET (or --client-secret)".into(),
            ));
        }
        (None, _, Some(token)) => restock_aws::connect::ShopifyAccess::Token(token.clone()),
        (None, _, None) => {
            return Err(CliError::Usage(
                "give the Dev Dashboard app's --client-id (and SHOPIFY_CLIENT_SECRET), or a legacy --access-token".into(),
            ));
        }
    })
}

/// The current (first) key for `platform` in the keys secret `secret_id`.
async fn current_key(
    sdk: &aws_config::SdkConfig,
    secret_id: &str,
    platform: restock_core::Platform,
) -> Result<String, CliError> {
    let value = aws_sdk_secretsmanager::Client::new(sdk)
        .get_secret_value()
        .secret_id(secret_id)
        .send()
        .await
        .map_err(|e| CliError::aws(&e, &format!("could not read the keys secret {secret_id}")))?;
    let keys: serde_json::Value = serde_json::from_str(value.secret_string().unwrap_or("{}"))
        .map_err(|e| CliError::Backend {
            kind: ErrorKind::Refused,
            message: format!("the keys secret is not JSON: {e}"),
        })?;
    keys[platform.name()][0]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| {
            CliError::Backend {
                kind: ErrorKind::NotFound,
                message: format!(
                "the keys secret has no {} key yet, so the stack refuses every {} delivery: add one (docs/DEPLOY.md, \"After deploying\")",
                platform.name(),
                platform.name()
            ),
            }
        })
}

/// `restock sign-webhook`: signs with `--key`, else the stack's current key
/// (`--stack`, or `--table` with `--secret-id`), else the local server's;
/// posts to `--url`, else the stack's DetectUrl, else the local server the
/// other commands talk to (`--local` / `RESTOCK_LOCAL_URL`).
async fn sign_webhook(cli: &Cli) -> Result<String, CliError> {
    let Cmd::SignWebhook {
        format,
        key,
        url,
        stack,
        sku,
        level,
        id,
        location,
        hold,
    } = &cli.command
    else {
        unreachable!("called for sign-webhook only")
    };
    let deployed = stack.is_some() || cli.table.is_some();
    let sdk = if deployed && key.is_none() || stack.is_some() {
        Some(restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await)
    } else {
        None
    };
    let (secret_id, detect_url) = match (stack, &sdk) {
        (Some(stack), Some(sdk)) => {
            let outputs = stack::outputs(sdk, stack).await?.stack;
            (Some(outputs.keys_secret), Some(outputs.detect_url))
        }
        _ => (cli.secret_id.clone(), None),
    };
    let key = match (key, &sdk, &secret_id) {
        (Some(key), _, _) => key.clone(),
        (None, Some(sdk), Some(secret)) => current_key(sdk, secret, format.platform).await?,
        (None, Some(_), None) => {
            return Err(CliError::Usage(
                "--table signs with the stack's key: give --secret-id <KeysSecretArn>, or --stack <name>".into(),
            ));
        }
        (None, None, _) => dev_key(format.platform),
    };
    let base = match (url, &detect_url) {
        (Some(url), _) => url.clone(),
        (None, Some(detect)) => detect.clone(),
        (None, None) if cli.table.is_some() => {
            return Err(CliError::Usage(
                "--table does not say where the stack's detect listens: give --url <DetectUrl>, or --stack <name>".into(),
            ));
        }
        (None, None) => cli.local.clone(),
    };
    let event = if format.order {
        TestEvent::Order {
            hold: hold.clone().ok_or_else(|| {
                CliError::Usage(
                    "--hold is required for an order (the hold id from the checkout URL)".into(),
                )
            })?,
            sku: sku.clone(),
        }
    } else {
        TestEvent::Stock {
            id: *id,
            sku: sku.clone(),
            level: *level,
            location: location.clone(),
        }
    };
    let delivery = sign(
        format.platform,
        &event,
        &key,
        &delivery_id(OsEntropy.bytes16()),
        now_ms() / 1000,
    )?;
    Ok(curl(&delivery, &base))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` are answers, not errors.
            if e.use_stderr() && std::env::args().any(|a| a == "--json") {
                // clap's text on one line: what is wrong, then the usage.
                let message = e.render().to_string();
                let message = message
                    .split("\n\nFor more information")
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                print_json_error(Exit::Usage, &message);
                return ExitCode::from(Exit::Usage.code());
            }
            e.exit()
        }
    };
    match run(&cli).await {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(CliError::Failed(report)) => {
            print!("{report}");
            ExitCode::from(Exit::Failed.code())
        }
        Err(e) => {
            let exit = e.exit();
            if cli.json {
                print_json_error(exit, &e.to_string());
            } else {
                eprintln!("restock: {e}");
            }
            ExitCode::from(exit.code())
        }
    }
}

/// An error as `--json` gives it: `{"error": code, "message": …}` on
/// standard output, where a script reads the answer.
fn print_json_error(exit: Exit, message: &str) {
    println!(
        "{}",
        serde_json::json!({ "error": exit.name(), "message": message, "exit": exit.code() })
    );
}

async fn run(cli: &Cli) -> Result<String, CliError> {
    if matches!(cli.command, Cmd::SignWebhook { .. }) {
        return sign_webhook(cli).await.map(|c| c + "\n");
    }
    if matches!(cli.command, Cmd::Connect { .. }) {
        return connect(cli).await;
    }
    if let Cmd::Catalogue {
        action: CatalogueCmd::Sync { stack, dry_run },
    } = &cli.command
    {
        let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
        let outputs = stack::outputs(&sdk, stack).await?.stack;
        let synced = restock_aws::connect::sync(&sdk, &outputs, *dry_run, &outputs.alerts(&sdk))
            .await
            .map_err(|e| CliError::Backend {
                kind: ErrorKind::Refused,
                message: e.to_string(),
            })?;
        let mut text = String::new();
        for s in &synced {
            text += &format!(
                "{}: {}, {} without a SKU{}\n",
                s.platform.label(),
                restock_core::catalogue::tally(&s.catalogue),
                s.without_sku,
                if *dry_run {
                    " (dry run: nothing changed)"
                } else {
                    ""
                }
            );
            for change in &s.catalogue {
                text += &format!("  {}\n", change.describe());
            }
        }
        return Ok(text);
    }
    if let Cmd::Dlq { action } = &cli.command {
        return dead_letters(cli, action).await;
    }
    if let Cmd::Doctor { stack } = &cli.command {
        use restock_app::health::Health;
        let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
        let deployed = stack::outputs(&sdk, stack).await?;
        let report = stack::StackHealth::new(sdk, deployed).report().await;
        let text = if cli.json {
            serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
        } else {
            report.describe()
        };
        return if report.blocking() {
            Err(CliError::Failed(text))
        } else {
            Ok(text)
        };
    }
    if let Cmd::Dashboard {
        port,
        no_open,
        stack: Some(stack),
    } = &cli.command
    {
        // The stack names its table and keys secret; the banner runs the doctor.
        let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
        let deployed = stack::outputs(&sdk, stack).await?;
        let table = cli.table.clone().unwrap_or(deployed.stack.table.clone());
        let secret = cli
            .secret_id
            .clone()
            .unwrap_or(deployed.stack.keys_secret.clone());
        let target = target_on(cli, Some(&table), Some(&secret)).await?;
        let health = Arc::new(restock_app::health::Cached::new(
            stack::StackHealth::new(sdk, deployed),
            Duration::from_secs(300),
        ));
        return dashboard(target, *port, *no_open, Some(health)).await;
    }
    let target = target(cli).await?;
    if let Cmd::Dashboard { port, no_open, .. } = cli.command {
        return dashboard(target, port, no_open, None).await;
    }
    let output = match &cli.command {
        Cmd::Catalogue {
            action: CatalogueCmd::Import { file },
        } => import(&target, file, cli.json).await?,
        export_cmd @ Cmd::Export { out, .. } => {
            let output = export(&target, export_cmd, cli.json).await?;
            if out.is_none() {
                // The CSV went to standard output: nothing more there.
                return Ok(String::new());
            }
            output
        }
        other => target.run(command(other)?).await?,
    };
    Ok(answer(&output, cli.json))
}

/// An answer for people ([`render`]) or, with `--json`, for scripts.
fn answer(output: &Output, json: bool) -> String {
    if json {
        serde_json::to_string_pretty(&output.json).unwrap_or_default() + "\n"
    } else {
        render(output)
    }
}

fn command(cmd: &Cmd) -> Result<Command, CliError> {
    Ok(match cmd {
        Cmd::Settings {
            action: SettingsCmd::Show,
        } => Command::SettingsShow,
        Cmd::Settings {
            action: SettingsCmd::Put { file },
        } => Command::SettingsPut { toml: read(file)? },
        Cmd::Catalogue {
            action: CatalogueCmd::Show { sku: Some(s) },
        } => Command::CatalogueShow { sku: sku(s)? },
        Cmd::Catalogue {
            action: CatalogueCmd::Show { sku: None },
        } => Command::CatalogueList,
        Cmd::Queue { sku: s, limit } => Command::Queue {
            sku: sku(s)?,
            limit: usize::try_from(*limit).unwrap_or(Admin::MAX_QUEUE_LIMIT),
        },
        Cmd::Release { sku: s } => Command::Release { sku: sku(s)? },
        Cmd::Reject { sku: s } => Command::Reject { sku: sku(s)? },
        Cmd::Escalations => Command::Escalations,
        Cmd::Holds { sku: s } => Command::Holds { sku: sku(s)? },
        Cmd::Pause { sku: s, reason } => Command::Pause {
            sku: s.as_deref().map(sku).transpose()?,
            reason: reason.clone(),
        },
        Cmd::Resume { sku: s } => Command::Resume {
            sku: s.as_deref().map(sku).transpose()?,
        },
        Cmd::Rewake { skus: s } => Command::Rewake { skus: skus(s)? },
        Cmd::Stats { skus: s } => Command::Stats { skus: skus(s)? },
        Cmd::Reconcile { skus: s } => Command::Reconcile { skus: skus(s)? },
        Cmd::Optout {
            action: OptoutCmd::Add { contact },
        } => Command::OptOutAdd {
            contact: contact.clone(),
        },
        Cmd::Optout {
            action: OptoutCmd::Remove { contact },
        } => Command::OptOutRemove {
            contact: contact.clone(),
        },
        Cmd::Forget { contact } => Command::Forget {
            contact: contact.clone(),
        },
        Cmd::Show { who, with_contacts } => Command::Show {
            who: who.clone(),
            with_contacts: *with_contacts,
        },
        Cmd::Catalogue {
            action: CatalogueCmd::Import { .. } | CatalogueCmd::Sync { .. },
        }
        | Cmd::Export { .. }
        | Cmd::Dashboard { .. }
        | Cmd::Connect { .. }
        | Cmd::Doctor { .. }
        | Cmd::Dlq { .. }
        | Cmd::SignWebhook { .. } => {
            unreachable!("handled before")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use proptest::prelude::*;

    #[test]
    fn the_argument_parser_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_failure_has_one_documented_exit_code() {
        use restock_app::admin::AdminError;
        use restock_store::StoreError;
        let exit = |e: CliError| (e.exit().code(), e.exit().name());
        assert_eq!(exit(CliError::Usage("x".into())), (2, "usage"));
        assert_eq!(exit(CliError::Failed("x".into())), (1, "failed"));
        let store = |e: StoreError| exit(CliError::Admin(AdminError::Store(e)));
        assert_eq!(store(StoreError::Missing("x".into())), (3, "not_found"));
        assert_eq!(store(StoreError::Contention("x".into())), (4, "conflict"));
        assert_eq!(store(StoreError::Refused("x".into())), (5, "refused"));
        assert_eq!(
            store(StoreError::Corrupt {
                key: "k".into(),
                reason: "r".into()
            }),
            (6, "unavailable")
        );
        assert_eq!(
            exit(CliError::LocalUnreachable {
                base: "b".into(),
                reason: "r".into()
            }),
            (6, "unavailable")
        );
        assert_eq!(
            exit(CliError::LocalRefused {
                kind: ErrorKind::Conflict,
                message: "m".into()
            }),
            (4, "conflict")
        );
        // An import cut short fails as its cause did.
        assert_eq!(
            exit(CliError::Import {
                done: 25,
                source: Box::new(CliError::Admin(AdminError::NoPepper))
            }),
            (5, "refused")
        );
        // docs/CLI.md's table says the same.
        let doc = include_str!("../../../docs/CLI.md");
        for (code, name) in [
            (1, "failed"),
            (2, "usage"),
            (3, "not_found"),
            (4, "conflict"),
            (5, "refused"),
            (6, "unavailable"),
        ] {
            assert!(
                doc.contains(&format!("| {code} | `{name}` |")),
                "docs/CLI.md lists {code} `{name}`"
            );
        }
    }

    #[test]
    fn a_queue_limit_past_the_bound_is_refused_with_the_range() {
        let refused = Cli::try_parse_from([
            "restock",
            "queue",
            "CHAIR",
            "--limit",
            "18446744073709551615",
        ])
        .err()
        .expect("refused");
        assert!(refused.to_string().contains("1..=10000"), "{refused}");
        for limit in ["0", "-1", "10001", "1e9"] {
            assert!(
                Cli::try_parse_from(["restock", "queue", "CHAIR", "--limit", limit]).is_err(),
                "{limit}"
            );
        }
        let Ok(Cli {
            command: Cmd::Queue { limit, .. },
            ..
        }) = Cli::try_parse_from(["restock", "queue", "CHAIR", "--limit", "10000"])
        else {
            panic!("10,000 is taken");
        };
        assert_eq!(limit, 10_000);
    }

    /// Words an operator (or a script gone wrong) might type: every
    /// command and flag, and values that are empty, huge, negative,
    /// non-numeric or not ASCII.
    fn word() -> impl Strategy<Value = String> {
        let known = prop::sample::select(vec![
            "settings",
            "show",
            "put",
            "catalogue",
            "catalog",
            "import",
            "queue",
            "release",
            "resume",
            "stats",
            "reconcile",
            "optout",
            "add",
            "remove",
            "forget",
            "export",
            "requests",
            "days",
            "dashboard",
            "sign-webhook",
            "shopify",
            "woocommerce",
            "stock",
            "order",
            "shopify-order",
            "--limit",
            "--level",
            "--id",
            "--port",
            "--sku",
            "--hold",
            "--location",
            "--json",
            "--table",
            "--local",
            "--with-contacts",
            "--no-open",
            "--",
            "-h",
            "--help",
            "--version",
            "18446744073709551615",
            "-9223372036854775809",
            "99999999999999999999999",
            "0",
            "-1",
            "65536",
            "",
            "CHAIR-WAL",
            "é",
            "\u{202e}",
        ]);
        prop_oneof![
            3 => known.prop_map(str::to_owned),
            1 => any::<String>(),
            1 => any::<i128>().prop_map(|n| n.to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

        /// Whatever is typed, the parser answers (a command or an error
        /// with its usage) and a parsed command becomes the store's command
        /// without panicking, its bounds kept.
        #[test]
        fn no_arguments_make_the_cli_panic(words in prop::collection::vec(word(), 0..8)) {
            let args = std::iter::once("restock".to_owned()).chain(words);
            let Ok(cli) = Cli::try_parse_from(args) else {
                return Ok(());
            };
            if let Cmd::Queue { limit, .. } = &cli.command {
                prop_assert!((1..=Admin::MAX_QUEUE_LIMIT as u64).contains(limit));
            }
            let handled_before = matches!(
                &cli.command,
                Cmd::Catalogue { action: CatalogueCmd::Import { .. } }
                    | Cmd::Export { .. }
                    | Cmd::Dashboard { .. }
                    | Cmd::SignWebhook { .. }
            );
            if !handled_before {
                let _ = command(&cli.command);
            }
        }
    }
}
