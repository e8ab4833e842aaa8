//! `restock-local`: the whole product on a laptop, no AWS account, no Docker.
//!
//!     cargo run -p restock-local
//!
//! Then open http://127.0.0.1:3000, join a queue, post a restock from the
//! product page's back office, and follow the link in the outbox. Capture
//! answers on its own origin (http://127.0.0.1:3001), as its Function URL
//! does once deployed.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use restock_aws::BedrockPhraser;
use restock_local::{
    Options, build, capture, capture_origin, memory_store, notifier, seed, storefront, sweeper,
};
use restock_store::Store;
use restock_store_dynamo::DynamoStore;

#[derive(Parser)]
#[command(
    name = "restock-local",
    version,
    about = "Run restock locally: the capture and detect routers, notify and sweep in process, an outbox, and a demo storefront."
)]
struct Cli {
    /// The loopback port the storefront (demo shop, outbox, dashboard, webhooks) is served on.
    #[arg(long, env = "RESTOCK_PORT", default_value_t = 3000)]
    port: u16,
    /// The loopback port capture is served on, its own origin as deployed [default: --port + 1].
    #[arg(long, env = "RESTOCK_CAPTURE_PORT")]
    capture_port: Option<u16>,
    /// Use a DynamoDB API at this URL (moto, DynamoDB Local) instead of the in-memory store.
    #[arg(long, env = "RESTOCK_DYNAMODB_ENDPOINT")]
    dynamodb_endpoint: Option<String>,
    /// The table to use (and create) with --dynamodb-endpoint.
    #[arg(long, default_value = "restock-local")]
    table: String,
    /// Where notices are appended, one JSON object per line.
    #[arg(long, env = "RESTOCK_OUTBOX", default_value = "restock-outbox.jsonl")]
    outbox: PathBuf,
    /// Seconds between sweeps (Lambda's schedule is a minute).
    #[arg(long, default_value_t = 5)]
    sweep_every: u64,
    /// Phrase notices with this Bedrock model (needs AWS credentials); the fixed template otherwise.
    #[arg(long, env = "RESTOCK_BEDROCK_MODEL_ID")]
    bedrock_model: Option<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,restock_local=info".into()),
        )
        .with_target(false)
        .init();
    let cli = Cli::parse();
    let capture_port = match cli.capture_port {
        Some(p) => p,
        None => cli
            .port
            .checked_add(1)
            .ok_or("--port 65535 leaves no port for capture: give --capture-port")?,
    };

    let (store, phraser) = backends(&cli).await;
    seed(store.as_ref(), cli.port, capture_port)
        .await
        .map_err(|e| format!("could not seed the demo shop: {e}"))?;
    let local = build(&Options {
        port: cli.port,
        capture_port,
        outbox: cli.outbox.clone(),
        store,
        phraser,
    })?;
    tokio::spawn(notifier(local.clone(), Duration::from_millis(300)));
    tokio::spawn(sweeper(
        local.clone(),
        Duration::from_secs(cli.sweep_every.max(1)),
    ));

    let bind = |port: u16| async move {
        tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| {
                format!("cannot listen on 127.0.0.1:{port}: {e} (try --port or --capture-port)")
            })
    };
    let listener = bind(cli.port).await?;
    let capture_listener = bind(capture_port).await?;
    print_banner(&cli, capture_port);
    let capture_app = capture(local.clone())?;
    let shutdown = || async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let capture_server = axum::serve(
        capture_listener,
        capture_app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown());
    let storefront_server = axum::serve(
        listener,
        storefront(local).into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown());
    tokio::try_join!(async { capture_server.await }, async {
        storefront_server.await
    })?;
    Ok(())
}

/// The store (memory, or a DynamoDB endpoint's table, created if it is
/// not there) and the phraser (Bedrock, when a model is named) the flags
/// ask for.
async fn backends(cli: &Cli) -> (Arc<dyn Store>, Option<Arc<dyn restock_app::ports::Phraser>>) {
    let sdk = if cli.dynamodb_endpoint.is_some() || cli.bedrock_model.is_some() {
        Some(restock_aws::wiring::sdk_config(None).await)
    } else {
        None
    };
    let store: Arc<dyn Store> = match (&cli.dynamodb_endpoint, &sdk) {
        (Some(endpoint), Some(sdk)) => {
            let config = aws_sdk_dynamodb::config::Builder::from(sdk)
                .endpoint_url(endpoint)
                .build();
            let store = DynamoStore::new(aws_sdk_dynamodb::Client::from_conf(config), &cli.table);
            if let Err(e) = store.create_table().await {
                tracing::info!(error = %e, table = %cli.table, "table not created (it may exist already)");
            }
            Arc::new(store)
        }
        _ => memory_store(),
    };
    let phraser = match (&cli.bedrock_model, &sdk) {
        (Some(model), Some(sdk)) => Some(Arc::new(BedrockPhraser::new(
            aws_sdk_bedrockruntime::Client::new(sdk),
            model.clone(),
        )) as Arc<dyn restock_app::ports::Phraser>),
        _ => None,
    };
    (store, phraser)
}

/// Where to look, printed once the servers are about to listen.
fn print_banner(cli: &Cli, capture_port: u16) {
    let base = format!("http://127.0.0.1:{}", cli.port);
    let capture_base = capture_origin(capture_port);
    println!(
        "restock is running locally ({} store)\n\n  storefront  {base}/\n  capture     {capture_base}/   (its own origin, as its Function URL is)\n  outbox      {base}/outbox   (and {})\n  webhooks    {base}/webhooks/stock|shopify|woocommerce|orders\n\n\
         Try it: open {base}/products/CHAIR-WAL and tap Notify me; open the confirmation link in the\n\
         outbox and confirm; post a restock from the back office, then open the reserve link in the\n\
         outbox. From a terminal:\n\n  \
         cargo run -q -p restock-cli -- queue CHAIR-WAL\n  \
         cargo run -q -p restock-cli -- sign-webhook stock --sku CHAIR-WAL --level 3 | sh\n  \
         cargo run -q -p restock-cli -- stats\n",
        if cli.dynamodb_endpoint.is_some() {
            "DynamoDB"
        } else {
            "in-memory"
        },
        cli.outbox.display(),
    );
}
