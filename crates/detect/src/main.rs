//! The detect Lambda function: wiring only. The router is
//! `restock_app::detect::router`; see that module for its routes.

use std::sync::Arc;

use restock_aws::wiring::{Config, Function, services};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    // JSON or text, and the level, as Lambda's logging settings say.
    lambda_http::tracing::init_default_subscriber();
    let config = Config::from_env(Function::Detect)?;
    let metrics = restock_aws::wiring::metrics(&config)?;
    let services = Arc::new(services(&config).await);
    // Each invocation's metrics are flushed as it ends.
    metrics_cloudwatch_embedded::lambda::service::run_http(
        metrics,
        restock_app::detect::router(services),
    )
    .await
}
