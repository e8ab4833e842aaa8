//! The shopper's links: the reserve page and its hold, one tap back into
//! the queue from an ended link, and the opt-out page. A guessed or unknown
//! link is answered exactly like an ended one.

use super::*;

fn gone(token: &str, what: &str) -> Response {
    let body = text(what) + &button(&format!("/r/{token}/rejoin"), "Put me back in the queue");
    page(StatusCode::GONE, "This reserve link has ended", &body)
}

/// The page for a link that has ended (or never existed: the two look alike).
fn ended_link(token_text: &str) -> Response {
    gone(
        token_text,
        "It was only live for a short while, and the unit has passed to the next person.",
    )
}

pub(super) async fn reserve_page(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let expired = || ended_link(&token_text);
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return expired();
    };
    let result = async {
        let Some(r) = s.store.request(&token.request()).await? else {
            return Ok(expired());
        };
        if !r.reserve_link_is(&token) {
            return Ok(expired());
        }
        let name = s
            .store
            .catalogue_entry(&r.sku)
            .await?
            .map_or_else(|| r.sku.to_string(), |e| e.name);
        let now = s.clock.now_ms();
        Ok::<_, AppError>(match r.state {
            RequestState::Offered { expires_ms, .. } if now < expires_ms => {
                let body = text(&format!("{name} is back, and one is waiting for you."))
                    + &note(&format!(
                        "This link holds one for {} more.",
                        time_left(expires_ms - now)
                    ))
                    + &button(&format!("/r/{token_text}"), "Hold mine and go to checkout");
                page(StatusCode::OK, &format!("Reserve your {name}"), &body)
            }
            RequestState::Held { expires_ms, .. } if now < expires_ms => {
                let body = text(&format!(
                    "One {name} is held for you for {} more.",
                    time_left(expires_ms - now)
                )) + &button(&format!("/r/{token_text}"), "Go to checkout");
                page(StatusCode::OK, "It's held for you", &body)
            }
            RequestState::Bought { .. } => gone(&token_text, "This link was already used to buy."),
            _ => expired(),
        })
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

pub(super) async fn reserve(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let expired = || ended_link(&token_text);
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return expired();
    };
    let result = async {
        let settings = s.settings().await?;
        let now = s.clock.now_ms();
        let entry = s.store.catalogue_entry(token.sku()).await?;
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
        }
        Ok::<_, AppError>(match outcome {
            HoldOutcome::Held { hold, expires } | HoldOutcome::AlreadyHeld { hold, expires } => {
                tracing::info!(sku = %token.sku(), "hold taken");
                match entry.as_ref().and_then(|e| e.checkout_for(&hold)) {
                    Some(url) => (StatusCode::SEE_OTHER, [(header::LOCATION, url)]).into_response(),
                    None => page(
                        StatusCode::OK,
                        "It's held for you",
                        &(text(&format!(
                            "One {name} is held for you for {}.",
                            time_left(expires - now)
                        )) + &note(&format!(
                            "Your hold number is {hold}. Quote it at checkout."
                        ))),
                    ),
                }
            }
            HoldOutcome::SoldOutAgain => page(
                StatusCode::CONFLICT,
                "Sold out again, sorry",
                &(text(&format!("The last {name} went moments before you tapped."))
                    + &note(
                        "You keep your place at the front of the line, and you'll be told first when another one frees up.",
                    )),
            ),
            HoldOutcome::Refused(HoldRefused::Used) => {
                gone(&token_text, "This link was already used to buy.")
            }
            HoldOutcome::Refused(HoldRefused::Expired | HoldRefused::NotOffered) => expired(),
        })
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

pub(super) async fn rejoin(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let invalid = || {
        page(
            StatusCode::NOT_FOUND,
            "We couldn't do that",
            &text("This link is not valid any more. Please sign up again from the product page."),
        )
    };
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return invalid();
    };
    let result = async {
        let Some(r) = s.store.request(&token.request()).await? else {
            return Ok(invalid());
        };
        if !r.reserve_link_is(&token) && !r.optout_link_is(&token) {
            return Ok(invalid());
        }
        let settings = s.settings().await?;
        let Some(entry) = s.store.catalogue_entry(&r.sku).await? else {
            return Ok(invalid());
        };
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
            // The link came to the shopper's own inbox or phone: nothing
            // more to confirm, under the consent already on record.
            confirm_window_ms: None,
            consent: r.consent.clone(),
        };
        let stored = match s.store.join(request).await? {
            JoinOutcome::Joined(r) | JoinOutcome::AlreadyWaiting(r) => r,
            JoinOutcome::OptedOut => {
                return Ok(page(
                    StatusCode::CONFLICT,
                    "You opted out",
                    &text("You asked us not to contact you, so we haven't added you."),
                ));
            }
        };
        let position = s.store.position(&stored, entry.shards).await?;
        let body = match position {
            Some(p) => text(&format!("You're number {p} in line for {}.", entry.name)),
            None => text(&format!("You're already on the list for {}.", entry.name)),
        };
        Ok::<_, AppError>(page(StatusCode::OK, "You're back in the queue", &body))
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

pub(super) async fn optout_page(Path(token_text): Path<String>) -> Response {
    let body = text(
        "You won't get any more messages from us, about any product, on this address or number.",
    ) + &button(&format!("/o/{token_text}"), "Stop all messages");
    page(StatusCode::OK, "Stop messages?", &body)
}

pub(super) async fn optout(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let invalid = || {
        page(
            StatusCode::NOT_FOUND,
            "We couldn't find that link",
            &text("If you keep getting messages, reply STOP to a text or contact the shop."),
        )
    };
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return invalid();
    };
    match s.store.opt_out(&token, s.clock.now_ms()).await {
        Ok(OptOutOutcome::OptedOut { ended }) => {
            tracing::info!(sku = %token.sku(), ended, "opted out");
            page(
                StatusCode::OK,
                "You're opted out",
                &text("You won't hear from us again."),
            )
        }
        Ok(OptOutOutcome::NotFound) => invalid(),
        Err(e) => unavailable(&e.into()),
    }
}

/// The page a confirmation link opens: a button, because mail scanners
/// open links too, and only a person's tap should confirm.
pub(super) async fn confirm_page(Path(token_text): Path<String>) -> Response {
    let body = text("One tap to confirm it was you, and to keep your place in line.")
        + &button(&format!("/c/{token_text}"), "Yes, tell me when it's back");
    page(StatusCode::OK, "Confirm your place", &body)
}

pub(super) async fn confirm(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let invalid = || {
        page(
            StatusCode::NOT_FOUND,
            "This confirmation link has ended",
            &text(
                "It may have run out, or the sign-up was removed. Please sign up again from the product page.",
            ),
        )
    };
    let Ok(token) = token_text.parse::<LinkToken>() else {
        return invalid();
    };
    let result = async {
        let settings = s.settings().await?;
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
            ConfirmOutcome::Refused => return Ok(invalid()),
        };
        let entry = s.store.catalogue_entry(&r.sku).await?;
        let name = entry
            .as_ref()
            .map_or_else(|| r.sku.to_string(), |e| e.name.clone());
        let shards = entry.map_or(1, |e| e.shards);
        let position = s.store.position(&r, shards).await?;
        let mut body = match position {
            Some(p) => text(&format!(
                "You're number {p} in line for {name}. We'll tell you once, as soon as it's back."
            )),
            None => text(&format!("You're on the list for {name}.")),
        };
        body += &match manage {
            Some(link) => format!(
                "<p><a href=\"{}\">See or leave your place</a> (keep this link: it is yours alone).</p>",
                settings.link("m", &link)
            ),
            None => text("To see or leave your place, use the link in any email we sent you."),
        };
        Ok::<_, AppError>(page(StatusCode::OK, "You're on the list", &body))
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
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

fn unknown_manage_link() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "We couldn't find that sign-up",
        &text("It may have ended already. You can sign up again from the product page."),
    )
}

/// Where a sign-up stands, from the link in the shopper's inbox, with a way
/// to leave the list.
pub(super) async fn manage_page(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let result = async {
        let Some(r) = managed_by_link(&s, &token_text).await? else {
            return Ok(unknown_manage_link());
        };
        let entry = s.store.catalogue_entry(&r.sku).await?;
        let name = entry
            .as_ref()
            .map_or_else(|| r.sku.to_string(), |e| e.name.clone());
        let shards = entry.map_or(1, |e| e.shards);
        let position = s.store.position(&r, shards).await?;
        let status = r.state.status();
        let mut body = match (r.state, position) {
            (RequestState::Unconfirmed, Some(p)) => text(&format!(
                "You're number {p} in line for {name}, once you confirm with the link we sent."
            )),
            (_, Some(p)) => text(&format!("You're number {p} in line for {name}.")),
            _ if status.is_live() => text(&format!("You're on the list for {name} ({status}).")),
            _ => text(&format!("This sign-up for {name} has ended ({status}).")),
        };
        if status.is_live() {
            body += &button(&format!("/m/{token_text}"), "Leave the list");
        }
        Ok::<_, AppError>(page(StatusCode::OK, "Your place in line", &body))
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}

pub(super) async fn manage_leave(State(s): Shared, Path(token_text): Path<String>) -> Response {
    let result = async {
        let Some(r) = managed_by_link(&s, &token_text).await? else {
            return Ok(unknown_manage_link());
        };
        Ok::<_, AppError>(match s.store.cancel(&r.id, s.clock.now_ms()).await? {
            CancelOutcome::Cancelled => {
                tracing::info!(sku = %r.sku, "left the list from the inbox link");
                page(
                    StatusCode::OK,
                    "You've left the list",
                    &text("You won't hear from us about this product."),
                )
            }
            CancelOutcome::NotLive(status) => page(
                StatusCode::CONFLICT,
                "Already ended",
                &text(&format!("This sign-up is already {status}.")),
            ),
            CancelOutcome::NotFound => unknown_manage_link(),
        })
    };
    result.await.unwrap_or_else(|e| unavailable(&e))
}
