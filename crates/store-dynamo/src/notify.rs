//! notify's operations: a wave of offers (written by `crate::wave`), each
//! notice's claim and fate, so no notice goes twice; the confirmations,
//! reminders, wakes, the send schedule and the sender's pause.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;
use restock_core::confirm;
use restock_core::story::Event;
use restock_core::{
    ContactKey, Language, LinkToken, Millis, RequestId, RequestState, Sku, TokenHash,
};
use restock_store::port::Result;
use restock_store::{
    Claim, ConfirmLinks, Counted, NoticeOutcome, NotifyStore, Offer, Random, Request, SenderPause,
    StoreError, WakeKind, Wave, WaveParams,
};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::{Ended, wake_item};
use crate::tx::{Change, MAX_ATTEMPTS, Outcome, PutIf, backoff};

fn read_pause(item: &Item) -> Result<SenderPause> {
    let skus = match item.get(HELD_SKUS) {
        Some(AttributeValue::Ss(set)) => set
            .iter()
            .map(|s| Sku::try_from(s.as_str()).map_err(|e| corrupt(item, e)))
            .collect::<Result<Vec<_>>>()?,
        _ => Vec::new(),
    };
    let mut skus = skus;
    skus.sort();
    Ok(SenderPause {
        since: get_n(item, PAUSE_FROM)?,
        until: get_n(item, PAUSE_TO)?,
        reason: get_s(item, PAUSE_WHY)?.to_owned(),
        skus,
    })
}

fn notice_json(outcome: &NoticeOutcome) -> String {
    serde_json::to_string(outcome).expect("notice outcomes serialise")
}

#[async_trait]
impl NotifyStore for DynamoStore {
    async fn create_offers(
        &self,
        sku: &Sku,
        params: &WaveParams,
        now: Millis,
        random: Random<'_>,
    ) -> Result<Wave> {
        // Once per wave, not per chunk: a wave's chunks take their bits
        // from the same few blocks.
        let mut emptier = Vec::new();
        let wave = self
            .offer_wave(sku, params, now, random, &mut emptier)
            .await;
        self.drop_empty_blocks(emptier).await;
        wave
    }

    async fn pending_confirmations(
        &self,
        sku: &Sku,
        limit: usize,
        now: Millis,
    ) -> Result<Vec<Request>> {
        self.pending(sku, limit, now).await
    }

    async fn claim_confirmation(
        &self,
        sku: &Sku,
        id: &RequestId,
        links: &ConfirmLinks,
        contact: &ContactKey,
        now: Millis,
    ) -> Result<Claim> {
        let until = confirm::asked_until(now);
        let mut tx = self.tx();
        tx.check_absent("opt-out", key(optout_pk(contact), ONE_SK))?;
        tx.update(
            "claim",
            Change::on(key(request_pk(id), REQUEST_SK))
                .set(CONFIRM_HASH, s(links.confirm.to_hex()))
                .tell(now, Event::Asked)
                .add(INBOX_HASH, hash_set(&[links.manage]))
                .add(OPTOUT_HASH, hash_set(&[links.optout]))
                .when(format!(
                    "{STATUS} = :unconfirmed AND attribute_not_exists({CONFIRM_HASH})"
                ))
                .value(":unconfirmed", s("unconfirmed")),
        )?;
        // Still pending, and not covered by its address's day until later.
        tx.delete_when(
            "pending",
            confirm_key(sku, id),
            format!("{REQUEST_ID} = :rid AND (attribute_not_exists({AFTER}) OR {AFTER} <= :now)"),
            [(":rid", s(id.to_string())), (":now", n(now))],
        )?;
        // The address's day (confirm::may_ask): never asked, the day over,
        // or this sign-up's own (a claim given back and taken again).
        tx.update(
            "asked",
            Change::on(asked_key(contact))
                .set(REQUEST_ID, s(id.to_string()))
                .set(ASK_UNTIL, n(until))
                .set(TTL, n(until / 1000 + 60))
                .when(format!(
                    "attribute_not_exists({PK}) OR {ASK_UNTIL} <= :now OR {REQUEST_ID} = :rid"
                ))
                .value(":now", n(now))
                .value(":rid", s(id.to_string())),
        )?;
        let Outcome::Cancelled(c) = self.transact(tx).await? else {
            return Ok(Claim::Claimed);
        };
        if c.failed("opt-out") {
            return Ok(Claim::OptedOut);
        }
        if c.failed("claim") || c.failed("pending") {
            return Ok(Claim::NotClaimable);
        }
        // Only the day stood in the way: covered until it ends.
        match c.item("asked") {
            Some(day) => self.cover(sku, id, get_n(&day, ASK_UNTIL)?, now).await,
            None => Ok(Claim::NotClaimable),
        }
    }

    async fn release_confirmation(
        &self,
        sku: &Sku,
        id: &RequestId,
        confirm: &TokenHash,
    ) -> Result<()> {
        let mut tx = self.tx();
        tx.update(
            "release",
            Change::on(key(request_pk(id), REQUEST_SK))
                .remove(CONFIRM_HASH)
                .when(format!("{STATUS} = :unconfirmed AND {CONFIRM_HASH} = :h"))
                .value(":unconfirmed", s("unconfirmed"))
                .value(":h", s(confirm.to_hex())),
        )?;
        tx.put("confirm", confirm_marker(sku, id), PutIf::Always)?;
        // Cancelled: confirmed, ended or given back meanwhile; nothing to do.
        let Outcome::Done = self.transact(tx).await? else {
            return Ok(());
        };
        // Nothing reached the address: its day, if this sign-up's, ends.
        let Some(item) = self.request_item(id).await? else {
            return Ok(());
        };
        let contact = read_request(&item)?.contact_key;
        let mut tx = self.tx();
        tx.delete_if("asked", asked_key(&contact), REQUEST_ID, s(id.to_string()))?;
        self.transact(tx).await.map(drop)
    }

    async fn claim_notice(
        &self,
        sku: &Sku,
        id: &RequestId,
        episode: u32,
        reserve: &TokenHash,
        contact: &ContactKey,
    ) -> Result<Claim> {
        let mut tx = self.tx();
        tx.check_absent("opt-out", key(optout_pk(contact), ONE_SK))?;
        tx.update(
            "claim",
            Change::on(key(request_pk(id), REQUEST_SK))
                .set(NOTICE, s(notice_json(&NoticeOutcome::Sending)))
                .when(format!(
                    "{STATUS} = :offered AND {EPISODE} = :e AND attribute_not_exists({NOTICE}) AND {RESERVE_HASH} = :rh"
                ))
                .value(":offered", s("offered"))
                .value(":e", n(episode))
                .value(":rh", s(reserve.to_hex())),
        )?;
        tx.delete("unsent", unit_key(sku, id, Marker::Unsent))?;
        tx.put(
            "claimed",
            unit_marker(sku, id, Marker::Claimed),
            PutIf::Always,
        )?;
        Ok(match self.transact(tx).await? {
            Outcome::Done => Claim::Claimed,
            Outcome::Cancelled(c) if c.failed("opt-out") => Claim::OptedOut,
            Outcome::Cancelled(_) => Claim::NotClaimable,
        })
    }

    async fn record_notice(
        &self,
        id: &RequestId,
        episode: u32,
        outcome: NoticeOutcome,
        now: Millis,
    ) -> Result<()> {
        if matches!(outcome, NoticeOutcome::Failed { .. }) {
            let ended = self
                .end_request(id, now, |r| match r.state {
                    RequestState::Offered { episode: e, .. } if e == episode => {
                        r.state.undeliverable().ok()
                    }
                    _ => None,
                })
                .await?;
            if !matches!(ended, Ended::Done) {
                return Ok(());
            }
        }
        let sent = matches!(outcome, NoticeOutcome::Sent { .. });
        let mut change = Change::on(key(request_pk(id), REQUEST_SK));
        if sent {
            change = change.set(TOLD_AT, n(now));
        }
        let chapter = match &outcome {
            NoticeOutcome::Sent { message_id } => Some(Event::Sent {
                episode,
                message_id: message_id.clone(),
            }),
            NoticeOutcome::Failed { reason } => Some(Event::NotSent {
                episode,
                reason: reason.clone(),
            }),
            NoticeOutcome::Sending => None,
        };
        if let Some(chapter) = chapter {
            change = change.tell(now, chapter);
        }
        let change = change
            .set(NOTICE, s(notice_json(&outcome)))
            .when(format!("{LAST_EPISODE} = :e"))
            .value(":e", n(episode));
        if !sent {
            return change.apply(self).await.map(drop);
        }
        // Told once however often the same notice is recorded: counted when
        // this write is the one that moved it on from unsent or sending.
        let first = change
            .clone()
            .when(format!(
                "attribute_not_exists({NOTICE}) OR {NOTICE} = :sending"
            ))
            .value(":sending", s(notice_json(&NoticeOutcome::Sending)))
            .apply_returning(self)
            .await?;
        match first {
            Some(item) => {
                let sku = get_s(&item, SKU)?;
                let sku = Sku::try_from(sku).map_err(|e| corrupt(&item, e))?;
                self.count(&sku, id, Counted::Told(episode), now).await;
                // The contact was told about the item: an order of theirs
                // without a hold may count as assisted (kept as long as the
                // longest attribution window).
                let contact = get_s(&item, CONTACT_KEY)?;
                let mut marker = key(
                    told_pk(&restock_core::ContactKey::from_stored(contact)),
                    sku.as_str(),
                );
                marker.insert(TOLD.into(), n(now));
                marker.insert(TTL.into(), ttl(now, TOLD_TTL_SECS));
                self.put_item(marker).await?;
                Ok(())
            }
            None => change.apply(self).await.map(drop),
        }
    }

    async fn schedule_reminder(&self, id: &RequestId, episode: u32, at: Millis) -> Result<bool> {
        Change::on(key(request_pk(id), REQUEST_SK))
            .set(REMIND_AT, n(at))
            .set(DUE, n(at))
            .when(format!(
                "{STATUS} = :offered AND {EPISODE} = :e AND begins_with({NOTICE}, :sent) AND attribute_not_exists({REMIND_HASH}) AND {EXPIRES} > :at"
            ))
            .value(":offered", s("offered"))
            .value(":e", n(episode))
            .value(":sent", s(r#"{"notice":"sent""#))
            .value(":at", n(at))
            .apply(self)
            .await
    }

    async fn record_reminder(
        &self,
        id: &RequestId,
        episode: u32,
        message_id: &str,
        now: Millis,
    ) -> Result<()> {
        let recorded = Change::on(key(request_pk(id), REQUEST_SK))
            .set(REMINDED, s(message_id))
            .tell(
                now,
                Event::Reminded {
                    episode,
                    message_id: message_id.to_owned(),
                },
            )
            .when(format!(
                "{LAST_EPISODE} = :e AND (attribute_not_exists({REMINDED}) OR {REMINDED} <> :m)"
            ))
            .value(":e", n(episode))
            .value(":m", s(message_id))
            .apply_returning(self)
            .await?;
        // Counted once however often it is recorded.
        if let Some(item) = recorded {
            let sku = Sku::try_from(get_s(&item, SKU)?).map_err(|e| corrupt(&item, e))?;
            self.count(&sku, id, Counted::Reminded(episode), now).await;
        }
        Ok(())
    }

    async fn release_notice(&self, sku: &Sku, id: &RequestId, episode: u32) -> Result<()> {
        let mut tx = self.tx();
        tx.update(
            "release",
            Change::on(key(request_pk(id), REQUEST_SK))
                .remove(NOTICE)
                .when(format!(
                    "{STATUS} = :offered AND {EPISODE} = :e AND {NOTICE} = :sending"
                ))
                .value(":sending", s(notice_json(&NoticeOutcome::Sending)))
                .value(":offered", s("offered"))
                .value(":e", n(episode)),
        )?;
        tx.put(
            "unsent",
            unit_marker(sku, id, Marker::Unsent),
            PutIf::Always,
        )?;
        tx.delete("claimed", unit_key(sku, id, Marker::Claimed))?;
        // Cancelled: the offer moved on (clicked, ended), nothing to give back.
        self.transact(tx).await.map(drop)
    }

    async fn reissue_unsent(&self, sku: &Sku, random: Random<'_>) -> Result<Vec<Offer>> {
        // The unsent markers, read strongly consistent (a claim given back a
        // moment ago is seen), then each request read back as it is now.
        let markers = self.units(sku, Some(Marker::Unsent)).await?;
        let mut unsent = Vec::with_capacity(markers.len());
        for marker in &markers {
            let id: RequestId = get_s(marker, REQUEST_ID)?
                .parse()
                .map_err(|e| corrupt(marker, e))?;
            if let Some(item) = self.request_item(&id).await? {
                let r = read_request(&item)?;
                if matches!(r.state, RequestState::Offered { .. }) && r.notice.is_none() {
                    unsent.push(r);
                }
            }
        }
        unsent.sort_by_key(|r| r.key);
        let mut offers = Vec::new();
        for r in unsent {
            let reserve = LinkToken::new(sku.clone(), r.id, random());
            let optout = LinkToken::new(sku.clone(), r.id, random());
            let manage = LinkToken::new(sku.clone(), r.id, random());
            let RequestState::Offered { episode, .. } = r.state else {
                continue;
            };
            let rearmed = Change::on(key(request_pk(&r.id), REQUEST_SK))
                .set(RESERVE_HASH, s(reserve.secret_hash().to_hex()))
                .add(OPTOUT_HASH, hash_set(&[optout.secret_hash()]))
                .add(INBOX_HASH, hash_set(&[manage.secret_hash()]))
                .when(format!(
                    "{STATUS} = :offered AND {EPISODE} = :e AND attribute_not_exists({NOTICE})"
                ))
                .value(":offered", s("offered"))
                .value(":e", n(episode))
                .apply(self)
                .await?;
            // Not re-armed: claimed, clicked or ended meanwhile, not ours to send.
            if rearmed {
                offers.push(Offer {
                    request: Request {
                        reserve_hash: Some(reserve.secret_hash()),
                        optout_hashes: [r.optout_hashes.as_slice(), &[optout.secret_hash()]]
                            .concat(),
                        inbox_hashes: [r.inbox_hashes.as_slice(), &[manage.secret_hash()]].concat(),
                        ..r
                    },
                    reserve,
                    optout,
                    manage,
                });
            }
        }
        Ok(offers)
    }

    async fn wake_again(&self, sku: &Sku, episode: u32, now: Millis) -> Result<()> {
        self.put_item(wake_item(sku, WakeKind::Continue, episode, now, "continue"))
            .await
    }

    async fn wake_at(&self, sku: &Sku, at: Millis) -> Result<()> {
        // In the `due` index under its own partition, where the sweep finds
        // it; a later time never replaces an earlier one.
        Change::on(key(sku_pk(sku), SLEEPERS_SK))
            .set(DUE_PK, s(SLEEPERS_DUE_PK))
            .set(DUE, n(at))
            .set(SKU, s(sku.as_str()))
            .when(format!("attribute_not_exists({DUE}) OR {DUE} > :at"))
            .value(":at", n(at))
            .apply(self)
            .await
            .map(drop)
    }

    async fn reserve_sends(&self, count: u32, interval_ms: Millis, now: Millis) -> Result<Millis> {
        // Read, then move the schedule on only if nobody else did meanwhile:
        // concurrent passes each get slots of their own.
        for attempt in 0..MAX_ATTEMPTS {
            let next: Option<Millis> = match self.get(SENDER_PK.to_owned(), PACE_SK).await? {
                Some(item) => opt_n(&item, NEXT_SEND)?,
                None => None,
            };
            let first = next.unwrap_or(0).max(now);
            let mut change = Change::on(key(SENDER_PK, PACE_SK))
                .set(NEXT_SEND, n(first + Millis::from(count) * interval_ms));
            change = match next {
                Some(old) => change
                    .when(format!("{NEXT_SEND} = :old"))
                    .value(":old", n(old)),
                None => change.when(format!("attribute_not_exists({NEXT_SEND})")),
            };
            if change.apply(self).await? {
                return Ok(first);
            }
            backoff(attempt).await;
        }
        Err(StoreError::Contention(format!("{SENDER_PK}/{PACE_SK}")))
    }

    async fn sender_pause(&self) -> Result<Option<SenderPause>> {
        self.get(SENDER_PK.to_owned(), PAUSE_SK)
            .await?
            .as_ref()
            .map(read_pause)
            .transpose()
    }

    async fn pause_sender(
        &self,
        reason: &str,
        until: Millis,
        sku: &Sku,
        now: Millis,
    ) -> Result<bool> {
        let held = AttributeValue::Ss(vec![sku.to_string()]);
        let opened = Change::on(key(SENDER_PK, PAUSE_SK))
            .set(PAUSE_FROM, n(now))
            .set(PAUSE_TO, n(until))
            .set(PAUSE_WHY, s(reason))
            .add(HELD_SKUS, held.clone())
            .when(format!(
                "attribute_not_exists({PAUSE_TO}) OR {PAUSE_TO} <= :now"
            ))
            .value(":now", n(now))
            .apply(self)
            .await?;
        if !opened {
            // Already paused: as it is, with this item noted too.
            Change::on(key(SENDER_PK, PAUSE_SK))
                .add(HELD_SKUS, held)
                .when(format!("attribute_exists({PAUSE_TO})"))
                .apply(self)
                .await?;
        }
        Ok(opened)
    }

    async fn take_over_sender_pause(
        &self,
        reason: &str,
        until: Millis,
        now: Millis,
    ) -> Result<bool> {
        Change::on(key(SENDER_PK, PAUSE_SK))
            .set(PAUSE_TO, n(until))
            .set(PAUSE_WHY, s(reason))
            .when(format!("{PAUSE_TO} > :now"))
            .value(":now", n(now))
            .apply(self)
            .await
    }

    async fn resume_sender(&self) -> Result<Option<Vec<Sku>>> {
        let old = self
            .sdk()
            .delete_item()
            .table_name(self.table())
            .set_key(Some(key(SENDER_PK, PAUSE_SK)))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| StoreError::backend(crate::DYNAMODB, "DeleteItem", e))?;
        old.attributes
            .as_ref()
            .map(|item| read_pause(item).map(|p| p.skus))
            .transpose()
    }

    async fn restock_phrase(
        &self,
        sku: &Sku,
        episode: u32,
        language: &Language,
    ) -> Result<Option<String>> {
        let Some(item) = self.get(sku_pk(sku), STATE_SK).await? else {
            return Ok(None);
        };
        let (phrase, stored_episode) = phrase_attrs(language);
        let stored_for: Option<u32> = opt_n(&item, &stored_episode)?;
        Ok(opt_s(&item, &phrase)
            .filter(|_| stored_for == Some(episode))
            .map(str::to_owned))
    }

    async fn save_restock_phrase(
        &self,
        sku: &Sku,
        episode: u32,
        language: &Language,
        phrase: &str,
    ) -> Result<()> {
        let (phrase_attr, episode_attr) = phrase_attrs(language);
        Change::on(key(sku_pk(sku), STATE_SK))
            .set(&phrase_attr, s(phrase))
            .set(&episode_attr, n(episode))
            .apply(self)
            .await
            .map(drop)
    }
}

/// The attributes of a restock's phrase in one language and the restock it
/// was written for: `phrase_de`, `phrase_epi_de` (`-` in a tag becomes `_`).
fn phrase_attrs(language: &Language) -> (String, String) {
    let tag = language.to_string().replace('-', "_");
    (format!("{PHRASE}_{tag}"), format!("{PHRASE_EPISODE}_{tag}"))
}
