//! What the mail provider says after a send: SES event publishing records
//! (through a configuration set to EventBridge), read into the decision
//! restock takes. Every notice email carries tags naming its request, its
//! restock and its contact's key ([`tags`]), which come back in the event's
//! `mail.tags`, so no lookup by address or message id is needed.

use serde::Deserialize;

use crate::{ContactKey, RequestId};

/// Tag naming the request a notice was for.
pub const TAG_REQUEST: &str = "restock-request";
/// Tag naming the restock (episode) of the offer.
pub const TAG_RESTOCK: &str = "restock-restock";
/// Tag carrying the contact's keyed hash (never the address).
pub const TAG_CONTACT: &str = "restock-contact";

/// The tags a notice email is sent with.
pub fn tags(request: &RequestId, episode: u32, contact: &ContactKey) -> Vec<(String, String)> {
    vec![
        (TAG_REQUEST.to_owned(), request.to_string()),
        (TAG_RESTOCK.to_owned(), episode.to_string()),
        (TAG_CONTACT.to_owned(), contact.to_string()),
    ]
}

/// What an event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackKind {
    /// The address does not take mail, for good: the offer ends, the unit
    /// passes on, and the address is not mailed again.
    PermanentBounce,
    /// A soft bounce SES gave up on: counted only.
    TransientBounce,
    /// The shopper marked the notice as spam: an opt-out for good (I5).
    Complaint,
    /// Anything else (a delivery, a send): counted only where it matters.
    Other,
}

/// One provider event about one notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feedback {
    /// What it says.
    pub kind: FeedbackKind,
    /// Unique per event (for deduplicating redeliveries).
    pub id: String,
    /// The request, from the notice's tags.
    pub request: Option<RequestId>,
    /// The offer's restock, from the tags.
    pub episode: Option<u32>,
    /// The contact's key, from the tags.
    pub contact: Option<ContactKey>,
    /// The provider's words (bounce subtype, complaint feedback type).
    pub detail: String,
}

/// Why an event could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an SES event record: {0}")]
pub struct FeedbackError(String);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(alias = "notificationType")]
    event_type: String,
    mail: Mail,
    #[serde(default)]
    bounce: Option<Bounce>,
    #[serde(default)]
    complaint: Option<Complaint>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Mail {
    message_id: String,
    #[serde(default)]
    tags: std::collections::HashMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Bounce {
    bounce_type: String,
    #[serde(default)]
    bounce_sub_type: String,
    #[serde(default)]
    feedback_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Complaint {
    #[serde(default)]
    complaint_feedback_type: Option<String>,
    #[serde(default)]
    feedback_id: Option<String>,
}

/// Reads an SES event record (the EventBridge event's `detail`, or the
/// message of an SNS destination).
///
/// # Errors
/// [`FeedbackError`] when it is not one.
pub fn parse_ses_event(detail: &serde_json::Value) -> Result<Feedback, FeedbackError> {
    let record = Record::deserialize(detail).map_err(|e| FeedbackError(e.to_string()))?;
    let tag = |name: &str| record.mail.tags.get(name).and_then(|v| v.first()).cloned();
    let (kind, feedback_id, detail) = match (
        record.event_type.as_str(),
        &record.bounce,
        &record.complaint,
    ) {
        ("Bounce", Some(b), _) => (
            if b.bounce_type == "Permanent" {
                FeedbackKind::PermanentBounce
            } else {
                FeedbackKind::TransientBounce
            },
            b.feedback_id.clone(),
            format!("{} bounce ({})", b.bounce_type, b.bounce_sub_type),
        ),
        ("Complaint", _, Some(c)) => (
            FeedbackKind::Complaint,
            c.feedback_id.clone(),
            format!(
                "complaint ({})",
                c.complaint_feedback_type.as_deref().unwrap_or("not given")
            ),
        ),
        (other, _, _) => (FeedbackKind::Other, None, other.to_owned()),
    };
    Ok(Feedback {
        kind,
        id: feedback_id
            .unwrap_or_else(|| format!("{}:{}", record.mail.message_id, record.event_type)),
        request: tag(TAG_REQUEST).and_then(|v| v.parse().ok()),
        episode: tag(TAG_RESTOCK).and_then(|v| v.parse().ok()),
        contact: tag(TAG_CONTACT).map(ContactKey::from_stored),
        detail,
    })
}

/// What an SNS SMS delivery status log entry says about one text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmsFailureKind {
    /// The number cannot take texts (invalid, not a mobile, or it blocks
    /// SMS): it is not texted again, and its live offers end.
    Permanent,
    /// The recipient opted out at the carrier or at SNS: an opt-out for good (I5).
    OptedOut,
    /// About the account, not the number (the monthly SMS spending limit):
    /// the team is told.
    Sender,
    /// Unreachable for now, or SNS does not say: counted only.
    Transient,
}

/// One failed text, from SNS's `DirectPublishToPhoneNumber/Failure` log group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmsFailure {
    /// What it says.
    pub kind: SmsFailureKind,
    /// SNS's message id (unique per text: deduplicates redeliveries).
    pub message_id: String,
    /// The number it was sent to (unmasked: only to compute its contact key).
    pub destination: crate::Phone,
    /// SNS's words (`providerResponse`).
    pub detail: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SmsLog {
    notification: SmsNotification,
    delivery: SmsDelivery,
    status: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SmsNotification {
    message_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SmsDelivery {
    destination: String,
    #[serde(default)]
    provider_response: String,
}

/// Classes SNS's `providerResponse` for a failed text.
pub fn sms_failure_kind(provider_response: &str) -> SmsFailureKind {
    let r = provider_response.to_ascii_lowercase();
    if r.contains("opted out") {
        SmsFailureKind::OptedOut
    } else if r.contains("max price") || r.contains("spend") {
        SmsFailureKind::Sender
    } else if r.contains("invalid phone number")
        || r.contains("phone has blocked sms")
        || r.contains("blocked list")
        || r.contains("not a mobile")
        || r.contains("unsupported destination")
    {
        SmsFailureKind::Permanent
    } else {
        // "Phone is currently unreachable/unavailable", "Unknown error
        // attempting to reach phone", "Phone carrier has blocked this
        // message" (a carrier filter, about the text, not the number).
        SmsFailureKind::Transient
    }
}

/// Reads one log entry of SNS's SMS delivery status logs; `None` for a
/// success (the failure log group's filter lets only failures through, but
/// an entry from the success group is read without harm).
///
/// # Errors
/// [`FeedbackError`] when it is not such an entry or its number is not one.
pub fn parse_sms_log(message: &str) -> Result<Option<SmsFailure>, FeedbackError> {
    let log: SmsLog = serde_json::from_str(message).map_err(|e| FeedbackError(e.to_string()))?;
    if log.status != "FAILURE" {
        return Ok(None);
    }
    let destination = crate::Phone::parse(&log.delivery.destination)
        .map_err(|_| FeedbackError("the destination is not a phone number".into()))?;
    Ok(Some(SmsFailure {
        kind: sms_failure_kind(&log.delivery.provider_response),
        message_id: log.notification.message_id,
        destination,
        // The carrier's words may name the number: masked before they are
        // logged or kept.
        detail: crate::contact::mask_personal(&log.delivery.provider_response),
    }))
}

/// SES reviews an account near a 5% bounce rate; the team is told at 4%.
pub const BOUNCE_WARNING: f64 = 0.04;
/// SES reviews an account near a 0.1% complaint rate; the team is told at 0.08%.
pub const COMPLAINT_WARNING: f64 = 0.0008;
/// Rates over fewer sends than this in a day say little: no warning.
pub const MIN_SENT_FOR_RATES: u32 = 100;

/// One UTC day's mail figures (the sender's health).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MailDay {
    /// Notices accepted (emails by SES, texts by SNS).
    pub sent: u32,
    /// Of those, texts: SES's rates are over emails only.
    #[serde(default)]
    pub texts_sent: u32,
    /// Permanent bounces.
    pub bounced: u32,
    /// Complaints.
    pub complained: u32,
    /// Soft bounces SES gave up on (counted only).
    #[serde(default)]
    pub soft_bounced: u32,
    /// Confirmations sent (double opt-in).
    #[serde(default)]
    pub confirm_sent: u32,
    /// Sign-ups confirmed.
    #[serde(default)]
    pub confirmed: u32,
    /// Sign-ups never confirmed: ended, their contact details deleted.
    #[serde(default)]
    pub confirm_expired: u32,
    /// Stock deliveries for items not in the catalogue (a Shopify shop
    /// sends every product's): counted, the team told once per item a day.
    #[serde(default)]
    pub unknown_items: u32,
}

/// A rate near SES's review threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthWarning {
    /// Bounces at or above [`BOUNCE_WARNING`].
    Bounces,
    /// Complaints at or above [`COMPLAINT_WARNING`].
    Complaints,
}

impl HealthWarning {
    /// A name for keys and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bounces => "bounces",
            Self::Complaints => "complaints",
        }
    }
}

impl MailDay {
    /// Notice emails sent: what SES's rates are taken over.
    pub fn emails_sent(&self) -> u32 {
        self.sent.saturating_sub(self.texts_sent)
    }

    /// Bounces per notice email sent, once one was.
    pub fn bounce_rate(&self) -> Option<f64> {
        let emails = self.emails_sent();
        (emails > 0).then(|| f64::from(self.bounced) / f64::from(emails))
    }

    /// Complaints per notice email sent, once one was.
    pub fn complaint_rate(&self) -> Option<f64> {
        let emails = self.emails_sent();
        (emails > 0).then(|| f64::from(self.complained) / f64::from(emails))
    }

    /// The rates near SES's review thresholds, once the day has enough sends
    /// to say anything.
    pub fn warnings(&self) -> Vec<HealthWarning> {
        if self.emails_sent() < MIN_SENT_FOR_RATES {
            return Vec::new();
        }
        let mut out = Vec::new();
        if self.bounce_rate().is_some_and(|r| r >= BOUNCE_WARNING) {
            out.push(HealthWarning::Bounces);
        }
        if self
            .complaint_rate()
            .is_some_and(|r| r >= COMPLAINT_WARNING)
        {
            out.push(HealthWarning::Complaints);
        }
        out
    }
}

/// The UTC day of `ms`, `YYYY-MM-DD`: the key the day's figures are kept under.
pub fn day_of(ms: crate::Millis) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let d = at.date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounce(kind: &str) -> serde_json::Value {
        serde_json::json!({
            "eventType": "Bounce",
            "bounce": {
                "bounceType": kind, "bounceSubType": "General",
                "bouncedRecipients": [{"emailAddress": "recipient@example.com", "action": "failed", "status": "5.1.1", "diagnosticCode": "smtp; 550 5.1.1 user unknown"}],
                "timestamp": "2026-11-29T00:41:02.669Z",
                "feedbackId": "01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000000",
                "reportingMTA": "dsn; mta.example.com"
            },
            "mail": {
                "timestamp": "2026-11-29T00:40:02.012Z",
                "source": "Loom & Last <hello@loomandlast.co.uk>",
                "messageId": "EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000",
                "destination": ["recipient@example.com"],
                "tags": {
                    "ses:configuration-set": ["restock-notices"],
                    "restock-request": ["AAAAAAAAAAAAAAAAAAAAAA"],
                    "restock-restock": ["3"],
                    "restock-contact": ["k3y"]
                }
            }
        })
    }

    #[test]
    fn a_permanent_bounce_names_its_request_restock_and_contact_from_the_tags() {
        let f = parse_ses_event(&bounce("Permanent")).unwrap();
        assert_eq!(f.kind, FeedbackKind::PermanentBounce);
        assert_eq!(f.episode, Some(3));
        assert_eq!(f.contact, Some(ContactKey::from_stored("k3y")));
        assert_eq!(
            f.id,
            "01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000000"
        );
        assert_eq!(
            parse_ses_event(&bounce("Transient")).unwrap().kind,
            FeedbackKind::TransientBounce
        );
    }

    #[test]
    fn rates_warn_before_the_review_thresholds_and_only_on_enough_volume() {
        let day = |sent, bounced, complained| MailDay {
            sent,
            bounced,
            complained,
            ..MailDay::default()
        };
        assert!(day(99, 50, 50).warnings().is_empty(), "too few to say");
        assert!(day(1000, 39, 0).warnings().is_empty());
        assert_eq!(day(1000, 40, 0).warnings(), [HealthWarning::Bounces]);
        assert_eq!(day(10_000, 0, 8).warnings(), [HealthWarning::Complaints]);
        assert_eq!(day(0, 0, 0).bounce_rate(), None);
        // Texts are not SES's: 1,000 sent of which 900 texts is 100 emails,
        // and 4 bounces among them is 4%.
        let mostly_texts = MailDay {
            texts_sent: 900,
            ..day(1000, 4, 0)
        };
        assert_eq!(mostly_texts.bounce_rate(), Some(0.04));
        assert_eq!(mostly_texts.warnings(), [HealthWarning::Bounces]);
        let all_texts = MailDay {
            texts_sent: 1000,
            ..day(1000, 0, 0)
        };
        assert_eq!(
            (all_texts.bounce_rate(), all_texts.warnings()),
            (None, vec![])
        );
        assert_eq!(day_of(1_796_342_400_000), "2026-12-04");
        assert_eq!(day_of(1_796_342_400_000 - 1), "2026-12-03");
    }

    #[test]
    fn complaints_and_other_events_are_read_and_junk_is_refused() {
        let complaint = serde_json::json!({
            "eventType": "Complaint",
            "complaint": {"complainedRecipients": [{"emailAddress": "r@example.com"}], "timestamp": "2026-11-29T00:41:02Z", "feedbackId": "fb-1", "complaintFeedbackType": "abuse"},
            "mail": {"messageId": "m-1", "tags": {}}
        });
        let f = parse_ses_event(&complaint).unwrap();
        assert_eq!(
            (f.kind, f.request, f.detail.as_str()),
            (FeedbackKind::Complaint, None, "complaint (abuse)")
        );
        let delivery = serde_json::json!({"eventType": "Delivery", "mail": {"messageId": "m-2"}, "delivery": {}});
        assert_eq!(
            parse_ses_event(&delivery).unwrap().kind,
            FeedbackKind::Other
        );
        assert!(parse_ses_event(&serde_json::json!({"hello": 1})).is_err());
    }
    fn sms_log(status: &str, response: &str) -> String {
        serde_json::json!({
            "notification": {"messageId": "1077257a-92f3-5ca3-bc97-6a915b310625", "timestamp": "2026-11-29 00:40:34.559"},
            "delivery": {"mnc": 0, "destination": "+447911123456", "priceInUSD": 0.0395, "smsType": "Transactional", "mcc": 0, "providerResponse": response, "dwellTimeMs": 1420, "dwellTimeMsUntilDeviceAck": 1692},
            "status": status
        })
        .to_string()
    }

    #[test]
    fn sms_failures_are_classed_by_what_sns_says() {
        let f = parse_sms_log(&sms_log("FAILURE", "Invalid phone number"))
            .unwrap()
            .unwrap();
        assert_eq!(f.kind, SmsFailureKind::Permanent);
        assert_eq!(f.message_id, "1077257a-92f3-5ca3-bc97-6a915b310625");
        assert_eq!(f.destination.as_str(), "+447911123456");
        for (response, kind) in [
            ("Phone has blocked SMS", SmsFailureKind::Permanent),
            ("Phone is on a blocked list", SmsFailureKind::Permanent),
            ("Phone number is opted out", SmsFailureKind::OptedOut),
            (
                "This delivery would exceed max price",
                SmsFailureKind::Sender,
            ),
            (
                "Phone is currently unreachable/unavailable",
                SmsFailureKind::Transient,
            ),
            (
                "Unknown error attempting to reach phone",
                SmsFailureKind::Transient,
            ),
            (
                "Phone carrier has blocked this message",
                SmsFailureKind::Transient,
            ),
        ] {
            assert_eq!(sms_failure_kind(response), kind, "{response}");
        }
        assert_eq!(
            parse_sms_log(&sms_log(
                "SUCCESS",
                "Message has been accepted by phone carrier"
            )),
            Ok(None)
        );
        assert!(parse_sms_log("{}").is_err());
        assert!(
            parse_sms_log(&sms_log("FAILURE", "x").replace("+447911123456", "call me")).is_err()
        );
    }
}
