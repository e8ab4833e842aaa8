//! The model against the strict double, at a rate the double can serve.
//!
//! The same sign-ups (one shard: 24, one every 333 ms, then a burst of 8 at
//! once; moto, applying one request at a time, serves about 7 a second) go
//! through capture's router twice: on the DynamoDB store against the strict
//! double with its contention model (`RESTOCK_DYNAMODB_CONTENDED_ENDPOINT`:
//! each transaction in flight 5 ms) in real time, and on `SimStore` with the
//! same window in simulated time. Both must accept every sign-up, queue the
//! spaced ones in the order they came and the burst after them: the two
//! agree on who gets in. (Which of a burst's joins takes the next ticket
//! depends on timings neither controls, so their order within the burst is
//! not compared.)

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use restock_sim::drive::{self, SignUp, sku};
use restock_sim::{Model, SimStore};
use restock_store::Store;
use restock_store_memory::MemoryStore;

const SPACED: usize = 24;
const BURST: usize = 8;

/// The statuses answered, and the queue as shopper numbers, oldest first.
async fn run(store: Arc<dyn Store>, arrivals: &[Duration]) -> (Vec<u16>, Vec<usize>) {
    let router = drive::capture(store.clone(), 1, false).await;
    let results: Vec<SignUp> = drive::sign_ups(&router, arrivals).await;
    let shopper: HashMap<String, usize> = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((r.id.clone()?, i)))
        .collect();
    let queue = store.queue(&sku(), 1, 1_000).await.expect("the queue");
    (
        results.iter().map(|r| r.status.as_u16()).collect(),
        queue
            .iter()
            .map(|r| {
                shopper
                    .get(&r.id.to_string())
                    .copied()
                    .unwrap_or(usize::MAX)
            })
            .collect(),
    )
}

#[test]
fn the_model_and_the_strict_double_agree_on_who_gets_in_at_low_load() {
    let arrivals: Vec<Duration> = (0..SPACED)
        .map(|i| Duration::from_millis(333 * i as u64))
        .chain((0..BURST).map(|_| Duration::from_millis(333 * SPACED as u64)))
        .collect();
    let on_the_double = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let (store, _) = restock_store_dynamo::testing::contended_dynamo_store().await;
            run(Arc::new(store), &arrivals).await
        });
    let in_the_model = drive::paused().block_on(async {
        let model = Model {
            in_flight: Duration::from_millis(5),
            ..Model::default()
        };
        run(
            Arc::new(SimStore::new(MemoryStore::new(), model)),
            &arrivals,
        )
        .await
    });
    for (name, (statuses, queue)) in [("the double", &on_the_double), ("the model", &in_the_model)]
    {
        assert_eq!(
            statuses,
            &vec![201; SPACED + BURST],
            "{name}: everyone got in"
        );
        assert_eq!(
            queue[..SPACED],
            (0..SPACED).collect::<Vec<_>>(),
            "{name}: the spaced sign-ups in the order they came"
        );
        let mut burst = queue[SPACED..].to_vec();
        burst.sort_unstable();
        assert_eq!(
            burst,
            (SPACED..SPACED + BURST).collect::<Vec<_>>(),
            "{name}: the burst after them"
        );
    }
}
