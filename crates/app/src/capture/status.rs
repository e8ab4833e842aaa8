//! A request's own page for its browser: its status and place, and leaving
//! the line (GET and DELETE /requests/{id}, with the browser's secret);
//! a hold ending the sign-up's other channel.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use restock_core::{LinkToken, RequestId, RequestState};
use restock_store::CancelOutcome;
use serde_json::json;

use super::item::caller_words;
use super::{Shared, said, unavailable};
use crate::{AppError, Services};

/// The request the caller may manage: `id` from the path, and the manage
/// token the joining browser was given (`Authorization: Bearer <token>`).
/// Unknown ids, missing and wrong tokens all answer the same 404.
pub(super) async fn managed(
    s: &Services,
    id: &str,
    headers: &HeaderMap,
) -> Result<Option<restock_store::Request>, AppError> {
    let Ok(id) = id.parse::<RequestId>() else {
        return Ok(None);
    };
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|t| t.trim().parse::<LinkToken>().ok());
    let Some(token) = token.filter(|t| t.request() == id) else {
        return Ok(None);
    };
    Ok(s.store
        .request(&id)
        .await?
        .filter(|r| r.manage_link_is(&token)))
}

/// A stored request's status as capture answers it (`Request` here is
/// axum's HTTP request, so the store's record goes by its path).
pub(super) fn status_json(
    r: &restock_store::Request,
    position: Option<usize>,
) -> serde_json::Value {
    let mut value = json!({
        "request_id": r.id,
        "sku": r.sku,
        "status": r.state.status(),
        "position": position,
    });
    if let RequestState::Offered { expires_ms, .. } | RequestState::Held { expires_ms, .. } =
        r.state
    {
        value["expires_at_ms"] = json!(expires_ms);
    }
    value
}

pub(super) async fn status(
    State(s): Shared,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let result = async {
        let Some(r) = managed(&s, &id, &headers).await? else {
            let t = caller_words(&s, None, &headers).await;
            return Ok(said(&t, StatusCode::NOT_FOUND, "error-no-request"));
        };
        let shards = s.entry(&r.sku).await?.map_or(1, |e| e.shards);
        let position = s.store.position(&r, shards).await?;
        Ok::<_, AppError>(Json(status_json(&r, position)).into_response())
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

pub(super) async fn cancel(
    State(s): Shared,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let r = match managed(&s, &id, &headers).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            let t = caller_words(&s, None, &headers).await;
            return said(&t, StatusCode::NOT_FOUND, "error-no-request");
        }
        Err(e) => return unavailable(&e),
    };
    let id = r.id;
    match s.store.cancel(&id, s.clock.now_ms()).await {
        Ok(CancelOutcome::Cancelled) => Json(json!({ "request_id": id, "status": "cancelled" })).into_response(),
        Ok(CancelOutcome::NotLive(status)) => (
            StatusCode::CONFLICT,
            Json(json!({ "request_id": id, "status": status, "error": format!("this request is already {status}") })),
        )
            .into_response(),
        Ok(CancelOutcome::NotFound) => {
            let t = caller_words(&s, None, &headers).await;
            said(&t, StatusCode::NOT_FOUND, "error-no-request")
        }
        Err(e) => unavailable(&e.into()),
    }
}

/// A hold ends the request its sign-up made on the other channel (told by
/// email and text, one unit is theirs): its place and any offer pass on.
/// A failure is logged; that request's offer lapses as any would.
pub(super) async fn held_together(
    s: &Services,
    id: &restock_core::RequestId,
    now: restock_core::Millis,
) {
    let ended = async {
        let Some(held) = s.store.request(id).await? else {
            return Ok(false);
        };
        let Some(other) = held.consent.as_ref().and_then(|c| c.together) else {
            return Ok(false);
        };
        match s.store.request(&other).await? {
            Some(mate) if mate.goes_with(&held) && mate.state.status().is_live() => Ok(matches!(
                s.store.cancel(&other, now).await?,
                CancelOutcome::Cancelled
            )),
            _ => Ok::<_, AppError>(false),
        }
    };
    match ended.await {
        Ok(ended) => tracing::info!(ended, "a hold and its sign-up's other channel"),
        Err(e) => {
            tracing::warn!(error = %e, "the sign-up's other channel was not ended with the hold")
        }
    }
}
