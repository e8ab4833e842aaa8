//! detect's operations: deliveries deduplicated, the core's stock state machine applied, a wake logged for each restock or top-up.

use async_trait::async_trait;

use crate::*;

#[async_trait]
impl DetectStore for MemoryStore {
    async fn apply_stock(
        &self,
        sku: &Sku,
        event: &StockEvent,
        rules: &Rules,
        now: Millis,
    ) -> Result<ApplyOutcome> {
        let mut s = self.lock();
        if !s.deliveries.insert(event.delivery_id.clone()) {
            return Ok(ApplyOutcome::Duplicate);
        }
        let rec = s.sku(sku);
        let applied = rec
            .snapshot
            .stock
            .apply_reading(&event.location, event.reading(), rules);
        // The newest reading is kept whatever it meant (a later, older
        // delivery must meet it), and the level follows the state.
        rec.snapshot.counters.level = applied.next.level().units();
        rec.snapshot.stock = applied.next;
        match applied.outcome {
            StockOutcome::Restock { .. } => s.wake(sku, WakeKind::Restock, now),
            StockOutcome::TopUp { .. } => s.wake(sku, WakeKind::TopUp, now),
            _ => {}
        }
        Ok(ApplyOutcome::Applied {
            outcome: applied.outcome,
            tied: applied.tied,
        })
    }
    async fn release_paused(&self, sku: &Sku, now: Millis) -> Result<Option<StockOutcome>> {
        let mut s = self.lock();
        let rec = s.sku(sku);
        let Ok((next, outcome)) = rec.snapshot.stock.release() else {
            return Ok(None);
        };
        rec.snapshot.stock = next;
        s.wake(sku, WakeKind::Restock, now);
        Ok(Some(outcome))
    }
    async fn reject_paused(&self, sku: &Sku, _now: Millis) -> Result<bool> {
        let mut s = self.lock();
        let rec = s.sku(sku);
        let Ok(next) = rec.snapshot.stock.reject() else {
            return Ok(false);
        };
        rec.snapshot.counters.level = next.level().units();
        rec.snapshot.stock = next;
        Ok(true)
    }
    async fn snapshot(&self, sku: &Sku) -> Result<SkuSnapshot> {
        Ok(self
            .lock()
            .skus
            .get(sku)
            .map(|r| r.snapshot.clone())
            .unwrap_or_default())
    }
    async fn wakes(&self, sku: &Sku) -> Result<Vec<Wake>> {
        Ok(self
            .lock()
            .wakes
            .iter()
            .filter(|w| &w.sku == sku)
            .cloned()
            .collect())
    }
    async fn first_time(&self, key: &str, _now: Millis) -> Result<bool> {
        Ok(self.lock().deliveries.insert(format!("once:{key}")))
    }
    async fn heard(&self, source: &str, now: Millis) -> Result<()> {
        let mut s = self.lock();
        let entry = s.heard.entry(source.to_owned()).or_insert((now, None));
        entry.0 = entry.0.max(now);
        Ok(())
    }
}
