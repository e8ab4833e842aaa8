//! Randomised histories: joins, stock events (stale and redelivered), notify
//! passes, clicks, purchases, time jumps, sweeps, opt-outs and cancellations
//! over two SKUs (one of them on two queue shards), driven through the real
//! routers and checked after every step against a small model and the
//! invariants I1–I8. proptest shrinks a failing history to a minimal one and
//! prints it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use restock_app::ports::{Clock, Outbox, Sent};
use restock_core::{Contact, Email, LinkToken, RequestId, RequestState, Sku};
use restock_e2e::*;
use restock_store::Store;

const SKUS: [&str; 2] = [CHAIR, "THROW-OAT"];
const SHOPPERS: u8 = 5;
const PEPPER: &str = "restock-test-contact-pepper-0123456789";

#[derive(Debug, Clone)]
pub enum Op {
    Join {
        who: u8,
        sku: usize,
    },
    Stock {
        sku: usize,
        level: u32,
        minutes_old: u8,
    },
    Redeliver,
    Pump,
    Click {
        who: u8,
        sku: usize,
    },
    Buy {
        who: u8,
        sku: usize,
    },
    Advance {
        minutes: u8,
    },
    Sweep,
    OptOut {
        who: u8,
    },
    Cancel {
        who: u8,
        sku: usize,
    },
    /// The shopper follows the newest confirmation link they were sent for
    /// the item (double opt-in; nothing when none was sent).
    Confirm {
        who: u8,
        sku: usize,
    },
}

pub fn op() -> impl Strategy<Value = Op> {
    let who = 0..SHOPPERS;
    let sku = 0..SKUS.len();
    prop_oneof![
        4 => (who.clone(), sku.clone()).prop_map(|(who, sku)| Op::Join { who, sku }),
        3 => (sku.clone(), 0u32..5, 0u8..3).prop_map(|(sku, level, minutes_old)| Op::Stock { sku, level, minutes_old }),
        1 => Just(Op::Redeliver),
        3 => Just(Op::Pump),
        3 => (who.clone(), sku.clone()).prop_map(|(who, sku)| Op::Click { who, sku }),
        2 => (who.clone(), sku.clone()).prop_map(|(who, sku)| Op::Buy { who, sku }),
        2 => (1u8..25).prop_map(|minutes| Op::Advance { minutes }),
        2 => Just(Op::Sweep),
        1 => who.clone().prop_map(|who| Op::OptOut { who }),
        1 => (who.clone(), sku.clone()).prop_map(|(who, sku)| Op::Cancel { who, sku }),
        3 => (who, sku).prop_map(|(who, sku)| Op::Confirm { who, sku }),
    ]
}

/// What the model expects, and what the checks remember between steps.
#[derive(Default)]
struct Model {
    requests: HashMap<(u8, usize), RequestId>,
    /// The manage token each request's 201 carried.
    tokens: HashMap<RequestId, String>,
    every: Vec<RequestId>,
    opted_out: HashSet<u8>,
    links: HashSet<String>,
    told: HashSet<(RequestId, u32)>,
    retold_allowed: HashMap<RequestId, u32>,
    deliveries: Vec<(String, String)>,
    outbox_seen: usize,
    /// Requests sent a confirmation (double opt-in): once each.
    confirmations: HashSet<RequestId>,
    units: HashMap<usize, u32>,
    states: HashMap<RequestId, RequestState>,
    counter: u64,
}

fn sku(i: usize) -> Sku {
    Sku::try_from(SKUS[i]).expect("sku")
}

fn email(world: &World, who: u8) -> String {
    world.email(&format!("shopper{who}"))
}

fn live(state: &RequestState) -> bool {
    matches!(
        state,
        RequestState::Unconfirmed
            | RequestState::Waiting
            | RequestState::Offered { .. }
            | RequestState::Held { .. }
    )
}

fn token_of(sent: &Sent) -> Option<LinkToken> {
    let link = sent.reserve_link()?;
    link.rsplit("/r/").next()?.parse().ok()
}

async fn step(world: &World, outbox: &Outbox, model: &mut Model, op: &Op) -> Result<(), String> {
    model.counter += 1;
    match *op {
        Op::Join { who, sku: s } => {
            let address = email(world, who);
            let request = axum::http::Request::post("/requests")
                .header("content-type", "application/json")
                .extension(restock_app::capture::ClientAddr(
                    format!("198.51.100.{who}").parse().expect("an address"),
                ))
                .body(axum::body::Body::from(
                    serde_json::json!({ "sku": SKUS[s], "name": format!("Shopper {who}"), "email": address, "consent": true })
                        .to_string(),
                ))
                .expect("request");
            let reply = world.call(Api::Capture, request).await;
            let existing = match model.requests.get(&(who, s)) {
                Some(id) => world
                    .store
                    .request(id)
                    .await
                    .map_err(|e| e.to_string())?
                    .filter(|r| live(&r.state))
                    .map(|r| r.id),
                None => None,
            };
            match reply.status.as_u16() {
                429 => {}
                409 => {
                    if !model.opted_out.contains(&who) {
                        return Err(format!(
                            "join refused as opted out, but {who} never opted out"
                        ));
                    }
                }
                200 | 201 => {
                    if model.opted_out.contains(&who) {
                        return Err(format!(
                            "I5: opted-out shopper {who} joined: {}",
                            reply.body
                        ));
                    }
                    let body = reply.json();
                    match (reply.status.as_u16(), existing) {
                        (200, Some(_)) => {
                            if body.get("request_id").is_some()
                                || body.get("manage_token").is_some()
                            {
                                return Err(format!(
                                    "a repeat tap handed out the request's id or secret: {body}"
                                ));
                            }
                        }
                        (200, None) => return Err("a first tap was answered 200".into()),
                        (_, Some(old)) => {
                            return Err(format!("I4: a second place for {who} beside {old}"));
                        }
                        (_, None) => {
                            let id: RequestId = body["request_id"]
                                .as_str()
                                .and_then(|s| s.parse().ok())
                                .ok_or("join answered no request id")?;
                            let token = body["manage_token"]
                                .as_str()
                                .ok_or("a new request came without its manage token")?;
                            model.requests.insert((who, s), id);
                            model.tokens.insert(id, token.to_owned());
                            model.every.push(id);
                        }
                    }
                }
                other => return Err(format!("join answered {other}: {}", reply.body)),
            }
        }
        Op::Stock {
            sku: s,
            level,
            minutes_old,
        } => {
            let at = world.clock.now_ms() - i64::from(minutes_old) * MIN;
            let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000)
                .expect("time")
                .format(&time::format_description::well_known::Rfc3339)
                .expect("format");
            let body = serde_json::json!({ "sku": SKUS[s], "level": level, "at": at }).to_string();
            let id = format!("msg_{}_{}", world.tag, model.counter);
            let reply = world
                .call(Api::Detect, world.stock_request(&id, &body))
                .await;
            if !reply.status.is_success() {
                return Err(format!(
                    "stock event answered {}: {}",
                    reply.status, reply.body
                ));
            }
            model.deliveries.push((id, body));
        }
        Op::Redeliver => {
            if let Some((id, body)) = model.deliveries.last().cloned() {
                let before: Vec<_> = stock_states(world).await?;
                let reply = world
                    .call(Api::Detect, world.stock_request(&id, &body))
                    .await;
                if !reply.status.is_success() {
                    return Err(format!("redelivery answered {}", reply.status));
                }
                let after = stock_states(world).await?;
                if before != after {
                    return Err("I3: a redelivered webhook changed the stock state".into());
                }
            }
        }
        Op::Pump => {
            for i in 0..SKUS.len() {
                restock_app::notify::notify_sku(&world.services, &sku(i))
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
        Op::Click { who, sku: s } => {
            let address = email(world, who);
            let newest = outbox
                .sent()
                .into_iter()
                .rev()
                .filter(|n| n.to() == address)
                .find_map(|n| token_of(&n).filter(|t| t.sku() == &sku(s)));
            if let Some(token) = newest {
                let reply = world.capture("POST", &format!("/r/{token}")).await;
                match reply.status.as_u16() {
                    303 | 200 | 410 => {}
                    409 => {
                        // Sold out again: back to the front, and may be told once more.
                        *model.retold_allowed.entry(token.request()).or_default() += 1;
                    }
                    other => return Err(format!("click answered {other}: {}", reply.body)),
                }
            }
        }
        Op::Buy { who, sku: s } => {
            if let Some(id) = model.requests.get(&(who, s)) {
                let request = world.store.request(id).await.map_err(|e| e.to_string())?;
                if let Some(RequestState::Held { hold, .. }) = request.map(|r| r.state) {
                    let body = serde_json::json!({ "hold": hold.to_string() }).to_string();
                    let id = format!("order_{}_{}", world.tag, model.counter);
                    let reply = world
                        .call(
                            Api::Detect,
                            world.signed_request("/webhooks/orders", &id, &body),
                        )
                        .await;
                    if !reply.status.is_success() {
                        return Err(format!("order answered {}: {}", reply.status, reply.body));
                    }
                }
            }
        }
        Op::Advance { minutes } => {
            world.advance(i64::from(minutes) * MIN);
            // Real time passes with the clock: a lagging index catches up.
            world.settle().await;
        }
        Op::Sweep => {
            // No settling here: a sweep right after other steps reads the
            // due index as it was at the last advance (stale candidates).
            restock_app::sweep::run(&world.services, restock_app::sweep::DEFAULT_LIMIT)
                .await
                .map_err(|e| e.to_string())?;
            let now = world.clock.now_ms();
            for id in &model.every {
                let r = world.store.request(id).await.map_err(|e| e.to_string())?;
                if let Some(
                    RequestState::Offered { expires_ms, .. }
                    | RequestState::Held { expires_ms, .. },
                ) = r.map(|r| r.state)
                    && expires_ms <= now
                {
                    return Err(format!(
                        "I6/I8: {id} still holds a unit after its expiry and a sweep"
                    ));
                }
            }
        }
        Op::OptOut { who } => {
            let contact =
                Contact::Email(Email::try_from(email(world, who).as_str()).expect("email"));
            world
                .store
                .opt_out_contact(
                    &contact.key(PEPPER.as_bytes()),
                    restock_core::OptOutVia::Team,
                    world.clock.now_ms(),
                )
                .await
                .map_err(|e| e.to_string())?;
            model.opted_out.insert(who);
        }
        Op::Confirm { who, sku: s } => {
            let address = email(world, who);
            let newest = outbox
                .sent()
                .into_iter()
                .rev()
                .filter(|n| n.to() == address)
                .find_map(|n| {
                    n.confirm_link()
                        .and_then(|l| {
                            l.rsplit('/')
                                .next()
                                .and_then(|t| t.parse::<LinkToken>().ok())
                        })
                        .filter(|t| t.sku() == &sku(s))
                });
            if let Some(token) = newest {
                let reply = world.capture("POST", &format!("/c/{token}")).await;
                // 404: the sign-up ended meanwhile (left, opted out).
                if !matches!(reply.status.as_u16(), 200 | 404) {
                    return Err(format!("confirm answered {}: {}", reply.status, reply.body));
                }
            }
        }
        Op::Cancel { who, sku: s } => {
            let Some(id) = model.requests.get(&(who, s)).copied() else {
                return Ok(());
            };
            let confirmed = world
                .store
                .request(&id)
                .await
                .map_err(|e| e.to_string())?
                .and_then(|r| r.consent)
                .is_some_and(|c| c.confirmed_at.is_some());
            if let Some(token) = model.tokens.get(&id) {
                let reply = world.manage("DELETE", token).await;
                match reply.status.as_u16() {
                    200 | 409 => {}
                    // Confirmed from the inbox: the browser's token no longer manages it.
                    404 if confirmed => {}
                    _ => return Err(format!("cancel answered {}: {}", reply.status, reply.body)),
                }
                if reply.status.as_u16() != 404 {
                    return Ok(());
                }
            }
            // The owner leaves through the manage link their inbox got.
            let address = email(world, who);
            let link = outbox
                .sent()
                .into_iter()
                .rev()
                .filter(|n| n.to() == address)
                .find_map(|n| n.link("m").filter(|l| l.contains(&id.to_string())));
            if let Some(link) = link {
                let reply = world.capture("POST", &path_of(&link)).await;
                if !matches!(reply.status.as_u16(), 200 | 409) {
                    return Err(format!(
                        "leaving by the inbox link answered {}: {}",
                        reply.status, reply.body
                    ));
                }
            }
        }
    }
    Ok(())
}

async fn stock_states(world: &World) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for i in 0..SKUS.len() {
        let s = world
            .store
            .snapshot(&sku(i))
            .await
            .map_err(|e| e.to_string())?;
        out.push(format!("{s:?}"));
    }
    Ok(out)
}

/// The invariants, after every step.
async fn check(world: &World, outbox: &Outbox, model: &mut Model) -> Result<(), String> {
    let now = world.clock.now_ms();
    let mut requests = Vec::new();
    for id in &model.every {
        let r = world
            .store
            .request(id)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("I8: request {id} was lost"))?;
        requests.push(r);
    }
    for (i, name) in SKUS.iter().enumerate() {
        let snapshot = world
            .store
            .snapshot(&sku(i))
            .await
            .map_err(|e| e.to_string())?;
        let c = snapshot.counters;
        let mine: Vec<_> = requests.iter().filter(|r| r.sku == sku(i)).collect();
        let offered = mine
            .iter()
            .filter(|r| matches!(r.state, RequestState::Offered { .. }))
            .count();
        let held = mine
            .iter()
            .filter(|r| matches!(r.state, RequestState::Held { .. }))
            .count();
        if (c.offered as usize, c.held as usize) != (offered, held) {
            return Err(format!(
                "counters drifted for {}: stored offered {} held {}, counted {offered} {held}",
                name, c.offered, c.held
            ));
        }
        let units = c.offered + c.held;
        let before = model.units.insert(i, units).unwrap_or(0);
        if units > before && units > c.level {
            return Err(format!(
                "I1: {} has {units} units out for a level of {}",
                name, c.level
            ));
        }
        // I2: whoever was newly offered had nobody older still waiting who
        // could have been told in this restock.
        for r in &mine {
            let RequestState::Offered { episode, .. } = r.state else {
                continue;
            };
            let was = model.states.get(&r.id);
            if matches!(was, Some(RequestState::Offered { episode: e, .. }) if *e == episode) {
                continue;
            }
            for w in &mine {
                if w.state == RequestState::Waiting
                    && w.key < r.key
                    && w.last_offered_episode != Some(episode)
                    && w.stale_at > now
                {
                    return Err(format!(
                        "I2: {} was offered before older {} in restock {episode}",
                        r.id, w.id
                    ));
                }
            }
        }
    }
    let confirming = world
        .services
        .settings()
        .await
        .map_err(|e| e.to_string())?
        .confirm;
    let sent = outbox.sent();
    for notice in &sent[model.outbox_seen..] {
        if let Some(link) = notice.confirm_link() {
            // A confirmation: once per sign-up, never to an opted-out shopper.
            let token: LinkToken = link
                .rsplit('/')
                .next()
                .and_then(|t| t.parse().ok())
                .ok_or("a confirmation link that does not parse")?;
            if !model.confirmations.insert(token.request()) {
                return Err(format!("a sign-up was sent two confirmations: {link}"));
            }
            let who = (0..SHOPPERS).find(|w| email(world, *w) == notice.to());
            if let Some(who) = who
                && model.opted_out.contains(&who)
            {
                return Err(format!(
                    "I5: a confirmation went to opted-out shopper {who}"
                ));
            }
            continue;
        }
        let link = notice.reserve_link().unwrap_or_default();
        if !model.links.insert(link.clone()) {
            return Err(format!("I8: the same offer was sent twice: {link}"));
        }
        let who = (0..SHOPPERS).find(|w| email(world, *w) == notice.to());
        if let Some(who) = who
            && model.opted_out.contains(&who)
        {
            return Err(format!("I5: a notice went to opted-out shopper {who}"));
        }
        let token = token_of(notice).ok_or("a notice without a reserve link")?;
        let request = requests
            .iter()
            .find(|r| r.id == token.request())
            .ok_or("a notice for an unknown request")?;
        if confirming
            && request
                .consent
                .as_ref()
                .is_none_or(|c| c.confirmed_at.is_none())
        {
            return Err(format!("{} was told without confirming", request.id));
        }
        let episode = match request.state {
            RequestState::Offered { episode, .. } | RequestState::Held { episode, .. } => episode,
            _ => request.last_offered_episode.unwrap_or(0),
        };
        if !model.told.insert((request.id, episode)) {
            let allowed = model.retold_allowed.entry(request.id).or_default();
            if *allowed == 0 {
                return Err(format!(
                    "I3: {} was told twice in restock {episode}",
                    request.id
                ));
            }
            *allowed -= 1;
        }
    }
    model.outbox_seen = sent.len();
    model.states = requests.iter().map(|r| (r.id, r.state)).collect();
    Ok(())
}

/// Runs one history on a fresh world, then lets every window pass and checks
/// that no unit is stuck; the error names the step that broke.
pub async fn run(world: &World, outbox: &Arc<Outbox>, ops: &[Op]) -> Result<(), String> {
    let mut model = Model::default();
    for (i, op) in ops.iter().enumerate() {
        step(world, outbox, &mut model, op)
            .await
            .map_err(|e| format!("step {i} {op:?}: {e}"))?;
        check(world, outbox, &mut model)
            .await
            .map_err(|e| format!("after step {i} {op:?}: {e}"))?;
    }
    settle_all(world, outbox, &mut model)
        .await
        .map_err(|e| format!("once every window had passed: {e}"))
}

/// Liveness: once the clock has passed every offer and hold window and the
/// sweep and notify have run (as often as they still change something),
/// every free unit of an item in stock is offered to someone still waiting:
/// nobody eligible waits while a unit sits free.
async fn settle_all(world: &World, outbox: &Arc<Outbox>, model: &mut Model) -> Result<(), String> {
    let settings = settings();
    let windows = settings
        .offer_window
        .as_millis()
        .max(settings.hold_window.as_millis());
    world.advance(windows + MIN);
    world.settle().await;
    let mut rounds = 0;
    loop {
        let swept = world.sweep().await;
        let mut offers = 0;
        for i in 0..SKUS.len() {
            offers += restock_app::notify::notify_sku(&world.services, &sku(i))
                .await
                .map_err(|e| e.to_string())?
                .offers;
        }
        check(world, outbox, model).await?;
        if offers == 0 && swept.lapsed + swept.released == 0 {
            break;
        }
        rounds += 1;
        if rounds > 20 {
            return Err("the sweep and notify never came to rest".into());
        }
    }
    let now = world.clock.now_ms();
    for (i, name) in SKUS.iter().enumerate() {
        let snapshot = world
            .store
            .snapshot(&sku(i))
            .await
            .map_err(|e| e.to_string())?;
        let stock = &snapshot.stock;
        if !stock.in_stock || stock.paused {
            continue;
        }
        let free = snapshot.counters.free(settings.list_share);
        if free == 0 {
            continue;
        }
        for id in &model.every {
            let r = world
                .store
                .request(id)
                .await
                .map_err(|e| e.to_string())?
                .ok_or("a request was lost")?;
            let opted_out = world
                .store
                .is_opted_out(&r.contact_key)
                .await
                .map_err(|e| e.to_string())?;
            if r.sku == sku(i)
                && r.state == RequestState::Waiting
                && r.last_offered_episode != Some(stock.episode)
                && r.stale_at > now
                && !opted_out
            {
                return Err(format!(
                    "a unit is stuck: {name} has {free} free in restock {} while {} waits",
                    stock.episode, r.id
                ));
            }
        }
    }
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Histories on the in-memory store (`RESTOCK_HISTORIES` overrides the count).
#[test]
fn random_histories_keep_every_invariant_in_memory() {
    memory_histories(false);
}

/// The same with the store's due index lagging (as it was at the last
/// advance of the clock, so a sweep between meets stale candidates).
#[test]
fn random_histories_keep_every_invariant_in_memory_with_the_index_lagging() {
    memory_histories(true);
}

/// The same with double opt-in on (as shipped): sign-ups are confirmed
/// from their confirmation link, or never, at random.
#[test]
fn random_histories_keep_every_invariant_with_double_opt_in() {
    memory_histories_with(false, true);
}

fn memory_histories(lagging: bool) {
    memory_histories_with(lagging, false);
}

fn memory_histories_with(lagging: bool, confirming: bool) {
    let cases = std::env::var("RESTOCK_HISTORIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    // What the histories reached (docs/RELIABILITY.md quotes the figures).
    let reached = Mutex::new(Reached::default());
    proptest!(config, |(ops in proptest::collection::vec(op(), 1..40))| {
        let result = runtime().block_on(async {
            let (world, outbox) = if lagging {
                World::memory_lagging().await
            } else {
                World::memory().await
            };
            if confirming {
                let mut settings = settings();
                settings.confirm = true;
                world.store.put_settings(&settings).await.expect("settings");
            }
            let result = run(&world, &outbox, &ops).await;
            reached.lock().expect("tally").add(&outbox.sent());
            result
        });
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    });
    let r = reached.into_inner().expect("tally");
    super::budget::report(&format!(
        "invariants in memory: {} histories (lagging {lagging}, double opt-in {confirming}): {} reached at least one notice, {} notices and {} confirmations sent in all",
        r.histories, r.with_a_notice, r.notices, r.confirmations
    ));
}

/// How far a run's histories went.
#[derive(Default)]
struct Reached {
    histories: usize,
    with_a_notice: usize,
    notices: usize,
    confirmations: usize,
}

impl Reached {
    fn add(&mut self, sent: &[Sent]) {
        let confirmations = sent.iter().filter(|s| s.confirm_link().is_some()).count();
        let notices = sent.len() - confirmations;
        self.histories += 1;
        self.with_a_notice += usize::from(notices > 0);
        self.notices += notices;
        self.confirmations += confirmations;
    }
}

/// Fewer, shorter histories on the DynamoDB store (moto behind the strict
/// double; `scripts/test.sh` runs them on the endpoint lagging 250 ms too).
#[test]
fn random_histories_keep_every_invariant_on_dynamodb() {
    let cases = std::env::var("RESTOCK_DYNAMODB_HISTORIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    };
    let (histories, steps) = (AtomicUsize::new(0), AtomicUsize::new(0));
    proptest!(config, |(ops in proptest::collection::vec(op(), 1..25))| {
        histories.fetch_add(1, Ordering::Relaxed);
        steps.fetch_add(ops.len(), Ordering::Relaxed);
        let result = runtime().block_on(async {
            let (world, outbox) = dynamo_world().await;
            run(&world, &outbox, &ops).await
        });
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    });
    super::budget::report(&format!(
        "invariants on DynamoDB: {} histories, {} steps, every invariant kept",
        histories.into_inner(),
        steps.into_inner()
    ));
}

pub(super) async fn dynamo_world() -> (World, Arc<Outbox>) {
    let outbox = Arc::new(Outbox::default());
    let store: Arc<dyn Store> = Arc::new(restock_store_dynamo::testing::dynamo_store().await);
    let lag = IndexLag::Dynamo(restock_store_dynamo::testing::index_lag());
    let world = World::new(
        store,
        outbox.clone(),
        Arc::new(restock_app::ports::FixedPhraser(Ok("It is back.".into()))),
        Arc::new(restock_app::ports::StaticKeyring(Arc::new(
            restock_app::ports::Secrets::from_json(&secrets_json()).expect("secret"),
        ))),
    )
    .await
    .lagging(lag);
    (world, outbox)
}
