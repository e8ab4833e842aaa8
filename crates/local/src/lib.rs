//! restock on a laptop. One process serves the capture and detect routers
//! Lambda runs (the same code), runs notify whenever the store records a wake
//! and sweep on a timer, and keeps notices in an outbox (printed, appended to
//! a JSONL file, listed at `/outbox`). A demo storefront shows the widget,
//! the team's dashboard is at `/admin`, and `POST /_admin/run` runs the
//! `restock` CLI's commands on this store.
//!
//! As deployed, the storefront and capture are two origins: the storefront
//! (demo shop, widget script, dashboard, webhooks) on `port`, capture on
//! `capture_port`, behind the capture Function URL's CORS from
//! `template.yaml` ([`cors`]).

pub mod cors;
mod demo;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use restock_app::Services;
use restock_app::admin::dashboard::loopback_only;
use restock_app::admin::{Admin, DEV_SECRETS_JSON};
use restock_app::ports::{
    Alert, AlertError, Alerts, Disabled, Keyring, OsEntropy, Outbox, Phraser, Secrets, SendError,
    Sender, Sent, StaticKeyring, SystemClock,
};
use restock_core::catalogue::CatalogueEntry;
use restock_core::{Contact, Message, Platform, Settings, Sku};
use restock_store::Store;
use restock_store_memory::MemoryStore;

/// How the local server runs.
#[derive(Clone)]
pub struct Options {
    /// The storefront's loopback port.
    pub port: u16,
    /// Capture's loopback port: its own origin, as its Function URL is.
    pub capture_port: u16,
    /// The outbox file (JSON lines).
    pub outbox: PathBuf,
    /// The store: in memory unless a DynamoDB endpoint is given.
    pub store: Arc<dyn Store>,
    /// A phraser other than the fixed template (Bedrock).
    pub phraser: Option<Arc<dyn Phraser>>,
}

/// The outbox: keeps every notice, prints it, appends it to a file.
pub struct LocalOutbox {
    inner: Outbox,
    file: Mutex<std::fs::File>,
}

impl LocalOutbox {
    /// An outbox appending to `path`.
    ///
    /// # Errors
    /// When the file cannot be opened.
    pub fn open(path: &std::path::Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self {
            inner: Outbox::default(),
            file: Mutex::new(file),
        })
    }

    /// Every notice sent since start, oldest first.
    pub fn sent(&self) -> Vec<Sent> {
        self.inner.sent()
    }

    fn keep(&self) {
        use std::io::Write;
        let Some(last) = self.inner.sent().pop() else {
            return;
        };
        let line = serde_json::to_string(&last).expect("notices serialise");
        if let Err(e) = writeln!(self.file.lock().expect("outbox file"), "{line}") {
            tracing::warn!(error = %e, "could not append to the outbox file");
        }
        let subject = match &last {
            Sent::Email { notice, .. } => notice.subject.clone(),
            Sent::Sms { .. } => "(sms)".to_owned(),
        };
        let (what, link) = match last.confirm_link() {
            Some(link) => ("confirm", link),
            None => ("reserve", last.reserve_link().unwrap_or_default()),
        };
        println!(
            "\n  ✉  message to {}: {subject}\n     {what}: {link}\n",
            last.to()
        );
    }
}

#[async_trait]
impl Sender for LocalOutbox {
    async fn send(&self, to: &Contact, message: &Message) -> Result<String, SendError> {
        let id = self.inner.send(to, message).await?;
        self.keep();
        Ok(id)
    }
}

/// Team alerts, printed.
pub struct ConsoleAlerts;

#[async_trait]
impl Alerts for ConsoleAlerts {
    async fn alert(&self, alert: &Alert) -> Result<(), AlertError> {
        println!("\n  ⚑  team alert: {}\n{}\n", alert.subject, alert.body);
        Ok(())
    }
}

/// The storefront's origins on `port`: what a deployed stack's
/// `StorefrontOrigins` parameter lists.
pub fn storefront_origins(port: u16) -> Vec<String> {
    vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ]
}

/// Capture's origin on `capture_port`: the local stand-in for `CaptureUrl`.
pub fn capture_origin(capture_port: u16) -> String {
    format!("http://127.0.0.1:{capture_port}")
}

/// The demo shop's settings: the storefront on `port`, links to capture on
/// `capture_port`.
pub fn demo_settings(port: u16, capture_port: u16) -> Settings {
    let capture = capture_origin(capture_port);
    let [storefront, localhost] =
        <[String; 2]>::try_from(storefront_origins(port)).expect("two storefront origins");
    Settings::from_toml(&format!(
        r#"
store_name = "Restock demo shop"
public_base_url = "{capture}"
email_from = "Restock demo shop <shop@example.com>"
offer_window = "15m"
hold_window = "10m"
sends_per_second = 50
storefront_origins = ["{storefront}", "{localhost}"]
sms_countries = ["GB", "GG", "JE", "IM", "IE"]
languages = ["en", "de", "fr", "es", "it", "nl", "pl", "pt", "ja", "ar"]
"#
    ))
    .expect("the demo settings are valid")
}

/// The demo catalogue, with checkout pointing at the stand-in page.
pub fn demo_catalogue(port: u16) -> Vec<CatalogueEntry> {
    let origin = format!("http://127.0.0.1:{port}");
    let entry = |sku: &str, name: &str, shards: u16| {
        let mut e = CatalogueEntry::new(Sku::try_from(sku).expect("demo SKU"), name);
        e.product_url = format!("{origin}/products/{sku}").parse().ok();
        e.checkout_url = Some(format!("{origin}/checkout?sku={sku}&hold={{hold}}"));
        e.shards = shards;
        e
    };
    let mut chair = entry("CHAIR-WAL", "Walnut lounge chair", 1);
    chair.ids.set(Platform::Shopify, Some(44_120_133_468_435));
    let mut lamp = entry("LAMP-BRASS", "Brass desk lamp", 1);
    lamp.ids.set(Platform::WooCommerce, Some(381));
    // A launch: never in stock yet, released at 09:00 in New York (14:00
    // UTC) on the first day at least a day away; the widget says when.
    let mut jacket = entry("JACKET-WAX", "Waxed field jacket (launch)", 4);
    let day = 86_400_000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    jacket.launch_at = Some((now / day + 2) * day + 14 * 3_600_000);
    let mut catalogue = vec![
        chair,
        lamp,
        entry("SNEAKER-DROP", "Limited runner", 16),
        jacket,
    ];
    // A product in sizes, one SKU a size (its page: /sized/linen-tee).
    for (size, _) in SIZES {
        let mut tee = entry(&format!("TEE-{size}"), &format!("Linen tee — {size}"), 1);
        tee.product_url = format!("{origin}/sized/linen-tee?variant={}", size_variant(size))
            .parse()
            .ok();
        catalogue.push(tee);
    }
    catalogue
}

/// The demo's product in sizes: each size and its variant id.
pub const SIZES: [(&str, u64); 3] = [("S", 9001), ("M", 9002), ("L", 9003)];

/// A size's variant id on the demo's sized product page.
pub fn size_variant(size: &str) -> u64 {
    SIZES
        .iter()
        .find(|(s, _)| *s == size)
        .map_or(0, |(_, id)| *id)
}

/// The dev keys the local server verifies webhooks with.
pub fn dev_secrets() -> Arc<Secrets> {
    Arc::new(Secrets::from_json(DEV_SECRETS_JSON).expect("the dev secrets are valid"))
}

/// Everything the local server shares between its parts.
pub struct Local {
    /// The handlers' services.
    pub services: Arc<Services>,
    /// The outbox.
    pub outbox: Arc<LocalOutbox>,
    /// The file the outbox appends to.
    pub outbox_path: PathBuf,
    /// The admin commands on the same store.
    pub admin: Admin,
    /// The storefront's port.
    pub port: u16,
    /// Capture's port.
    pub capture_port: u16,
    /// This run's token for the demo shop's forms (stock, checkout): a
    /// form another site posts does not carry it.
    pub csrf: String,
}

/// Seeds the demo settings and catalogue where none exist.
///
/// # Errors
/// When the store cannot be reached.
pub async fn seed(
    store: &dyn Store,
    port: u16,
    capture_port: u16,
) -> Result<(), restock_store::StoreError> {
    if store.settings().await?.is_none() {
        store
            .put_settings(&demo_settings(port, capture_port))
            .await?;
    }
    for entry in demo_catalogue(port) {
        if store.catalogue_entry(&entry.sku).await?.is_none() {
            store.put_catalogue_entry(&entry).await?;
        }
    }
    Ok(())
}

/// Builds the parts.
///
/// # Errors
/// When the outbox file cannot be opened.
pub fn build(options: &Options) -> std::io::Result<Arc<Local>> {
    let outbox = Arc::new(LocalOutbox::open(&options.outbox)?);
    let secrets = dev_secrets();
    let keyring: Arc<dyn Keyring> = Arc::new(StaticKeyring(secrets.clone()));
    let phraser = options
        .phraser
        .clone()
        .unwrap_or_else(|| Arc::new(Disabled));
    let services = Arc::new(Services::new(
        options.store.clone(),
        outbox.clone(),
        phraser,
        keyring,
        Arc::new(ConsoleAlerts),
        Arc::new(SystemClock),
        Arc::new(OsEntropy),
    ));
    let csrf = services_csrf(&services);
    Ok(Arc::new(Local {
        services,
        outbox,
        outbox_path: options.outbox.clone(),
        admin: Admin {
            store: options.store.clone(),
            pepper: Some(secrets.contact_pepper.clone()),
        },
        port: options.port,
        capture_port: options.capture_port,
        csrf,
    }))
}

/// A fresh form token: 16 random bytes as hex.
fn services_csrf(services: &Services) -> String {
    services
        .random()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The storefront's origin: the demo shop and its widget script, the
/// outbox, the dashboard at `/admin`, `/_admin/run`, and detect's webhooks
/// under `/webhooks/`.
pub fn storefront(local: Arc<Local>) -> Router {
    let detect = restock_app::detect::router(local.services.clone());
    let dashboard = restock_app::admin::dashboard::Dashboard::new(
        Admin {
            store: local.admin.store.clone(),
            pepper: local.admin.pepper.clone(),
        },
        local.services.clock.clone(),
        "/admin",
    );
    demo::router(local.clone(), detect.clone())
        .nest(
            "/admin",
            restock_app::admin::dashboard::router(Arc::new(dashboard)),
        )
        .route_service(
            "/webhooks/{*path}",
            detect.into_service::<axum::body::Body>(),
        )
        .layer(axum::middleware::from_fn(client_from_socket))
        .layer(axum::middleware::from_fn(loopback_only))
}

/// Capture's origin: its router behind the capture Function URL's CORS
/// from `template.yaml`, allowing the storefront's origins.
///
/// # Errors
/// When the template's CORS cannot be read.
pub fn capture(local: Arc<Local>) -> Result<Router, String> {
    let cors = Arc::new(cors::FunctionUrlCors::capture(storefront_origins(
        local.port,
    ))?);
    Ok(restock_app::capture::router(local.services.clone())
        .layer(axum::middleware::from_fn_with_state(
            cors,
            cors::function_url_cors,
        ))
        .layer(axum::middleware::from_fn(client_from_socket))
        .layer(axum::middleware::from_fn(loopback_only)))
}

/// The storefront's and capture's routes on one router, for tests that
/// call both in process. `restock-local` serves them on two origins
/// ([`storefront`], [`capture`]). Serve with
/// `into_make_service_with_connect_info::<SocketAddr>()`, so capture knows
/// each caller's address from the socket.
pub fn app(local: Arc<Local>) -> Router {
    restock_app::capture::router(local.services.clone())
        .layer(axum::middleware::from_fn(client_from_socket))
        .layer(axum::middleware::from_fn(loopback_only))
        .merge(storefront(local))
}

/// The socket peer as capture's caller address: the local stand-in for the
/// Function URL's `requestContext.http.sourceIp`.
async fn client_from_socket(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip());
    if let Some(ip) = peer {
        request
            .extensions_mut()
            .insert(restock_app::capture::ClientAddr(ip));
    }
    next.run(request).await
}

/// Runs notify for every SKU with a wake it has not acted on, every
/// `every`: the local stand-in for the table's stream.
pub async fn notifier(local: Arc<Local>, every: Duration) {
    let mut seen: HashMap<Sku, (usize, i64)> = HashMap::new();
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        let Ok(catalogue) = local.services.store.catalogue().await else {
            continue;
        };
        for entry in catalogue {
            let Ok(wakes) = local.services.store.wakes(&entry.sku).await else {
                continue;
            };
            let mark = (wakes.len(), wakes.iter().map(|w| w.at).max().unwrap_or(0));
            if seen.get(&entry.sku) == Some(&mark) {
                continue;
            }
            match restock_app::notify::notify_sku(&local.services, &entry.sku).await {
                Ok(report) if report.transient == 0 => {
                    if report.offers + report.sent + report.failed > 0 {
                        tracing::info!(sku = %entry.sku, ?report, "notify pass");
                    }
                    seen.insert(entry.sku.clone(), mark);
                }
                Ok(report) => {
                    tracing::warn!(sku = %entry.sku, ?report, "notify pass will be retried")
                }
                Err(e) => {
                    tracing::error!(sku = %entry.sku, error = %e, "notify pass failed; retrying")
                }
            }
        }
    }
}

/// Runs sweep every `every`.
pub async fn sweeper(local: Arc<Local>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        match restock_app::sweep::run(&local.services, restock_app::sweep::DEFAULT_LIMIT).await {
            Ok(report) => tracing::debug!(?report, "sweep"),
            Err(e) => tracing::error!(error = %e, "sweep failed"),
        }
    }
}

/// A signed delivery as the HTTP request detect receives; `body` is the
/// delivery's body, or a tampered one in tests.
pub fn webhook_request(
    delivery: &restock_app::admin::webhooks::Delivery,
    body: String,
) -> axum::http::Request<axum::body::Body> {
    let mut request = axum::http::Request::post(delivery.path);
    for (name, value) in &delivery.headers {
        request = request.header(*name, value);
    }
    request
        .body(axum::body::Body::from(body))
        .expect("signed headers are valid header values")
}

/// A store in memory.
pub fn memory_store() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}
