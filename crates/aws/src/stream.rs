//! The DynamoDB stream, decoded: notify's trigger delivers records of the
//! table (filtered in `template.yaml` to wake records); this turns them into
//! the SKUs woken, runs notify's handler, and answers Lambda with the
//! records to retry as batch item failures.

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use restock_app::Services;
use restock_app::notify::{Woken, handle_wakes_until};
use restock_core::Sku;
use restock_store_dynamo::attr;
use restock_store_dynamo::table::WAKE_PK_PREFIX;

/// The SKU a record wakes, if it is a wake record (anything else is ignored).
fn woken_sku(record: &EventRecord) -> Option<Sku> {
    // The image in DynamoDB's JSON shape: `{"pk": {"S": "WAKE#..."}, ...}`.
    let image = serde_json::to_value(&record.change.new_image).unwrap_or_default();
    let text = |name: &str| image.get(name)?.get("S")?.as_str().map(str::to_owned);
    text(attr::PK)
        .filter(|pk| pk.starts_with(WAKE_PK_PREFIX))
        .and(text(attr::SKU))
        .and_then(|sku| Sku::try_from(sku.as_str()).ok())
}

/// The SKUs a batch wakes, each once, in the order first seen, with the
/// sequence numbers of the records that woke it.
pub fn decode(event: &Event) -> Vec<Woken> {
    let mut woken: Vec<Woken> = Vec::new();
    for record in &event.records {
        let Some(sku) = woken_sku(record) else {
            tracing::debug!(event = %record.event_name, "not a wake record; ignored");
            continue;
        };
        let sequence = record.change.sequence_number.clone().unwrap_or_default();
        match woken.iter_mut().find(|w| w.sku == sku) {
            Some(w) => w.records.push(sequence),
            None => woken.push(Woken {
                sku,
                records: vec![sequence],
            }),
        }
    }
    woken
}

/// notify's Lambda handler: one notify pass per SKU woken; the records of a
/// failed pass come back as batch item failures, so Lambda retries them.
pub async fn handle(services: &Services, event: Event) -> DynamoDbEventResponse {
    handle_until(
        services,
        event,
        std::time::Instant::now() + restock_app::notify::DEFAULT_BUDGET,
    )
    .await
}

/// [`handle`] within the invocation's deadline: a pass that would send past
/// it hands the rest to the next pass.
pub async fn handle_until(
    services: &Services,
    event: Event,
    deadline: std::time::Instant,
) -> DynamoDbEventResponse {
    let retry = handle_wakes_until(services, decode(&event), deadline).await;
    let mut response = DynamoDbEventResponse::default();
    for sequence in retry {
        let mut failure = DynamoDbBatchItemFailure::default();
        failure.item_identifier = Some(sequence);
        response.batch_item_failures.push(failure);
    }
    response
}
