//! Real parallel requests against the DynamoDB API: the conditional writes,
//! not a mutex, must keep the invariants. Each test fires many operations at
//! once and counts outcomes.

use std::collections::HashSet;
use std::sync::Arc;

use crate::support::set_level;
use futures::future::join_all;
use restock_core::{
    Contact, Email, HoldId, Level, ListShare, RequestId, Rules, Sku, StockEvent, Window,
};
use restock_store::prelude::*;
use restock_store::{
    ApplyOutcome, ExpireOutcome, HoldOutcome, JoinOutcome, NewRequest, WakeKind, WaveParams,
};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, dynamo_store};
use time::OffsetDateTime;

const T0: i64 = 1_796_342_400_000;
const MIN: i64 = 60_000;
const RULES: Rules = Rules {
    threshold: 1,
    max_jump: 100_000,
    max_level: 100_000,
};
const WINDOW: Window = Window::from_mins(15);

fn sku() -> Sku {
    Sku::try_from("DROP-1").unwrap()
}

fn contact(i: usize) -> Contact {
    Contact::Email(Email::try_from(format!("fan{i}@example.com").as_str()).unwrap())
}

fn new_request(i: usize, id_seed: u64, now: i64) -> NewRequest {
    let mut random = testing::random(id_seed);
    NewRequest {
        id: RequestId::from_random(random()),
        sku: sku(),
        name: "Fan".try_into().unwrap(),
        contact: contact(i),
        contact_key: contact(i).key(b"pepper"),
        now,
        shards: 1,
        lifetime_ms: 90 * 86_400_000,
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: None,
        consent: None,
    }
}

fn event(level: u32, at: i64, delivery: &str) -> StockEvent {
    StockEvent {
        delivery_id: delivery.into(),
        item: restock_core::ItemRef::Sku { sku: sku() },
        location: "default".into(),
        level: Level::Tracked(level),
        at: OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).unwrap(),
        untimed: false,
    }
}

fn params() -> WaveParams {
    WaveParams {
        share: ListShare::ALL,
        offer_window: WINDOW,
        shards: 1,
        max_offers: 10_000,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    }
}

async fn fill(store: &DynamoStore, n: usize) {
    for i in 0..n {
        assert!(matches!(
            store
                .join(new_request(i, 1_000 + i as u64, T0 + i as i64))
                .await
                .unwrap(),
            JoinOutcome::Joined(_)
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_identical_joins_make_one_request() {
    let store = Arc::new(dynamo_store().await);
    let taps = (0..50).map(|k| {
        let store = store.clone();
        // Same person, same item, fifty taps: each draws its own fresh id.
        tokio::spawn(async move {
            store
                .join(new_request(7, 50 + k, T0 + k as i64))
                .await
                .unwrap()
        })
    });
    let outcomes: Vec<JoinOutcome> = join_all(taps)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let ids: HashSet<RequestId> = outcomes
        .iter()
        .map(|o| match o {
            JoinOutcome::Joined(r) | JoinOutcome::AlreadyWaiting(r) => r.id,
            JoinOutcome::OptedOut => panic!("not opted out"),
        })
        .collect();
    assert_eq!(ids.len(), 1, "every caller is told the same request");
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| matches!(o, JoinOutcome::Joined(_)))
            .count(),
        1
    );
    assert_eq!(store.stats(&sku(), 1).await.unwrap().waiting, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_clicks_on_fifty_offers_hold_exactly_five() {
    let store = Arc::new(dynamo_store().await);
    fill(&store, 50).await;
    set_level(&store, &sku(), 50, T0 + 100).await;
    let mut random = testing::random(3);
    let wave = store
        .create_offers(&sku(), &params(), T0 + 100, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 50);
    // The shop sells 45 elsewhere before anyone clicks: 5 units, 50 live links.
    set_level(&store, &sku(), 5, T0 + 200).await;
    let clicks = (0..200).map(|k| {
        let store = store.clone();
        let token = wave.offers[k % 50].reserve.clone();
        tokio::spawn(async move {
            let hold = HoldId::from_random(testing::random(10_000 + k as u64)());
            store
                .take_hold(&token, hold, 1, T0 + MIN, WINDOW)
                .await
                .unwrap()
        })
    });
    let outcomes: Vec<HoldOutcome> = join_all(clicks)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let holds: HashSet<HoldId> = outcomes
        .iter()
        .filter_map(|o| match o {
            HoldOutcome::Held { hold, .. } | HoldOutcome::AlreadyHeld { hold, .. } => Some(*hold),
            _ => None,
        })
        .collect();
    let c = store.snapshot(&sku()).await.unwrap().counters;
    let mut states = std::collections::HashMap::new();
    for o in &wave.offers {
        *states
            .entry(
                store
                    .request(&o.request.id)
                    .await
                    .unwrap()
                    .unwrap()
                    .state
                    .status(),
            )
            .or_insert(0) += 1;
    }
    assert_eq!(holds.len(), 5, "exactly five units held: {outcomes:?}");
    assert_eq!(c.held, 5);
    assert_eq!(
        states.get(&restock_core::Status::Held),
        Some(&5),
        "{states:?}"
    );
    assert_eq!(
        states.get(&restock_core::Status::Waiting),
        Some(&45),
        "the rest are back in line: {states:?}"
    );
    assert!(
        c.offered + c.held <= c.level,
        "offered + held <= level at the end: {c:?}"
    );
    assert_eq!(
        store.reconcile(&sku(), T0 + 10 * MIN).await.unwrap(),
        None,
        "counters match a recount"
    );
}

/// Clicks racing on every offer of a SKU spread over sixteen hold slots.
async fn click_all(
    store: &Arc<DynamoStore>,
    links: &[restock_core::ReserveToken],
    taps: usize,
    seed: u64,
) -> Vec<HoldOutcome> {
    let clicks = (0..links.len() * taps).map(|k| {
        let store = store.clone();
        let token = links[k % links.len()].clone();
        tokio::spawn(async move {
            let hold = HoldId::from_random(testing::random(seed + k as u64)());
            store
                .take_hold(&token, hold, 16, T0 + MIN, WINDOW)
                .await
                .unwrap()
        })
    });
    join_all(clicks)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

fn holds_in(outcomes: &[HoldOutcome]) -> HashSet<HoldId> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            HoldOutcome::Held { hold, .. } | HoldOutcome::AlreadyHeld { hold, .. } => Some(*hold),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clicks_over_sixteen_hold_slots_hold_exactly_the_units_left_however_the_level_moves() {
    let store = Arc::new(dynamo_store().await);
    let mut entry = restock_core::CatalogueEntry::new(sku(), "Runner");
    entry.shards = 16;
    store.put_catalogue_entry(&entry).await.unwrap();
    for i in 0..96 {
        let mut r = new_request(i, 5_000 + i as u64, T0 + i as i64);
        r.shards = 16;
        assert!(matches!(
            store.join(r).await.unwrap(),
            JoinOutcome::Joined(_)
        ));
    }
    let sixteen = WaveParams {
        shards: 16,
        ..params()
    };
    set_level(&store, &sku(), 96, T0 + 100).await;
    let mut random = testing::random(4);
    let wave = store
        .create_offers(&sku(), &sixteen, T0 + 100, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 96);
    // The shop sells 59 elsewhere: 37 units for 96 live links, spread
    // unevenly over the slots, so most clicks find their own slot dry.
    set_level(&store, &sku(), 37, T0 + 200).await;
    let links: Vec<_> = wave.offers.iter().map(|o| o.reserve.clone()).collect();
    let outcomes = click_all(&store, &links, 3, 20_000).await;
    assert_eq!(holds_in(&outcomes).len(), 37, "exactly the units left");
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!((c.level, c.held, c.offered), (37, 37, 0), "{c:?}");
    assert_eq!(store.stats(&sku(), 16).await.unwrap().waiting, 59);
    assert_eq!(store.reconcile(&sku(), T0 + 10 * MIN).await.unwrap(), None);

    // The shop then reports 30: seven fewer units than holds. Nobody more
    // may hold until the shop has more than the holds.
    set_level(&store, &sku(), 30, T0 + 300).await;
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!((c.level, c.held), (30, 37), "{c:?}");
    // Five holders buy: the level and the holds fall together.
    let held: Vec<HoldId> = holds_in(&outcomes).into_iter().take(5).collect();
    for hold in &held {
        store
            .mark_bought(
                hold,
                &restock_store::Order {
                    placed_at: T0 + 400,
                    items: None,
                    prices: Default::default(),
                },
                T0 + 400,
            )
            .await
            .unwrap();
    }
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!((c.level, c.held), (25, 32), "{c:?}");
    // 40 in stock: 8 more than the holds, so 8 more offers and 8 holds.
    set_level(&store, &sku(), 40, T0 + 500).await;
    let wave = store
        .create_offers(&sku(), &sixteen, T0 + 500, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 8, "free = 40 - 32 held");
    let links: Vec<_> = wave.offers.iter().map(|o| o.reserve.clone()).collect();
    let outcomes = click_all(&store, &links, 3, 40_000).await;
    assert_eq!(holds_in(&outcomes).len(), 8);
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!((c.level, c.held, c.offered), (40, 40, 0), "{c:?}");
    assert_eq!(store.reconcile(&sku(), T0 + 20 * MIN).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_deliveries_of_one_webhook_make_one_restock() {
    let store = Arc::new(dynamo_store().await);
    let deliveries = (0..20).map(|_| {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .apply_stock(&sku(), &event(4, T0, "shopify:b54557e4"), &RULES, T0)
                .await
                .unwrap()
        })
    });
    let outcomes: Vec<ApplyOutcome> = join_all(deliveries)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == ApplyOutcome::Duplicate)
            .count(),
        19
    );
    let wakes = store.wakes(&sku()).await.unwrap();
    assert_eq!(
        wakes.iter().filter(|w| w.kind == WakeKind::Restock).count(),
        1,
        "one restock event"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_overlapping_sweeps_release_each_offer_once() {
    let store = Arc::new(dynamo_store().await);
    fill(&store, 30).await;
    set_level(&store, &sku(), 30, T0 + 100).await;
    let mut random = testing::random(4);
    let wave = store
        .create_offers(&sku(), &params(), T0 + 100, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 30);
    // Every notice went out (an offer never told would go back to the queue
    // when it runs out, not lapse).
    for o in &wave.offers {
        let r = &o.request;
        assert_eq!(
            store
                .claim_notice(&r.sku, &r.id, 1, &o.reserve.secret_hash(), &r.contact_key)
                .await
                .unwrap(),
            restock_store::Claim::Claimed
        );
    }
    let later = T0 + 20 * MIN;
    let sweeps = (0..2).map(|_| {
        let store = store.clone();
        tokio::spawn(async move {
            let due = store.due(later, 1_000).await.unwrap();
            let mut outcomes = Vec::new();
            for d in &due {
                outcomes.push(store.expire(d, later).await.unwrap());
            }
            outcomes
        })
    });
    let outcomes: Vec<ExpireOutcome> = join_all(sweeps)
        .await
        .into_iter()
        .flat_map(Result::unwrap)
        .collect();
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == ExpireOutcome::Lapsed)
            .count(),
        30,
        "each released once"
    );
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!(c.offered, 0, "each freed unit counted once");
    let freed = store
        .wakes(&sku())
        .await
        .unwrap()
        .iter()
        .filter(|w| w.kind == WakeKind::Freed)
        .count();
    assert_eq!(freed, 30);
    assert_eq!(store.stats(&sku(), 1).await.unwrap().lapsed, 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_waves_never_offer_more_than_the_units_or_anyone_twice() {
    let store = Arc::new(dynamo_store().await);
    fill(&store, 30).await;
    set_level(&store, &sku(), 10, T0 + 100).await;
    let waves = (0..6).map(|k| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut random = testing::random(500 + k);
            store
                .create_offers(&sku(), &params(), T0 + 100, &mut random)
                .await
                .unwrap()
        })
    });
    let offered: Vec<RequestId> = join_all(waves)
        .await
        .into_iter()
        .flat_map(|w| w.unwrap().offers.into_iter().map(|o| o.request.id))
        .collect();
    let distinct: HashSet<_> = offered.iter().collect();
    assert_eq!(offered.len(), 10, "never more offers than units");
    assert_eq!(distinct.len(), 10, "nobody offered twice");
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!(c.offered, 10);
    // And they are the ten oldest.
    let queue = store.queue(&sku(), 1, 100).await.unwrap();
    assert_eq!(queue.len(), 20);
    let first_waiting = queue[0].key;
    for id in distinct {
        assert!(
            store.request(id).await.unwrap().unwrap().key < first_waiting,
            "offers went oldest first"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancels_racing_a_wave_are_never_offered() {
    let store = Arc::new(dynamo_store().await);
    let mut ids = Vec::new();
    for i in 0..40 {
        match store
            .join(new_request(i, 2_000 + i as u64, T0 + i as i64))
            .await
            .unwrap()
        {
            JoinOutcome::Joined(r) => ids.push(r.id),
            other => panic!("{other:?}"),
        }
    }
    set_level(&store, &sku(), 40, T0 + 100).await;
    let wave = {
        let store = store.clone();
        tokio::spawn(async move {
            let mut random = testing::random(9);
            store
                .create_offers(&sku(), &params(), T0 + 100, &mut random)
                .await
                .unwrap()
        })
    };
    let cancels = ids.iter().map(|id| {
        let (store, id) = (store.clone(), *id);
        tokio::spawn(async move { (id, store.cancel(&id, T0 + 100).await.unwrap()) })
    });
    let cancelled: Vec<_> = join_all(cancels)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let wave = wave.await.unwrap();
    let mut live_offers = 0;
    for (id, outcome) in &cancelled {
        let state = store.request(id).await.unwrap().unwrap().state;
        if *outcome == restock_store::CancelOutcome::Cancelled {
            assert_eq!(
                state,
                restock_core::RequestState::Cancelled,
                "a cancelled request stays cancelled"
            );
        }
        if state.status() == restock_core::Status::Offered {
            live_offers += 1;
        }
    }
    let offered_in_wave: HashSet<_> = wave.offers.iter().map(|o| o.request.id).collect();
    assert_eq!(offered_in_wave.len(), wave.offers.len());
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!(
        c.offered, live_offers,
        "the counter matches the live offers"
    );
    assert_eq!(store.reconcile(&sku(), T0 + 10 * MIN).await.unwrap(), None);
}

/// Two *different* deliveries for one item racing (a reading of 3 and a
/// newer one of 5), on twenty items at once: each reads the state, then
/// writes it conditional on the version it read. Whichever lands first, the
/// item ends at the newer level, in one restock: the older reading is
/// either the restock the newer one tops up, or stale. Without the version
/// condition, the second write overwrites the first from the same read (the
/// level left at 3, or a second restock).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_different_deliveries_racing_end_at_the_newer_level_in_one_restock() {
    let store = Arc::new(dynamo_store().await);
    let items: Vec<Sku> = (0..20)
        .map(|i| Sku::try_from(format!("RACE-{i}").as_str()).unwrap())
        .collect();
    // Sold out first, so both deliveries find a stored state and its version.
    for item in &items {
        set_level(&store, item, 0, T0 - 1_000).await;
    }
    let deliveries = items.iter().flat_map(|item| {
        [(3, T0, "older"), (5, T0 + 1_000, "newer")].map(|(level, at, name)| {
            let (store, item) = (store.clone(), item.clone());
            let event = StockEvent {
                item: restock_core::ItemRef::Sku { sku: item.clone() },
                ..event(level, at, &format!("{item}:{name}"))
            };
            tokio::spawn(async move {
                store
                    .apply_stock(&item, &event, &RULES, T0 + 2_000)
                    .await
                    .unwrap()
            })
        })
    });
    for outcome in join_all(deliveries).await {
        outcome.unwrap();
    }
    for item in &items {
        let snapshot = store.snapshot(item).await.unwrap();
        assert_eq!(
            snapshot.counters.level, 5,
            "{item}: the newer reading stands"
        );
        let wakes = store.wakes(item).await.unwrap();
        assert_eq!(
            wakes.iter().filter(|w| w.kind == WakeKind::Restock).count(),
            1,
            "{item}: one restock: {wakes:?}"
        );
    }
}
