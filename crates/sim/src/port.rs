//! The store port on [`SimStore`]: a join, a click and a rate-limit count go
//! through the model's protocol (the modelled operations in the crate's
//! root), and the reads of the sign-up and click paths are named (their
//! units counted and limited); everything else costs one read's time and is
//! done by the in-memory store.

use async_trait::async_trait;
use restock_core::feedback::MailDay;
use restock_core::webhook::ItemRef;
use restock_core::{
    CatalogueEntry, ContactKey, HoldId, Language, Millis, OptOutToken, RequestId, ReserveToken,
    Rules, Settings, Sku, StockEvent, StockOutcome, TokenHash, Window,
};
use restock_store::model::*;
use restock_store::port::{Random, Result};
use restock_store::prelude::*;

use crate::SimStore;
use crate::name;

#[async_trait]
impl CatalogueStore for SimStore {
    async fn put_settings(&self, settings: &Settings) -> Result<()> {
        self.round_trip().await;
        self.inner.put_settings(settings).await
    }

    async fn settings(&self) -> Result<Option<Settings>> {
        self.round_trip().await;
        self.inner.settings().await
    }

    async fn put_catalogue_entry(&self, entry: &CatalogueEntry) -> Result<()> {
        self.round_trip().await;
        self.inner.put_catalogue_entry(entry).await
    }

    async fn catalogue(&self) -> Result<Vec<CatalogueEntry>> {
        self.round_trip().await;
        self.inner.catalogue().await
    }

    async fn catalogue_entry(&self, sku: &Sku) -> Result<Option<CatalogueEntry>> {
        self.read_entry(sku).await?;
        self.inner.catalogue_entry(sku).await
    }

    async fn resolve_item(&self, item: &ItemRef) -> Result<Option<CatalogueEntry>> {
        self.round_trip().await;
        self.inner.resolve_item(item).await
    }
}

#[async_trait]
impl CaptureStore for SimStore {
    async fn join(&self, request: NewRequest) -> Result<JoinOutcome> {
        self.modelled_join(request).await
    }

    async fn request(&self, id: &RequestId) -> Result<Option<Request>> {
        self.read_request(id).await?;
        self.inner.request(id).await
    }

    async fn position(&self, request: &Request, shards: u16) -> Result<Option<usize>> {
        if matches!(
            request.state,
            restock_core::RequestState::Waiting | restock_core::RequestState::Unconfirmed
        ) {
            self.read_position(&request.sku, request.shard, shards)
                .await?;
        }
        self.inner.position(request, shards).await
    }

    async fn cancel(&self, id: &RequestId, now: Millis) -> Result<CancelOutcome> {
        self.round_trip().await;
        self.inner.cancel(id, now).await
    }

    async fn assist(
        &self,
        sku: &Sku,
        contacts: &[restock_core::ContactKey],
        order: &str,
        paid: Option<&restock_core::Money>,
        since: Millis,
        now: Millis,
    ) -> Result<Assist> {
        self.round_trip().await;
        self.inner
            .assist(sku, contacts, order, paid, since, now)
            .await
    }

    async fn take_hold(
        &self,
        token: &ReserveToken,
        hold: HoldId,
        shards: u16,
        now: Millis,
        window: Window,
    ) -> Result<HoldOutcome> {
        self.modelled_hold(token, hold, shards, now, window).await
    }

    async fn mark_bought(&self, hold: &HoldId, order: &Order, now: Millis) -> Result<BuyOutcome> {
        self.round_trip().await;
        self.inner.mark_bought(hold, order, now).await
    }

    async fn opt_out(&self, token: &OptOutToken, now: Millis) -> Result<OptOutOutcome> {
        self.round_trip().await;
        self.inner.opt_out(token, now).await
    }

    async fn confirm(
        &self,
        token: &restock_core::LinkToken,
        owner: restock_core::TokenHash,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Result<ConfirmOutcome> {
        self.round_trip().await;
        self.inner.confirm(token, owner, lifetime_ms, now).await
    }

    async fn opt_out_contact(
        &self,
        contact: &ContactKey,
        via: restock_core::OptOutVia,
        now: Millis,
    ) -> Result<u32> {
        self.round_trip().await;
        self.inner.opt_out_contact(contact, via, now).await
    }

    async fn forget_contact(&self, contact: &ContactKey, now: Millis) -> Result<Forgotten> {
        self.round_trip().await;
        self.inner.forget_contact(contact, now).await
    }

    async fn forget_request(&self, id: &RequestId, now: Millis) -> Result<bool> {
        self.round_trip().await;
        self.inner.forget_request(id, now).await
    }

    async fn remove_opt_out(&self, contact: &ContactKey) -> Result<bool> {
        self.round_trip().await;
        self.inner.remove_opt_out(contact).await
    }

    async fn live_requests(&self, contact: &ContactKey) -> Result<Vec<Request>> {
        self.round_trip().await;
        self.inner.live_requests(contact).await
    }

    async fn is_opted_out(&self, contact: &ContactKey) -> Result<bool> {
        self.round_trip().await;
        self.inner.is_opted_out(contact).await
    }

    async fn opt_out_record(
        &self,
        contact: &ContactKey,
    ) -> Result<Option<restock_store::OptOutRecord>> {
        self.round_trip().await;
        self.inner.opt_out_record(contact).await
    }
}

#[async_trait]
impl DetectStore for SimStore {
    async fn apply_stock(
        &self,
        sku: &Sku,
        event: &StockEvent,
        rules: &Rules,
        now: Millis,
    ) -> Result<ApplyOutcome> {
        self.round_trip().await;
        self.inner.apply_stock(sku, event, rules, now).await
    }

    async fn release_paused(&self, sku: &Sku, now: Millis) -> Result<Option<StockOutcome>> {
        self.round_trip().await;
        self.inner.release_paused(sku, now).await
    }

    async fn reject_paused(&self, sku: &Sku, now: Millis) -> Result<bool> {
        self.round_trip().await;
        self.inner.reject_paused(sku, now).await
    }

    async fn snapshot(&self, sku: &Sku) -> Result<SkuSnapshot> {
        self.round_trip().await;
        self.inner.snapshot(sku).await
    }

    async fn wakes(&self, sku: &Sku) -> Result<Vec<Wake>> {
        self.round_trip().await;
        self.inner.wakes(sku).await
    }

    async fn heard(&self, source: &str, now: Millis) -> Result<()> {
        self.round_trip().await;
        self.inner.heard(source, now).await
    }

    async fn first_time(&self, key: &str, now: Millis) -> Result<bool> {
        self.round_trip().await;
        self.inner.first_time(key, now).await
    }
}

#[async_trait]
impl NotifyStore for SimStore {
    async fn create_offers(
        &self,
        sku: &Sku,
        params: &WaveParams,
        now: Millis,
        random: Random<'_>,
    ) -> Result<Wave> {
        self.round_trip().await;
        self.inner.create_offers(sku, params, now, random).await
    }

    async fn claim_notice(
        &self,
        sku: &Sku,
        id: &RequestId,
        episode: u32,
        reserve: &TokenHash,
        contact: &ContactKey,
    ) -> Result<Claim> {
        self.round_trip().await;
        self.inner
            .claim_notice(sku, id, episode, reserve, contact)
            .await
    }

    async fn record_notice(
        &self,
        id: &RequestId,
        episode: u32,
        outcome: NoticeOutcome,
        now: Millis,
    ) -> Result<()> {
        self.round_trip().await;
        self.inner.record_notice(id, episode, outcome, now).await
    }

    async fn release_notice(&self, sku: &Sku, id: &RequestId, episode: u32) -> Result<()> {
        self.round_trip().await;
        self.inner.release_notice(sku, id, episode).await
    }

    async fn reissue_unsent(&self, sku: &Sku, random: Random<'_>) -> Result<Vec<Offer>> {
        self.round_trip().await;
        self.inner.reissue_unsent(sku, random).await
    }

    async fn pending_confirmations(
        &self,
        sku: &Sku,
        limit: usize,
        now: Millis,
    ) -> Result<Vec<Request>> {
        self.round_trip().await;
        self.inner.pending_confirmations(sku, limit, now).await
    }

    async fn claim_confirmation(
        &self,
        sku: &Sku,
        id: &RequestId,
        links: &ConfirmLinks,
        contact: &ContactKey,
        now: Millis,
    ) -> Result<Claim> {
        self.round_trip().await;
        self.inner
            .claim_confirmation(sku, id, links, contact, now)
            .await
    }

    async fn release_confirmation(
        &self,
        sku: &Sku,
        id: &RequestId,
        confirm: &TokenHash,
    ) -> Result<()> {
        self.round_trip().await;
        self.inner.release_confirmation(sku, id, confirm).await
    }

    async fn wake_again(&self, sku: &Sku, episode: u32, now: Millis) -> Result<()> {
        self.round_trip().await;
        self.inner.wake_again(sku, episode, now).await
    }

    async fn schedule_reminder(&self, id: &RequestId, episode: u32, at: Millis) -> Result<bool> {
        self.round_trip().await;
        self.inner.schedule_reminder(id, episode, at).await
    }

    async fn record_reminder(
        &self,
        id: &RequestId,
        episode: u32,
        message_id: &str,
        now: Millis,
    ) -> Result<()> {
        self.round_trip().await;
        self.inner
            .record_reminder(id, episode, message_id, now)
            .await
    }

    async fn wake_at(&self, sku: &Sku, at: Millis) -> Result<()> {
        self.round_trip().await;
        self.inner.wake_at(sku, at).await
    }

    async fn reserve_sends(&self, count: u32, interval_ms: Millis, now: Millis) -> Result<Millis> {
        self.round_trip().await;
        self.inner.reserve_sends(count, interval_ms, now).await
    }

    async fn sender_pause(&self) -> Result<Option<SenderPause>> {
        self.round_trip().await;
        self.inner.sender_pause().await
    }

    async fn pause_sender(
        &self,
        reason: &str,
        until: Millis,
        sku: &Sku,
        now: Millis,
    ) -> Result<bool> {
        self.round_trip().await;
        self.inner.pause_sender(reason, until, sku, now).await
    }

    async fn take_over_sender_pause(
        &self,
        reason: &str,
        until: Millis,
        now: Millis,
    ) -> Result<bool> {
        self.round_trip().await;
        self.inner.take_over_sender_pause(reason, until, now).await
    }

    async fn resume_sender(&self) -> Result<Option<Vec<Sku>>> {
        self.round_trip().await;
        self.inner.resume_sender().await
    }

    async fn restock_phrase(
        &self,
        sku: &Sku,
        episode: u32,
        language: &Language,
    ) -> Result<Option<String>> {
        self.round_trip().await;
        self.inner.restock_phrase(sku, episode, language).await
    }

    async fn save_restock_phrase(
        &self,
        sku: &Sku,
        episode: u32,
        language: &Language,
        phrase: &str,
    ) -> Result<()> {
        self.round_trip().await;
        self.inner
            .save_restock_phrase(sku, episode, language, phrase)
            .await
    }
}

#[async_trait]
impl AbuseStore for SimStore {
    async fn rate_limit(
        &self,
        key: &str,
        limit: u32,
        window_ms: Millis,
        now: Millis,
    ) -> Result<RateDecision> {
        // One UpdateItem on the window's counter.
        let start = now - now.rem_euclid(window_ms.max(1));
        self.write_one(name(format!("RATE#{key}"), start.to_string()))
            .await?;
        self.inner.rate_limit(key, limit, window_ms, now).await
    }
}

#[async_trait]
impl SweepStore for SimStore {
    async fn due(&self, now: Millis, limit: usize) -> Result<Vec<Due>> {
        self.round_trip().await;
        self.inner.due(now, limit).await
    }

    async fn expire(&self, due: &Due, now: Millis) -> Result<ExpireOutcome> {
        self.round_trip().await;
        self.inner.expire(due, now).await
    }

    async fn reconcile(&self, sku: &Sku, now: Millis) -> Result<Option<Drift>> {
        self.round_trip().await;
        self.inner.reconcile(sku, now).await
    }

    async fn claim_reminder(
        &self,
        id: &RequestId,
        episode: u32,
        links: Option<&restock_store::ReminderLinks>,
        now: Millis,
    ) -> Result<Option<Request>> {
        self.round_trip().await;
        self.inner.claim_reminder(id, episode, links, now).await
    }

    async fn wake_sleepers(&self, now: Millis) -> Result<Vec<Sku>> {
        self.round_trip().await;
        self.inner.wake_sleepers(now).await
    }

    async fn heard_from(&self) -> Result<Vec<Heard>> {
        self.round_trip().await;
        self.inner.heard_from().await
    }

    async fn claim_silence_alert(
        &self,
        source: &str,
        last_heard: Millis,
        now: Millis,
    ) -> Result<bool> {
        self.round_trip().await;
        self.inner
            .claim_silence_alert(source, last_heard, now)
            .await
    }
}

#[async_trait]
impl FiguresStore for SimStore {
    async fn queue(&self, sku: &Sku, shards: u16, limit: usize) -> Result<Vec<Request>> {
        self.round_trip().await;
        self.inner.queue(sku, shards, limit).await
    }

    async fn live_units(&self, sku: &Sku) -> Result<Vec<Request>> {
        self.round_trip().await;
        self.inner.live_units(sku).await
    }

    async fn contact_requests(&self, contact: &restock_core::ContactKey) -> Result<Vec<Request>> {
        self.round_trip().await;
        self.inner.contact_requests(contact).await
    }

    async fn stats(&self, sku: &Sku, shards: u16) -> Result<SkuStats> {
        self.round_trip().await;
        self.inner.stats(sku, shards).await
    }

    async fn counts(&self, sku: &Sku, shards: u16) -> Result<SkuStats> {
        self.round_trip().await;
        self.inner.counts(sku, shards).await
    }

    async fn anyone_waiting(&self, sku: &Sku, shards: u16) -> Result<bool> {
        self.round_trip().await;
        self.inner.anyone_waiting(sku, shards).await
    }

    async fn count_mail(&self, day: &str, add: MailDay) -> Result<MailDay> {
        self.round_trip().await;
        self.inner.count_mail(day, add).await
    }

    async fn mail_day(&self, day: &str) -> Result<MailDay> {
        self.round_trip().await;
        self.inner.mail_day(day).await
    }

    async fn item_history(&self, sku: &Sku, since: &str) -> Result<restock_store::ItemHistory> {
        self.round_trip().await;
        self.inner.item_history(sku, since).await
    }

    async fn requests_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<restock_store::RequestPage> {
        self.round_trip().await;
        self.inner.requests_page(after, limit).await
    }
}
