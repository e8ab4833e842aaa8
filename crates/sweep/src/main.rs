//! The sweep Lambda function: wiring only. EventBridge invokes it every
//! minute (the handler is `restock_app::sweep::run`); on a second rule,
//! every 15 minutes with the constant input `{"restock": "pull"}` (the stock
//! pull and webhook-silence check, `restock_app::pull::run`); and on a third
//! with SES's bounce and complaint events (`restock_app::feedback::handle`);
//! and by a CloudWatch Logs subscription with SNS's failed-text log entries
//! (`restock_aws::logs::handle`).
//! A store failure is returned as an error so EventBridge tries again.

use std::sync::Arc;

use lambda_runtime::{LambdaEvent, service_fn};
use restock_app::sweep::{self, DEFAULT_LIMIT};
use restock_app::{AppError, Services, feedback, pull};
use restock_aws::logs;
use restock_aws::wiring::{Config, Function, services};

/// Which task an invocation asks for: the pull rule's constant input, or
/// anything else (the minute rule's scheduled event) for the sweep.
fn wants_pull(event: &serde_json::Value) -> bool {
    event.get("restock").and_then(serde_json::Value::as_str) == Some("pull")
}

/// Whether the event is SES's (bounces, complaints).
fn from_ses(event: &serde_json::Value) -> bool {
    event.get("source").and_then(serde_json::Value::as_str) == Some("aws.ses")
}

async fn handle(
    services: &Services,
    event: &serde_json::Value,
) -> Result<serde_json::Value, AppError> {
    let report = if logs::is_logs_event(event) {
        serde_json::to_value(logs::handle(services, event.clone()).await?)
    } else if from_ses(event) {
        serde_json::to_value(feedback::handle(services, &event["detail"]).await?)
    } else if wants_pull(event) {
        serde_json::to_value(pull::run(services).await?)
    } else {
        serde_json::to_value(sweep::run(services, DEFAULT_LIMIT).await?)
    };
    Ok(report.expect("reports serialise"))
}

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::tracing::init_default_subscriber();
    let config = Config::from_env(Function::Sweep)?;
    let services = Arc::new(services(&config).await);
    lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| {
        let services = services.clone();
        async move {
            handle(&services, &event.payload)
                .await
                .map_err(lambda_runtime::Error::from)
        }
    }))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pull_rule_input_asks_for_the_pull_and_the_minute_event_for_the_sweep() {
        assert!(wants_pull(&serde_json::json!({"restock": "pull"})));
        let scheduled: serde_json::Value =
            serde_json::from_str(include_str!("../../../events/sweep-schedule.json")).unwrap();
        assert!(!wants_pull(&scheduled));
        assert!(!from_ses(&scheduled));
        let bounce: serde_json::Value =
            serde_json::from_str(include_str!("../../../events/sweep-ses-bounce.json")).unwrap();
        assert!(from_ses(&bounce));
        let texts: serde_json::Value =
            serde_json::from_str(include_str!("../../../events/sweep-sms-failure.json")).unwrap();
        assert!(logs::is_logs_event(&texts) && !from_ses(&texts) && !wants_pull(&texts));
    }
}
