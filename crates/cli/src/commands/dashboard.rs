//! `restock dashboard`: the team's dashboard on this machine, against the
//! stack's table (its banner runs the doctor) or the local server's.

use std::sync::Arc;
use std::time::Duration;

use crate::args::Cli;
use crate::output::CliError;
use crate::stack;
use crate::target::{Target, target, target_on};

/// `restock dashboard`: serves the dashboard on 127.0.0.1 until Ctrl-C, or
/// points at the local server's.
async fn serve(
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

/// `restock dashboard`: with `--stack`, the stack names its table and keys
/// secret and the banner runs the doctor; without, the table or local
/// server the other commands use.
pub(crate) async fn dashboard(
    cli: &Cli,
    port: u16,
    no_open: bool,
    stack: Option<&str>,
) -> Result<String, CliError> {
    let Some(stack) = stack else {
        return serve(target(cli).await?, port, no_open, None).await;
    };
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
    serve(target, port, no_open, Some(health)).await
}
