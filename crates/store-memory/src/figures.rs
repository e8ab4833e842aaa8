//! Figures for the team.

use async_trait::async_trait;

use crate::*;

#[async_trait]
impl FiguresStore for MemoryStore {
    async fn queue(&self, sku: &Sku, _shards: u16, limit: usize) -> Result<Vec<Request>> {
        let s = self.lock();
        Ok(s.queues
            .get(sku)
            .map(|q| {
                q.values()
                    .take(limit)
                    .map(|id| s.requests[id].clone())
                    .collect()
            })
            .unwrap_or_default())
    }
    async fn item_history(&self, sku: &Sku, since: &str) -> Result<ItemHistory> {
        let s = self.lock();
        Ok(s.histories
            .get(sku)
            .cloned()
            .unwrap_or_default()
            .since(since))
    }
    async fn requests_page(&self, after: Option<&str>, limit: usize) -> Result<RequestPage> {
        let after = after
            .map(|a| {
                a.parse::<RequestId>()
                    .map_err(|_| StoreError::Refused(format!("not an export cursor: {a}")))
            })
            .transpose()?;
        let limit = limit.max(1);
        let s = self.lock();
        // In id order, the cursor the last id given: a range of the map.
        let from = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        let ids: Vec<RequestId> = s
            .requests
            .range((from, std::ops::Bound::Unbounded))
            .take(limit)
            .map(|(id, _)| *id)
            .collect();
        let next = (ids.len() == limit)
            .then(|| ids.last().map(ToString::to_string))
            .flatten();
        Ok(RequestPage {
            requests: ids.iter().map(|id| s.requests[id].clone()).collect(),
            next,
        })
    }
    async fn stats(&self, sku: &Sku, _shards: u16) -> Result<SkuStats> {
        let s = self.lock();
        let mut waiting_by_language = std::collections::BTreeMap::new();
        for id in s.queues.get(sku).into_iter().flat_map(|q| q.values()) {
            *waiting_by_language
                .entry(language_tag(s.requests[id].language.as_ref()))
                .or_default() += 1;
        }
        Ok(SkuStats {
            waiting_by_language,
            ..counts(&s, sku)
        })
    }
    async fn contact_requests(&self, contact: &ContactKey) -> Result<Vec<Request>> {
        let s = self.lock();
        let mut of: Vec<Request> = s
            .requests
            .values()
            .filter(|r| &r.contact_key == contact)
            .cloned()
            .collect();
        of.sort_by_key(|r| r.key);
        Ok(of)
    }
    async fn live_units(&self, sku: &Sku) -> Result<Vec<Request>> {
        let s = self.lock();
        let mut live: Vec<Request> = s
            .requests
            .values()
            .filter(|r| &r.sku == sku && r.state.unit_expires().is_some())
            .cloned()
            .collect();
        live.sort_by_key(|r| (r.state.unit_expires(), r.id));
        Ok(live)
    }
    async fn counts(&self, sku: &Sku, _shards: u16) -> Result<SkuStats> {
        Ok(counts(&self.lock(), sku))
    }
    async fn count_mail(
        &self,
        day: &str,
        add: restock_core::feedback::MailDay,
    ) -> Result<restock_core::feedback::MailDay> {
        let mut s = self.lock();
        let d = s.mail.entry(day.to_owned()).or_default();
        d.sent += add.sent;
        d.texts_sent += add.texts_sent;
        d.bounced += add.bounced;
        d.complained += add.complained;
        d.soft_bounced += add.soft_bounced;
        d.confirm_sent += add.confirm_sent;
        d.confirmed += add.confirmed;
        d.confirm_expired += add.confirm_expired;
        d.unknown_items += add.unknown_items;
        Ok(*d)
    }
    async fn mail_day(&self, day: &str) -> Result<restock_core::feedback::MailDay> {
        Ok(self.lock().mail.get(day).copied().unwrap_or_default())
    }
    async fn anyone_waiting(&self, sku: &Sku, _shards: u16) -> Result<bool> {
        Ok(self.lock().queues.get(sku).is_some_and(|q| !q.is_empty()))
    }
}

/// Every figure of `stats` but the count by language.
fn counts(s: &State, sku: &Sku) -> SkuStats {
    let rec = s.skus.get(sku);
    let counters = rec.map(|r| r.snapshot.counters).unwrap_or_default();
    let unconfirmed = s
        .places
        .values()
        .filter_map(|of| of.get(sku))
        .filter(|id| s.requests[*id].state == restock_core::RequestState::Unconfirmed)
        .count();
    SkuStats {
        waiting: s.queues.get(sku).map_or(0, |q| q.len() as u32),
        waiting_by_language: std::collections::BTreeMap::new(),
        unconfirmed: unconfirmed as u32,
        offered: counters.offered,
        held: counters.held,
        bought: rec.map_or(0, |r| r.snapshot.bought),
        lapsed: rec.map_or(0, |r| r.lapsed),
        drifts: rec.map_or(0, |r| r.drifts),
        revenue: rec.map(|r| r.revenue.clone()).unwrap_or_default(),
        assisted: rec.map_or(0, |r| r.assisted),
        assisted_revenue: rec.map(|r| r.assisted_revenue.clone()).unwrap_or_default(),
    }
}
