//! The conformance suite on the in-memory store, as is and with its indexes
//! lagging (reads of the due and unsent listings trail the writes until the
//! test lets them catch up). Needs nothing running.

use std::sync::Arc;

use restock_core::{ContactKey, Sku};
use restock_store::conformance::{App, Harness};
use restock_store_memory::MemoryStore;

struct Memory {
    store: Arc<MemoryStore>,
    lagging: bool,
}

#[async_trait::async_trait]
impl Harness for Memory {
    async fn settle(&self) {
        if self.lagging {
            self.store.catch_up();
        }
    }

    async fn set_counters(&self, sku: &Sku, offered: u32, held: u32) {
        self.store.set_counters(sku, offered, held);
    }

    async fn opt_out_record_only(&self, contact: &ContactKey, now: i64) {
        self.store
            .opt_out_record_only(contact, restock_core::OptOutVia::Link, now);
    }
}

async fn memory() -> App {
    let store = Arc::new(MemoryStore::new());
    App::new(
        store.clone(),
        Memory {
            store,
            lagging: false,
        },
    )
}

async fn memory_lagging() -> App {
    let store = Arc::new(MemoryStore::lagging());
    App::new(
        store.clone(),
        Memory {
            store,
            lagging: true,
        },
    )
}

mod memory {
    restock_store::conformance_suite!(super::memory());
}

mod memory_lagging {
    restock_store::conformance_suite!(super::memory_lagging());
}
