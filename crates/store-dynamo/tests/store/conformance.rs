//! The conformance suite (`restock_store::conformance`) on the DynamoDB
//! store: moto's server behind the strict double. `scripts/test.sh` runs it
//! once with the index current and once lagging 250 ms. The in-memory store
//! runs the same cases in its own tests.

use std::sync::Arc;

use restock_core::{ContactKey, Sku};
use restock_store::conformance::{App, Harness};
use restock_store_dynamo::{DynamoStore, testing};

struct Dynamo {
    store: Arc<DynamoStore>,
    lag: std::time::Duration,
}

#[async_trait::async_trait]
impl Harness for Dynamo {
    /// The endpoint's lag (`RESTOCK_INDEX_LAG_MS`) has passed twice over.
    async fn settle(&self) {
        tokio::time::sleep(self.lag * 2).await;
    }

    async fn set_counters(&self, sku: &Sku, offered: u32, held: u32) {
        testing::set_counters(&self.store, sku, offered, held).await;
    }

    async fn opt_out_record_only(&self, contact: &ContactKey, now: i64) {
        testing::opt_out_record_only(&self.store, contact, now).await;
    }
}

async fn dynamo() -> App {
    let store = Arc::new(testing::dynamo_store().await);
    App::new(
        store.clone(),
        Dynamo {
            store,
            lag: testing::index_lag(),
        },
    )
}

mod dynamodb {
    restock_store::conformance_suite!(super::dynamo());
}
