//! Where a command runs: the stack's table through the admin port, or the
//! local server's `/_admin/run`; and the arguments every command shares
//! (SKUs, files, the clock).

use std::sync::Arc;

use restock_app::admin::{Admin, Command, ErrorKind, Output};
use restock_app::ports::Keyring;
use restock_aws::SecretsKeyring;
use restock_core::Sku;
use restock_store_dynamo::DynamoStore;

use crate::args::Cli;
use crate::output::CliError;

/// Where commands run.
pub(crate) enum Target {
    Dynamo(Admin),
    Local(String),
}

impl Target {
    pub(crate) async fn run(&self, command: Command) -> Result<Output, CliError> {
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

pub(crate) fn now_ms() -> i64 {
    let now = time::OffsetDateTime::now_utc();
    i64::try_from(now.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

pub(crate) fn sku(text: &str) -> Result<Sku, CliError> {
    Sku::try_from(text).map_err(|e| CliError::Sku {
        text: text.to_owned(),
        reason: e.to_string(),
    })
}

pub(crate) fn skus(texts: &[String]) -> Result<Vec<Sku>, CliError> {
    texts.iter().map(|s| sku(s)).collect()
}

pub(crate) fn read(file: &str) -> Result<String, CliError> {
    std::fs::read_to_string(file).map_err(|source| CliError::Read {
        file: file.to_owned(),
        source,
    })
}

pub(crate) async fn target(cli: &Cli) -> Result<Target, CliError> {
    target_on(cli, cli.table.as_deref(), cli.secret_id.as_deref()).await
}

/// [`target`] on `table` (the local server without one), with `secret_id`'s
/// pepper.
pub(crate) async fn target_on(
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
