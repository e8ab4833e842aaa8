//! The notify Lambda function: wiring only. It is invoked by the table's
//! stream (filtered to wake records) and answers with batch item failures;
//! the handler is `restock_aws::stream::handle` (decoding) over
//! `restock_app::notify::handle_wakes`.

use std::sync::Arc;

use aws_lambda_events::event::dynamodb::Event;
use lambda_runtime::{LambdaEvent, service_fn};
use restock_aws::wiring::{Config, Function, services};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::tracing::init_default_subscriber();
    let config = Config::from_env(Function::Notify)?;
    let services = Arc::new(services(&config).await);
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Event>| {
        let services = services.clone();
        async move {
            Ok::<_, lambda_runtime::Error>(
                restock_aws::stream::handle(&services, event.payload).await,
            )
        }
    }))
    .await
}
