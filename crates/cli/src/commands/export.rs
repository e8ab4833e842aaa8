//! `restock export requests | days | items`.

use indicatif::ProgressBar;
use restock_app::admin::{Command, Output};

use crate::args::{Cmd, ExportKind};
use crate::output::CliError;
use crate::target::{Target, skus};

/// `restock export`: the rows a page at a time, each page written before
/// the next is asked for (`restock_app::admin::export::write`).
pub(crate) async fn export(target: &Target, cmd: &Cmd, json: bool) -> Result<Output, CliError> {
    use restock_app::admin::export::{self, ExportError, Kind};
    let Cmd::Export {
        what,
        skus: s,
        with_contacts,
        out,
    } = cmd
    else {
        unreachable!("called for export only")
    };
    let skus = skus(s)?;
    let sink: Box<dyn std::io::Write> = match out {
        Some(file) => Box::new(
            std::fs::File::create(file).map_err(|source| CliError::Create {
                file: file.clone(),
                source,
            })?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    if *with_contacts {
        eprintln!("restock: contacts are in the clear in this export; keep the file safe");
    }
    let bar = if json || out.is_none() {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    let kind = match what {
        ExportKind::Requests => Kind::Requests,
        ExportKind::Days => Kind::Days,
        ExportKind::Items => {
            let stats = target.run(Command::Stats { skus }).await?;
            let rows = export::write_items(&stats.json, sink).map_err(CliError::Write)?;
            let message = match out {
                Some(file) => format!("{rows} items exported to {file}"),
                None => String::new(),
            };
            return Ok(Output::message(
                message,
                serde_json::json!({ "items": rows }),
            ));
        }
    };
    let rows = export::write(
        kind,
        sink,
        |after| {
            target.run(Command::ExportPage {
                skus: skus.clone(),
                after,
                with_contacts: *with_contacts,
            })
        },
        |rows| bar.set_message(format!("{rows} requests")),
    )
    .await
    .map_err(|e| match e {
        ExportError::Page(e) => e,
        ExportError::Write(e) => CliError::Write(e),
    })?;
    bar.finish_and_clear();
    let message = match out {
        Some(file) => format!("{rows} requests exported to {file}"),
        None => String::new(),
    };
    Ok(Output::message(
        message,
        serde_json::json!({ "requests": rows }),
    ))
}
