//! sweep's operations: deadlines found by looking at every request (fine in
//! memory; a lagging store's index view), ended once each, and counters
//! recounted.

use async_trait::async_trait;

use crate::*;

#[async_trait]
impl SweepStore for MemoryStore {
    async fn due(&self, now: Millis, limit: usize) -> Result<Vec<Due>> {
        let s = self.lock();
        let mut due: Vec<Due> = match &s.index {
            Some(view) => view.due.iter().filter(|d| d.due <= now).cloned().collect(),
            None => s
                .requests
                .values()
                .filter_map(|r| {
                    r.due().filter(|d| *d <= now).map(|d| Due {
                        id: r.id,
                        sku: r.sku.clone(),
                        due: d,
                    })
                })
                .collect(),
        };
        due.sort_by_key(|d| (d.due, d.id));
        due.truncate(limit);
        Ok(due)
    }
    async fn wake_sleepers(&self, now: Millis) -> Result<Vec<Sku>> {
        let mut s = self.lock();
        // As on DynamoDB, a lagging index only picks the candidates; the
        // truth decides.
        let listed: Vec<Sku> = s
            .index
            .as_ref()
            .map_or(&s.sleepers, |view| &view.sleepers)
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(sku, _)| sku.clone())
            .collect();
        let mut woken = Vec::new();
        for sku in listed {
            if s.sleepers.get(&sku).is_some_and(|at| *at <= now) {
                s.sleepers.remove(&sku);
                let episode = s.sku(&sku).snapshot.stock.episode;
                s.wakes.push(Wake {
                    sku: sku.clone(),
                    kind: WakeKind::Awake,
                    episode,
                    at: now,
                });
                woken.push(sku);
            }
        }
        Ok(woken)
    }

    async fn claim_reminder(
        &self,
        id: &RequestId,
        episode: u32,
        links: Option<&ReminderLinks>,
        now: Millis,
    ) -> Result<Option<Request>> {
        let mut s = self.lock();
        let Some(r) = s.requests.get_mut(id) else {
            return Ok(None);
        };
        if r.reminder_due(now) != Some(episode) {
            return Ok(None);
        }
        r.remind_at = None;
        if let Some(links) = links {
            r.remind_hash = Some(links.reserve);
            r.optout_hashes.push(links.optout);
            r.inbox_hashes.push(links.manage);
        }
        Ok(Some(r.clone()))
    }

    async fn expire(&self, due: &Due, now: Millis) -> Result<ExpireOutcome> {
        let mut s = self.lock();
        let Some(r) = s.requests.get(&due.id) else {
            return Ok(ExpireOutcome::Skipped);
        };
        if let Some(episode) = r.reminder_due(now) {
            return Ok(ExpireOutcome::Remind(episode));
        }
        let Ok((to, freed)) = r.state.expire(now, r.stale_at) else {
            return Ok(ExpireOutcome::Skipped);
        };
        if r.state == RequestState::Unconfirmed {
            s.forget_unconfirmed(&due.id);
            return Ok(ExpireOutcome::Unconfirmed);
        }
        if matches!(r.state, RequestState::Offered { .. }) && r.notice.is_none() {
            s.requeue(&due.id, now);
            return Ok(ExpireOutcome::Requeued);
        }
        let (sku, counted) = (r.sku.clone(), Counted::expiry(r.state, to));
        if let Some(counted) = counted {
            s.count(&sku, counted, now);
        }
        let outcome = match to {
            RequestState::Stale => ExpireOutcome::Stale,
            RequestState::Lapsed => {
                s.sku(&sku).lapsed += 1;
                ExpireOutcome::Lapsed
            }
            _ => ExpireOutcome::Released,
        };
        s.finish(&due.id, to, freed, now);
        Ok(outcome)
    }
    async fn reconcile(&self, sku: &Sku, _now: Millis) -> Result<Option<Drift>> {
        let mut s = self.lock();
        let (mut offered, mut held) = (0, 0);
        for r in s.requests.values().filter(|r| &r.sku == sku) {
            match r.state {
                RequestState::Offered { .. } => offered += 1,
                RequestState::Held { .. } => held += 1,
                _ => {}
            }
        }
        let rec = s.sku(sku);
        let stored = rec.snapshot.counters;
        if stored.offered == offered && stored.held == held {
            return Ok(None);
        }
        rec.snapshot.counters.offered = offered;
        rec.snapshot.counters.held = held;
        rec.drifts += 1;
        Ok(Some(Drift {
            stored,
            counted: rec.snapshot.counters,
        }))
    }
    async fn heard_from(&self) -> Result<Vec<Heard>> {
        Ok(self
            .lock()
            .heard
            .iter()
            .map(|(source, (last, alerted))| Heard {
                source: source.clone(),
                last: *last,
                alerted: *alerted,
            })
            .collect())
    }
    async fn claim_silence_alert(
        &self,
        source: &str,
        last_heard: Millis,
        now: Millis,
    ) -> Result<bool> {
        let mut s = self.lock();
        match s.heard.get_mut(source) {
            Some((last, alerted)) if *last == last_heard && alerted.is_none_or(|a| a < *last) => {
                *alerted = Some(now);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
