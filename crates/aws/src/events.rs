//! restock's events onto the stack's EventBridge bus (`PutEvents`, ten
//! entries a call, as EventBridge allows), each entry's outcome reported
//! back so a refused one is delivered again from the stream.

use async_trait::async_trait;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use restock_app::events::{Published, SOURCE};
use restock_app::ports::{EventSink, PublishError};

/// The most entries one `PutEvents` call takes.
const ENTRIES_PER_CALL: usize = 10;

/// Publishes to one event bus.
#[derive(Debug, Clone)]
pub struct EventBridgeSink {
    client: aws_sdk_eventbridge::Client,
    bus: String,
}

impl EventBridgeSink {
    /// A sink onto `bus` (its name or ARN).
    pub fn new(client: aws_sdk_eventbridge::Client, bus: String) -> Self {
        Self { client, bus }
    }

    fn entry(&self, e: &Published) -> PutEventsRequestEntry {
        PutEventsRequestEntry::builder()
            .event_bus_name(&self.bus)
            .source(SOURCE)
            .detail_type(e.detail_type)
            .detail(e.detail.to_string())
            .time(aws_smithy_types::DateTime::from_millis(e.at_ms))
            .build()
    }
}

#[async_trait]
impl EventSink for EventBridgeSink {
    async fn publish(&self, events: &[Published]) -> Result<Vec<bool>, PublishError> {
        let mut taken = Vec::with_capacity(events.len());
        for chunk in events.chunks(ENTRIES_PER_CALL) {
            let answer = self
                .client
                .put_events()
                .set_entries(Some(chunk.iter().map(|e| self.entry(e)).collect()))
                .send()
                .await;
            match answer {
                Ok(out) => {
                    let entries = out.entries();
                    for (i, e) in chunk.iter().enumerate() {
                        let refused = entries.get(i).is_none_or(|r| r.error_code().is_some());
                        if refused {
                            let why = entries
                                .get(i)
                                .and_then(|r| r.error_message())
                                .unwrap_or("no answer");
                            tracing::warn!(
                                detail_type = e.detail_type,
                                reason = why,
                                "the bus refused an event"
                            );
                        }
                        taken.push(!refused);
                    }
                }
                Err(err) => {
                    let err = aws_sdk_eventbridge::error::DisplayErrorContext(err);
                    tracing::warn!(error = %err, "PutEvents failed");
                    taken.extend(std::iter::repeat_n(false, chunk.len()));
                }
            }
        }
        Ok(taken)
    }
}

/// The source an erasure is put on the bus with: not restock's
/// events' (`restock`), so no rule that forwards those (the events
/// endpoint, Klaviyo) sees it; the sweep's `Erasures` rule matches it.
pub const ERASURE_SOURCE: &str = "restock.privacy";

/// Hands an erasure to the sweep through the stack's bus.
pub struct EventBridgeErasures {
    client: aws_sdk_eventbridge::Client,
    bus: String,
}

impl EventBridgeErasures {
    /// Erasures onto `bus` (its name or ARN).
    pub fn new(client: aws_sdk_eventbridge::Client, bus: String) -> Self {
        Self { client, bus }
    }
}

#[async_trait]
impl restock_app::privacy::ErasureQueue for EventBridgeErasures {
    async fn queue(&self, erasure: &restock_app::privacy::Erasure) -> Result<(), PublishError> {
        let detail = serde_json::to_string(erasure).map_err(|e| PublishError(e.to_string()))?;
        let entry = PutEventsRequestEntry::builder()
            .event_bus_name(&self.bus)
            .source(ERASURE_SOURCE)
            .detail_type("Erasure requested")
            .detail(detail)
            .build();
        let out = self
            .client
            .put_events()
            .entries(entry)
            .send()
            .await
            .map_err(|e| {
                PublishError(aws_sdk_eventbridge::error::DisplayErrorContext(e).to_string())
            })?;
        match out.entries().first() {
            Some(taken) if taken.error_code().is_none() => Ok(()),
            other => Err(PublishError(format!(
                "the bus refused the erasure: {}",
                other.and_then(|e| e.error_message()).unwrap_or("no answer")
            ))),
        }
    }
}
