//! The notify Lambda function: wiring only. It is invoked by the table's
//! stream (filtered to wake records) and answers with batch item failures;
//! the handler is `restock_aws::stream::handle_until` (decoding) over
//! `restock_app::notify::handle_wakes_until`, within the invocation's deadline.

use std::sync::Arc;

use aws_lambda_events::event::dynamodb::Event;
use lambda_runtime::{LambdaEvent, service_fn};
use restock_aws::wiring::{Config, Function, services};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::tracing::init_default_subscriber();
    let config = Config::from_env(Function::Notify)?;
    let metrics = restock_aws::wiring::metrics(&config)?;
    let services = Arc::new(services(&config).await);
    // Each invocation's metrics are flushed as it ends.
    metrics_cloudwatch_embedded::lambda::service::run(
        metrics,
        service_fn(move |event: LambdaEvent<Event>| {
            let services = services.clone();
            async move {
                // The invocation's own deadline: a pass never sends past it.
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                let left =
                    std::time::Duration::from_millis(event.context.deadline.saturating_sub(now_ms));
                let deadline = std::time::Instant::now() + left;
                Ok::<_, lambda_runtime::Error>(
                    restock_aws::stream::handle_until(&services, event.payload, deadline).await,
                )
            }
        }),
    )
    .await
}
