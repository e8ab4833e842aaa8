//! Feedback from the mail provider (SES event publishing through the
//! notices' configuration set to EventBridge, which invokes the sweep
//! function): a permanent bounce ends its offer as undeliverable (the unit
//! passes on) and the address is not mailed again; a complaint is an opt-out
//! for good (I5); a soft bounce or anything else changes nothing. Each event
//! is applied once (EventBridge may deliver one twice).

use restock_core::feedback::{FeedbackKind, MailDay, day_of, parse_ses_event};
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
    let acts = matches!(
        feedback.kind,
        FeedbackKind::PermanentBounce | FeedbackKind::Complaint
    );
    if !acts {
        tracing::info!(kind = ?feedback.kind, detail = %feedback.detail, "mail feedback noted");
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
            let ended = s.store.opt_out_contact(&contact, now).await?;
            tracing::warn!(request = ?feedback.request, detail = %feedback.detail, ended, "notice bounced for good; the address is suppressed");
            Ok(FeedbackOutcome::Bounced)
        }
        _ => {
            let ended = s.store.opt_out_contact(&contact, now).await?;
            tracing::warn!(request = ?feedback.request, detail = %feedback.detail, ended, "notice marked as spam; the contact is opted out for good");
            Ok(FeedbackOutcome::Complained)
        }
    }
}
