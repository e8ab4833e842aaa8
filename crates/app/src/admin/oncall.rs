//! The on-call commands: release or reject a restock held back for review,
//! wake items again, pause and resume one item or all sending, the list of
//! escalations, and the counters reconciled from the unit markers.

use restock_core::{Millis, Sku};
use serde_json::{Value, json};

use super::{Admin, AdminError, Output, TEAM_PAUSE_DAYS};

impl Admin {
    /// Releases a restock paused for review.
    pub(super) async fn release(&self, sku: Sku, now: Millis) -> Result<Output, AdminError> {
        self.entry(&sku).await?;
        match self.store.release_paused(&sku, now).await? {
            Some(outcome) => Ok(Output::message(
                format!("{sku}: released ({outcome}); notify offers its units now"),
                json!({ "released": true, "outcome": outcome }),
            )),
            None => Ok(Output::message(
                format!("{sku}: nothing is paused, nothing changed"),
                json!({ "released": false }),
            )),
        }
    }

    /// Wakes each item: a wake record notify takes as it takes a restock's.
    pub(super) async fn rewake(&self, skus: Vec<Sku>, now: Millis) -> Result<Output, AdminError> {
        if skus.is_empty() {
            return Err(AdminError::Invalid(
                "name the items to wake: `restock rewake SKU…`".into(),
            ));
        }
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for entry in self.skus(skus).await? {
            let sku = &entry.sku;
            let snapshot = self.store.snapshot(sku).await?;
            let c = snapshot.counters;
            let free = c.level.saturating_sub(c.offered + c.held);
            let waiting = self.store.counts(sku, entry.shards).await?.waiting;
            self.store
                .wake_again(sku, snapshot.stock.episode, now)
                .await?;
            let said = match (free, waiting) {
                (0, _) => "woken; no unit is free, so nobody is offered one".to_owned(),
                (_, 0) => format!("woken; {free} units free and nobody waiting"),
                (f, w) => format!(
                    "woken; notify offers {} of {f} free units to the {w} waiting, oldest first",
                    f.min(w)
                ),
            };
            rows.push(vec![sku.to_string(), said]);
            json.push(json!({
                "sku": sku, "episode": snapshot.stock.episode, "free": free, "waiting": waiting,
            }));
        }
        Ok(Output::table(
            "",
            &["sku", "result"],
            rows,
            Value::Array(json),
        ))
    }

    /// Stops notices for one item or for everything.
    pub(super) async fn pause(
        &self,
        sku: Option<Sku>,
        reason: String,
        now: Millis,
    ) -> Result<Output, AdminError> {
        let reason = reason.trim().to_owned();
        if reason.is_empty() || reason.chars().count() > 200 {
            return Err(AdminError::Invalid(
                "say why in 1 to 200 characters (--reason): the rest of the team reads it".into(),
            ));
        }
        let Some(sku) = sku else {
            // All sending: the sender's pause, which notify already keeps
            // (each item it holds back is noted and woken on resume).
            let catalogue = self.store.catalogue().await?;
            let Some(first) = catalogue.first() else {
                return Err(AdminError::Invalid(
                    "the catalogue is empty: nothing to pause".into(),
                ));
            };
            let until = now + TEAM_PAUSE_DAYS * 86_400_000;
            let said = format!("{}{reason}", crate::notify::TEAM_PAUSE_PREFIX);
            let open = self.store.sender_pause().await?.filter(|p| p.until > now);
            let paused = match open {
                // The team's own pause: as the team set it.
                Some(p) if p.reason.starts_with(crate::notify::TEAM_PAUSE_PREFIX) => false,
                // A provider's pause ends by itself in minutes: the team's
                // takes it over, keeping what it held back.
                Some(_) => self.store.take_over_sender_pause(&said, until, now).await?,
                None => false,
            };
            let opened = paused
                || self
                    .store
                    .pause_sender(&said, until, &first.sku, now)
                    .await?;
            return Ok(Output::message(
                if opened {
                    format!(
                        "all notices paused until `restock resume` (or {} at the latest): {reason}",
                        restock_core::rfc3339(until)
                    )
                } else {
                    "sending was already paused by the team; nothing changed (`restock resume` ends it)".into()
                },
                json!({ "paused": opened, "until_ms": until }),
            ));
        };
        let mut entry = self.entry(&sku).await?;
        if let Some(pause) = &entry.paused {
            return Ok(Output::message(
                format!(
                    "{sku} was already paused since {}: {}; nothing changed",
                    restock_core::rfc3339(pause.since_ms),
                    pause.reason
                ),
                json!({ "paused": false }),
            ));
        }
        entry.paused = Some(restock_core::catalogue::ItemPause {
            reason: reason.clone(),
            since_ms: now,
        });
        self.store.put_catalogue_entry(&entry).await?;
        Ok(Output::message(
            format!(
                "{sku}: notices paused ({reason}); sign-ups and places are kept, offers already sent stay good; `restock resume --sku {sku}` lifts it"
            ),
            json!({ "paused": true, "sku": sku }),
        ))
    }

    /// Lifts an item's pause and wakes it.
    pub(super) async fn resume_item(&self, sku: Sku, now: Millis) -> Result<Output, AdminError> {
        let mut entry = self.entry(&sku).await?;
        if entry.paused.take().is_none() {
            return Ok(Output::message(
                format!("{sku} was not paused; nothing changed"),
                json!({ "resumed": false }),
            ));
        }
        self.store.put_catalogue_entry(&entry).await?;
        let episode = self.store.snapshot(&sku).await?.stock.episode;
        self.store.wake_again(&sku, episode, now).await?;
        Ok(Output::message(
            format!("{sku}: notices resumed; notify offers its free units now, oldest first"),
            json!({ "resumed": true, "sku": sku }),
        ))
    }

    /// Rejects a held-back restock.
    pub(super) async fn reject(&self, sku: Sku, now: Millis) -> Result<Output, AdminError> {
        self.entry(&sku).await?;
        let level = self.store.snapshot(&sku).await?.counters.level;
        if self.store.reject_paused(&sku, now).await? {
            Ok(Output::message(
                format!(
                    "{sku}: the restock at {level} units is rejected; the item counts as sold out and nobody is offered one until the shop reports its level again, which is judged afresh"
                ),
                json!({ "rejected": true, "level": level }),
            ))
        } else {
            Ok(Output::message(
                format!("{sku}: nothing is paused, nothing changed"),
                json!({ "rejected": false }),
            ))
        }
    }

    /// Every restock waiting for the team, across items.
    pub(super) async fn escalations(&self) -> Result<Output, AdminError> {
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for entry in self.store.catalogue().await? {
            let snapshot = self.store.snapshot(&entry.sku).await?;
            if !snapshot.stock.paused {
                continue;
            }
            let reported = snapshot
                .stock
                .locations
                .values()
                .map(|r| r.at_ms)
                .max()
                .unwrap_or_default();
            let waiting = self.store.counts(&entry.sku, entry.shards).await?.waiting;
            rows.push(vec![
                entry.sku.to_string(),
                entry.name.clone(),
                format!("#{}", snapshot.stock.episode),
                snapshot.counters.level.to_string(),
                restock_core::rfc3339(reported),
                waiting.to_string(),
            ]);
            json.push(json!({
                "sku": entry.sku, "name": entry.name, "restock": snapshot.stock.episode,
                "level": snapshot.counters.level, "reported_ms": reported, "waiting": waiting,
            }));
        }
        let message = if rows.is_empty() {
            "no restock waits for the team".to_owned()
        } else {
            format!(
                "{} restocks wait for the team: `restock release SKU` offers one, `restock reject SKU` refuses its level",
                rows.len()
            )
        };
        Ok(Output::table(
            message,
            &["sku", "name", "restock", "level", "reported", "waiting"],
            rows,
            Value::Array(json),
        ))
    }

    /// Ends the sender's pause.
    pub(super) async fn resume(&self, now: Millis) -> Result<Output, AdminError> {
        match crate::notify::resume_sending(self.store.as_ref(), now).await? {
            Some(skus) => Ok(Output::message(
                format!(
                    "sending resumed; {} woken: {}",
                    skus.len(),
                    skus.iter().map(Sku::as_str).collect::<Vec<_>>().join(", ")
                ),
                json!({ "resumed": true, "woken": skus }),
            )),
            None => Ok(Output::message(
                "sending was not paused; nothing changed",
                json!({ "resumed": false }),
            )),
        }
    }
}
