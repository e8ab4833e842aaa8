//! One request's page: its story, masked, as `restock show ID` prints it.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};

use super::super::{AdminError, Command};
use super::{Dashboard, Shared, failed, page};

/// One request's story, masked: what `restock show ID` prints.
pub(super) async fn request(State(d): Shared, Path(id): Path<String>) -> Response {
    if id.parse::<restock_core::RequestId>().is_err() {
        return failed(
            &d,
            &AdminError::Invalid(format!("`{id}` is not a request id")),
        );
    }
    let shown = d
        .admin
        .run(
            Command::Show {
                who: id.clone(),
                with_contacts: false,
            },
            d.clock.now_ms(),
        )
        .await;
    match shown {
        Ok(out) => page(&d, StatusCode::OK, &id, story_html(&d, &out.json)),
        Err(e) => failed(&d, &e),
    }
}

/// The requests of a `restock show` answer, each with why it stands where
/// it does and its story.
pub(super) fn story_html(d: &Dashboard, shown: &serde_json::Value) -> Markup {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let requests = shown["requests"].as_array().cloned().unwrap_or_default();
    html! {
        @for r in &requests {
            h1 { (text(&r["contact"])) " on " a href={ (d.base) "/items/" (text(&r["sku"])) } { (text(&r["sku"])) } }
            p.muted { "Request " (text(&r["request_id"])) " · " (text(&r["channel"])) " · " b { (text(&r["status"])) } }
            p { b { "Now: " } (text(&r["why"])) }
            h2 { "Its story" }
            div.scroll {
                table {
                    thead { tr { th scope="col" { "When (UTC)" } th scope="col" { "What happened" } } }
                    tbody {
                        @for c in r["story"].as_array().into_iter().flatten() {
                            tr {
                                td { (restock_core::rfc3339(c["at"].as_i64().unwrap_or_default())) }
                                td { (text(&c["text"])) }
                            }
                        }
                    }
                }
            }
            p.muted { "Each kind of event is kept once, and for the last " (restock_core::story::RESTOCKS_KEPT) " restocks it was offered in. The same story: " code { "restock show " (text(&r["request_id"])) } }
        }
    }
}
