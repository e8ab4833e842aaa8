//! The sweep Lambda function: wiring only. EventBridge invokes it every
//! minute; the handler is `restock_app::sweep::run`. A store failure is
//! returned as an error so the schedule's retry policy tries again.

use std::sync::Arc;

use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use lambda_runtime::{LambdaEvent, service_fn};
use restock_app::sweep::{self, DEFAULT_LIMIT};
use restock_aws::wiring::{Config, Function, services};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::tracing::init_default_subscriber();
    let config = Config::from_env(Function::Sweep)?;
    let services = Arc::new(services(&config).await);
    lambda_runtime::run(service_fn(
        move |_event: LambdaEvent<EventBridgeEvent<serde_json::Value>>| {
            let services = services.clone();
            async move {
                sweep::run(&services, DEFAULT_LIMIT)
                    .await
                    .map_err(lambda_runtime::Error::from)
            }
        },
    ))
    .await
}
