//! `restock catalogue import | sync`.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use restock_app::admin::{Command, Output};
use restock_core::catalogue::parse_csv;

use crate::args::Cli;
use crate::output::CliError;
use crate::stack;
use crate::target::{Target, read};

pub(crate) async fn import(target: &Target, file: &str, json: bool) -> Result<Output, CliError> {
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

/// `restock catalogue sync`: the platforms' catalogues into the stack's,
/// each change listed.
pub(crate) async fn sync(cli: &Cli, stack: &str, dry_run: bool) -> Result<String, CliError> {
    let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
    let outputs = stack::outputs(&sdk, stack).await?.stack;
    let synced = restock_aws::connect::sync(&sdk, &outputs, dry_run, &outputs.alerts(&sdk))
        .await
        .map_err(crate::commands::connect::refused)?;
    if cli.json {
        let json: Vec<serde_json::Value> = synced
            .iter()
            .map(|s| {
                serde_json::json!({
                    "platform": s.platform.name(),
                    "tally": restock_core::catalogue::tally(&s.catalogue),
                    "changes": s.catalogue.iter().map(|c| c.describe()).collect::<Vec<_>>(),
                    "held": s.held,
                    "without_sku": s.without_sku,
                })
            })
            .collect();
        let json = serde_json::json!({ "dry_run": dry_run, "synced": json });
        return Ok(serde_json::to_string_pretty(&json).unwrap_or_default() + "\n");
    }
    let mut text = String::new();
    for s in &synced {
        text += &format!(
            "{}: {}, {} without a SKU{}\n",
            s.platform.label(),
            restock_core::catalogue::tally(&s.catalogue),
            s.without_sku,
            if dry_run {
                " (dry run: nothing changed)"
            } else {
                ""
            }
        );
        for line in s
            .catalogue
            .iter()
            .map(|c| c.describe())
            .chain(s.held.clone())
        {
            text += &format!("  {line}\n");
        }
    }
    Ok(text)
}
