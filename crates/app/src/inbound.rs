//! Texts shoppers send back (End User Messaging's two-way SMS, through the
//! stack's `InboundTexts` topic to the sweep): an opt-out in any words
//! opts the number out for good and ends its requests; HELP is answered
//! with the shop's help text in the shopper's language; anything else is
//! logged and left. A redelivered text (the same `inboundMessageId`)
//! changes nothing: an opt-out is the same again, and a help text goes once.

use restock_core::inbound::{Asks, InboundText, asks};
use restock_core::{Contact, Message, Phone};
use serde::Serialize;

use crate::{AppError, Services};

/// How long an inbound text's id is remembered against redelivery.
const SEEN_FOR_MS: i64 = 7 * 86_400_000;

/// What one inbound text came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InboundOutcome {
    /// The number is opted out; this many live requests ended.
    OptedOut {
        /// Live requests it ended.
        ended: u32,
    },
    /// The help text was sent.
    Helped,
    /// The help text could not be sent (logged; the shopper may ask again).
    HelpNotSent,
    /// Nothing restock acts on.
    Ignored,
    /// Not a number restock can read.
    NotANumber,
    /// Seen before.
    Duplicate,
}

/// Acts on each SNS message of an invocation: one that is not End User
/// Messaging's payload is logged and skipped (sending it again would not
/// help).
///
/// # Errors
/// Store and key failures (SNS retries the invocation).
pub async fn read(s: &Services, messages: &[String]) -> Result<Vec<InboundOutcome>, AppError> {
    let mut outcomes = Vec::new();
    for message in messages {
        match serde_json::from_str::<InboundText>(message) {
            Ok(text) => outcomes.push(handle(s, &text).await?),
            Err(e) => tracing::error!(error = %e, "an SNS message that is not an inbound text"),
        }
    }
    Ok(outcomes)
}

/// Acts on one inbound text.
///
/// # Errors
/// Store and key failures (the invocation is retried).
pub async fn handle(s: &Services, text: &InboundText) -> Result<InboundOutcome, AppError> {
    let now = s.clock.now_ms();
    let Ok(phone) = Phone::parse(&text.origination_number) else {
        tracing::warn!("an inbound text from something that is not a phone number");
        return Ok(InboundOutcome::NotANumber);
    };
    let contact = Contact::Sms(phone);
    match asks(&text.message_body) {
        Some(Asks::OptOut) => {
            let pepper = s.keyring.keys().await?.contact_pepper.clone();
            let mut ended = 0;
            for key in contact.keys(&pepper) {
                ended += s.opt_out(&key, restock_core::OptOutVia::Reply, now).await?;
            }
            tracing::warn!(from = %contact.masked(), ended, by = "text reply", "opted out for good");
            Ok(InboundOutcome::OptedOut { ended })
        }
        Some(Asks::Help) => {
            // An opt-out is the same however often it comes; a help text is
            // sent once per inbound text.
            let seen = format!("inbound:{}", text.inbound_message_id);
            if s.store
                .rate_limit(&seen, 1, SEEN_FOR_MS, now)
                .await?
                .is_limited()
            {
                return Ok(InboundOutcome::Duplicate);
            }
            let settings = s.settings().await?;
            let pepper = s.keyring.keys().await?.contact_pepper.clone();
            // Their language: their newest live request's (read through
            // their places, at any table size), else the shop's.
            let newest = s.store.live_requests(&contact.key(&pepper)).await?.pop();
            let language = settings.language_for(newest.and_then(|r| r.language).as_ref());
            let help = Message::help(&settings, &settings.texts(&language));
            match s.sender.send(&contact, &help).await {
                Ok(_) => Ok(InboundOutcome::Helped),
                Err(e) => {
                    tracing::error!(to = %contact.masked(), error = %e, "the help text could not be sent");
                    Ok(InboundOutcome::HelpNotSent)
                }
            }
        }
        None => {
            tracing::info!(from = %contact.masked(), "an inbound text restock does not act on");
            Ok(InboundOutcome::Ignored)
        }
    }
}
