//! What the widget reads before a sign-up: its words in the shopper's language
//! (GET /widget/words) and the item's state (GET /items/{sku}).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use restock_core::Texts;
use restock_core::lang::arg;
use serde_json::json;

use super::{Shared, error, unavailable, visitor_words};
use crate::Services;

/// What `GET /widget` answers, under the name the widget looks up: each
/// `widget-*` message, and the page titles it shares.
pub(super) const WIDGET_WORDS: &[(&str, &str)] = &[
    ("check-title", "join-check-title"),
    ("on-list-title", "page-on-list-title"),
    ("leave", "page-leave-button"),
    ("left-title", "page-left-title"),
];

#[derive(serde::Deserialize)]
pub(super) struct WidgetQuery {
    language: Option<String>,
}

/// The widget's words in the closest language the shop offers to the one
/// its page declares (else the browser's): every message it shows before a
/// sign-up reaches capture. `{product}` and `{position}` stay for the
/// widget to fill in. Cached by browsers and CDNs for five minutes.
pub(super) async fn widget_words(
    State(s): Shared,
    axum::extract::Query(q): axum::extract::Query<WidgetQuery>,
    headers: HeaderMap,
) -> Response {
    let t = caller_words(&s, q.language.as_deref(), &headers).await;
    let placeholders = [
        arg("product", "{product}"),
        arg("position", "{position}"),
        arg("when", "{when}"),
    ];
    let mut words = serde_json::Map::new();
    for (id, _) in restock_core::lang::MESSAGES {
        if let Some(name) = id.strip_prefix("widget-") {
            words.insert(name.to_owned(), json!(t.get(id, &placeholders)));
        }
    }
    for (name, id) in WIDGET_WORDS {
        words.insert((*name).to_owned(), json!(t.word(id)));
    }
    let language = t.language();
    let mut r = Json(json!({
        "language": language.to_string(),
        "dir": language.dir(),
        "words": words,
    }))
    .into_response();
    let h = r.headers_mut();
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    h.insert(header::VARY, HeaderValue::from_static("Accept-Language"));
    r
}

/// What the widget shows of an item before a sign-up: whether it is sold
/// at all (an ended item takes no sign-ups) and its launch, if one is
/// scheduled and still to come (the widget says when, on the shopper's
/// own clock). Cached for a minute.
pub(super) async fn item(State(s): Shared, Path(sku): Path<String>) -> Response {
    let entry = match restock_core::Sku::from_shop(&sku) {
        Ok(sku) => s.entry(&sku).await,
        Err(_) => Ok(None),
    };
    let entry = match entry {
        Ok(Some(entry)) => entry,
        Ok(None) => return error(StatusCode::NOT_FOUND, "no such item"),
        Err(e) => return unavailable(&e.into()),
    };
    let now = s.clock.now_ms();
    let mut r = Json(json!({
        "sku": entry.sku,
        "ended": entry.ended.is_some(),
        "launch_at_ms": entry.launch_at.filter(|at| *at > now),
    }))
    .into_response();
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=60"),
    );
    r
}

/// The words for a caller of the JSON API: the language its sign-up asks
/// for, else its browser's; English as shipped when the settings cannot
/// be read.
pub(super) async fn caller_words(s: &Services, asked: Option<&str>, headers: &HeaderMap) -> Texts {
    let Ok(settings) = s.settings().await else {
        return Texts::english();
    };
    match asked.and_then(|a| a.trim().parse::<restock_core::Language>().ok()) {
        Some(language) => settings.texts(&settings.language_for(Some(&language))),
        None => visitor_words(&settings, headers),
    }
}
