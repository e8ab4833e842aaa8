//! The shopper's links: the reserve page and its hold, one tap back into
//! the queue from an ended link, and the opt-out page. A guessed or unknown
//! link is answered exactly like an ended one.

use restock_core::notice::escape_html;

use crate::pages::page_leading_to;

use super::*;

fn gone(t: &Texts, token: &str, what: &str) -> Response {
    let body =
        text(&t.word(what)) + &button(&format!("/r/{token}/rejoin"), &t.word("page-rejoin-button"));
    page(t, StatusCode::GONE, &t.word("page-ended-title"), &body)
}

/// The page for a link to an item the shop no longer sells (its platform
/// stopped listing it): nothing to hold or to wait for again.
fn item_ended(t: &Texts) -> Response {
    page(
        t,
        StatusCode::GONE,
        &t.word("page-ended-title"),
        &text(&t.word("error-item-ended")),
    )
}

/// The page for a link that has ended (or never existed: the two look alike).
fn ended_link(t: &Texts, token_text: &str) -> Response {
    gone(t, token_text, "page-ended")
}

/// The words for whoever opened a link: the language of the request it
/// names, if it is that request's own link (`is_own`), else the browser's.
async fn link_words(
    s: &Services,
    headers: &HeaderMap,
    request: Option<&restock_store::Request>,
) -> Result<Texts, AppError> {
    let settings = s.settings().await?;
    Ok(match request {
        Some(r) => words(&settings, r),
        None => visitor_words(&settings, headers),
    })
}

pub(super) async fn reserve_page(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    let result = async {
        let request = match token_text.parse::<LinkToken>() {
            Ok(token) => s
                .store
                .request(&token.request())
                .await?
                .filter(|r| r.reserve_link_is(&token)),
            Err(_) => None,
        };
        let t = link_words(&s, &headers, request.as_ref()).await?;
        let Some(r) = request else {
            return Ok(ended_link(&t, &token_text));
        };
        let entry = s.entry(&r.sku).await?;
        let checkout = entry
            .as_ref()
            .and_then(restock_core::catalogue::CatalogueEntry::checkout_origin);
        let name = entry.map_or_else(|| r.sku.to_string(), |e| e.name);
        let now = s.clock.now_ms();
        Ok::<_, AppError>(match r.state {
            RequestState::Offered { expires_ms, .. } if now < expires_ms => {
                let body = text(&t.get("page-reserve-back", &[arg("product", &name)]))
                    + &note(&t.get(
                        "page-reserve-left",
                        &[arg("time", &t.time_left(expires_ms - now))],
                    ))
                    + &button(&format!("/r/{token_text}"), &t.word("page-reserve-button"));
                let title = t.get("page-reserve-title", &[arg("product", &name)]);
                page_leading_to(&t, StatusCode::OK, &title, &body, checkout.as_deref())
            }
            RequestState::Held { expires_ms, .. } if now < expires_ms => {
                let body =
                    text(&t.get(
                        "page-held-left",
                        &[
                            arg("product", &name),
                            arg("time", &t.time_left(expires_ms - now)),
                        ],
                    )) + &button(&format!("/r/{token_text}"), &t.word("page-checkout-button"));
                page_leading_to(
                    &t,
                    StatusCode::OK,
                    &t.word("page-held-title"),
                    &body,
                    checkout.as_deref(),
                )
            }
            RequestState::Bought { .. } => gone(&t, &token_text, "page-used"),
            _ => ended_link(&t, &token_text),
        })
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

pub(super) async fn reserve(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    let result = async {
        let settings = s.settings().await?;
        let Ok(token) = token_text.parse::<LinkToken>() else {
            return Ok(ended_link(&visitor_words(&settings, &headers), &token_text));
        };
        let now = s.clock.now_ms();
        // Read from the store, not the warm function's copy: an ended item
        // holds no unit.
        let entry = s.store.catalogue_entry(token.sku()).await?;
        if entry.as_ref().is_some_and(|e| e.ended.is_some()) {
            let request = s.store.request(&token.request()).await?;
            let t = match request.filter(|r| r.reserve_link_is(&token)) {
                Some(r) => words(&settings, &r),
                None => visitor_words(&settings, &headers),
            };
            return Ok(item_ended(&t));
        }
        let outcome = s
            .store
            .take_hold(
                &token,
                HoldId::from_random(s.random()),
                entry.as_ref().map_or(1, |e| e.shards),
                now,
                settings.hold_window,
            )
            .await?;
        let name = entry
            .as_ref()
            .map_or_else(|| token.sku().to_string(), |e| e.name.clone());
        if matches!(outcome, HoldOutcome::Held { .. }) {
            metrics::count(Metric::Holds, 1);
            super::status::held_together(&s, &token.request(), now).await;
        }
        if let HoldOutcome::Held { hold, .. } | HoldOutcome::AlreadyHeld { hold, .. } = &outcome
            && let Some(url) = entry.as_ref().and_then(|e| e.checkout_for(hold))
        {
            // The shop's analytics sees restock brought the shopper, and
            // told on which channel (one read of the request; a failed read
            // leaves the medium out rather than the shopper waiting).
            let channel = if settings.utm.enabled {
                s.store
                    .request(&token.request())
                    .await
                    .ok()
                    .flatten()
                    .map(|r| r.contact.channel())
            } else {
                None
            };
            let url = settings.utm.tag(&url, channel, token.sku());
            tracing::info!(sku = %token.sku(), "hold taken");
            return Ok((StatusCode::SEE_OTHER, [(header::LOCATION, url)]).into_response());
        }
        // A page to show: in the language of the request the link is its own.
        let request = s
            .store
            .request(&token.request())
            .await?
            .filter(|r| r.reserve_link_is(&token));
        let t = match &request {
            Some(r) => words(&settings, r),
            None => visitor_words(&settings, &headers),
        };
        Ok::<_, AppError>(hold_page(&t, outcome, &name, now, &token_text, &token))
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

/// The page a click on a reserve link shows when it does not go on to
/// checkout: the hold and how long it lasts, sold out again, or a link
/// used or ended.
fn hold_page(
    t: &Texts,
    outcome: HoldOutcome,
    name: &str,
    now: restock_core::Millis,
    token_text: &str,
    token: &LinkToken,
) -> Response {
    match outcome {
        HoldOutcome::Held { hold, expires } | HoldOutcome::AlreadyHeld { hold, expires } => {
            tracing::info!(sku = %token.sku(), "hold taken");
            page(
                t,
                StatusCode::OK,
                &t.word("page-held-title"),
                &(text(&t.get(
                    "page-held-left",
                    &[
                        arg("product", name),
                        arg("time", &t.time_left(expires - now)),
                    ],
                )) + &note(&t.get("page-held-number", &[arg("hold", &hold.to_string())]))),
            )
        }
        HoldOutcome::SoldOutAgain => page(
            t,
            StatusCode::CONFLICT,
            &t.word("page-sold-out-title"),
            &(text(&t.get("page-sold-out", &[arg("product", name)]))
                + &note(&t.word("page-sold-out-front"))),
        ),
        HoldOutcome::Refused(HoldRefused::Used) => gone(t, token_text, "page-used"),
        HoldOutcome::Refused(HoldRefused::Expired | HoldRefused::NotOffered) => {
            ended_link(t, token_text)
        }
    }
}

pub(super) async fn rejoin(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    let invalid = |t: &Texts| {
        page(
            t,
            StatusCode::NOT_FOUND,
            &t.word("page-invalid-title"),
            &text(&t.word("page-invalid")),
        )
    };
    let result = async {
        let settings = s.settings().await?;
        let request = match token_text.parse::<LinkToken>() {
            Ok(token) => s
                .store
                .request(&token.request())
                .await?
                .filter(|r| r.reserve_link_is(&token) || r.optout_link_is(&token)),
            Err(_) => None,
        };
        let Some(r) = request else {
            return Ok(invalid(&visitor_words(&settings, &headers)));
        };
        let t = words(&settings, &r);
        let Some(entry) = s.entry(&r.sku).await? else {
            return Ok(invalid(&t));
        };
        if entry.ended.is_some() {
            return Ok(item_ended(&t));
        }
        let request = NewRequest {
            id: RequestId::from_random(s.random()),
            sku: r.sku.clone(),
            name: r.name.clone(),
            contact: r.contact.clone(),
            contact_key: r.contact_key.clone(),
            now: s.clock.now_ms(),
            shards: entry.shards,
            lifetime_ms: settings.request_lifetime.as_millis(),
            // Rejoined from a link page, not the widget: managed through the
            // links its notices carry.
            manage_hash: None,
            language: r.language.clone(),
            zone: r.zone.clone(),
            // The link came to the shopper's own inbox or phone: nothing
            // more to confirm, under the consent already on record.
            confirm_window_ms: None,
            consent: r.consent.clone(),
        };
        let stored = match s.store.join(request).await? {
            JoinOutcome::Joined(r) | JoinOutcome::AlreadyWaiting(r) => r,
            JoinOutcome::OptedOut => {
                return Ok(page(
                    &t,
                    StatusCode::CONFLICT,
                    &t.word("page-opted-out-title"),
                    &text(&t.word("page-opted-out")),
                ));
            }
        };
        let position = s.store.position(&stored, entry.shards).await?;
        let product = arg("product", &entry.name);
        let body = match position {
            Some(p) => text(&t.get("page-position", &[("position", p.into()), product])),
            None => text(&t.get("page-on-list", &[product])),
        };
        Ok::<_, AppError>(page(&t, StatusCode::OK, &t.word("page-back-title"), &body))
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

/// The words for an opt-out or confirmation link: its request's language
/// when the link is one of its own, else the browser's.
async fn own_link_words(
    s: &Services,
    headers: &HeaderMap,
    token_text: &str,
    is_own: impl Fn(&restock_store::Request, &LinkToken) -> bool,
) -> Result<Texts, AppError> {
    let request = match token_text.parse::<LinkToken>() {
        Ok(token) => s
            .store
            .request(&token.request())
            .await?
            .filter(|r| is_own(r, &token)),
        Err(_) => None,
    };
    link_words(s, headers, request.as_ref()).await
}

pub(super) async fn optout_page(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    let t = match own_link_words(&s, &headers, &token_text, |r, l| r.optout_link_is(l)).await {
        Ok(t) => t,
        Err(e) => return unavailable(&e),
    };
    let body = text(&t.word("page-stop"))
        + &button(&format!("/o/{token_text}"), &t.word("page-stop-button"));
    page(&t, StatusCode::OK, &t.word("page-stop-title"), &body)
}

pub(super) async fn optout(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    // Read before the opt-out: afterwards the request may be gone.
    let t = match own_link_words(&s, &headers, &token_text, |r, l| r.optout_link_is(l)).await {
        Ok(t) => t,
        Err(e) => return unavailable(&e),
    };
    let invalid = || {
        page(
            &t,
            StatusCode::NOT_FOUND,
            &t.word("page-link-unknown-title"),
            &text(&t.word("page-link-unknown")),
        )
    };
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return invalid();
    };
    match s.store.opt_out(&token, s.clock.now_ms()).await {
        Ok(OptOutOutcome::OptedOut { ended }) => {
            tracing::info!(sku = %token.sku(), ended, "opted out");
            page(
                &t,
                StatusCode::OK,
                &t.word("page-stopped-title"),
                &text(&t.word("page-stopped")),
            )
        }
        Ok(OptOutOutcome::NotFound) => invalid(),
        Err(e) => unavailable(&e.into()),
    }
}

/// The page a confirmation link opens: a button, because mail scanners
/// open links too, and only a person's tap should confirm.
pub(super) async fn confirm_page(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    let t = match own_link_words(&s, &headers, &token_text, |r, l| r.confirm_link_is(l)).await {
        Ok(t) => t,
        Err(e) => return unavailable(&e),
    };
    let body = text(&t.word("page-confirm"))
        + &button(&format!("/c/{token_text}"), &t.word("page-confirm-button"));
    page(&t, StatusCode::OK, &t.word("page-confirm-title"), &body)
}

pub(super) async fn confirm(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    let result = async {
        let settings = s.settings().await?;
        let invalid = |t: &Texts| {
            page(
                t,
                StatusCode::NOT_FOUND,
                &t.word("page-confirm-ended-title"),
                &text(&t.word("page-confirm-ended")),
            )
        };
        let Ok(token) = token_text.parse::<LinkToken>() else {
            return Ok(invalid(&visitor_words(&settings, &headers)));
        };
        let now = s.clock.now_ms();
        // Whoever follows the link from the inbox owns the place: a manage
        // link of their own replaces the one the signing-up browser kept.
        let owner = LinkToken::new(token.sku().clone(), token.request(), s.random());
        let outcome = s
            .store
            .confirm(
                &token,
                owner.secret_hash(),
                settings.request_lifetime.as_millis(),
                now,
            )
            .await?;
        let mut manage = None;
        let r = match outcome {
            ConfirmOutcome::Confirmed(r) => {
                metrics::count(Metric::Confirmations, 1);
                manage = Some(owner);
                tracing::info!(sku = %r.sku, contact = %r.contact.masked(), "sign-up confirmed");
                let confirmed = restock_core::feedback::MailDay {
                    confirmed: 1,
                    ..Default::default()
                };
                s.store
                    .count_mail(&restock_core::feedback::day_of(now), confirmed)
                    .await?;
                r
            }
            ConfirmOutcome::AlreadyConfirmed(r) => r,
            ConfirmOutcome::Refused => return Ok(invalid(&visitor_words(&settings, &headers))),
        };
        let t = words(&settings, &r);
        let body = confirmed_body(&s, &settings, &t, &r, manage).await?;
        Ok::<_, AppError>(page(
            &t,
            StatusCode::OK,
            &t.word("page-on-list-title"),
            &body,
        ))
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

/// The confirmation page's words: the place (or "on the list") of the one
/// sign-up the tap confirmed, and the manage link the tap gave its owner
/// (or where to find it).
async fn confirmed_body(
    s: &Services,
    settings: &Settings,
    t: &Texts,
    r: &restock_store::Request,
    manage: Option<LinkToken>,
) -> Result<String, AppError> {
    let entry = s.entry(&r.sku).await?;
    let name = entry
        .as_ref()
        .map_or_else(|| r.sku.to_string(), |e| e.name.clone());
    let shards = entry.map_or(1, |e| e.shards);
    let position = s.store.position(r, shards).await?;
    let product = arg("product", &name);
    let body = match position {
        Some(p) => text(&t.get(
            "page-position-told-once",
            &[("position", p.into()), product],
        )),
        None => text(&t.get("page-on-list", &[product])),
    };
    Ok(body
        + &match manage {
            Some(link) => format!(
                "<p><a href=\"{}\">{}</a>. {}</p>",
                escape_html(&settings.link("m", &link)),
                escape_html(&t.word("manage-link")),
                escape_html(&t.word("page-manage-keep")),
            ),
            None => text(&t.word("page-manage-from-email")),
        })
}

/// The request a manage link sent to the shopper's inbox names, if the link
/// is one of its own (unknown and wrong links look alike).
async fn managed_by_link(
    s: &Services,
    token_text: &str,
) -> Result<Option<restock_store::Request>, AppError> {
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return Ok(None);
    };
    Ok(s.store
        .request(&token.request())
        .await?
        .filter(|r| r.manage_link_is(&token)))
}

async fn unknown_manage_link(s: &Services, headers: &HeaderMap) -> Result<Response, AppError> {
    let t = link_words(s, headers, None).await?;
    Ok(page(
        &t,
        StatusCode::NOT_FOUND,
        &t.word("page-manage-unknown-title"),
        &text(&t.word("page-manage-unknown")),
    ))
}

/// Where a sign-up stands, from the link in the shopper's inbox, with a way
/// to leave the list.
pub(super) async fn manage_page(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    let result = async {
        let Some(r) = managed_by_link(&s, &token_text).await? else {
            return unknown_manage_link(&s, &headers).await;
        };
        let t = link_words(&s, &headers, Some(&r)).await?;
        let entry = s.entry(&r.sku).await?;
        let name = entry
            .as_ref()
            .map_or_else(|| r.sku.to_string(), |e| e.name.clone());
        let shards = entry.map_or(1, |e| e.shards);
        let position = s.store.position(&r, shards).await?;
        let status = r.state.status();
        let product = arg("product", &name);
        let mut body = match (r.state, position) {
            (RequestState::Unconfirmed, Some(p)) => text(&t.get(
                "page-manage-unconfirmed",
                &[("position", p.into()), product],
            )),
            (_, Some(p)) => text(&t.get("page-position", &[("position", p.into()), product])),
            (RequestState::Offered { .. }, None) => text(&t.get("page-manage-offered", &[product])),
            (RequestState::Held { .. }, None) => text(&t.get("page-manage-held", &[product])),
            _ if status.is_live() => text(&t.get("page-on-list", &[product])),
            _ => text(&t.get("page-manage-ended", &[product])),
        };
        if status.is_live() {
            body += &button(&format!("/m/{token_text}"), &t.word("page-leave-button"));
        }
        Ok::<_, AppError>(page(
            &t,
            StatusCode::OK,
            &t.word("page-manage-title"),
            &body,
        ))
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

pub(super) async fn manage_leave(
    State(s): Shared,
    Path(token_text): Path<String>,
    headers: HeaderMap,
) -> Response {
    let result = async {
        let Some(r) = managed_by_link(&s, &token_text).await? else {
            return unknown_manage_link(&s, &headers).await;
        };
        let t = link_words(&s, &headers, Some(&r)).await?;
        Ok::<_, AppError>(match s.store.cancel(&r.id, s.clock.now_ms()).await? {
            CancelOutcome::Cancelled => {
                tracing::info!(sku = %r.sku, "left the list from the inbox link");
                page(
                    &t,
                    StatusCode::OK,
                    &t.word("page-left-title"),
                    &text(&t.word("page-left")),
                )
            }
            CancelOutcome::NotLive(_) => page(
                &t,
                StatusCode::CONFLICT,
                &t.word("page-already-ended-title"),
                &text(&t.word("page-already-ended")),
            ),
            CancelOutcome::NotFound => unknown_manage_link(&s, &headers).await?,
        })
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}
