//! notify's operations: a wave planned by the core over the whole queue, and each notice's claim and fate.

use async_trait::async_trait;
use restock_core::confirm;
use restock_core::story::Event;

use crate::*;

impl State {
    /// Offers `c` (first in line) the item's unit in restock `episode`:
    /// offered until the window ends, out of the queue, its links' hashes
    /// kept (reserve, opt-out, manage), counted as offered.
    fn offer(
        &mut self,
        sku: &Sku,
        c: &Candidate<RequestId>,
        episode: u32,
        now: Millis,
        window: restock_core::Window,
        [reserve, optout, manage]: [LinkToken; 3],
    ) -> Offer {
        let r = self
            .requests
            .get_mut(&c.request)
            .expect("queued requests exist");
        r.state = r
            .state
            .offer(episode, now, window)
            .expect("queued requests are waiting");
        if let RequestState::Offered {
            episode,
            expires_ms,
        } = r.state
        {
            r.story.tell(
                now,
                Event::Offered {
                    episode,
                    expires_ms,
                },
            );
        }
        r.last_offered_episode = Some(episode);
        r.reserve_hash = Some(reserve.secret_hash());
        (r.remind_at, r.remind_hash) = (None, None);
        r.optout_hashes.push(optout.secret_hash());
        r.inbox_hashes.push(manage.secret_hash());
        r.notice = None;
        let request = r.clone();
        self.queues.get_mut(sku).expect("queued").remove(&c.key);
        self.sku(sku).snapshot.counters.offered += 1;
        Offer {
            request,
            reserve,
            optout,
            manage,
        }
    }
}

#[async_trait]
impl NotifyStore for MemoryStore {
    async fn create_offers(
        &self,
        sku: &Sku,
        params: &WaveParams,
        now: Millis,
        random: Random<'_>,
    ) -> Result<Wave> {
        let mut s = self.lock();
        let rec = s.sku(sku);
        let stock = rec.snapshot.stock.clone();
        let mut wave = Wave {
            episode: stock.episode,
            ..Wave::default()
        };
        if !stock.in_stock || stock.paused {
            return Ok(wave);
        }
        let free = rec
            .snapshot
            .counters
            .free(params.share)
            .min(params.max_offers);
        let mut sleepers = params.sleepers(now);
        let candidates: Vec<Candidate<RequestId>> = s
            .queues
            .get(sku)
            .map(|q| {
                q.values()
                    .map(|id| {
                        let r = &s.requests[id];
                        let opted_out = s.optouts.contains_key(&r.contact_key);
                        WaveParams::candidate(r, opted_out, &mut sleepers)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let plan = plan_offers(free, stock.episode, now, candidates);
        (wave.asleep, wave.wake_at) = (plan.asleep, plan.wake_at);
        for (c, reason) in plan.skipped {
            let to = match reason {
                SkipReason::Stale => RequestState::Stale,
                SkipReason::OptedOut => RequestState::OptedOut,
                SkipReason::AlreadyOffered => continue,
            };
            s.finish(&c.request, to, Freed::Nothing, now);
            wave.skipped.push((c.request, reason));
        }
        for c in plan.offers {
            let links = [(); 3].map(|()| LinkToken::new(sku.clone(), c.request, random()));
            let offer = s.offer(sku, &c, stock.episode, now, params.offer_window, links);
            wave.offers.push(offer);
        }
        Ok(wave)
    }
    async fn pending_confirmations(
        &self,
        sku: &Sku,
        limit: usize,
        now: Millis,
    ) -> Result<Vec<Request>> {
        let s = self.lock();
        Ok(s.confirmations
            .get(sku)
            .map(|q| {
                q.values()
                    .filter(|(_, after)| *after <= now)
                    .filter_map(|(id, _)| s.requests.get(id))
                    .filter(|r| r.state == RequestState::Unconfirmed)
                    .take(limit)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }
    async fn claim_confirmation(
        &self,
        sku: &Sku,
        id: &RequestId,
        links: &ConfirmLinks,
        contact: &ContactKey,
        now: Millis,
    ) -> Result<Claim> {
        let mut s = self.lock();
        if s.optouts.contains_key(contact) {
            return Ok(Claim::OptedOut);
        }
        let Some(key) = s.requests.get(id).map(|r| r.key) else {
            return Ok(Claim::NotClaimable);
        };
        // Pending, and not covered by its address's day until later.
        let pending = match s.confirmations.get_mut(sku) {
            Some(q) if q.get(&key).is_some_and(|(_, after)| *after <= now) => {
                q.remove(&key).is_some()
            }
            _ => false,
        };
        if !pending || s.requests[id].state != RequestState::Unconfirmed {
            return Ok(Claim::NotClaimable);
        }
        let asked = s.asked.get(contact).filter(|(by, _)| by != id);
        if let Some(&(_, until)) = asked.filter(|(_, until)| !confirm::may_ask(Some(*until), now)) {
            // Its own confirmation goes when the address's day ends.
            s.confirmations
                .entry(sku.clone())
                .or_default()
                .insert(key, (*id, until));
            let r = s.requests.get_mut(id).expect("read above");
            r.story.tell(now, Event::Covered { until });
            return Ok(Claim::Covered { until });
        }
        s.asked
            .insert(contact.clone(), (*id, confirm::asked_until(now)));
        let r = s.requests.get_mut(id).expect("read above");
        r.confirm_hash = Some(links.confirm);
        r.story.tell(now, Event::Asked);
        r.inbox_hashes.push(links.manage);
        r.optout_hashes.push(links.optout);
        Ok(Claim::Claimed)
    }
    async fn release_confirmation(
        &self,
        sku: &Sku,
        id: &RequestId,
        confirm: &TokenHash,
    ) -> Result<()> {
        let mut s = self.lock();
        let Some(r) = s.requests.get_mut(id) else {
            return Ok(());
        };
        if r.state != RequestState::Unconfirmed || r.confirm_hash.as_ref() != Some(confirm) {
            return Ok(());
        }
        r.confirm_hash = None;
        let (key, contact) = (r.key, r.contact_key.clone());
        if s.asked.get(&contact).is_some_and(|(by, _)| by == id) {
            s.asked.remove(&contact);
        }
        s.confirmations
            .entry(sku.clone())
            .or_default()
            .insert(key, (*id, 0));
        Ok(())
    }
    async fn claim_notice(
        &self,
        _sku: &Sku,
        id: &RequestId,
        episode: u32,
        reserve: &TokenHash,
        contact: &ContactKey,
    ) -> Result<Claim> {
        let mut s = self.lock();
        if s.optouts.contains_key(contact) {
            return Ok(Claim::OptedOut);
        }
        let Some(r) = s.requests.get_mut(id) else {
            return Ok(Claim::NotClaimable);
        };
        match r.state {
            RequestState::Offered { episode: e, .. }
                if e == episode && r.notice.is_none() && r.reserve_hash == Some(*reserve) =>
            {
                r.notice = Some(NoticeOutcome::Sending);
                Ok(Claim::Claimed)
            }
            _ => Ok(Claim::NotClaimable),
        }
    }

    async fn record_notice(
        &self,
        id: &RequestId,
        episode: u32,
        outcome: NoticeOutcome,
        now: Millis,
    ) -> Result<()> {
        let mut s = self.lock();
        let Some(r) = s.requests.get_mut(id) else {
            return Ok(());
        };
        if r.last_offered_episode != Some(episode) {
            return Ok(());
        }
        let failed = matches!(outcome, NoticeOutcome::Failed { .. });
        // Told once however often the same notice is recorded.
        let told = matches!(outcome, NoticeOutcome::Sent { .. })
            && matches!(r.notice, None | Some(NoticeOutcome::Sending));
        if matches!(outcome, NoticeOutcome::Sent { .. }) {
            r.moments.told_ms = Some(now);
        }
        match &outcome {
            NoticeOutcome::Sent { message_id } => r.story.tell(
                now,
                Event::Sent {
                    episode,
                    message_id: message_id.clone(),
                },
            ),
            // Kept only when it ends the offer, as the DynamoDB store does.
            NoticeOutcome::Failed { reason } if r.state.undeliverable().is_ok() => r.story.tell(
                now,
                Event::NotSent {
                    episode,
                    reason: reason.clone(),
                },
            ),
            _ => {}
        }
        r.notice = Some(outcome);
        let (state, sku, contact) = (r.state, r.sku.clone(), r.contact_key.clone());
        if told {
            s.count(&sku, Counted::Told(episode), now);
            s.told.insert((contact, sku), now);
        }
        if let (true, Ok((to, freed))) = (failed, state.undeliverable()) {
            s.finish(id, to, freed, now);
        }
        Ok(())
    }
    async fn schedule_reminder(&self, id: &RequestId, episode: u32, at: Millis) -> Result<bool> {
        let mut s = self.lock();
        let Some(r) = s.requests.get_mut(id) else {
            return Ok(false);
        };
        let live = matches!(r.state, RequestState::Offered { episode: e, .. } if e == episode)
            && matches!(r.notice, Some(NoticeOutcome::Sent { .. }))
            && r.remind_hash.is_none();
        if live {
            r.remind_at = Some(at);
        }
        Ok(live)
    }

    async fn record_reminder(
        &self,
        id: &RequestId,
        episode: u32,
        message_id: &str,
        now: Millis,
    ) -> Result<()> {
        let mut s = self.lock();
        let Some(r) = s.requests.get_mut(id) else {
            return Ok(());
        };
        let event = Event::Reminded {
            episode,
            message_id: message_id.to_owned(),
        };
        // Once however often it is recorded.
        if r.story.chapters().iter().any(|c| c.event == event) {
            return Ok(());
        }
        r.story.tell(now, event);
        let sku = r.sku.clone();
        s.count(&sku, Counted::Reminded(episode), now);
        Ok(())
    }

    async fn release_notice(&self, _sku: &Sku, id: &RequestId, episode: u32) -> Result<()> {
        let mut s = self.lock();
        if let Some(r) = s.requests.get_mut(id)
            && matches!(r.state, RequestState::Offered { episode: e, .. } if e == episode)
            && r.notice == Some(NoticeOutcome::Sending)
        {
            r.notice = None;
        }
        Ok(())
    }
    async fn reissue_unsent(&self, sku: &Sku, random: Random<'_>) -> Result<Vec<Offer>> {
        let mut s = self.lock();
        let mut unsent: Vec<&mut Request> = s
            .requests
            .values_mut()
            .filter(|r| {
                &r.sku == sku
                    && r.notice.is_none()
                    && matches!(r.state, RequestState::Offered { .. })
            })
            .collect();
        unsent.sort_by_key(|r| r.key);
        Ok(unsent
            .into_iter()
            .map(|r| {
                let reserve = LinkToken::new(sku.clone(), r.id, random());
                let optout = LinkToken::new(sku.clone(), r.id, random());
                let manage = LinkToken::new(sku.clone(), r.id, random());
                r.reserve_hash = Some(reserve.secret_hash());
                (r.remind_at, r.remind_hash) = (None, None);
                r.optout_hashes.push(optout.secret_hash());
                r.inbox_hashes.push(manage.secret_hash());
                Offer {
                    request: r.clone(),
                    reserve,
                    optout,
                    manage,
                }
            })
            .collect())
    }
    async fn wake_again(&self, sku: &Sku, episode: u32, now: Millis) -> Result<()> {
        self.lock().wakes.push(Wake {
            sku: sku.clone(),
            kind: WakeKind::Continue,
            episode,
            at: now,
        });
        Ok(())
    }

    async fn wake_at(&self, sku: &Sku, at: Millis) -> Result<()> {
        let mut s = self.lock();
        let when = s.sleepers.entry(sku.clone()).or_insert(at);
        *when = (*when).min(at);
        Ok(())
    }

    async fn reserve_sends(&self, count: u32, interval_ms: Millis, now: Millis) -> Result<Millis> {
        let mut s = self.lock();
        let first = s.next_send.max(now);
        s.next_send = first + Millis::from(count) * interval_ms;
        Ok(first)
    }
    async fn sender_pause(&self) -> Result<Option<SenderPause>> {
        Ok(self.lock().pause.clone())
    }
    async fn pause_sender(
        &self,
        reason: &str,
        until: Millis,
        sku: &Sku,
        now: Millis,
    ) -> Result<bool> {
        let mut s = self.lock();
        let opened = s.pause.as_ref().is_none_or(|p| p.until <= now);
        if opened {
            let skus = s.pause.take().map(|p| p.skus).unwrap_or_default();
            s.pause = Some(SenderPause {
                since: now,
                until,
                reason: reason.to_owned(),
                skus,
            });
        }
        let pause = s.pause.as_mut().expect("just set");
        if !pause.skus.contains(sku) {
            pause.skus.push(sku.clone());
            pause.skus.sort();
        }
        Ok(opened)
    }
    async fn take_over_sender_pause(
        &self,
        reason: &str,
        until: Millis,
        now: Millis,
    ) -> Result<bool> {
        let mut s = self.lock();
        let Some(pause) = s.pause.as_mut().filter(|p| p.until > now) else {
            return Ok(false);
        };
        pause.reason = reason.to_owned();
        pause.until = until;
        Ok(true)
    }
    async fn resume_sender(&self) -> Result<Option<Vec<Sku>>> {
        Ok(self.lock().pause.take().map(|p| p.skus))
    }

    async fn restock_phrase(
        &self,
        sku: &Sku,
        episode: u32,
        language: &Language,
    ) -> Result<Option<String>> {
        let key = (sku.clone(), episode, language.clone());
        Ok(self.lock().phrases.get(&key).cloned())
    }
    async fn save_restock_phrase(
        &self,
        sku: &Sku,
        episode: u32,
        language: &Language,
        phrase: &str,
    ) -> Result<()> {
        self.lock()
            .phrases
            .insert((sku.clone(), episode, language.clone()), phrase.to_owned());
        Ok(())
    }
}
