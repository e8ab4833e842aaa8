//! The click races at a drop's rate, on the contention model.
//!
//! The strict double applies one request at a time (about 40 transactions a
//! second), so two hundred clicks fired at once on one item's hold slots
//! queue behind each other there for longer than a click's budget: on it,
//! `crates/store-dynamo/tests/store/concurrency.rs` runs these races with
//! conflicts injected at random instead. Here every click of the race is in
//! flight at the same simulated instant, each transaction 12 ms, an
//! overlapping one on an item cancelled as DynamoDB cancels it, with the
//! DynamoDB store's hold protocol and retry policy: every click must end in
//! a hold or "sold out again", exactly as many holds as units, never an
//! error.

use std::sync::Arc;

use restock_core::{HoldId, ReserveToken, Window};
use restock_sim::drive::{self, T0, paused, sku};
use restock_sim::{Model, SimStore};
use restock_store::model::HoldOutcome;
use restock_store::port::seeded;
use restock_store::prelude::*;
use restock_store::retry::CLICK_BUDGET;
use restock_store_memory::MemoryStore;

const WINDOW: Window = Window::from_mins(15);

/// `taps` clicks on each link, all at the same instant.
async fn click_all(
    store: &Arc<SimStore>,
    links: &[ReserveToken],
    taps: usize,
    shards: u16,
) -> Vec<HoldOutcome> {
    let mut random = seeded(99);
    let clicks: Vec<_> = (0..links.len() * taps)
        .map(|k| {
            let store = store.clone();
            let token = links[k % links.len()].clone();
            let hold = HoldId::from_random(random());
            tokio::spawn(async move {
                store
                    .take_hold(&token, hold, shards, T0 + 200_000, WINDOW)
                    .await
                    .expect("a click ends in a hold or an answer, never an error")
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(clicks.len());
    for click in clicks {
        outcomes.push(click.await.unwrap());
    }
    outcomes
}

fn holds(outcomes: &[HoldOutcome]) -> std::collections::HashSet<HoldId> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            HoldOutcome::Held { hold, .. } | HoldOutcome::AlreadyHeld { hold, .. } => Some(*hold),
            _ => None,
        })
        .collect()
}

#[test]
fn two_hundred_clicks_at_once_on_fifty_offers_and_one_slot_hold_exactly_five() {
    paused().block_on(async {
        let store = Arc::new(SimStore::new(MemoryStore::new(), Model::default()));
        let links = drive::offered(store.inner(), 50, 1, T0 + 100_000, 7).await;
        // The shop sells 45 elsewhere before anyone clicks: 5 units, 50 links.
        drive::set_level(store.inner(), 5, T0 + 150_000).await;
        store.set_allowance(&sku(), 5, 1);
        let began = tokio::time::Instant::now();
        let outcomes = click_all(&store, &links, 4, 1).await;
        let took = began.elapsed();
        eprintln!(
            "one slot: every click answered in {took:?}: {:?}",
            store.counts()
        );
        assert!(
            took < CLICK_BUDGET,
            "every click answered within a click's budget: {took:?}"
        );
        assert_eq!(holds(&outcomes).len(), 5, "exactly five units held");
        let stats = store.stats(&sku(), 1).await.unwrap();
        assert_eq!((stats.held, stats.waiting), (5, 45), "{stats:?}");
        let counts = store.counts();
        assert!(counts.conflicts > 0, "the clicks really raced: {counts:?}");
    });
}

#[test]
fn three_taps_on_ninety_six_offers_over_sixteen_uneven_slots_hold_exactly_the_units_left() {
    paused().block_on(async {
        let store = Arc::new(SimStore::new(MemoryStore::new(), Model::default()));
        let links = drive::offered(store.inner(), 96, 16, T0 + 100_000, 7).await;
        // The shop sells 59 elsewhere: 37 units for 96 links, all of them in
        // two slots, so most clicks find their own slot dry and refill.
        drive::set_level(store.inner(), 37, T0 + 150_000).await;
        let mut slots = vec![0; 16];
        (slots[3], slots[11]) = (30, 7);
        store.set_slots(&sku(), slots);
        let began = tokio::time::Instant::now();
        let outcomes = click_all(&store, &links, 3, 16).await;
        let took = began.elapsed();
        eprintln!(
            "sixteen: every click answered in {took:?}: {:?}",
            store.counts()
        );
        assert!(
            took < CLICK_BUDGET,
            "every click answered within a click's budget: {took:?}"
        );
        assert_eq!(holds(&outcomes).len(), 37, "exactly the units left");
        let stats = store.stats(&sku(), 16).await.unwrap();
        assert_eq!((stats.held, stats.waiting), (37, 59), "{stats:?}");
        assert!(store.counts().conflicts > 0, "the clicks really raced");
    });
}
