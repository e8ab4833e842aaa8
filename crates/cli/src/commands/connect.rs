//! `restock connect shopify | woocommerce | klaviyo` and `restock doctor`:
//! the commands that reach a platform's API or read the deployed stack.

use crate::args::{Cli, ConnectCmd};
use crate::output::CliError;
use crate::stack;

/// `restock connect klaviyo`.
pub(crate) async fn connect_klaviyo(
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
        .map_err(refused)?;
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
pub(crate) async fn connect(cli: &Cli, platform: &ConnectCmd) -> Result<String, CliError> {
    match platform {
        ConnectCmd::Klaviyo {
            stack,
            private_key,
            dry_run,
            api,
        } => connect_klaviyo(cli, stack, private_key, api.as_deref(), *dry_run).await,
        ConnectCmd::Shopify {
            shop,
            stack,
            client_id,
            client_secret,
            access_token,
            app,
            dry_run,
        } => {
            let access = shopify_access(client_id, client_secret, access_token)?;
            let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
            let outputs = stack::outputs(&sdk, stack).await?.stack;
            let alerts = outputs.alerts(&sdk);
            let webhooks = match app {
                Some(dir) => {
                    if !*dry_run {
                        write_app(dir, client_id.as_deref().unwrap_or_default(), &outputs)?;
                    }
                    restock_aws::connect::Webhooks::DeclaredByApp
                }
                None => restock_aws::connect::Webhooks::Subscribe,
            };
            let done = restock_aws::connect::shopify(
                &sdk,
                &outputs,
                shop,
                access,
                (webhooks, *dry_run),
                &alerts,
            )
            .await
            .map_err(refused)?;
            let mut text = report(cli, &done, *dry_run, None);
            if let (Some(dir), false, true) = (app, cli.json, *dry_run) {
                text += &format!("app: would write {dir}\n");
            } else if let (Some(dir), false) = (app, cli.json) {
                text += &format!(
                    "app: {dir} written; run `shopify app deploy` in it (it subscribes the webhooks and publishes the theme app extension), then add \"Notify me when back\" to the product page in the theme editor (docs/DEPLOY.md, Shopify)\n"
                );
            }
            Ok(text)
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
            let keys = (consumer_key.as_str(), consumer_secret.as_str());
            let alerts = outputs.alerts(&sdk);
            let done = restock_aws::connect::woocommerce(
                &sdk, &outputs, site, keys.0, keys.1, *dry_run, &alerts,
            )
            .await
            .map_err(refused)?;
            if let Some(file) = plugin {
                let plugin = restock_aws::platforms::woocommerce::plugin(&outputs.capture_url);
                std::fs::write(file, plugin).map_err(|source| CliError::Create {
                    file: file.clone(),
                    source,
                })?;
            }
            Ok(report(cli, &done, *dry_run, Some(plugin.as_deref())))
        }
    }
}

/// Writes the Shopify app for `stack` under `dir` (before anything is
/// connected, so a folder that cannot be written stops the command first).
fn write_app(
    dir: &str,
    client_id: &str,
    stack: &restock_aws::connect::Stack,
) -> Result<(), CliError> {
    let webhook_url = stack.webhook_url(restock_core::Platform::Shopify);
    let files = restock_aws::connect::app::files(&restock_aws::connect::app::AppFor {
        client_id,
        capture_url: &stack.capture_url,
        webhook_url: &webhook_url,
    })
    .map_err(refused)?;
    for (path, text) in files {
        let file = std::path::Path::new(dir).join(path);
        let made = file.parent().map_or(Ok(()), std::fs::create_dir_all);
        made.and_then(|()| std::fs::write(&file, text))
            .map_err(|source| CliError::Create {
                file: file.display().to_string(),
                source,
            })?;
    }
    Ok(())
}

/// A connect, sync or Klaviyo failure as the CLI ends on it: unavailable
/// (6) when the platform or AWS could not be reached or serve now, so a
/// retrying script tries again; refused (5) or not found (3) otherwise.
pub(crate) fn refused(e: restock_aws::connect::ConnectError) -> CliError {
    CliError::Backend {
        kind: e.kind(),
        message: e.to_string(),
    }
}

/// What a connect did, for people or (`--json`) scripts; `plugin` is
/// WooCommerce's: the file written, if any.
fn report(
    cli: &Cli,
    done: &restock_aws::connect::Connected,
    dry_run: bool,
    plugin: Option<Option<&str>>,
) -> String {
    if cli.json {
        let json = serde_json::json!({
            "dry_run": dry_run,
            "secret": done.secret,
            "webhooks": done.webhooks,
            "catalogue": done.catalogue.iter().map(|c| c.describe()).collect::<Vec<_>>(),
            "held": done.held,
            "without_sku": done.without_sku,
            "locations": done.locations,
        });
        return serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
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
    text
}

/// The Shopify access the arguments give.
pub(crate) fn shopify_access(
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

/// `restock doctor`: what blocks notices on the stack, and what to do; a
/// report that finds a blocker ends in failure.
pub(crate) async fn doctor(cli: &Cli, stack: &str) -> Result<String, CliError> {
    use restock_app::health::Health;
    let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
    let deployed = stack::outputs(&sdk, stack).await?;
    let report = stack::StackHealth::new(sdk, deployed).report().await;
    let text = if cli.json {
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
    } else {
        report.describe()
    };
    if report.blocking() {
        Err(CliError::Failed(text))
    } else {
        Ok(text)
    }
}
