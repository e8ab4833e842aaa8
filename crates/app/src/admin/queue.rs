//! The views of one item's line: who waits, oldest first, and the live
//! offers and holds, soonest to run out first (contacts masked).

use restock_core::{Millis, Sku};
use serde_json::{Value, json};

use super::{Admin, AdminError, Output};

impl Admin {
    /// The item's live offers and holds.
    pub(super) async fn holds(&self, sku: Sku, now: Millis) -> Result<Output, AdminError> {
        self.entry(&sku).await?;
        let live = self.store.live_units(&sku).await?;
        let runs_out = |expires: Millis| {
            if expires <= now {
                "ran out; the sweep passes it on within a minute".to_owned()
            } else {
                format!("in {} min", (expires - now + 59_999) / 60_000)
            }
        };
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for r in &live {
            let expires = r.state.unit_expires().unwrap_or_default();
            let (what, hold) = match &r.state {
                restock_core::RequestState::Held { hold, .. } => ("held", Some(hold.to_string())),
                _ => ("offered", None),
            };
            let notice = match &r.notice {
                None => "not sent yet",
                Some(restock_store::NoticeOutcome::Sending) => "sending (outcome unknown)",
                Some(restock_store::NoticeOutcome::Sent { .. }) => "sent",
                Some(restock_store::NoticeOutcome::Failed { .. }) => "failed",
            };
            rows.push(vec![
                what.to_owned(),
                r.id.to_string(),
                r.contact.masked(),
                notice.to_owned(),
                hold.clone().unwrap_or_default(),
                restock_core::rfc3339(expires),
                runs_out(expires),
            ]);
            json.push(json!({
                "state": what, "request_id": r.id, "contact": r.contact.masked(),
                "channel": r.contact.channel().as_str(), "notice": notice, "hold": hold,
                "expires_ms": expires,
            }));
        }
        let held = live
            .iter()
            .filter(|r| matches!(r.state, restock_core::RequestState::Held { .. }))
            .count();
        Ok(Output::table(
            format!("{sku}: {} offered, {held} held", live.len() - held),
            &[
                "state", "request", "contact", "notice", "hold", "runs out", "",
            ],
            rows,
            Value::Array(json),
        ))
    }

    /// The waiting list, oldest first.
    pub(super) async fn queue(&self, sku: Sku, limit: usize) -> Result<Output, AdminError> {
        let limit = limit.clamp(1, Self::MAX_QUEUE_LIMIT);
        let entry = self.entry(&sku).await?;
        let waiting = self.store.queue(&sku, entry.shards, limit).await?;
        let rows: Vec<Vec<String>> = waiting
            .iter()
            .enumerate()
            .map(|(i, r)| {
                vec![
                    (i + 1).to_string(),
                    r.id.to_string(),
                    r.contact.masked(),
                    restock_core::rfc3339(r.key.joined_ms),
                    r.state.status().to_string(),
                    r.language
                        .as_ref()
                        .map_or_else(|| "default".to_owned(), ToString::to_string),
                ]
            })
            .collect();
        let json = waiting
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({
                    "position": i + 1, "request_id": r.id, "contact": r.contact.masked(),
                    "channel": r.contact.channel().as_str(), "joined_ms": r.key.joined_ms,
                    "status": r.state.status().to_string(),
                    "language": r.language.as_ref().map(ToString::to_string),
                })
            })
            .collect();
        Ok(Output::table(
            format!(
                "{} waiting for {sku} (showing at most {limit})",
                waiting.len()
            ),
            &[
                "position", "request", "contact", "joined", "status", "language",
            ],
            rows,
            Value::Array(json),
        ))
    }
}
