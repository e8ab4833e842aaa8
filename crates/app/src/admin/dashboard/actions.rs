//! The item's and the sender's actions (resume, pause, release, reject,
//! reconcile, forget): each a form posted with this server's token, run as
//! the CLI would run it, answered with what it did.

use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::{Markup, html};
use restock_core::Sku;
use serde::Deserialize;

use super::super::{AdminError, Command, Output};
use super::{Dashboard, Shared, failed, forged, page, plain};

#[derive(Debug, Default, Deserialize)]
pub(super) struct ActionForm {
    #[serde(default)]
    pub(super) csrf: String,
    #[serde(default)]
    pub(super) sku: String,
    #[serde(default)]
    pub(super) contact: String,
    #[serde(default)]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) reason: String,
}

impl ActionForm {
    pub(super) fn skus(&self) -> Result<Vec<Sku>, AdminError> {
        if self.sku.is_empty() {
            return Ok(vec![]);
        }
        Sku::try_from(self.sku.as_str())
            .map(|s| vec![s])
            .map_err(|e| AdminError::Invalid(format!("`{}`: {e}", self.sku)))
    }
}

/// Runs `command` (as the CLI would) once the form is known to be ours,
/// and shows what it answered.
pub(super) async fn act(
    d: &Dashboard,
    headers: &HeaderMap,
    form: &ActionForm,
    command: impl FnOnce() -> Result<Command, AdminError>,
) -> Response {
    if let Some(why) = forged(d, headers, &form.csrf) {
        return plain(StatusCode::FORBIDDEN, why);
    }
    let done = match command() {
        Ok(command) => d.admin.run(command, d.clock.now_ms()).await,
        Err(e) => Err(e),
    };
    match done {
        Ok(output) => page(d, StatusCode::OK, "Done", done_html(d, &output)),
        Err(e) => failed(d, &e),
    }
}

pub(super) fn done_html(d: &Dashboard, output: &Output) -> Markup {
    html! {
        h1 { "Done" }
        pre role="status" { (output.message) }
        @if !output.rows.is_empty() {
            div.scroll {
                table {
                    thead { tr { @for c in &output.columns { th scope="col" { (c) } } } }
                    tbody { @for row in &output.rows { tr { @for cell in row { td { (cell) } } } } }
                }
            }
        }
        p { a href=(d.home()) { "Back to the dashboard" } }
    }
}

pub(super) async fn resume(
    State(d): Shared,
    headers: HeaderMap,
    Form(f): Form<ActionForm>,
) -> Response {
    act(&d, &headers, &f, || {
        Ok(Command::Resume {
            sku: f.skus()?.pop(),
        })
    })
    .await
}

pub(super) async fn pause(
    State(d): Shared,
    headers: HeaderMap,
    Form(f): Form<ActionForm>,
) -> Response {
    act(&d, &headers, &f, || {
        Ok(Command::Pause {
            sku: f.skus()?.pop(),
            reason: f.reason.clone(),
        })
    })
    .await
}

pub(super) async fn release(
    State(d): Shared,
    headers: HeaderMap,
    Form(f): Form<ActionForm>,
) -> Response {
    act(&d, &headers, &f, || {
        let sku = f
            .skus()?
            .pop()
            .ok_or_else(|| AdminError::Invalid("which item? (sku)".into()))?;
        Ok(Command::Release { sku })
    })
    .await
}

pub(super) async fn reject(
    State(d): Shared,
    headers: HeaderMap,
    Form(f): Form<ActionForm>,
) -> Response {
    act(&d, &headers, &f, || {
        let sku = f
            .skus()?
            .pop()
            .ok_or_else(|| AdminError::Invalid("which item? (sku)".into()))?;
        Ok(Command::Reject { sku })
    })
    .await
}

pub(super) async fn reconcile(
    State(d): Shared,
    headers: HeaderMap,
    Form(f): Form<ActionForm>,
) -> Response {
    act(&d, &headers, &f, || {
        Ok(Command::Reconcile { skus: f.skus()? })
    })
    .await
}

pub(super) async fn forget(
    State(d): Shared,
    headers: HeaderMap,
    Form(f): Form<ActionForm>,
) -> Response {
    act(&d, &headers, &f, || {
        Ok(Command::Forget {
            contact: f.contact.clone(),
        })
    })
    .await
}
