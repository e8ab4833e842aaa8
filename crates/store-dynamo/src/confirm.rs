//! Double opt-in's reads and writes: the pending confirmations a pass may
//! send, a sign-up covered by its address's day, and the one transaction
//! that moves an unconfirmed request into the queue at the place it signed
//! up at.

use restock_core::story::Event;
use restock_core::{Millis, RequestId, RequestState, Sku, TokenHash};
use restock_store::port::Result;
use restock_store::{Claim, Consent, Request, StoreError, WakeKind};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::wake;
use crate::table::SPREAD;
use crate::tickets::Presence;
use crate::tx::{Change, Outcome, PutIf, Tx};

impl DynamoStore {
    /// The transaction that confirms unconfirmed request `r` but for its
    /// own update, returned beside it (the caller adds its conditions):
    /// into the queue at the place it signed up at, its wait `lifetime_ms`
    /// from then, its consent confirmed `now`; the inbox proved ownership,
    /// so the joining browser's secret ends and `owner` (the confirmation
    /// page's manage link) joins the inbox's.
    pub(crate) fn confirm_tx(
        &self,
        r: &Request,
        owner: TokenHash,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Result<(Tx<'_>, (Request, Change))> {
        let waiting = r
            .state
            .confirm()
            .map_err(|e| StoreError::corrupt(request_pk(&r.id), e))?;
        let confirmed = Request {
            state: waiting,
            stale_at: r.key.joined_ms + lifetime_ms,
            manage_hash: None,
            inbox_hashes: [r.inbox_hashes.as_slice(), &[owner]].concat(),
            consent: r.consent.clone().map(|c| Consent {
                confirmed_at: Some(now),
                ..c
            }),
            ..r.clone()
        };
        let mut change = Change::on(key(request_pk(&r.id), REQUEST_SK))
            .set_all(state_attrs(&waiting))
            .tell(now, restock_core::story::Event::Confirmed)
            .set(STALE_AT, n(confirmed.stale_at))
            .set_all(index_attrs(&confirmed))
            .remove_all([MANAGE_HASH])
            .when(format!("{STATUS} = :from"))
            .value(":from", s(r.state.status().as_str()))
            .add(INBOX_HASH, hash_set(&[owner]));
        if let Some(consent) = &confirmed.consent {
            change = change.set(
                CONSENT,
                s(serde_json::to_string(consent).expect("consent serialises")),
            );
        }
        let mut tx = self.tx();
        tx.put("entry", queue_entry(&confirmed), PutIf::Always)?;
        Presence::arriving(&confirmed).write(&mut tx, &confirmed.sku)?;
        tx.delete("unconfirmed", unconfirmed_key(&r.sku, &r.id))?;
        tx.delete("pending", confirm_key(&r.sku, &r.id))?;
        // Units may be free now: notify looks.
        wake(
            &mut tx,
            &r.sku,
            WakeKind::Confirm,
            0,
            now,
            &r.id.to_string(),
        )?;
        Ok((tx, (confirmed, change)))
    }

    /// Up to `limit` pending confirmations of `sku` that may go at `now`
    /// ([`restock_store::NotifyStore::pending_confirmations`]).
    pub(crate) async fn pending(
        &self,
        sku: &Sku,
        limit: usize,
        now: Millis,
    ) -> Result<Vec<Request>> {
        // Up to `limit` pending markers that may go now, read strongly
        // consistent (a sign-up a moment ago is found), then their requests
        // as they are now (one BatchGetItem per 100): a pass costs the same
        // whatever the backlog. Each of the SKU's partitions, side by side,
        // a share of `limit` each; markers covered by their address's day
        // are passed over (read, not returned) until it ends.
        let share = limit.clamp(1, 1000).div_ceil(usize::from(SPREAD));
        let markers: Vec<Item> = futures::future::try_join_all((0..SPREAD).map(|p| {
            self.query_up_to(
                self.query()
                    .consistent_read(true)
                    .key_condition_expression(format!("{PK} = :c"))
                    .filter_expression(format!("attribute_not_exists({AFTER}) OR {AFTER} <= :now"))
                    .expression_attribute_values(":c", s(confirm_pk(sku, p)))
                    .expression_attribute_values(":now", n(now)),
                share,
            )
        }))
        .await?
        .into_iter()
        .flatten()
        .collect();
        let mut keys = Vec::with_capacity(markers.len());
        for marker in &markers {
            let id: RequestId = get_s(marker, REQUEST_ID)?
                .parse()
                .map_err(|e| corrupt(marker, e))?;
            keys.push(key(request_pk(&id), REQUEST_SK));
        }
        let mut pending = Vec::with_capacity(keys.len());
        for item in self.get_consistent(keys).await? {
            let r = read_request(&item)?;
            if r.state == RequestState::Unconfirmed && r.confirm_hash.is_none() {
                pending.push(r);
            }
        }
        pending.sort_by_key(|r| r.key);
        pending.truncate(limit);
        Ok(pending)
    }

    /// Marks sign-up `id` covered by its address's day until `until`: its
    /// pending confirmation passed over until then, its story told why.
    /// Conditional on the sign-up still unconfirmed and unclaimed, which
    /// is also when its pending confirmation exists (a claim, a
    /// confirmation or its end deletes it).
    pub(crate) async fn cover(
        &self,
        sku: &Sku,
        id: &RequestId,
        until: Millis,
        now: Millis,
    ) -> Result<Claim> {
        let mut tx = self.tx();
        tx.update(
            "pending",
            Change::on(confirm_key(sku, id)).set(AFTER, n(until)),
        )?;
        tx.update(
            "covered",
            Change::on(key(request_pk(id), REQUEST_SK))
                .tell(now, Event::Covered { until })
                .when(format!(
                    "attribute_not_exists({CONFIRM_HASH}) AND {STATUS} = :unconfirmed"
                ))
                .value(":unconfirmed", s("unconfirmed")),
        )?;
        Ok(match self.transact(tx).await? {
            Outcome::Done => Claim::Covered { until },
            Outcome::Cancelled(_) => Claim::NotClaimable,
        })
    }
}
