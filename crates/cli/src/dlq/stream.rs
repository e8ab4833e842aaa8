//! A notify batch read back from the table's stream (kept 24 hours): its
//! wake records woken again, its events published again with the ids
//! notify gave them; a batch the stream no longer has wakes every item
//! someone waits for.

use std::sync::Arc;

use restock_app::admin::{Admin, Command};
use restock_app::events::published;
use restock_app::ports::EventSink;
use serde_json::{Value, json};

use crate::stack::Deployed;

/// A batch's records, read back from the table's stream, in DynamoDB's JSON
/// shape (`{"eventID", "dynamodb": {"Keys", "NewImage", "OldImage", …}}`).
pub(super) async fn read_batch(
    sdk: &aws_config::SdkConfig,
    arn: &str,
    shard: &str,
    start: &str,
    end: &str,
) -> Result<Vec<Value>, String> {
    use aws_sdk_dynamodbstreams::types::ShardIteratorType;
    let streams = aws_sdk_dynamodbstreams::Client::new(sdk);
    let mut iterator = streams
        .get_shard_iterator()
        .stream_arn(arn)
        .shard_id(shard)
        .shard_iterator_type(ShardIteratorType::AtSequenceNumber)
        .sequence_number(start)
        .send()
        .await
        .map_err(|e| crate::output::aws_said(&e))?
        .shard_iterator
        .ok_or("no shard iterator")?;
    let last: u128 = end
        .parse()
        .map_err(|_| format!("`{end}` is not a sequence number"))?;
    let mut records = Vec::new();
    for _ in 0..1_000 {
        let page = streams
            .get_records()
            .shard_iterator(&iterator)
            .send()
            .await
            .map_err(|e| crate::output::aws_said(&e))?;
        for record in page.records() {
            let change = record.dynamodb();
            let sequence: u128 = change
                .and_then(|c| c.sequence_number())
                .and_then(|s| s.parse().ok())
                .unwrap_or(u128::MAX);
            if sequence > last {
                return Ok(records);
            }
            let image = |m: Option<
                &std::collections::HashMap<String, aws_sdk_dynamodbstreams::types::AttributeValue>,
            >| {
                Value::Object(
                    m.into_iter()
                        .flatten()
                        .map(|(k, v)| (k.clone(), attribute(v)))
                        .collect(),
                )
            };
            records.push(json!({
                "eventID": record.event_id(),
                "at_ms": change
                    .and_then(|c| c.approximate_creation_date_time())
                    .map_or(0, |t| t.to_millis().unwrap_or_default()),
                "NewImage": image(change.and_then(|c| c.new_image())),
                "OldImage": image(change.and_then(|c| c.old_image())),
            }));
        }
        match page.next_shard_iterator() {
            Some(next) if !page.records().is_empty() || records.is_empty() => {
                iterator = next.to_owned();
            }
            _ => break,
        }
    }
    Ok(records)
}

/// A stream attribute in DynamoDB's JSON shape (`{"S": "…"}`).
fn attribute(value: &aws_sdk_dynamodbstreams::types::AttributeValue) -> Value {
    use aws_sdk_dynamodbstreams::types::AttributeValue as A;
    match value {
        A::S(s) => json!({ "S": s }),
        A::N(n) => json!({ "N": n }),
        A::Bool(b) => json!({ "BOOL": b }),
        A::Null(_) => json!({ "NULL": true }),
        A::Ss(v) => json!({ "SS": v }),
        A::Ns(v) => json!({ "NS": v }),
        A::B(b) => {
            use base64::Engine;
            json!({ "B": base64::engine::general_purpose::STANDARD.encode(b.as_ref()) })
        }
        A::Bs(v) => {
            use base64::Engine;
            let all: Vec<String> = v
                .iter()
                .map(|b| base64::engine::general_purpose::STANDARD.encode(b.as_ref()))
                .collect();
            json!({ "BS": all })
        }
        A::L(list) => json!({ "L": list.iter().map(attribute).collect::<Vec<_>>() }),
        A::M(map) => json!({
            "M": map.iter().map(|(k, v)| (k.clone(), attribute(v))).collect::<serde_json::Map<_, _>>()
        }),
        _ => Value::Null,
    }
}

/// A batch read back: its wakes woken again, its events published again
/// with the ids notify gives them.
pub(super) async fn redo_batch(
    sdk: &aws_config::SdkConfig,
    deployed: &Deployed,
    admin: &Admin,
    records: &[Value],
    now_ms: i64,
) -> Result<String, String> {
    let (skus, events) = wakes_and_events(records, now_ms)?;
    let (events, gone) = still_held(admin, events).await?;
    let mut said = Vec::new();
    if !skus.is_empty() {
        said.push(format!("woke {}", rewake(admin, skus, now_ms).await?));
    }
    if gone > 0 {
        said.push(format!(
            "left out {gone} events of requests no longer in the table (forgotten or erased: their details are not published again)"
        ));
    }
    if !events.is_empty() {
        said.push(publish_again(sdk, deployed, admin, &events).await?);
    }
    if said.is_empty() {
        said.push("its records needed nothing done again".into());
    }
    Ok(said.join("; "))
}

/// An event of a batch, with the id and time notify gave it.
type BatchEvent = (String, i64, restock_store::Event);

/// What a batch's records name: the items its wake records wake, and the
/// events its other records make, each with the id notify gives it.
fn wakes_and_events(
    records: &[Value],
    now_ms: i64,
) -> Result<(Vec<restock_core::Sku>, Vec<BatchEvent>), String> {
    use restock_store_dynamo::{attr, table::WAKE_PK_PREFIX};
    let mut skus: Vec<restock_core::Sku> = Vec::new();
    let mut events = Vec::new();
    for record in records {
        let new = &record["NewImage"];
        let text = |name: &str| new[name]["S"].as_str();
        if text(attr::PK).is_some_and(|pk| pk.starts_with(WAKE_PK_PREFIX)) {
            if let Some(sku) = text(attr::SKU).and_then(|s| restock_core::Sku::try_from(s).ok())
                && !skus.contains(&sku)
            {
                skus.push(sku);
            }
            continue;
        }
        let decoded =
            restock_store_dynamo::events::decode_images(Some(&record["OldImage"]), Some(new))
                .map_err(|e| e.to_string())?;
        let id = record["eventID"].as_str().unwrap_or_default();
        let at_ms = record["at_ms"].as_i64().unwrap_or(now_ms);
        events.extend(
            decoded
                .iter()
                .enumerate()
                .map(|(n, e)| (format!("{id}-{n}"), at_ms, e.clone())),
        );
    }
    Ok((skus, events))
}

/// The events whose shopper's request is still in the table, and how many
/// were left out: a stream image keeps a request's contact details after
/// `restock forget` erased it, and those must not reach the bus or Klaviyo
/// again.
async fn still_held(
    admin: &Admin,
    events: Vec<BatchEvent>,
) -> Result<(Vec<BatchEvent>, usize), String> {
    let mut kept = Vec::with_capacity(events.len());
    let mut gone = 0;
    for event in events {
        let held = match event.2.request() {
            Some(r) => admin
                .store
                .request(&r.id)
                .await
                .map_err(|e| e.to_string())?
                .is_some(),
            None => true,
        };
        if held {
            kept.push(event);
        } else {
            gone += 1;
        }
    }
    Ok((kept, gone))
}

/// A batch's events on the stack's bus again (and to Klaviyo where the
/// stack hands them on), as notify publishes them.
async fn publish_again(
    sdk: &aws_config::SdkConfig,
    deployed: &Deployed,
    admin: &Admin,
    events: &[BatchEvent],
) -> Result<String, String> {
    let bus = deployed
        .event_bus
        .as_deref()
        .ok_or("the stack has no EventBusName output")?;
    let include_contact = admin
        .store
        .settings()
        .await
        .map_err(|e| e.to_string())?
        .is_some_and(|s| s.events_include_contact);
    let out: Vec<_> = events
        .iter()
        .map(|(id, at, e)| published(e, id, *at, include_contact))
        .collect();
    let mut sink: Arc<dyn EventSink> = Arc::new(restock_aws::EventBridgeSink::new(
        aws_sdk_eventbridge::Client::new(sdk),
        bus.into(),
    ));
    if deployed.klaviyo {
        // As notify hands them on: to Klaviyo too, with the stack's key.
        sink = Arc::new(restock_aws::klaviyo::KlaviyoSink::new(
            sink,
            Arc::new(restock_aws::SecretsKeyring::new(
                aws_sdk_secretsmanager::Client::new(sdk),
                deployed.stack.keys_secret.clone(),
            )),
        ));
    }
    let taken = sink.publish(&out).await.map_err(|e| e.to_string())?;
    if taken.iter().any(|t| !t) {
        return Err(if deployed.klaviyo {
            "the bus or Klaviyo refused some of its events".into()
        } else {
            "the bus refused some of its events".into()
        });
    }
    Ok(format!(
        "published {} events again{}",
        out.len(),
        if deployed.klaviyo {
            " (to the bus and Klaviyo)"
        } else {
            ""
        }
    ))
}

/// Every item someone waits for, woken: what a lost batch may have named.
pub(super) async fn wake_everyone_waiting(admin: &Admin, now_ms: i64) -> Result<String, String> {
    let mut skus = Vec::new();
    for entry in admin.store.catalogue().await.map_err(|e| e.to_string())? {
        if admin
            .store
            .anyone_waiting(&entry.sku, entry.shards)
            .await
            .map_err(|e| e.to_string())?
        {
            skus.push(entry.sku);
        }
    }
    if skus.is_empty() {
        return Ok("nobody waits".into());
    }
    rewake(admin, skus, now_ms).await
}

/// The items woken again, as `restock rewake` wakes them; their names.
async fn rewake(
    admin: &Admin,
    skus: Vec<restock_core::Sku>,
    now_ms: i64,
) -> Result<String, String> {
    let names = skus
        .iter()
        .map(restock_core::Sku::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    admin
        .run(Command::Rewake { skus }, now_ms)
        .await
        .map_err(|e| e.to_string())?;
    Ok(names)
}
