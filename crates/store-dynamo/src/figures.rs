//! Figures for the team: the queue read oldest-first, and per-SKU counts.

use async_trait::async_trait;
use restock_core::Sku;
use restock_store::port::Result;
use restock_store::{FiguresStore, Request, RequestPage, SkuStats, StoreError};

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
    })
}
use crate::queue::QueueReader;

#[async_trait]
impl FiguresStore for DynamoStore {
    async fn queue(&self, sku: &Sku, shards: u16, limit: usize) -> Result<Vec<Request>> {
        QueueReader::new(sku, shards, limit).take(self, limit).await
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
        let item = self.sku_item(sku).await?;
        let waiting_by_language = self.waiting_by_language(sku, shards).await?;
        let unconfirmed = self
            .count_items(
                (0..crate::table::SPREAD).map(|p| unconfirmed_pk(sku, p)),
                None,
            )
            .await?;
        Ok(SkuStats {
            waiting: waiting_by_language.values().sum(),
            waiting_by_language,
            unconfirmed: u32::try_from(unconfirmed).unwrap_or(u32::MAX),
            offered: item.snapshot.counters.offered,
            held: item.snapshot.counters.held,
            bought: item.snapshot.bought,
            lapsed: item.lapsed,
            drifts: item.drifts,
            revenue: item.revenue,
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
