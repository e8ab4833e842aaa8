//! The exports as downloads: the per-item figures, and every request written
//! a page at a time as the browser reads it.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use restock_core::Sku;

use super::super::export::{self, Kind};
use super::super::{AdminError, Command};
use super::actions::ActionForm;
use super::{Dashboard, Shared, failed, forged, plain};

/// The per-item export (`restock export items`) as a download: one row an
/// item, small whatever the number of requests.
pub(super) async fn items_csv(d: &Dashboard, skus: Vec<Sku>) -> Response {
    let stats = match d.admin.run(Command::Stats { skus }, d.clock.now_ms()).await {
        Ok(stats) => stats,
        Err(e) => return failed(d, &e),
    };
    let mut body = Vec::new();
    if let Err(e) = export::write_items(&stats.json, &mut body) {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string());
    }
    Response::builder()
        .header(header::CONTENT_TYPE, "text/csv; charset=utf-8")
        .header(
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"restock-items.csv\"",
        )
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from(body))
        .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "the export"))
}

/// The export as a download, written a page at a time as the browser reads
/// it (`Command::ExportPage`, contacts masked): one page in memory.
pub(super) async fn export_csv(
    State(d): Shared,
    headers: HeaderMap,
    Form(f): Form<ActionForm>,
) -> Response {
    if let Some(why) = forged(&d, &headers, &f.csrf) {
        return plain(StatusCode::FORBIDDEN, why);
    }
    let skus = match f.skus() {
        Ok(skus) => skus,
        Err(e) => return failed(&d, &e),
    };
    let kind = match f.kind.as_str() {
        "days" => Kind::Days,
        "items" => return items_csv(&d, skus).await,
        _ => Kind::Requests,
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(2);
    let dashboard = d.clone();
    tokio::spawn(async move {
        let written = Buffer::default();
        let done = export::write(
            kind,
            written.clone(),
            |after| {
                let command = Command::ExportPage {
                    skus: skus.clone(),
                    after,
                    with_contacts: false,
                };
                let (dashboard, written, tx) = (dashboard.clone(), written.clone(), tx.clone());
                async move {
                    // What the last page wrote goes out before the next is read.
                    let chunk = written.take();
                    if !chunk.is_empty() && tx.send(Ok(chunk)).await.is_err() {
                        return Err(AdminError::Invalid("the browser left".into()));
                    }
                    dashboard.admin.run(command, dashboard.clock.now_ms()).await
                }
            },
            |_| {},
        )
        .await;
        let last = match done {
            Ok(_) => Ok(written.take()),
            Err(e) => {
                tracing::warn!(error = %e, "a dashboard export stopped part way");
                Err(std::io::Error::other(e.to_string()))
            }
        };
        let _ = tx.send(last).await;
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    let name = match kind {
        Kind::Requests => "restock-requests.csv",
        Kind::Days => "restock-days.csv",
    };
    Response::builder()
        .header(header::CONTENT_TYPE, "text/csv; charset=utf-8")
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        )
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| {
            plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the export could not start",
            )
        })
}

/// Where the export writes: the rows of the page in hand, sent on before
/// the next page is read.
#[derive(Clone, Default)]
pub(super) struct Buffer(Arc<std::sync::Mutex<Vec<u8>>>);

impl Buffer {
    pub(super) fn take(&self) -> Vec<u8> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl std::io::Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
