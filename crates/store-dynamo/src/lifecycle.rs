//! The writes the sections share: waking notify, and ending a live request
//! (its new state, its place freed for a new tap, any unit it had given
//! back), each conditional on the request being exactly as read.

use restock_core::story::Event;
use restock_core::{Freed, Millis, RequestId, RequestState, Sku};
use restock_store::port::Result;
use restock_store::retry::LEAVE_BUDGET;
use restock_store::{Request, StoreError, WakeKind};

use crate::DynamoStore;
use crate::attr::*;
use crate::codec::*;
use crate::slots::give_back;
use crate::tickets::Presence;
use crate::tx::{Change, MAX_ATTEMPTS, Outcome, PutIf, Tx, backoff};

/// What ending a request came to.
pub(crate) enum Ended {
    /// The transition was written.
    Done,
    /// The request is in a state the transition does not apply to.
    NotApplicable(RequestState),
    /// No such request.
    Missing,
}

/// A wake record for notify (the stream passes on only these).
/// `discriminator` keeps two wakes of the same millisecond apart.
pub(crate) fn wake_item(
    sku: &Sku,
    kind: WakeKind,
    episode: u32,
    now: Millis,
    discriminator: &str,
) -> Item {
    let mut item = key(
        wake_pk(sku, discriminator),
        format!("{now:013}#{}#{discriminator}", kind.as_str()),
    );
    item.insert(SKU.into(), s(sku.as_str()));
    item.insert(KIND.into(), s(kind.as_str()));
    item.insert(EPISODE.into(), n(episode));
    item.insert(WRITTEN_AT.into(), n(now));
    item.insert(TTL.into(), ttl(now, DELIVERY_TTL_SECS));
    item
}

/// Adds a wake record to a transaction.
pub(crate) fn wake(
    tx: &mut Tx<'_>,
    sku: &Sku,
    kind: WakeKind,
    episode: u32,
    now: Millis,
    discriminator: &str,
) -> Result<()> {
    tx.put(
        "wake",
        wake_item(sku, kind, episode, now, discriminator),
        PutIf::Always,
    )
}

/// Deletes live unit `r`'s marker, whichever it has (labels `unsent` and
/// `claimed`).
fn unit_gone(tx: &mut Tx<'_>, r: &Request) -> Result<()> {
    tx.delete("unsent", unit_key(&r.sku, &r.id, Marker::Unsent))?;
    tx.delete("claimed", unit_key(&r.sku, &r.id, Marker::Claimed))
}

/// Adds the writes that end live request `r` with `to`: labelled `request`,
/// `place`, `entry` (its queue entry, while waiting), `unsent` / `claimed`
/// (a live unit's marker) and (when a unit is freed) `counter` and `wake`, and for
/// a freed hold `slot` (its unit back in the allowance).
pub(crate) fn finish(
    tx: &mut Tx<'_>,
    r: &Request,
    to: RequestState,
    freed: Freed,
    now: Millis,
) -> Result<()> {
    let mut request = Change::on(key(request_pk(&r.id), REQUEST_SK))
        .set(TTL, ttl(now, FINISHED_TTL_SECS))
        .set(ENDED_AT, n(now))
        .set_all(state_attrs(&to))
        .tell(
            now,
            Event::Ended {
                status: to.status(),
            },
        )
        .remove_all(INDEX_KEYS)
        .when(format!("{STATUS} = :from"))
        .value(":from", s(r.state.status().as_str()));
    if let RequestState::Offered { expires_ms, .. } | RequestState::Held { expires_ms, .. } =
        r.state
    {
        request = request
            .when(format!("{EXPIRES} = :fromexp"))
            .value(":fromexp", n(expires_ms));
    }
    tx.update("request", request)?;
    tx.delete("place", key(place_pk(&r.contact_key), sku_pk(&r.sku)))?;
    if r.state == RequestState::Waiting {
        tx.delete("entry", queue_entry_key(r))?;
        let emptier = Presence::leaving(r).write(tx, &r.sku)?;
        tx.tidy(emptier);
    }
    if r.state == RequestState::Unconfirmed {
        tx.delete("confirm", confirm_key(&r.sku, &r.id))?;
        tx.delete("unconfirmed", unconfirmed_key(&r.sku, &r.id))?;
    }
    if matches!(
        r.state,
        RequestState::Offered { .. } | RequestState::Held { .. }
    ) {
        unit_gone(tx, r)?;
    }
    if freed != Freed::Nothing {
        let mut change = Change::on(key(sku_pk(&r.sku), STATE_SK))
            .set_expr(format!("{OUT} = {OUT} - :one"))
            .set(TOUCHED, n(now))
            .value(":one", n(1));
        if to == RequestState::Lapsed {
            change = change
                .set_expr(format!("{LAPSED} = if_not_exists({LAPSED}, :zero) + :one"))
                .value(":zero", n(0));
        }
        tx.update("counter", change)?;
        if freed == Freed::Hold {
            give_back(tx, &r.sku)?;
        }
        let episode = match r.state {
            RequestState::Offered { episode, .. } | RequestState::Held { episode, .. } => episode,
            _ => 0,
        };
        wake(tx, &r.sku, WakeKind::Freed, episode, now, &r.id.to_string())?;
    }
    Ok(())
}

/// Adds the writes that put offered request `r` back in the queue with its
/// original join key (the front of the line: it may be offered again in
/// this restock) and free its unit: labelled `request` (conditional on it
/// still offered with the same expiry, and on whatever `condition` adds),
/// `entry`, `unsent`, `counter` and `wake`. False when `r` is not offered.
pub(crate) fn requeue(
    tx: &mut Tx<'_>,
    r: &Request,
    now: Millis,
    condition: impl FnOnce(Change) -> Change,
) -> Result<bool> {
    let RequestState::Offered {
        episode,
        expires_ms,
    } = r.state
    else {
        return Ok(false);
    };
    let Ok((waiting, _)) = r.state.sold_out_again() else {
        return Ok(false);
    };
    let back = Request {
        state: waiting,
        last_offered_episode: None,
        reserve_hash: None,
        notice: None,
        ..r.clone()
    };
    tx.update(
        "request",
        condition(
            Change::on(key(request_pk(&r.id), REQUEST_SK))
                .set(STATUS, s("waiting"))
                .tell(now, Event::Back { episode })
                .set_all(index_attrs(&back))
                .remove_all([
                    EPISODE,
                    EXPIRES,
                    RESERVE_HASH,
                    LAST_EPISODE,
                    NOTICE,
                    REMIND_AT,
                    REMIND_HASH,
                    REMINDED,
                ])
                .when(format!("{STATUS} = :offered AND {EXPIRES} = :exp"))
                .value(":offered", s("offered"))
                .value(":exp", n(expires_ms)),
        ),
    )?;
    tx.put("entry", queue_entry(&back), PutIf::Always)?;
    Presence::arriving(&back).write(tx, &r.sku)?;
    unit_gone(tx, r)?;
    tx.update(
        "counter",
        Change::on(key(sku_pk(&r.sku), STATE_SK))
            .set_expr(format!("{OUT} = {OUT} - :one"))
            .set(TOUCHED, n(now))
            .value(":one", n(1)),
    )?;
    wake(tx, &r.sku, WakeKind::Freed, episode, now, &r.id.to_string())?;
    Ok(true)
}

impl DynamoStore {
    /// Ends a live request with `transition`, re-reading on a lost race.
    pub(crate) async fn end_request(
        &self,
        id: &RequestId,
        now: Millis,
        transition: impl Fn(&Request) -> Option<(RequestState, Freed)> + Send + Sync,
    ) -> Result<Ended> {
        let started = tokio::time::Instant::now();
        let mut attempt = 0;
        while attempt < MAX_ATTEMPTS {
            let Some(item) = self.request_item(id).await? else {
                return Ok(Ended::Missing);
            };
            let r = read_request(&item)?;
            let Some((to, freed)) = transition(&r) else {
                return Ok(Ended::NotApplicable(r.state));
            };
            let mut tx = self.tx();
            finish(&mut tx, &r, to, freed, now)?;
            match self.transact(tx).await {
                Ok(Outcome::Done) => return Ok(Ended::Done),
                Ok(Outcome::Cancelled(_)) => {
                    backoff(attempt).await;
                    attempt += 1;
                }
                // Lost every race for a while to writers on the same block
                // or counters: read again and go on while time allows.
                Err(StoreError::Contention(_)) if started.elapsed() < LEAVE_BUDGET => {}
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Contention(request_pk(id)))
    }
}
