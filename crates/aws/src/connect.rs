//! `restock connect shopify`: a shop connected to a deployed stack in one
//! command. The Admin API credentials go into the stack's keys secret, the
//! stock and order webhooks are subscribed at its DetectUrl, and every
//! variant is in the catalogue. Each step reads first and changes only
//! what differs, so running it again changes nothing; with `dry_run` it
//! only says what it would change.

use restock_app::admin::{Admin, Command};
use restock_core::catalogue::{Change, merge_listed};
use restock_core::{CatalogueEntry, Platform};
use restock_store::CatalogueStore;
use restock_store_dynamo::DynamoStore;

use crate::platforms::HttpPlatforms;
use crate::platforms::shopify::catalogue_entries;

/// The webhook topics restock needs from Shopify.
pub const SHOPIFY_TOPICS: [&str; 2] = ["INVENTORY_LEVELS_UPDATE", "ORDERS_PAID"];

/// What a deployed stack's outputs give the command.
#[derive(Debug, Clone)]
pub struct Stack {
    /// `KeysSecretArn`.
    pub keys_secret: String,
    /// `DetectUrl` (ends in `/`).
    pub detect_url: String,
    /// `TableName`.
    pub table: String,
}

/// How restock gets Shopify Admin API tokens.
#[derive(Debug, Clone)]
pub enum ShopifyAccess {
    /// A Dev Dashboard app installed on the shop: its client id and secret
    /// (tokens through the client credentials grant; it signs webhooks
    /// with the secret).
    App {
        /// The app's client id.
        client_id: String,
        /// The app's client secret.
        client_secret: String,
    },
    /// A legacy custom app's Admin API token (`shpat_…`).
    Token(String),
}

/// What connecting did (or, dry, would do), a line per change.
#[derive(Debug, Default, Clone)]
pub struct Connected {
    /// The keys secret's changes.
    pub secret: Vec<String>,
    /// The webhook subscriptions made (or already there).
    pub webhooks: Vec<String>,
    /// The catalogue's changes.
    pub catalogue: Vec<Change>,
    /// Variants left out because they have no SKU.
    pub without_sku: usize,
}

impl Connected {
    /// The report, as a person reads it.
    pub fn describe(&self, dry_run: bool) -> String {
        let mut text = String::new();
        let would = if dry_run {
            " (dry run: nothing changed)"
        } else {
            ""
        };
        text += &format!("keys secret{would}:\n");
        for line in &self.secret {
            text += &format!("  {line}\n");
        }
        text += "webhooks:\n";
        for line in &self.webhooks {
            text += &format!("  {line}\n");
        }
        text += &format!(
            "catalogue: {} new, {} changed",
            self.catalogue
                .iter()
                .filter(|c| matches!(c, Change::New(_)))
                .count(),
            self.catalogue
                .iter()
                .filter(|c| matches!(c, Change::Changed { .. }))
                .count()
        );
        if self.without_sku > 0 {
            text += &format!(
                "; {} variants without a SKU left out (give them one in Shopify, then run this again)",
                self.without_sku
            );
        }
        text += "\n";
        for change in &self.catalogue {
            text += &format!("  {}\n", change.describe());
        }
        text
    }
}

/// Why connecting stopped. Steps before it are done (each is safe to run
/// again).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConnectError(String);

fn said(step: &str) -> impl Fn(String) -> ConnectError + '_ {
    move |e| ConnectError(format!("{step}: {e}"))
}

/// Connects `shop` (`your-shop.myshopify.com`) with `access` to `stack`.
///
/// # Errors
/// [`ConnectError`] naming the step and what to check.
pub async fn shopify(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    shop: &str,
    access: ShopifyAccess,
    dry_run: bool,
) -> Result<Connected, ConnectError> {
    let mut done = Connected::default();
    let admin_access = match &access {
        ShopifyAccess::App {
            client_id,
            client_secret,
        } => serde_json::json!({
            "shop": shop, "client_id": client_id, "client_secret": client_secret,
        }),
        ShopifyAccess::Token(token) => serde_json::json!({ "shop": shop, "access_token": token }),
    };
    let platforms = HttpPlatforms::new();
    let api = platforms
        .shopify(&admin_access)
        .map_err(|e| said("Shopify access")(e.to_string()))?;
    api.check()
        .await
        .map_err(|e| said("Shopify's Admin API")(e.to_string()))?;

    // 1. The keys secret: the API access, and the key webhooks are signed with.
    let secrets = aws_sdk_secretsmanager::Client::new(sdk);
    let current = secrets
        .get_secret_value()
        .secret_id(&stack.keys_secret)
        .send()
        .await
        .map_err(|e| {
            said("reading the keys secret")(
                aws_sdk_secretsmanager::error::DisplayErrorContext(&e).to_string(),
            )
        })?;
    let mut keys: serde_json::Value = serde_json::from_str(current.secret_string().unwrap_or("{}"))
        .map_err(|e| said("the keys secret")(format!("not JSON: {e}")))?;
    let before = keys.clone();
    if keys["shopify_admin"] != admin_access {
        keys["shopify_admin"] = admin_access.clone();
        done.secret
            .push("shopify_admin: the Admin API access set".into());
    }
    match &access {
        ShopifyAccess::App { client_secret, .. } => {
            let listed: Vec<String> =
                serde_json::from_value(keys["shopify"].clone()).unwrap_or_default();
            if listed.first() != Some(client_secret) {
                // The app signs webhooks with its client secret: it goes
                // first (the current key), older keys stay after it.
                let mut now = vec![client_secret.clone()];
                now.extend(listed.into_iter().filter(|k| k != client_secret));
                keys["shopify"] = serde_json::json!(now);
                done.secret
                    .push("shopify: the app's client secret is the webhook key".into());
            }
        }
        ShopifyAccess::Token(_) => done.secret.push(
            "shopify: a legacy token; put the app's API secret key first under `shopify` (docs/SETTINGS.md)".into(),
        ),
    }
    if keys == before {
        done.secret.push("unchanged".into());
    } else if !dry_run {
        secrets
            .put_secret_value()
            .secret_id(&stack.keys_secret)
            .secret_string(keys.to_string())
            .send()
            .await
            .map_err(|e| {
                said("writing the keys secret")(
                    aws_sdk_secretsmanager::error::DisplayErrorContext(&e).to_string(),
                )
            })?;
    }

    // 2. The webhooks, at this stack's DetectUrl.
    let uri = format!(
        "{}/{}",
        stack.detect_url.trim_end_matches('/'),
        Platform::Shopify.routes()[0].trim_start_matches('/')
    );
    let subscribed = api
        .subscriptions(&SHOPIFY_TOPICS)
        .await
        .map_err(|e| said("listing webhook subscriptions")(e.to_string()))?;
    for topic in SHOPIFY_TOPICS {
        if subscribed.iter().any(|s| s.topic == topic && s.uri == uri) {
            done.webhooks
                .push(format!("{topic}: already delivers to {uri}"));
            continue;
        }
        for other in subscribed.iter().filter(|s| s.topic == topic) {
            done.webhooks.push(format!(
                "{topic}: also delivers to {} (left as it is)",
                other.uri
            ));
        }
        if dry_run {
            done.webhooks
                .push(format!("{topic}: would subscribe {uri}"));
        } else {
            api.subscribe(topic, &uri)
                .await
                .map_err(|e| said("subscribing webhooks")(e.to_string()))?;
            done.webhooks.push(format!("{topic}: subscribed {uri}"));
        }
    }

    // 3. Every variant in the catalogue; the shop's own settings per item stay.
    let store = DynamoStore::new(aws_sdk_dynamodb::Client::new(sdk), &stack.table);
    let existing: Vec<CatalogueEntry> = store
        .catalogue()
        .await
        .map_err(|e| said("reading the catalogue")(e.to_string()))?;
    let variants = api
        .variants()
        .await
        .map_err(|e| said("reading the shop's variants")(e.to_string()))?;
    let (listed, without_sku) = catalogue_entries(&api.shop(), &variants);
    done.without_sku = without_sku;
    done.catalogue = merge_listed(&existing, Platform::Shopify, listed);
    if !dry_run && !done.catalogue.is_empty() {
        let admin = Admin {
            store: std::sync::Arc::new(store),
            pepper: None,
        };
        let entries: Vec<CatalogueEntry> =
            done.catalogue.iter().map(|c| c.entry().clone()).collect();
        for chunk in entries.chunks(25) {
            admin
                .run(
                    Command::CataloguePut {
                        entries: chunk.to_vec(),
                    },
                    0,
                )
                .await
                .map_err(|e| said("saving the catalogue")(e.to_string()))?;
        }
    }
    Ok(done)
}
