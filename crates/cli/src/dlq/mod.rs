//! `restock dlq list | redrive`: what waits in the stack's dead-letter
//! queue, by where it came from, and each thing done again where it can be.
//!
//! What lands there, and how each is read (docs/RUNBOOK.md#deadlettersalarm):
//! - a notify batch of the table's stream, as Lambda's on-failure
//!   destination writes it: only the batch's shard and sequence numbers. Its
//!   records are read back from the stream (kept 24 hours): wake records
//!   wake their items again (`rewake`), the other records' events go on the
//!   bus again with the ids notify gave them (consumers deduplicate). A
//!   batch the stream no longer has wakes every item someone waits for; its
//!   events, if it had any, are lost;
//! - a sweep invocation that failed every retry (its on-failure destination:
//!   the request it was given): the minute's sweep and a stock pull are
//!   done again by the next run; an SES bounce or complaint is applied now;
//! - an event a bus target could not take (a rule's dead-letter queue: the
//!   event, with `ERROR_CODE` and the target): restock's own events go back
//!   on the stack's bus (the events endpoint's rule posts them again); an
//!   SES event is applied now; a schedule's event needs nothing.

use std::sync::Arc;

use restock_app::admin::Admin;
use serde_json::Value;

use crate::output::CliError;
use crate::stack::Deployed;

mod stream;

/// How long a message read for a redrive stays hidden before SQS hands it
/// out again (if the redrive died half-way).
const REDRIVE_VISIBILITY_SECS: i32 = 120;

/// Where a dead letter came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A notify batch of the table's stream.
    Stream {
        /// The stream's ARN.
        arn: String,
        /// The shard.
        shard: String,
        /// The first record's sequence number.
        start: String,
        /// The last record's.
        end: String,
        /// How many records.
        size: u64,
    },
    /// A sweep invocation: what it was asked to do.
    Sweep(Asked),
    /// An event a bus target could not take.
    Target {
        /// The target's ARN.
        target: String,
        /// The event, as the bus had it.
        event: Value,
    },
    /// Something restock does not know.
    Unknown,
}

/// What a sweep invocation or a bus event was.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// The minute's sweep (or any scheduled event).
    Sweep,
    /// A stock pull.
    Pull,
    /// An SES bounce or complaint (the event's `detail`).
    Feedback(Value),
    /// One of restock's own events.
    Event,
    /// An erasure handed to the sweep (the event's `detail`).
    Erase(Value),
    /// Texts shoppers sent back (each SNS record's message).
    Inbound(Vec<String>),
}

fn asked(event: &Value) -> Asked {
    let sns = event["Records"]
        .as_array()
        .filter(|records| records.iter().all(|r| r["EventSource"] == "aws:sns"));
    if let Some(records) = sns {
        Asked::Inbound(
            records
                .iter()
                .filter_map(|r| r["Sns"]["Message"].as_str().map(str::to_owned))
                .collect(),
        )
    } else if event["restock"] == "pull" {
        Asked::Pull
    } else if event["source"] == "aws.ses" {
        Asked::Feedback(event["detail"].clone())
    } else if event["source"] == restock_aws::ERASURE_SOURCE {
        Asked::Erase(event["detail"].clone())
    } else if event["source"] == restock_app::events::SOURCE {
        Asked::Event
    } else {
        Asked::Sweep
    }
}

/// One message of the queue, read.
#[derive(Debug, Clone)]
pub struct Letter {
    /// SQS's id.
    pub id: String,
    /// To delete it.
    pub receipt: String,
    /// When it reached the queue (ms).
    pub sent_ms: i64,
    /// Where it came from.
    pub source: Source,
    /// Why it failed, as its writer said.
    pub why: String,
}

impl Letter {
    /// Reads one SQS message.
    pub fn read(message: &aws_sdk_sqs::types::Message) -> Self {
        use aws_sdk_sqs::types::MessageSystemAttributeName as Sys;
        let body: Value =
            serde_json::from_str(message.body().unwrap_or_default()).unwrap_or(Value::Null);
        let attribute = |name: &str| {
            message
                .message_attributes()
                .and_then(|a| a.get(name))
                .and_then(|v| v.string_value())
                .map(str::to_owned)
        };
        let sent_ms = message
            .attributes()
            .and_then(|a| a.get(&Sys::SentTimestamp))
            .and_then(|t| t.parse().ok())
            .unwrap_or_default();
        let failed = || {
            let condition = body["requestContext"]["condition"]
                .as_str()
                .unwrap_or("failed");
            match body["responsePayload"]["errorMessage"]
                .as_str()
                .or(body["responseContext"]["functionError"].as_str())
            {
                Some(error) => format!("{condition}: {error}"),
                None => condition.to_owned(),
            }
        };
        let (source, why) = if let Some(batch) = body.get("DDBStreamBatchInfo") {
            let text = |k: &str| batch[k].as_str().unwrap_or_default().to_owned();
            (
                Source::Stream {
                    arn: text("streamArn"),
                    shard: text("shardId"),
                    start: text("startSequenceNumber"),
                    end: text("endSequenceNumber"),
                    size: batch["batchSize"].as_u64().unwrap_or_default(),
                },
                failed(),
            )
        } else if body.get("requestPayload").is_some() && body.get("requestContext").is_some() {
            (Source::Sweep(asked(&body["requestPayload"])), failed())
        } else if let Some(target) = attribute("TARGET_ARN") {
            let why = match (attribute("ERROR_CODE"), attribute("ERROR_MESSAGE")) {
                (Some(code), Some(text)) => format!("{code}: {text}"),
                (Some(code), None) => code,
                _ => "the target refused every retry".into(),
            };
            (
                Source::Target {
                    target,
                    event: body,
                },
                why,
            )
        } else {
            (Source::Unknown, "not a message restock writes".into())
        };
        Self {
            id: message.message_id().unwrap_or_default().to_owned(),
            receipt: message.receipt_handle().unwrap_or_default().to_owned(),
            sent_ms,
            source,
            why,
        }
    }

    /// Where it came from, for people.
    pub fn from(&self) -> String {
        match &self.source {
            Source::Stream { size, .. } => format!("notify: a batch of {size} stream records"),
            Source::Sweep(Asked::Pull) => "sweep: a stock pull".into(),
            Source::Sweep(Asked::Feedback(_)) => "sweep: an SES bounce or complaint".into(),
            Source::Sweep(Asked::Erase(_)) => {
                "sweep: an erasure (a customer's or the shop's)".into()
            }
            Source::Sweep(_) => "sweep: a run".into(),
            Source::Target { event, .. } => match asked(event) {
                Asked::Event => format!(
                    "the events endpoint: {} {}",
                    event["detail-type"].as_str().unwrap_or("an event"),
                    event["detail"]["id"].as_str().unwrap_or_default()
                ),
                Asked::Feedback(_) => "the bus: an SES bounce or complaint".into(),
                Asked::Erase(_) => "the bus: an erasure (a customer's or the shop's)".into(),
                Asked::Inbound(_) => "the bus: texts shoppers sent back".into(),
                Asked::Pull => "the bus: a stock pull's schedule".into(),
                Asked::Sweep => "the bus: the sweep's schedule".into(),
            },
            Source::Unknown => "unknown".into(),
        }
    }

    /// What a redrive does with it.
    pub fn plan(&self, now_ms: i64) -> &'static str {
        match (&self.source, self.asked()) {
            (Source::Stream { .. }, _) if now_ms - self.sent_ms < 86_400_000 => {
                "read its records: wake their items, publish their events again"
            }
            (Source::Stream { .. }, _) => {
                "the stream may no longer have it: wake every item someone waits for"
            }
            (_, Some(Asked::Feedback(_))) => "apply the bounce or complaint now",
            (_, Some(Asked::Erase(_))) => "erase the requests now (a shop's: every page left)",
            (Source::Sweep(_), Some(Asked::Inbound(_))) => {
                "read the texts again: opt the numbers out, answer HELP"
            }
            (Source::Target { .. }, Some(Asked::Event)) => {
                "put the event on the bus again (the endpoint's rule posts it)"
            }
            (Source::Unknown, _) => "left in the queue: read it",
            _ => "nothing to do again: the next run does its work",
        }
    }

    fn asked(&self) -> Option<Asked> {
        match &self.source {
            Source::Sweep(a) => Some(a.clone()),
            Source::Target { event, .. } => Some(asked(event)),
            _ => None,
        }
    }
}

/// Reads the queue without taking anything out of it (each message is
/// left visible).
pub async fn list(sdk: &aws_config::SdkConfig, queue: &str) -> Result<Vec<Letter>, CliError> {
    let sqs = aws_sdk_sqs::Client::new(sdk);
    let mut letters: Vec<Letter> = Vec::new();
    // Visibility 0: the messages stay where they are. A receive may give
    // one seen already, so read until a round brings nothing new.
    for _ in 0..100 {
        let got = receive(&sqs, queue, 0).await?;
        let before = letters.len();
        for message in &got {
            let letter = Letter::read(message);
            if !letters.iter().any(|l| l.id == letter.id) {
                letters.push(letter);
            }
        }
        if letters.len() == before {
            break;
        }
    }
    letters.sort_by_key(|l| l.sent_ms);
    Ok(letters)
}

async fn receive(
    sqs: &aws_sdk_sqs::Client,
    queue: &str,
    visibility: i32,
) -> Result<Vec<aws_sdk_sqs::types::Message>, CliError> {
    let got = sqs
        .receive_message()
        .queue_url(queue)
        .max_number_of_messages(10)
        .visibility_timeout(visibility)
        .message_system_attribute_names(
            aws_sdk_sqs::types::MessageSystemAttributeName::SentTimestamp,
        )
        .message_attribute_names("All")
        .send()
        .await
        .map_err(|e| CliError::aws(&e, "could not read the dead-letter queue"))?;
    Ok(got.messages().to_vec())
}

/// What a redrive did with one letter.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Redriven {
    /// SQS's id.
    pub id: String,
    /// Where it came from.
    pub from: String,
    /// What was done.
    pub done: String,
    /// Whether it was taken out of the queue.
    pub deleted: bool,
}

/// Takes each message out of the queue and does again what it names.
/// A message that could not be dealt with is left, visible again after
/// two minutes.
pub async fn redrive(
    sdk: &aws_config::SdkConfig,
    deployed: &Deployed,
    admin: &Admin,
    now_ms: i64,
) -> Result<Vec<Redriven>, CliError> {
    let Some(queue) = &deployed.dead_letters else {
        return Err(CliError::Usage(format!(
            "the stack {} has no DeadLetterQueueUrl output: redeploy it with the current template",
            deployed.stack.name
        )));
    };
    let sqs = aws_sdk_sqs::Client::new(sdk);
    let mut done = Vec::new();
    loop {
        let got = receive(&sqs, queue, REDRIVE_VISIBILITY_SECS).await?;
        if got.is_empty() {
            break;
        }
        for message in &got {
            let letter = Letter::read(message);
            let outcome = redo(sdk, deployed, admin, &letter, now_ms).await;
            let (text, delete) = match outcome {
                Ok(text) => (text, true),
                Err(e) => (format!("left in the queue: {e}"), false),
            };
            if delete {
                sqs.delete_message()
                    .queue_url(queue)
                    .receipt_handle(&letter.receipt)
                    .send()
                    .await
                    .map_err(|e| CliError::aws(&e, "could not delete a message done again"))?;
            }
            done.push(Redriven {
                id: letter.id.clone(),
                from: letter.from(),
                done: text,
                deleted: delete,
            });
        }
    }
    Ok(done)
}

/// Does again what one letter names; what was done, or why not.
async fn redo(
    sdk: &aws_config::SdkConfig,
    deployed: &Deployed,
    admin: &Admin,
    letter: &Letter,
    now_ms: i64,
) -> Result<String, String> {
    match &letter.source {
        Source::Stream {
            arn,
            shard,
            start,
            end,
            ..
        } => match stream::read_batch(sdk, arn, shard, start, end).await {
            Ok(records) => stream::redo_batch(sdk, deployed, admin, &records, now_ms).await,
            Err(why) => {
                let woken = stream::wake_everyone_waiting(admin, now_ms).await?;
                Ok(format!(
                    "the stream no longer has its records ({why}): woke every item someone waits for ({woken}); events it carried, if any, are lost"
                ))
            }
        },
        Source::Sweep(Asked::Feedback(detail)) => {
            apply_feedback(sdk, deployed, admin, detail).await
        }
        Source::Sweep(Asked::Erase(detail)) => erase(sdk, deployed, admin, detail).await,
        Source::Sweep(Asked::Inbound(messages)) => {
            let outcomes = restock_app::inbound::read(&services(sdk, deployed, admin), messages)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "read {} texts sent back: {outcomes:?}",
                outcomes.len()
            ))
        }
        Source::Target { event, .. } => match asked(event) {
            Asked::Event => {
                let bus = deployed
                    .event_bus
                    .as_deref()
                    .ok_or("the stack has no EventBusName output")?;
                aws_sdk_eventbridge::Client::new(sdk)
                    .put_events()
                    .entries(
                        aws_sdk_eventbridge::types::PutEventsRequestEntry::builder()
                            .event_bus_name(bus)
                            .source(restock_app::events::SOURCE)
                            .detail_type(event["detail-type"].as_str().unwrap_or_default())
                            .detail(event["detail"].to_string())
                            .build(),
                    )
                    .send()
                    .await
                    .map_err(|e| crate::output::aws_said(&e))?;
                Ok(format!(
                    "put on the bus again: {} {}",
                    event["detail-type"].as_str().unwrap_or_default(),
                    event["detail"]["id"].as_str().unwrap_or_default()
                ))
            }
            Asked::Feedback(detail) => apply_feedback(sdk, deployed, admin, &detail).await,
            Asked::Erase(detail) => erase(sdk, deployed, admin, &detail).await,
            Asked::Pull | Asked::Sweep | Asked::Inbound(_) => {
                Ok("nothing to do again: the next scheduled run does its work".into())
            }
        },
        Source::Sweep(_) => Ok("nothing to do again: the next run does its work".into()),
        Source::Unknown => Err("not a message restock writes: read it yourself".into()),
    }
}

/// An erasure carried out now, as the sweep would have (a shop's to its end).
async fn erase(
    sdk: &aws_config::SdkConfig,
    deployed: &Deployed,
    admin: &Admin,
    detail: &Value,
) -> Result<String, String> {
    let erasure: restock_app::privacy::Erasure =
        serde_json::from_value(detail.clone()).map_err(|e| format!("not an erasure: {e}"))?;
    let erased = restock_app::privacy::erase(&services(sdk, deployed, admin), &erasure)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("erased {erased} requests"))
}

/// An SES bounce or complaint applied now, as the sweep would have.
async fn apply_feedback(
    sdk: &aws_config::SdkConfig,
    deployed: &Deployed,
    admin: &Admin,
    detail: &Value,
) -> Result<String, String> {
    let outcome = restock_app::feedback::handle(&services(sdk, deployed, admin), detail)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("applied: {outcome:?}"))
}

/// The sweep's services on the stack, for what a redrive does again.
fn services(
    sdk: &aws_config::SdkConfig,
    deployed: &Deployed,
    admin: &Admin,
) -> restock_app::Services {
    use restock_app::ports::{Disabled, OsEntropy, SystemClock};
    restock_app::Services::new(
        admin.store.clone(),
        Arc::new(Disabled),
        Arc::new(Disabled),
        Arc::new(restock_aws::SecretsKeyring::new(
            aws_sdk_secretsmanager::Client::new(sdk),
            deployed.stack.keys_secret.clone(),
        )),
        Arc::new(deployed.stack.alerts(sdk)),
        Arc::new(SystemClock),
        Arc::new(OsEntropy),
    )
}
