//! `restock sign-webhook`: a signed test delivery, as the curl command
//! that posts it.

use restock_app::admin::ErrorKind;
use restock_app::admin::dev_key;
use restock_app::admin::webhooks::{TestEvent, curl, delivery_id, sign};
use restock_app::ports::{Entropy, OsEntropy};

use crate::args::{Cli, Cmd};
use crate::output::CliError;
use crate::stack;
use crate::target::now_ms;

/// The current (first) key for `platform` in the keys secret `secret_id`.
pub(crate) async fn current_key(
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
pub(crate) async fn sign_webhook(cli: &Cli) -> Result<String, CliError> {
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
