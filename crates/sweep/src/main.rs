//! The sweep Lambda function: wiring only. EventBridge invokes it every
//! minute (the handler is `restock_app::sweep::run`); on a second rule,
//! every 15 minutes with the constant input `{"restock": "pull"}` (the stock
//! pull and webhook-silence check, `restock_app::pull::run`); and on a third
//! with SES's bounce and complaint events (`restock_app::feedback::handle`);
//! on a fourth with the erasures detect hands on, and a shop erasure's next
//! pages it hands itself (`source: restock.privacy`,
//! `restock_app::privacy::erase`); by a CloudWatch Logs subscription with SNS's failed-text log entries
//! (`restock_aws::logs::handle`); and by the `InboundTexts` topic with the
//! texts shoppers send back (`restock_app::inbound::read`).
//! A store failure is returned as an error so EventBridge tries again.

use std::sync::Arc;

use lambda_runtime::{LambdaEvent, service_fn};
use restock_app::privacy::{self, Erasure};
use restock_app::sweep::{self, DEFAULT_LIMIT};
use restock_app::{AppError, Services, feedback, inbound, pull};
use restock_aws::logs;
use restock_aws::wiring::{Config, Function, services};
use serde::Deserialize;

/// What one invocation carries, and so which job it is.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(from = "Wire")]
enum SweepEvent {
    /// The minute rule's scheduled event (or anything else): the sweep.
    Sweep,
    /// The pull rule's constant input `{"restock": "pull"}`: the stock pull
    /// and the webhook-silence check.
    Pull,
    /// SES's bounce or complaint (EventBridge, `source: aws.ses`): its `detail`.
    Ses(serde_json::Value),
    /// SNS's failed-text log entries from a CloudWatch Logs subscription
    /// (`{"awslogs": {"data": …}}`).
    Logs(serde_json::Value),
    /// An erasure detect (or a shop erasure's last run) handed on (the stack's bus, `source:
    /// restock.privacy`): its `detail`.
    Erase(Erasure),
    /// Texts shoppers sent back (SNS records from the `InboundTexts`
    /// topic): each record's message.
    Inbound(Vec<String>),
}

/// The shapes the five sources send, told apart by their fields.
#[derive(Deserialize)]
#[serde(untagged)]
enum Wire {
    Logs {
        awslogs: serde_json::Value,
    },
    Erase {
        #[serde(rename = "source")]
        _source: ErasureSource,
        detail: Erasure,
    },
    Ses {
        #[serde(rename = "source")]
        _source: SesSource,
        detail: serde_json::Value,
    },
    Pull {
        #[serde(rename = "restock")]
        _restock: PullInput,
    },
    Inbound {
        #[serde(rename = "Records")]
        records: Vec<SnsRecord>,
    },
    Other(serde::de::IgnoredAny),
}

/// One record of SNS's event for Lambda.
#[derive(Deserialize)]
struct SnsRecord {
    #[serde(rename = "EventSource")]
    _source: SnsEventSource,
    #[serde(rename = "Sns")]
    sns: SnsMessage,
}

#[derive(Deserialize)]
struct SnsMessage {
    #[serde(rename = "Message")]
    message: String,
}

#[derive(Deserialize)]
enum SnsEventSource {
    #[serde(rename = "aws:sns")]
    Sns,
}

#[derive(Deserialize)]
enum SesSource {
    #[serde(rename = "aws.ses")]
    Ses,
}

#[derive(Deserialize)]
enum ErasureSource {
    #[serde(rename = "restock.privacy")]
    Privacy,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum PullInput {
    Pull,
}

impl From<Wire> for SweepEvent {
    fn from(wire: Wire) -> Self {
        match wire {
            Wire::Logs { awslogs } => Self::Logs(serde_json::json!({ "awslogs": awslogs })),
            Wire::Erase { detail, .. } => Self::Erase(detail),
            Wire::Ses { detail, .. } => Self::Ses(detail),
            Wire::Pull { .. } => Self::Pull,
            Wire::Inbound { records } => {
                Self::Inbound(records.into_iter().map(|r| r.sns.message).collect())
            }
            Wire::Other(_) => Self::Sweep,
        }
    }
}

async fn handle(services: &Services, event: SweepEvent) -> Result<serde_json::Value, AppError> {
    let report = match event {
        SweepEvent::Logs(event) => serde_json::to_value(logs::handle(services, event).await?),
        SweepEvent::Ses(detail) => serde_json::to_value(feedback::handle(services, &detail).await?),
        SweepEvent::Pull => serde_json::to_value(pull::run(services).await?),
        SweepEvent::Erase(erasure) => {
            let erased = privacy::erase(services, &erasure).await?;
            Ok(serde_json::json!({ "erased": erased }))
        }
        SweepEvent::Inbound(messages) => {
            serde_json::to_value(inbound::read(services, &messages).await?)
        }
        SweepEvent::Sweep => serde_json::to_value(sweep::run(services, DEFAULT_LIMIT).await?),
    };
    Ok(report.expect("reports serialise"))
}

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::tracing::init_default_subscriber();
    let config = Config::from_env(Function::Sweep)?;
    let metrics = restock_aws::wiring::metrics(&config)?;
    let services = Arc::new(services(&config).await);
    // Each invocation's metrics are flushed as it ends.
    metrics_cloudwatch_embedded::lambda::service::run(
        metrics,
        service_fn(move |event: LambdaEvent<SweepEvent>| {
            let services = services.clone();
            async move {
                handle(&services, event.payload)
                    .await
                    .map_err(lambda_runtime::Error::from)
            }
        }),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> SweepEvent {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn each_source_s_event_is_its_own_job() {
        assert_eq!(read(r#"{"restock": "pull"}"#), SweepEvent::Pull);
        assert_eq!(
            read(include_str!("../../../events/sweep-schedule.json")),
            SweepEvent::Sweep
        );
        assert!(matches!(
            read(include_str!("../../../events/sweep-ses-bounce.json")),
            SweepEvent::Ses(detail) if detail["eventType"] == "Bounce"
        ));
        let SweepEvent::Logs(texts) = read(include_str!("../../../events/sweep-sms-failure.json"))
        else {
            panic!("a logs delivery")
        };
        assert!(logs::is_logs_event(&texts));
        assert!(matches!(
            read(include_str!("../../../events/sweep-erasure.json")),
            SweepEvent::Erase(Erasure { contact_keys, customer_id: Some(191_167), shop: None }) if contact_keys.len() == 2
        ));
        assert!(matches!(
            read(include_str!("../../../events/sweep-inbound-text.json")),
            SweepEvent::Inbound(messages) if messages.len() == 1 && messages[0].contains("Unsubscribe")
        ));
        // Another input to the pull rule, or another source: the sweep.
        assert_eq!(read(r#"{"restock": "other"}"#), SweepEvent::Sweep);
        assert_eq!(
            read(r#"{"source": "aws.events", "detail": {}}"#),
            SweepEvent::Sweep
        );
    }
}
