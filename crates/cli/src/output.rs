//! What the CLI prints and how it ends, for every command: the error type
//! with its exit code and `--json` code (docs/CLI.md lists them), tables for
//! people and JSON for scripts.

use restock_app::admin::{ErrorKind, Output};

/// Why a command did not run, as the operator reads it (after `restock: `).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A SKU argument that is not one.
    #[error("`{text}` is not a SKU: {reason}")]
    Sku { text: String, reason: String },
    /// A file that could not be read.
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    /// A file that could not be created.
    #[error("cannot create {file}: {source}")]
    Create {
        file: String,
        source: std::io::Error,
    },
    /// A catalogue CSV with a bad row.
    #[error("{file}: {source}")]
    Catalogue {
        file: String,
        source: restock_core::catalogue::CatalogueError,
    },
    /// An import cut short; the entries before it are in.
    #[error("stopped after {done} entries: {source}")]
    Import { done: u64, source: Box<CliError> },
    /// The command's arguments do not fit together.
    #[error("{0}")]
    Usage(String),
    /// A report that ends in failure (`doctor` found what blocks notices):
    /// printed as it is, exit 1.
    #[error("{0}")]
    Failed(String),
    /// The local server could not be reached.
    #[error(
        "the local server at {base} did not answer ({reason}); start it with `cargo run -p restock-local`, or pass --table for a deployed stack"
    )]
    LocalUnreachable { base: String, reason: String },
    /// The local server answered with something that is not an answer.
    #[error("the local server's answer is not JSON: {0}")]
    LocalAnswer(String),
    /// The local server refused the command; its message says why.
    #[error("{message}")]
    LocalRefused { kind: ErrorKind, message: String },
    /// The command failed on the stack's store, with every cause.
    #[error("{}", with_causes(.0))]
    Admin(#[from] restock_app::admin::AdminError),
    /// The keys secret could not be read, with every cause.
    #[error("{}", with_causes(.0))]
    Keys(#[from] restock_app::ports::KeyError),
    /// A test delivery that could not be signed.
    #[error(transparent)]
    Sign(#[from] restock_app::admin::webhooks::SignError),
    /// The dashboard could not be served.
    #[error("the dashboard stopped: {0}")]
    Serve(String),
    /// The export could not be written.
    #[error("cannot write the export: {0}")]
    Write(#[from] csv::Error),
    /// An AWS service or a platform's API failed or refused; `kind` says
    /// how.
    #[error("{message}")]
    Backend { kind: ErrorKind, message: String },
}

/// How the CLI ends, for scripts: the exit code and, with `--json`, the
/// `error` code (docs/CLI.md lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The command ran and reports a failure (`doctor` found what blocks notices).
    Failed,
    /// The command line, or a file it names, is wrong.
    Usage,
    /// The backend's own kinds of failure.
    Backend(ErrorKind),
}

impl Exit {
    pub(crate) fn code(self) -> u8 {
        match self {
            Self::Failed => 1,
            Self::Usage => 2,
            Self::Backend(ErrorKind::NotFound) => 3,
            Self::Backend(ErrorKind::Conflict) => 4,
            Self::Backend(ErrorKind::Refused) => 5,
            Self::Backend(ErrorKind::Unavailable) => 6,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Failed => "failed",
            Self::Usage => "usage",
            Self::Backend(kind) => kind.code(),
        }
    }
}

impl CliError {
    /// What the failure amounts to.
    pub(crate) fn exit(&self) -> Exit {
        match self {
            Self::Sku { .. }
            | Self::Read { .. }
            | Self::Create { .. }
            | Self::Catalogue { .. }
            | Self::Usage(_)
            | Self::Write(_) => Exit::Usage,
            Self::Import { source, .. } => source.exit(),
            Self::Failed(_) => Exit::Failed,
            Self::LocalUnreachable { .. } | Self::LocalAnswer(_) | Self::Serve(_) => {
                Exit::Backend(ErrorKind::Unavailable)
            }
            Self::LocalRefused { kind, .. } | Self::Backend { kind, .. } => Exit::Backend(*kind),
            Self::Admin(e) => Exit::Backend(e.kind()),
            Self::Keys(_) => Exit::Backend(ErrorKind::Unavailable),
            Self::Sign(_) => Exit::Usage,
        }
    }

    /// A failed AWS call, `doing` what (`could not read the stack X`):
    /// not found, refused or unavailable by what the service answered (or
    /// did not), and what it said, in a line.
    pub(crate) fn aws<E, R>(
        e: &aws_smithy_runtime_api::client::result::SdkError<E, R>,
        doing: &str,
    ) -> Self
    where
        E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
        R: std::fmt::Debug,
    {
        Self::Backend {
            kind: restock_aws::sdk_error::kind(e),
            message: format!("{doing}: {}", restock_aws::sdk_error::said(e)),
        }
    }
}

/// What a failed AWS call said, in one line ([`restock_aws::sdk_error::said`]).
pub(crate) use restock_aws::sdk_error::said as aws_said;

/// An error and what caused it, for people: "DynamoDB GetItem failed:
/// service error: ResourceNotFoundException: …", not just the first link.
pub(crate) fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// An answer as people read it: the table (if any), then the message.
pub(crate) fn render(output: &Output) -> String {
    let mut out = String::new();
    if !output.columns.is_empty() {
        let mut table = comfy_table::Table::new();
        table
            .load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
            .set_header(&output.columns);
        for row in &output.rows {
            table.add_row(row);
        }
        out.push_str(&table.to_string());
        out.push('\n');
    }
    if !output.message.is_empty() {
        out.push_str(&output.message);
        if !output.message.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// An answer for people ([`render`]) or, with `--json`, for scripts.
pub(crate) fn answer(output: &Output, json: bool) -> String {
    if json {
        serde_json::to_string_pretty(&output.json).unwrap_or_default() + "\n"
    } else {
        render(output)
    }
}

/// An error as `--json` gives it: `{"error": code, "message": …}` on
/// standard output, where a script reads the answer.
pub(crate) fn print_json_error(exit: Exit, message: &str) {
    println!(
        "{}",
        serde_json::json!({ "error": exit.name(), "message": message, "exit": exit.code() })
    );
}
