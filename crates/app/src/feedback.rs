//! Feedback from the mail provider (SES event publishing through the
//! notices' configuration set to EventBridge, which invokes the sweep
//! function): a permanent bounce ends its offer as undeliverable (the unit
//! passes on) and the address is not mailed again; a complaint is an opt-out
//! for good (I5); a soft bounce or anything else changes nothing. Each event
//! is applied once (EventBridge may deliver one twice).
//!
//! Texts report back through SNS's SMS delivery status logs (a CloudWatch
//! Logs subscription on the failure log group invokes the sweep function):
//! [`handle_sms`] reads one log entry.

use restock_core::feedback::{
    FeedbackKind, MailDay, SmsFailureKind, day_of, parse_ses_event, parse_sms_log,
};
use restock_core::{Contact, OptOutVia};
use restock_store::NoticeOutcome;
use serde::Serialize;

use crate::{AppError, Services, alerts};

/// How long an event id is remembered for deduplication.
const SEEN_FOR_MS: i64 = 7 * 86_400_000;

/// What one event did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackOutcome {
    /// A permanent bounce: the offer ended (if still live) and the address
    /// is not mailed again.
    Bounced,
    /// A complaint: the contact opted out for good.
    Complained,
    /// Counted only (a soft bounce, a delivery).
    Noted,
    /// A text's number cannot take texts: it is not texted again and its
    /// live offers ended.
    Undeliverable,
    /// A text's number opted out at the carrier or SNS: an opt-out for good.
    OptedOut,
    /// About the account (SMS spending limit): the team was told.
    SenderAlerted,
    /// Seen before: nothing changed.
    Duplicate,
    /// Not an SES event restock can read, or one without restock's tags:
    /// logged and dropped (a retry would not help).
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// Applies one SES event record (the EventBridge event's `detail`).
///
/// # Errors
/// Store failures (EventBridge retries the event).
pub async fn handle(s: &Services, detail: &serde_json::Value) -> Result<FeedbackOutcome, AppError> {
    let feedback = match parse_ses_event(detail) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(error = %e, "mail feedback unreadable; dropped");
            return Ok(FeedbackOutcome::Unreadable {
                reason: e.to_string(),
            });
        }
    };
    let now = s.clock.now_ms();
    if feedback.kind == FeedbackKind::Other {
        tracing::info!(detail = %feedback.detail, "mail feedback noted");
        return Ok(FeedbackOutcome::Noted);
    }
    if feedback.kind == FeedbackKind::TransientBounce {
        // Counted only, once per event.
        if !s
            .store
            .rate_limit(&format!("feedback:{}", feedback.id), 1, SEEN_FOR_MS, now)
            .await?
            .is_limited()
        {
            let add = MailDay {
                soft_bounced: 1,
                ..MailDay::default()
            };
            s.store.count_mail(&day_of(now), add).await?;
        }
        tracing::info!(detail = %feedback.detail, "soft bounce counted");
        return Ok(FeedbackOutcome::Noted);
    }
    let Some(contact) = feedback.contact.clone() else {
        let reason = "the event carries no restock tags (was it sent by restock?)".to_owned();
        tracing::warn!(kind = ?feedback.kind, %reason, "mail feedback dropped");
        return Ok(FeedbackOutcome::Unreadable { reason });
    };
    if s.store
        .rate_limit(&format!("feedback:{}", feedback.id), 1, SEEN_FOR_MS, now)
        .await?
        .is_limited()
    {
        return Ok(FeedbackOutcome::Duplicate);
    }
    let add = MailDay {
        bounced: u32::from(feedback.kind == FeedbackKind::PermanentBounce),
        complained: u32::from(feedback.kind == FeedbackKind::Complaint),
        ..MailDay::default()
    };
    count_and_warn(s, add, now).await?;
    match feedback.kind {
        FeedbackKind::PermanentBounce => {
            if let (Some(id), Some(episode)) = (feedback.request, feedback.episode) {
                // Ends the offer if it is still live; the unit passes on.
                s.store
                    .record_notice(
                        &id,
                        episode,
                        NoticeOutcome::Failed {
                            reason: feedback.detail.clone(),
                        },
                        now,
                    )
                    .await?;
            }
            // An address that does not exist is never mailed again.
            let ended = s.opt_out(&contact, OptOutVia::Undeliverable, now).await?;
            tracing::warn!(request = ?feedback.request, detail = %feedback.detail, ended, "notice bounced for good; the address is suppressed");
            Ok(FeedbackOutcome::Bounced)
        }
        _ => {
            let ended = s.opt_out(&contact, OptOutVia::Complaint, now).await?;
            tracing::warn!(request = ?feedback.request, detail = %feedback.detail, ended, "notice marked as spam; the contact is opted out for good");
            Ok(FeedbackOutcome::Complained)
        }
    }
}

/// Counts a bounce or complaint in the day's mail figures, and alerts the
/// team once per kind and day when the day nears SES's review thresholds.
async fn count_and_warn(
    s: &Services,
    add: MailDay,
    now: restock_core::Millis,
) -> Result<(), AppError> {
    let day = day_of(now);
    let totals = s.store.count_mail(&day, add).await?;
    for warning in totals.warnings() {
        // Once per kind and day.
        let key = format!("mail-health:{}:{day}", warning.as_str());
        if !s
            .store
            .rate_limit(&key, 1, 86_400_000, now)
            .await?
            .is_limited()
        {
            tracing::error!(
                warning = warning.as_str(),
                ?totals,
                "mail health near SES's review threshold"
            );
            s.alert(alerts::mail_health(warning, &day, &totals)).await;
        }
    }
    Ok(())
}

/// Applies one entry of SNS's SMS delivery status log (`message`, the log
/// event's text). The number is keyed with the contact pepper, so its
/// requests are found without storing any message id.
///
/// # Errors
/// Store or secret failures (the subscription retries the batch).
pub async fn handle_sms(s: &Services, message: &str) -> Result<FeedbackOutcome, AppError> {
    let failure = match parse_sms_log(message) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(FeedbackOutcome::Noted),
        Err(e) => {
            tracing::warn!(error = %e, "SMS delivery log entry unreadable; dropped");
            return Ok(FeedbackOutcome::Unreadable {
                reason: e.to_string(),
            });
        }
    };
    let now = s.clock.now_ms();
    let number = Contact::Sms(failure.destination.clone());
    if failure.kind == SmsFailureKind::Transient {
        tracing::info!(to = %number.masked(), detail = %failure.detail, "text not delivered for now; counted only");
        return Ok(FeedbackOutcome::Noted);
    }
    if s.store
        .rate_limit(
            &format!("feedback:sms:{}", failure.message_id),
            1,
            SEEN_FOR_MS,
            now,
        )
        .await?
        .is_limited()
    {
        return Ok(FeedbackOutcome::Duplicate);
    }
    match failure.kind {
        SmsFailureKind::Sender => {
            let day = day_of(now);
            tracing::error!(detail = %failure.detail, "texts refused: the account's SMS spending limit");
            if !s
                .store
                .rate_limit(&format!("sms-spend:{day}"), 1, 86_400_000, now)
                .await?
                .is_limited()
            {
                s.alert(alerts::sms_spending_limit(&day, &failure.detail))
                    .await;
            }
            Ok(FeedbackOutcome::SenderAlerted)
        }
        kind => {
            let secrets = s.keyring.keys().await?;
            let via = if kind == SmsFailureKind::OptedOut {
                OptOutVia::Carrier
            } else {
                OptOutVia::Undeliverable
            };
            let ended = s
                .opt_out(&number.key(&secrets.contact_pepper), via, now)
                .await?;
            if kind == SmsFailureKind::OptedOut {
                tracing::warn!(to = %number.masked(), ended, "number opted out of texts; opted out for good");
                Ok(FeedbackOutcome::OptedOut)
            } else {
                tracing::warn!(to = %number.masked(), detail = %failure.detail, ended, "text undeliverable for good; the number is suppressed");
                Ok(FeedbackOutcome::Undeliverable)
            }
        }
    }
}
