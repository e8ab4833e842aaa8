//! A confirmation's writes: the one transaction that moves an unconfirmed
//! request into the queue at the place it signed up at, and the contact's
//! other unconfirmed requests the same tap confirms.

use restock_core::{Millis, RequestId, TokenHash};
use restock_store::port::Result;
use restock_store::{Consent, Request, StoreError, WakeKind};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::lifecycle::wake;
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
        owner: Option<TokenHash>,
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
            inbox_hashes: [r.inbox_hashes.as_slice(), owner.as_slice()].concat(),
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
            .value(":from", s(r.state.status().as_str()));
        if let Some(owner) = owner {
            change = change.add(INBOX_HASH, hash_set(&[owner]));
        }
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

    /// Confirms the other unconfirmed sign-ups of `confirmed`'s address
    /// (its places, read strongly consistent), each in a transaction of
    /// its own conditional on it still unconfirmed.
    pub(crate) async fn confirm_the_rest(
        &self,
        confirmed: &Request,
        lifetime_ms: Millis,
        now: Millis,
    ) -> Result<Vec<Request>> {
        let mut also = Vec::new();
        for place in self.partition(place_pk(&confirmed.contact_key)).await? {
            let rid: RequestId = get_s(&place, REQUEST_ID)?
                .parse()
                .map_err(|e| corrupt(&place, e))?;
            if rid == confirmed.id {
                continue;
            }
            let Some(item) = self.request_item(&rid).await? else {
                continue;
            };
            let r = read_request(&item)?;
            if r.state.confirm().is_err() {
                continue;
            }
            let (mut tx, (other, change)) = self.confirm_tx(&r, None, lifetime_ms, now)?;
            tx.update("request", change)?;
            // Cancelled: it ended or was confirmed meanwhile.
            if let Outcome::Done = self.transact(tx).await? {
                also.push(other);
            }
        }
        Ok(also)
    }
}
