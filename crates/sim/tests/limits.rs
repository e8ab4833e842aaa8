//! The model limits what DynamoDB and Lambda limit: a partition key's read
//! units, as well as its write units, and the account's concurrent
//! functions. The join as it stands reads every shard's counter before
//! each attempt, so a drop on one item is throttled on those reads (the
//! figure `bash scripts/load.sh` prints, in `docs/PERFORMANCE.md`).

use std::time::Duration;

use axum::http::StatusCode;
use restock_sim::drive::{self, Functions, paused};
use restock_sim::{Model, SimStore};
use restock_store_memory::MemoryStore;
use std::sync::Arc;

/// `rate` sign-ups a second for `secs` on 16 shards, as Lambda runs
/// capture with `concurrency`: the store, the answers and the functions.
async fn drop_of(
    rate: u32,
    secs: u32,
    concurrency: u32,
) -> (Arc<SimStore>, Vec<drive::SignUp>, Arc<Functions>) {
    let store = Arc::new(SimStore::new(MemoryStore::new(), Model::default()));
    let functions = Functions::new(concurrency, Duration::from_millis(200));
    let router = functions.serve(drive::capture(store.clone(), 16, true).await);
    let results = drive::sign_ups(&router, &drive::arrivals(rate * secs, rate, 1)).await;
    (store, results, functions)
}

#[test]
fn a_thousand_sign_ups_a_second_read_each_shard_s_counter_past_three_thousand_units() {
    paused().block_on(async {
        let (store, results, _) = drop_of(1_000, 2, 1_000).await;
        let counts = store.counts();
        let hot = store.hottest();
        eprintln!("{counts:?} {hot:?}");
        // Every attempt reads all 16 counters: 1,000 joins a second, each
        // more than once, ask a counter for more than 3,000 units.
        assert!(counts.read_throttles > 0, "{counts:?}");
        assert!(hot.read_key.starts_with("QT#SNEAKER-DROP#"), "{hot:?}");
        assert_eq!(
            hot.read_half_units,
            2 * 3_000,
            "never past the limit: {hot:?}"
        );
        assert!(hot.write_units <= 1_000, "{hot:?}");
        // Nothing saved is lost, throttled or not.
        let saved = results.iter().filter(|r| r.status.is_success()).count();
        assert!(drive::stored(store.inner(), 16).await >= saved);
    });
}

#[test]
fn a_hundred_a_second_stay_inside_every_limit_at_a_steady_cost() {
    paused().block_on(async {
        let (store, results, functions) = drop_of(100, 2, 1_000).await;
        let counts = store.counts();
        assert_eq!(
            (counts.throttles, counts.read_throttles),
            (0, 0),
            "{counts:?}"
        );
        assert!(results.iter().all(|r| r.status == StatusCode::CREATED));
        // Per sign-up: 16 counters an attempt, 15 boundaries and 16
        // presence reads (the entry is kept warm); 7 items written twice,
        // the index entry and three counts.
        let per = |units: f64| units / results.len() as f64;
        let reads = per(counts.read_half_units as f64 / 2.0);
        let writes = per(counts.write_units as f64);
        assert!((48.0..52.0).contains(&reads), "{reads}");
        assert!((18.0..20.0).contains(&writes), "{writes}");
        let f = functions.counts();
        assert!(f.peak > 1 && f.peak < 100 && f.throttled == 0, "{f:?}");
    });
}

#[test]
fn past_the_account_s_concurrency_lambda_answers_429_without_running_restock() {
    paused().block_on(async {
        // Ten functions at once; a hundred sign-ups in the same instant.
        let store = Arc::new(SimStore::new(MemoryStore::new(), Model::default()));
        let functions = Functions::new(10, Duration::from_millis(200));
        let router = functions.serve(drive::capture(store.clone(), 16, true).await);
        let results = drive::sign_ups(&router, &[Duration::ZERO; 100]).await;
        let refused = results
            .iter()
            .filter(|r| r.status == StatusCode::TOO_MANY_REQUESTS)
            .count();
        let f = functions.counts();
        assert_eq!((f.peak, f.warm), (10, 10), "{f:?}");
        assert_eq!(refused, 90, "{f:?}");
        assert_eq!(f.throttled, 90);
        let stored = drive::stored(store.inner(), 16).await;
        assert_eq!(stored, 10, "only those run were saved");
    });
}
