//! `restock connect shopify|woocommerce`: a shop connected to a deployed
//! stack in one command. The API credentials go into the stack's keys
//! secret, the stock and order webhooks are registered at its DetectUrl,
//! and every variant is in the catalogue. Each step reads first and changes only
//! what differs, so running it again changes nothing; with `dry_run` it
//! only says what it would change.

use restock_app::admin::ErrorKind;
use restock_app::ports::Alerts;
use restock_core::catalogue::Change;
use restock_core::{CatalogueEntry, Platform};

use crate::platforms::HttpPlatforms;
use crate::platforms::{shopify, woocommerce};

pub mod app;
mod catalogue;
mod error;

use catalogue::{catalogue, held_lines};
pub use error::ConnectError;
use error::{on_aws, on_platform, said};

/// The webhook topics restock needs from Shopify.
pub const SHOPIFY_TOPICS: [&str; 2] = ["INVENTORY_LEVELS_UPDATE", "ORDERS_PAID"];

/// What a deployed stack's outputs give the command.
#[derive(Debug, Clone)]
pub struct Stack {
    /// The stack's name.
    pub name: String,
    /// The `BedrockModelId` parameter (none on a stack without it).
    pub model_id: Option<String>,
    /// `KeysSecretArn`.
    pub keys_secret: String,
    /// `DetectUrl` (ends in `/`).
    pub detect_url: String,
    /// `CaptureUrl`: where the widget posts.
    pub capture_url: String,
    /// `TableName`.
    pub table: String,
    /// `AlertTopicArn`: the team's alerts.
    pub alert_topic: String,
}

impl Stack {
    /// The team's alerts, on this stack's topic.
    pub fn alerts(&self, sdk: &aws_config::SdkConfig) -> crate::SnsAlerts {
        crate::SnsAlerts::new(aws_sdk_sns::Client::new(sdk), self.alert_topic.clone())
    }

    /// Where `platform`'s deliveries go on this stack: its DetectUrl and
    /// the platform's route.
    pub fn webhook_url(&self, platform: Platform) -> String {
        format!(
            "{}/{}",
            self.detect_url.trim_end_matches('/'),
            platform.routes()[0].trim_start_matches('/')
        )
    }
}

/// What `shopify_admin.webhooks` in the keys secret says when the app's
/// configuration subscribes the webhooks.
pub const APP_WEBHOOKS: &str = "app";

/// Who subscribes Shopify's webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Webhooks {
    /// connect, through the Admin API, for this shop.
    Subscribe,
    /// The app's configuration (`--app`: `shopify app deploy` subscribes
    /// them for every shop the app is on): connect subscribes none, so no
    /// delivery comes twice.
    DeclaredByApp,
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
    /// Items held back for the team (shared SKUs, renames), a line each
    /// with what to do.
    pub held: Vec<String>,
    /// Variants left out because they have no SKU.
    pub without_sku: usize,
    /// The shop's locations as they count toward a SKU's level (Shopify).
    pub locations: Option<String>,
}

impl Connected {
    /// The catalogue's changes and the items held back, as merged.
    fn take(&mut self, merge: restock_core::catalogue::Merge, platform: Platform) {
        self.held = held_lines(&merge.held, platform);
        self.catalogue = merge.changes;
    }

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
            "catalogue: {}",
            restock_core::catalogue::tally(&self.catalogue)
        );
        if self.without_sku > 0 {
            text += &format!(
                "; {} variants without a SKU left out (give them one in the shop's admin, then run this again)",
                self.without_sku
            );
        }
        text += "\n";
        for change in &self.catalogue {
            text += &format!("  {}\n", change.describe());
        }
        for line in &self.held {
            text += &format!("  {line}\n");
        }
        if let Some(locations) = &self.locations {
            text += &format!("locations: {locations}\n");
        }
        text
    }
}

/// Connects `shop` (`your-shop.myshopify.com`) with `access` to `stack`;
/// `webhooks` says who subscribes them, `dry_run` changes nothing.
///
/// # Errors
/// [`ConnectError`] naming the step and what to check.
pub async fn shopify(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    shop: &str,
    access: ShopifyAccess,
    (webhooks, dry_run): (Webhooks, bool),
    alerts: &dyn Alerts,
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
    // Shopify's Admin API does not list the app's own subscriptions:
    // `restock doctor` reads here that the app declares them.
    let mut admin_access = admin_access;
    if webhooks == Webhooks::DeclaredByApp {
        admin_access["webhooks"] = serde_json::json!(APP_WEBHOOKS);
    }
    let platforms = HttpPlatforms::new();
    let api = platforms
        .shopify(&admin_access)
        .map_err(on_platform("Shopify access"))?;
    api.check()
        .await
        .map_err(on_platform("Shopify's Admin API"))?;

    // 1. The keys secret: the API access, and the key webhooks are signed with.
    done.secret = shopify_keys(sdk, stack, &access, &admin_access, dry_run).await?;
    // 2. The webhooks, at this stack's DetectUrl.
    done.webhooks = match webhooks {
        Webhooks::Subscribe => shopify_webhooks(&api, stack, dry_run).await?,
        Webhooks::DeclaredByApp => vec![format!(
            "declared in the app's shopify.app.toml at {}: `shopify app deploy` subscribes them",
            stack.webhook_url(Platform::Shopify)
        )],
    };
    // 3. Every variant in the catalogue; the shop's own settings per item stay.
    let (listed, without_sku) = listing(&platforms, Platform::Shopify, &admin_access).await?;
    done.without_sku = without_sku;
    done.take(
        catalogue(sdk, stack, Platform::Shopify, listed, dry_run, alerts).await?,
        Platform::Shopify,
    );
    // 4. Which locations' units count: those that fulfil online orders.
    done.locations = Some(match api.locations().await {
        Ok(listed) => where_sold(&listed),
        Err(e) => format!(
            "not read ({e}): every location counts until the app has the `read_locations` scope"
        ),
    });
    Ok(done)
}

/// The shop's locations as a sentence: which fulfil online orders (their
/// units count) and which do not (theirs tell nobody).
fn where_sold(listed: &[restock_app::ports::ShopLocation]) -> String {
    let offline: Vec<&str> = listed
        .iter()
        .filter(|l| !l.online)
        .map(|l| l.id.as_str())
        .collect();
    let online = listed.len() - offline.len();
    if offline.is_empty() {
        return format!("{online} fulfil online orders; their units count");
    }
    format!(
        "{online} fulfil online orders and count; {} do not ({}), so units there tell nobody (the settings' [locations] include can count them)",
        offline.len(),
        offline.join(", ")
    )
}

/// The keys secret with Shopify's Admin API access and the key its
/// webhooks are signed with (the app's client secret first); what changed.
async fn shopify_keys(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    access: &ShopifyAccess,
    admin_access: &serde_json::Value,
    dry_run: bool,
) -> Result<Vec<String>, ConnectError> {
    let mut said_of = Vec::new();
    let mut keys = read_keys(sdk, stack).await?;
    let before = keys.clone();
    if keys["shopify_admin"] != *admin_access {
        keys["shopify_admin"] = admin_access.clone();
        said_of.push("shopify_admin: the Admin API access set".into());
    }
    match access {
        ShopifyAccess::App { client_secret, .. } => {
            let listed: Vec<String> =
                serde_json::from_value(keys[Platform::Shopify.name()].clone()).unwrap_or_default();
            if listed.first() != Some(client_secret) {
                // The app signs webhooks with its client secret: it goes
                // first (the current key), older keys stay after it.
                let mut now = vec![client_secret.clone()];
                now.extend(listed.into_iter().filter(|k| k != client_secret));
                keys[Platform::Shopify.name()] = serde_json::json!(now);
                said_of
                    .push("shopify: the app's client secret is the webhook key".into());
            }
        }
        ShopifyAccess::Token(_) => said_of.push(
            "shopify: a legacy token; put the app's API secret key first under `shopify` (docs/SETTINGS.md)".into(),
        ),
    }
    if keys == before {
        said_of.push("unchanged".into());
    } else if !dry_run {
        write_keys(sdk, stack, &keys).await?;
    }
    Ok(said_of)
}

/// Every topic restock needs subscribed at this stack's DetectUrl (other
/// subscriptions left as they are); what each came to.
async fn shopify_webhooks(
    api: &crate::platforms::shopify::Api<'_>,
    stack: &Stack,
    dry_run: bool,
) -> Result<Vec<String>, ConnectError> {
    let mut said_of = Vec::new();
    let uri = stack.webhook_url(Platform::Shopify);
    let subscribed = api
        .subscriptions(&SHOPIFY_TOPICS)
        .await
        .map_err(on_platform("listing webhook subscriptions"))?;
    for topic in SHOPIFY_TOPICS {
        if subscribed.iter().any(|s| s.topic == topic && s.uri == uri) {
            said_of.push(format!("{topic}: already delivers to {uri}"));
            continue;
        }
        for other in subscribed.iter().filter(|s| s.topic == topic) {
            said_of.push(format!(
                "{topic}: also delivers to {} (left as it is)",
                other.uri
            ));
        }
        if dry_run {
            said_of.push(format!("{topic}: would subscribe {uri}"));
        } else {
            api.subscribe(topic, &uri)
                .await
                .map_err(on_platform("subscribing webhooks"))?;
            said_of.push(format!("{topic}: subscribed {uri}"));
        }
    }
    Ok(said_of)
}

/// The catalogue entries `platform` lists with `access` (the keys
/// secret's value for it), and how many items it lists without a SKU.
async fn listing(
    platforms: &HttpPlatforms,
    platform: Platform,
    access: &serde_json::Value,
) -> Result<(Vec<CatalogueEntry>, usize), ConnectError> {
    let step = format!("reading {}'s items", platform.label());
    let failed = on_platform(&step);
    match platform {
        Platform::Shopify => {
            let api = platforms.shopify(access).map_err(&failed)?;
            let variants = api.variants().await.map_err(&failed)?;
            Ok(shopify::catalogue_entries(&api.shop(), &variants))
        }
        Platform::WooCommerce => {
            let api = platforms.woocommerce(access).map_err(&failed)?;
            let products = api.products().await.map_err(&failed)?;
            Ok(woocommerce::catalogue_entries(&api.site(), &products))
        }
        Platform::Standard => Ok((Vec::new(), 0)),
    }
}

/// The keys secret, read.
///
/// # Errors
/// [`ConnectError`] when it cannot be read or is not JSON.
pub async fn read_keys(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
) -> Result<serde_json::Value, ConnectError> {
    let current = aws_sdk_secretsmanager::Client::new(sdk)
        .get_secret_value()
        .secret_id(&stack.keys_secret)
        .send()
        .await
        .map_err(|e| on_aws("reading the keys secret", &e))?;
    serde_json::from_str(current.secret_string().unwrap_or("{}"))
        .map_err(|e| said("the keys secret")(format!("not JSON: {e}")))
}

/// The keys secret, written.
async fn write_keys(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    keys: &serde_json::Value,
) -> Result<(), ConnectError> {
    aws_sdk_secretsmanager::Client::new(sdk)
        .put_secret_value()
        .secret_id(&stack.keys_secret)
        .secret_string(keys.to_string())
        .send()
        .await
        .map(drop)
        .map_err(|e| on_aws("writing the keys secret", &e))
}

/// Puts Klaviyo's private key in `stack`'s keys secret (as `klaviyo`),
/// once Klaviyo has taken it; `api` for another host (tests). What changed,
/// a line each.
///
/// # Errors
/// [`ConnectError`] when Klaviyo refuses the key or the secret cannot be
/// read or written.
pub async fn klaviyo(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    private_key: &str,
    api: Option<&str>,
    dry_run: bool,
) -> Result<Vec<String>, ConnectError> {
    let mut said = Vec::new();
    if let Some(note) = crate::klaviyo::check_key(private_key, api)
        .await
        .map_err(|e| ConnectError {
            kind: match e {
                crate::klaviyo::KeyCheckFailed::Unreachable(_) => ErrorKind::Unavailable,
                crate::klaviyo::KeyCheckFailed::Refused(_) => ErrorKind::Refused,
            },
            message: e.to_string(),
        })?
    {
        said.push(note);
    } else {
        said.push("Klaviyo takes the key".into());
    }
    let mut keys = read_keys(sdk, stack).await?;
    let mut access = serde_json::json!({ "private_key": private_key });
    if let Some(api) = api {
        access["api"] = api.into();
    }
    if keys["klaviyo"] == access {
        said.push("keys secret: unchanged".into());
        return Ok(said);
    }
    keys["klaviyo"] = access;
    if dry_run {
        said.push("keys secret: would set klaviyo (dry run: nothing changed)".into());
    } else {
        write_keys(sdk, stack, &keys).await?;
        said.push("keys secret: klaviyo set".into());
    }
    Ok(said)
}

/// The WooCommerce webhook topics restock registers: stock (a product or
/// variation saved) and orders (one that is paid ends its hold).
pub const WOOCOMMERCE_TOPICS: [&str; 2] = ["product.updated", "order.updated"];

/// Connects the WooCommerce site at `site` with a REST key (Read/Write:
/// it registers webhooks) to `stack`. The webhooks are signed with a
/// secret restock generates once and keeps as the `woocommerce` key.
///
/// # Errors
/// [`ConnectError`] naming the step and what to check.
pub async fn woocommerce(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    site: &str,
    consumer_key: &str,
    consumer_secret: &str,
    dry_run: bool,
    alerts: &dyn Alerts,
) -> Result<Connected, ConnectError> {
    let mut done = Connected::default();
    let access = serde_json::json!({
        "url": site, "consumer_key": consumer_key, "consumer_secret": consumer_secret,
    });
    let platforms = HttpPlatforms::new();
    let api = platforms
        .woocommerce(&access)
        .map_err(on_platform("WooCommerce access"))?;
    // Reading the webhooks proves the key (and that it may manage them).
    let registered = api
        .webhooks()
        .await
        .map_err(on_platform("WooCommerce's REST API"))?;

    // 1. The keys secret: the API access, and the webhooks' signing secret.
    let mut keys = read_keys(sdk, stack).await?;
    let before = keys.clone();
    if keys["woocommerce_api"] != access {
        keys["woocommerce_api"] = access.clone();
        done.secret
            .push("woocommerce_api: the REST API access set".into());
    }
    let secret = match keys[Platform::WooCommerce.name()][0].as_str() {
        Some(current) => current.to_owned(),
        None => {
            let secret = generated_secret();
            keys[Platform::WooCommerce.name()] = serde_json::json!([secret]);
            done.secret
                .push("woocommerce: a generated webhook secret is the key".into());
            secret
        }
    };
    if keys == before {
        done.secret.push("unchanged".into());
    } else if !dry_run {
        write_keys(sdk, stack, &keys).await?;
    }

    // 2. The webhooks, at this stack's DetectUrl, signed with that secret.
    let url = stack.webhook_url(Platform::WooCommerce);
    for topic in WOOCOMMERCE_TOPICS {
        let ours = registered
            .iter()
            .find(|w| w.topic == topic && w.delivery_url == url);
        match ours {
            Some(w) if w.status == "active" => {
                done.webhooks
                    .push(format!("{topic}: already delivers to {url}"));
                continue;
            }
            Some(w) => done.webhooks.push(format!(
                "{topic}: registered but {} (WooCommerce disables a webhook after five failed deliveries): turn it back on under WooCommerce → Settings → Advanced → Webhooks",
                w.status
            )),
            None if dry_run => done.webhooks.push(format!("{topic}: would register {url}")),
            None => {
                api.create_webhook(topic, &url, &secret)
                    .await
                    .map_err(on_platform("registering webhooks"))?;
                done.webhooks.push(format!("{topic}: registered {url}"));
            }
        }
    }

    // 3. Simple products and every variation in the catalogue.
    let (listed, without_sku) = listing(&platforms, Platform::WooCommerce, &access).await?;
    done.without_sku = without_sku;
    let merge = catalogue(sdk, stack, Platform::WooCommerce, listed, dry_run, alerts).await?;
    done.take(merge, Platform::WooCommerce);
    Ok(done)
}

/// What `restock catalogue sync` found for one platform.
#[derive(Debug, Clone)]
pub struct Synced {
    /// The platform read.
    pub platform: Platform,
    /// The catalogue's changes.
    pub catalogue: Vec<Change>,
    /// Items held back for the team (shared SKUs, renames), a line each
    /// with what to do.
    pub held: Vec<String>,
    /// Items it lists without a SKU, left out.
    pub without_sku: usize,
}

/// Re-reads every platform whose API access is in the keys secret and
/// applies what changed to the catalogue (unless `dry_run`): new items,
/// new names, URLs and ids; each item's own threshold and shards stay.
/// Items a platform no longer lists are ended, and the team told once
/// through `alerts`.
///
/// # Errors
/// [`ConnectError`] naming the step and what to check.
pub async fn sync(
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    dry_run: bool,
    alerts: &dyn Alerts,
) -> Result<Vec<Synced>, ConnectError> {
    let keys = read_keys(sdk, stack).await?;
    let platforms = HttpPlatforms::new();
    let mut synced = Vec::new();
    for platform in [Platform::Shopify, Platform::WooCommerce] {
        let Some(access) = platform
            .api_secret_key()
            .map(|k| &keys[k])
            .filter(|a| !a.is_null())
        else {
            continue;
        };
        let (listed, without_sku) = listing(&platforms, platform, access).await?;
        let merge = catalogue(sdk, stack, platform, listed, dry_run, alerts).await?;
        synced.push(Synced {
            platform,
            catalogue: merge.changes,
            held: held_lines(&merge.held, platform),
            without_sku,
        });
    }
    if synced.is_empty() {
        return Err(ConnectError::refused(
            "no platform's API access is in the keys secret: run `restock connect shopify` or `restock connect woocommerce` first".into(),
        ));
    }
    Ok(synced)
}

/// A new webhook signing secret: 32 random bytes as hex.
fn generated_secret() -> String {
    use restock_app::ports::Entropy;
    let entropy = restock_app::ports::OsEntropy;
    let bytes = [entropy.bytes16(), entropy.bytes16()].concat();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
