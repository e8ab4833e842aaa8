//! Figures for the team: the queue read oldest-first, and per-SKU counts.

use async_trait::async_trait;
use restock_core::Sku;
use restock_core::{Millis, RequestId};
use restock_store::port::Result;
use restock_store::{
    Counted, DayFigures, FiguresStore, ItemHistory, Request, RequestPage, RestockFigures, SkuStats,
    StoreError,
};

use restock_core::feedback::MailDay;

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::tx::Change;

fn read_mail_day(item: &Item) -> Result<MailDay> {
    Ok(MailDay {
        sent: opt_n(item, MAIL_SENT)?.unwrap_or(0),
        texts_sent: opt_n(item, MAIL_TEXTS_SENT)?.unwrap_or(0),
        bounced: opt_n(item, MAIL_BOUNCED)?.unwrap_or(0),
        complained: opt_n(item, MAIL_COMPLAINED)?.unwrap_or(0),
        soft_bounced: opt_n(item, MAIL_SOFT_BOUNCED)?.unwrap_or(0),
        confirm_sent: opt_n(item, MAIL_CONFIRM_SENT)?.unwrap_or(0),
        confirmed: opt_n(item, MAIL_CONFIRMED)?.unwrap_or(0),
        confirm_expired: opt_n(item, MAIL_CONFIRM_EXPIRED)?.unwrap_or(0),
        unknown_items: opt_n(item, MAIL_UNKNOWN_ITEMS)?.unwrap_or(0),
    })
}
use crate::queue::QueueReader;

/// When a restock's first notice was recorded (in its history items).
const FIRST_TOLD: &str = "first_told";

impl DynamoStore {
    /// Adds `counted`, a moment of request `id` at `at`, to its item's
    /// history, once the write that made it has committed. On its own, not
    /// in that write's transaction: a counter there would make every click
    /// on an item contend for one of a few items. So a function that dies
    /// between the two leaves the moment uncounted; a count that fails is
    /// logged and the shopper's answer stands (the write is what counts).
    pub(crate) async fn count(&self, sku: &Sku, id: &RequestId, counted: Counted, at: Millis) {
        self.count_many(sku, id.shard(crate::table::SPREAD), counted, at, 1)
            .await;
    }

    /// [`DynamoStore::count`] of `times` moments alike, in one history
    /// partition.
    pub(crate) async fn count_many(
        &self,
        sku: &Sku,
        partition: u16,
        counted: Counted,
        at: Millis,
        times: u64,
    ) {
        let pk = history_pk(sku, partition);
        let mut changes = Vec::new();
        if let Some(name) = counted.day_figure() {
            let day = restock_core::feedback::day_of(at);
            changes.push(Change::on(key(pk.clone(), history_day_sk(&day))).add(name, n(times)));
        }
        if let Some((episode, name)) = counted.restock_figure() {
            let mut change =
                Change::on(key(pk.clone(), history_restock_sk(episode))).add(name, n(times));
            if matches!(counted, Counted::Told(_)) {
                change = change
                    .set_expr(format!("{FIRST_TOLD} = if_not_exists({FIRST_TOLD}, :at)"))
                    .value(":at", n(at));
            }
            changes.push(change);
        }
        for change in changes {
            if let Err(e) = change.apply(self).await {
                tracing::warn!(sku = %sku, partition, ?counted, times, error = %e, "moments went uncounted in the item's history");
            }
        }
    }

    /// Every figure of [`FiguresStore::stats`] but those of the waiting:
    /// the SKU's counters and the sign-ups still to confirm (a
    /// `Select: COUNT` per partition, strongly consistent).
    async fn counts_but_waiting(&self, sku: &Sku) -> Result<SkuStats> {
        let item = self.sku_item(sku).await?;
        let unconfirmed = self
            .count_items(
                (0..crate::table::SPREAD).map(|p| unconfirmed_pk(sku, p)),
                None,
            )
            .await?;
        Ok(SkuStats {
            unconfirmed: u32::try_from(unconfirmed).unwrap_or(u32::MAX),
            offered: item.snapshot.counters.offered,
            held: item.snapshot.counters.held,
            bought: item.snapshot.bought,
            lapsed: item.lapsed,
            drifts: item.drifts,
            revenue: item.revenue,
            assisted: item.assisted,
            assisted_revenue: item.assisted_revenue,
            ..SkuStats::default()
        })
    }
}

/// Adds one history item's figures to `history`.
fn add_history_item(history: &mut ItemHistory, item: &Item) -> Result<()> {
    let sk = get_s(item, SK)?;
    if let Some(day) = sk.strip_prefix("D#") {
        let figures = history.days.entry(day.to_owned()).or_default();
        for name in DayFigures::NAMES {
            if let Some(f) = figures.figure_mut(name) {
                *f += opt_n::<u64>(item, name)?.unwrap_or(0);
            }
        }
    } else if let Some(episode) = sk.strip_prefix("R#") {
        let episode: u32 = episode.parse().map_err(|e| corrupt(item, e))?;
        let figures: &mut RestockFigures = history.restocks.entry(episode).or_default();
        for name in RestockFigures::NAMES {
            if let Some(f) = figures.figure_mut(name) {
                *f += opt_n::<u64>(item, name)?.unwrap_or(0);
            }
        }
        if let Some(first) = opt_n::<Millis>(item, FIRST_TOLD)? {
            figures.first_told = Some(figures.first_told.map_or(first, |f| f.min(first)));
        }
    }
    Ok(())
}

#[async_trait]
impl FiguresStore for DynamoStore {
    async fn queue(&self, sku: &Sku, shards: u16, limit: usize) -> Result<Vec<Request>> {
        QueueReader::new(sku, shards, limit).take(self, limit).await
    }

    async fn live_units(&self, sku: &Sku) -> Result<Vec<Request>> {
        // Every live unit's marker (moved in the same transaction as the
        // request), then the requests they name, both strongly consistent.
        let mut ids = self
            .units(sku, None)
            .await?
            .iter()
            .map(|item| {
                get_s(item, REQUEST_ID)?
                    .parse::<restock_core::RequestId>()
                    .map_err(|e| corrupt(item, e))
            })
            .collect::<Result<Vec<_>>>()?;
        ids.sort_unstable();
        ids.dedup();
        let mut live = Vec::with_capacity(ids.len());
        for item in self
            .get_consistent(ids.iter().map(|id| key(request_pk(id), REQUEST_SK)))
            .await?
        {
            let r = read_request(&item)?;
            if &r.sku == sku && r.state.unit_expires().is_some() {
                live.push(r);
            }
        }
        live.sort_by_key(|r| (r.state.unit_expires(), r.id));
        Ok(live)
    }

    async fn contact_requests(&self, contact: &restock_core::ContactKey) -> Result<Vec<Request>> {
        let mut of = Vec::new();
        let mut start = None;
        loop {
            let page = self
                .client
                .scan()
                .table_name(&self.table)
                .filter_expression(format!("{CONTACT_KEY} = :k AND {SK} = :req"))
                .expression_attribute_values(":k", s(contact.as_str()))
                .expression_attribute_values(":req", s(REQUEST_SK))
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "Scan", e))?;
            for item in page.items() {
                of.push(read_request(item)?);
            }
            start = page.last_evaluated_key;
            if start.is_none() {
                break;
            }
        }
        of.sort_by_key(|r| r.key);
        Ok(of)
    }

    async fn item_history(&self, sku: &Sku, since: &str) -> Result<ItemHistory> {
        // Each partition from the first day asked for on: its days, then
        // (`R` sorting after `D`) its restocks.
        let mut history = ItemHistory::default();
        for p in 0..crate::table::SPREAD {
            let items = self
                .query_all(
                    self.query()
                        .consistent_read(true)
                        .key_condition_expression(format!("{PK} = :p AND {SK} >= :from"))
                        .expression_attribute_values(":p", s(history_pk(sku, p)))
                        .expression_attribute_values(":from", s(history_day_sk(since))),
                )
                .await?;
            for item in &items {
                add_history_item(&mut history, item)?;
            }
        }
        Ok(history)
    }

    async fn requests_page(&self, after: Option<&str>, limit: usize) -> Result<RequestPage> {
        // A Scan: no index names every request, and an export is rare and
        // run by the operator. Strongly consistent, so a request written a
        // moment ago is listed (a default read may miss it). The cursor is
        // the last key read (`pk`, a unit separator, `sk`), which need not
        // be a request's.
        let start = after
            .map(|cursor| {
                let (pk, sk) = cursor.split_once('\u{1f}').ok_or_else(|| {
                    StoreError::Refused(format!("not an export cursor: {cursor}"))
                })?;
                Ok::<_, StoreError>(key(pk, sk))
            })
            .transpose()?;
        let page = self
            .client
            .scan()
            .table_name(&self.table)
            .consistent_read(true)
            .filter_expression(format!("{SK} = :req"))
            .expression_attribute_values(":req", s(REQUEST_SK))
            .limit(i32::try_from(limit.max(1)).unwrap_or(i32::MAX))
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| StoreError::backend(crate::DYNAMODB, "Scan", e))?;
        let requests = page
            .items()
            .iter()
            .map(read_request)
            .collect::<Result<Vec<_>>>()?;
        let next = page.last_evaluated_key.map(|k| {
            format!(
                "{}\u{1f}{}",
                opt_s(&k, PK).unwrap_or_default(),
                opt_s(&k, SK).unwrap_or_default()
            )
        });
        Ok(RequestPage { requests, next })
    }

    async fn stats(&self, sku: &Sku, shards: u16) -> Result<SkuStats> {
        let waiting_by_language = self.waiting_by_language(sku, shards).await?;
        Ok(SkuStats {
            waiting: waiting_by_language.values().sum(),
            waiting_by_language,
            ..self.counts_but_waiting(sku).await?
        })
    }

    async fn counts(&self, sku: &Sku, shards: u16) -> Result<SkuStats> {
        let waiting = futures::future::try_join_all(
            (0..shards.max(1)).map(|shard| self.waiting_below(sku, shard, u64::MAX)),
        )
        .await?
        .into_iter()
        .sum::<usize>();
        Ok(SkuStats {
            waiting: u32::try_from(waiting).unwrap_or(u32::MAX),
            ..self.counts_but_waiting(sku).await?
        })
    }

    async fn count_mail(&self, day: &str, add: MailDay) -> Result<MailDay> {
        let totals = Change::on(key(format!("MAIL#{day}"), "_"))
            .add(MAIL_SENT, n(add.sent))
            .add(MAIL_TEXTS_SENT, n(add.texts_sent))
            .add(MAIL_BOUNCED, n(add.bounced))
            .add(MAIL_COMPLAINED, n(add.complained))
            .add(MAIL_SOFT_BOUNCED, n(add.soft_bounced))
            .add(MAIL_CONFIRM_SENT, n(add.confirm_sent))
            .add(MAIL_CONFIRMED, n(add.confirmed))
            .add(MAIL_CONFIRM_EXPIRED, n(add.confirm_expired))
            .add(MAIL_UNKNOWN_ITEMS, n(add.unknown_items))
            .apply_returning(self)
            .await?
            .unwrap_or_default();
        read_mail_day(&totals)
    }

    async fn mail_day(&self, day: &str) -> Result<MailDay> {
        match self.get(format!("MAIL#{day}"), "_").await? {
            Some(item) => read_mail_day(&item),
            None => Ok(MailDay::default()),
        }
    }

    async fn anyone_waiting(&self, sku: &Sku, shards: u16) -> Result<bool> {
        for shard in 0..shards.max(1) {
            // Consistent, like every read of the queue: a join a moment ago counts.
            let page = self
                .query()
                .consistent_read(true)
                .key_condition_expression(format!("{PK} = :q"))
                .expression_attribute_values(":q", s(queue_pk(sku, shard)))
                .limit(1)
                .send()
                .await
                .map_err(|e| StoreError::backend(crate::DYNAMODB, "Query", e))?;
            if page.count > 0 {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
