//! The capture Lambda function: wiring only. The router is
//! `restock_app::capture::router`; see that module for its routes.

use std::sync::Arc;

use restock_aws::wiring::{Config, Function, services};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    // JSON or text, and the level, as Lambda's logging settings say.
    lambda_http::tracing::init_default_subscriber();
    let config = Config::from_env(Function::Capture)?;
    let metrics = restock_aws::wiring::metrics(&config)?;
    let services = Arc::new(services(&config).await);
    // The caller's address comes from the Function URL's request context.
    let router = lambda_http::tower::ServiceBuilder::new()
        .map_request(restock_aws::http::with_client_addr)
        .service(restock_app::capture::router(services));
    // Each invocation's metrics are flushed as it ends.
    metrics_cloudwatch_embedded::lambda::service::run_http(metrics, router).await
}
