//! `restock`: the operator's CLI. Against a deployed stack's table
//! (`--table`, the usual AWS profile and region, `--endpoint-url` for a local
//! DynamoDB API) or against the local server (`--local`, the default).
//!
//! ## Layout
//! - `args`: the command line, as clap parses it;
//! - `commands`: one module per command group, each the functions this
//!   file dispatches to;
//! - `target`: where a command runs (the table, or the local server);
//! - `output`: errors, exit codes, tables and `--json`, for every command;
//! - `stack`: a deployed stack's outputs and the checks only the operator
//!   runs; `dlq`: the dead-letter queue's messages, read and redone.

mod args;
mod commands;
mod dlq;
mod output;
mod stack;
mod target;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{CatalogueCmd, Cli, Cmd};
use crate::output::{CliError, Exit, answer, print_json_error};
use crate::target::target;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` are answers, not errors.
            if e.use_stderr() && std::env::args().any(|a| a == "--json") {
                // clap's text on one line: what is wrong, then the usage.
                let message = e.render().to_string();
                let message = message
                    .split("\n\nFor more information")
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                print_json_error(Exit::Usage, &message);
                return ExitCode::from(Exit::Usage.code());
            }
            e.exit()
        }
    };
    match run(&cli).await {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(CliError::Failed(report)) => {
            print!("{report}");
            ExitCode::from(Exit::Failed.code())
        }
        Err(e) => {
            let exit = e.exit();
            if cli.json {
                print_json_error(exit, &e.to_string());
            } else {
                eprintln!("restock: {e}");
            }
            ExitCode::from(exit.code())
        }
    }
}

/// Runs the command the line names: the answer to print, or why not.
async fn run(cli: &Cli) -> Result<String, CliError> {
    use commands::{admin, catalogue, connect, dashboard, dlq, export, webhook};
    match &cli.command {
        Cmd::SignWebhook { .. } => webhook::sign_webhook(cli).await.map(|c| c + "\n"),
        Cmd::Connect { platform } => connect::connect(cli, platform).await,
        Cmd::Catalogue {
            action: CatalogueCmd::Sync { stack, dry_run },
        } => catalogue::sync(cli, stack, *dry_run).await,
        Cmd::Dlq { action } => dlq::dead_letters(cli, action).await,
        Cmd::Doctor { stack } => connect::doctor(cli, stack).await,
        Cmd::Dashboard {
            port,
            no_open,
            stack,
        } => dashboard::dashboard(cli, *port, *no_open, stack.as_deref()).await,
        Cmd::Catalogue {
            action: CatalogueCmd::Import { file },
        } => {
            let output = catalogue::import(&target(cli).await?, file, cli.json).await?;
            Ok(answer(&output, cli.json))
        }
        export_cmd @ Cmd::Export { out, .. } => {
            let output = export::export(&target(cli).await?, export_cmd, cli.json).await?;
            // A CSV on standard output is all that goes there.
            Ok(match out {
                Some(_) => answer(&output, cli.json),
                None => String::new(),
            })
        }
        other => {
            if let Cmd::Show {
                with_contacts: true,
                ..
            } = other
            {
                // As `export --with-contacts` says: where the operator sees it.
                eprintln!("restock: contacts are in the clear in this answer; keep it safe");
            }
            let command = admin::command(other)?;
            let output = target(cli).await?.run(command).await?;
            Ok(answer(&output, cli.json))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::admin::command;
    use clap::CommandFactory;
    use proptest::prelude::*;
    use restock_app::admin::{Admin, ErrorKind};

    #[test]
    fn the_argument_parser_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_failure_has_one_documented_exit_code() {
        use restock_app::admin::AdminError;
        use restock_store::StoreError;
        let exit = |e: CliError| (e.exit().code(), e.exit().name());
        assert_eq!(exit(CliError::Usage("x".into())), (2, "usage"));
        assert_eq!(exit(CliError::Failed("x".into())), (1, "failed"));
        let store = |e: StoreError| exit(CliError::Admin(AdminError::Store(e)));
        assert_eq!(store(StoreError::Missing("x".into())), (3, "not_found"));
        assert_eq!(store(StoreError::Contention("x".into())), (4, "conflict"));
        assert_eq!(store(StoreError::Refused("x".into())), (5, "refused"));
        assert_eq!(
            store(StoreError::Corrupt {
                key: "k".into(),
                reason: "r".into()
            }),
            (6, "unavailable")
        );
        assert_eq!(
            exit(CliError::LocalUnreachable {
                base: "b".into(),
                reason: "r".into()
            }),
            (6, "unavailable")
        );
        assert_eq!(
            exit(CliError::LocalRefused {
                kind: ErrorKind::Conflict,
                message: "m".into()
            }),
            (4, "conflict")
        );
        // An import cut short fails as its cause did.
        assert_eq!(
            exit(CliError::Import {
                done: 25,
                source: Box::new(CliError::Admin(AdminError::NoPepper))
            }),
            (5, "refused")
        );
        // docs/CLI.md's table says the same.
        let doc = include_str!("../../../docs/CLI.md");
        for (code, name) in [
            (1, "failed"),
            (2, "usage"),
            (3, "not_found"),
            (4, "conflict"),
            (5, "refused"),
            (6, "unavailable"),
        ] {
            assert!(
                doc.contains(&format!("| {code} | `{name}` |")),
                "docs/CLI.md lists {code} `{name}`"
            );
        }
    }

    #[test]
    fn a_queue_limit_past_the_bound_is_refused_with_the_range() {
        let refused = Cli::try_parse_from([
            "restock",
            "queue",
            "CHAIR",
            "--limit",
            "18446744073709551615",
        ])
        .err()
        .expect("refused");
        assert!(refused.to_string().contains("1..=10000"), "{refused}");
        for limit in ["0", "-1", "10001", "1e9"] {
            assert!(
                Cli::try_parse_from(["restock", "queue", "CHAIR", "--limit", limit]).is_err(),
                "{limit}"
            );
        }
        let Ok(Cli {
            command: Cmd::Queue { limit, .. },
            ..
        }) = Cli::try_parse_from(["restock", "queue", "CHAIR", "--limit", "10000"])
        else {
            panic!("10,000 is taken");
        };
        assert_eq!(limit, 10_000);
    }

    /// Words an operator (or a script gone wrong) might type: every
    /// command and flag, and values that are empty, huge, negative,
    /// non-numeric or not ASCII.
    fn word() -> impl Strategy<Value = String> {
        let known = prop::sample::select(vec![
            "settings",
            "show",
            "put",
            "catalogue",
            "catalog",
            "import",
            "queue",
            "release",
            "resume",
            "stats",
            "reconcile",
            "optout",
            "add",
            "remove",
            "forget",
            "export",
            "requests",
            "days",
            "dashboard",
            "sign-webhook",
            "shopify",
            "woocommerce",
            "stock",
            "order",
            "shopify-order",
            "--limit",
            "--level",
            "--id",
            "--port",
            "--sku",
            "--hold",
            "--location",
            "--json",
            "--table",
            "--local",
            "--with-contacts",
            "--no-open",
            "--",
            "-h",
            "--help",
            "--version",
            "18446744073709551615",
            "-9223372036854775809",
            "99999999999999999999999",
            "0",
            "-1",
            "65536",
            "",
            "CHAIR-WAL",
            "é",
            "\u{202e}",
        ]);
        prop_oneof![
            3 => known.prop_map(str::to_owned),
            1 => any::<String>(),
            1 => any::<i128>().prop_map(|n| n.to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

        /// Whatever is typed, the parser answers (a command or an error
        /// with its usage) and a parsed command becomes the store's command
        /// without panicking, its bounds kept.
        #[test]
        fn no_arguments_make_the_cli_panic(words in prop::collection::vec(word(), 0..8)) {
            let args = std::iter::once("restock".to_owned()).chain(words);
            let Ok(cli) = Cli::try_parse_from(args) else {
                return Ok(());
            };
            if let Cmd::Queue { limit, .. } = &cli.command {
                prop_assert!((1..=Admin::MAX_QUEUE_LIMIT as u64).contains(limit));
            }
            let handled_before = matches!(
                &cli.command,
                Cmd::Catalogue { action: CatalogueCmd::Import { .. } }
                    | Cmd::Export { .. }
                    | Cmd::Dashboard { .. }
                    | Cmd::SignWebhook { .. }
            );
            if !handled_before {
                let _ = command(&cli.command);
            }
        }
    }
}
