//! The DynamoDB stream, decoded: notify's two subscriptions deliver records
//! of the table (filtered in `template.yaml`: wake records; and the writes
//! of requests, stock states and the sender's pause). This turns wakes into
//! the SKUs woken and runs notify's passes, turns the other records into
//! restock's events and publishes them, and answers Lambda with the records
//! to retry as batch item failures.

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use restock_app::Services;
use restock_app::events::{self, Changed};
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

/// The events a batch's other records carry: each record's write read by
/// the store ([`restock_store_dynamo::events`]); wakes and writes that are
/// no event carry none. A record the store cannot read is logged and left:
/// delivering it again would not make it readable.
pub fn changes(event: &Event) -> Vec<Changed> {
    let mut changed = Vec::new();
    for record in &event.records {
        if woken_sku(record).is_some() {
            continue;
        }
        let image = |i: &serde_dynamo::Item| serde_json::to_value(i).unwrap_or_default();
        let (old, new) = (
            image(&record.change.old_image),
            image(&record.change.new_image),
        );
        match restock_store_dynamo::events::decode_images(Some(&old), Some(&new)) {
            Ok(events) if events.is_empty() => {}
            Ok(events) => changed.push(Changed {
                record: record.event_id.clone(),
                sequence: record.change.sequence_number.clone().unwrap_or_default(),
                at_ms: record
                    .change
                    .approximate_creation_date_time
                    .timestamp_millis(),
                events,
            }),
            Err(e) => {
                tracing::error!(error = %e, record = %record.event_id, "a stream record's item is unreadable; no event")
            }
        }
    }
    changed
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
    let mut retry = handle_wakes_until(services, decode(&event), deadline).await;
    retry.extend(events::publish(services, changes(&event)).await);
    let mut response = DynamoDbEventResponse::default();
    for sequence in retry {
        let mut failure = DynamoDbBatchItemFailure::default();
        failure.item_identifier = Some(sequence);
        response.batch_item_failures.push(failure);
    }
    response
}
