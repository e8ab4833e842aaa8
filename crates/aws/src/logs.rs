//! SNS's SMS delivery status logs, as a CloudWatch Logs subscription
//! delivers them to the sweep function: `{"awslogs": {"data": …}}`, base64 of
//! gzip of a batch of log events. Each event's text is one delivery status
//! entry, read by `restock_app::feedback::handle_sms`.

use aws_lambda_events::event::cloudwatch_logs::LogsEvent;
use restock_app::feedback::{FeedbackOutcome, handle_sms};
use restock_app::{AppError, Services};

/// Whether `event` is a CloudWatch Logs subscription delivery.
pub fn is_logs_event(event: &serde_json::Value) -> bool {
    event.get("awslogs").is_some()
}

/// The log events' texts, in order.
///
/// # Errors
/// When the payload is not a subscription delivery (bad base64 or gzip).
pub fn decode(event: serde_json::Value) -> Result<Vec<String>, serde_json::Error> {
    // Read from text: the payload's fields are borrowed while decoding.
    let event: LogsEvent = serde_json::from_str(&event.to_string())?;
    if event.aws_logs.data.message_type == "CONTROL_MESSAGE" {
        // CloudWatch Logs checks the destination is reachable: nothing to read.
        return Ok(Vec::new());
    }
    Ok(event
        .aws_logs
        .data
        .log_events
        .into_iter()
        .map(|e| e.message)
        .collect())
}

/// Applies every entry of a delivery. An unreadable delivery is logged and
/// dropped (delivering it again would not make it readable).
///
/// # Errors
/// Store or secret failures: Lambda's asynchronous retry delivers the batch
/// again, and entries already applied are recognised as duplicates.
pub async fn handle(
    s: &Services,
    event: serde_json::Value,
) -> Result<Vec<FeedbackOutcome>, AppError> {
    let messages = match decode(event) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!(error = %e, "not a CloudWatch Logs subscription delivery; dropped");
            return Ok(vec![FeedbackOutcome::Unreadable {
                reason: e.to_string(),
            }]);
        }
    };
    let mut outcomes = Vec::with_capacity(messages.len());
    for message in &messages {
        outcomes.push(handle_sms(s, message).await?);
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subscription_delivery_is_unpacked_into_its_entries() {
        let event: serde_json::Value =
            serde_json::from_str(include_str!("../../../events/sweep-sms-failure.json")).unwrap();
        assert!(is_logs_event(&event));
        let messages = decode(event).unwrap();
        assert_eq!(messages.len(), 1);
        assert!(
            messages[0].contains("\"status\":\"FAILURE\""),
            "{messages:?}"
        );
        assert!(decode(serde_json::json!({"awslogs": {"data": "bm90IGd6aXA="}})).is_err());
        assert!(!is_logs_event(&serde_json::json!({"source": "aws.events"})));
    }
}
