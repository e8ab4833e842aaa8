//! The command line: every command, its arguments and their help, as
//! clap parses them. Nothing here runs a command.

use clap::{Parser, Subcommand};
use restock_app::admin::Admin;
use restock_core::Platform;

#[derive(Parser)]
#[command(
    name = "restock",
    version,
    about = "Run a restock shop: settings, catalogue, queues, releases, stats, opt-outs, test webhooks."
)]
pub(crate) struct Cli {
    /// The stack's DynamoDB table (the TableName output). Without it, the
    /// commands go to the local server.
    #[arg(long, env = "RESTOCK_TABLE", global = true)]
    pub(crate) table: Option<String>,
    /// A DynamoDB endpoint other than AWS's (a local DynamoDB API).
    #[arg(long, env = "AWS_ENDPOINT_URL_DYNAMODB", global = true)]
    pub(crate) endpoint_url: Option<String>,
    /// The stack's keys secret (the KeysSecretArn output), for opt-outs.
    #[arg(long, env = "RESTOCK_SECRET_ID", global = true)]
    pub(crate) secret_id: Option<String>,
    /// The local server.
    #[arg(
        long,
        env = "RESTOCK_LOCAL_URL",
        default_value = "http://127.0.0.1:3000",
        global = true
    )]
    pub(crate) local: String,
    /// Answer in JSON, for scripts.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    #[command(subcommand)]
    pub(crate) command: Cmd,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
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
pub(crate) enum ExportKind {
    /// One row per request.
    Requests,
    /// One row per day and item.
    Days,
    /// One row per item: what it brought in, through holds and assisted.
    Items,
}

#[derive(Subcommand)]
pub(crate) enum SettingsCmd {
    /// Print the settings as TOML.
    Show,
    /// Validate and store a TOML settings file.
    Put { file: String },
}

#[derive(Subcommand)]
pub(crate) enum CatalogueCmd {
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
pub(crate) enum DlqCmd {
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
pub(crate) enum ConnectCmd {
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
        /// Also write the Shopify app to this folder: its configuration
        /// (the webhooks, the privacy topics) and the theme app extension
        /// (the notify-me form as an app block and an app embed). Run
        /// `shopify app deploy` in it; connect then subscribes no webhooks
        /// itself.
        #[arg(long, requires = "client_id")]
        app: Option<String>,
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
pub(crate) enum OptoutCmd {
    /// Opt an email address or phone number out for good.
    Add { contact: String },
    /// Lift an opt-out.
    Remove { contact: String },
}

/// What `sign-webhook` signs: a platform's stock level or paid order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Format {
    pub(crate) platform: Platform,
    pub(crate) order: bool,
}

pub(crate) fn parse_format(text: &str) -> Result<Format, String> {
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
