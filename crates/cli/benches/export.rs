//! `restock export requests` of 10,000 and 100,000 requests: the export's
//! time and the memory it adds. The requests are joined into the in-memory
//! store (the local server's), then exported through the same code the CLI
//! runs (`restock_app::admin::export::write` asking `Admin` for
//! `ExportPage`s) into a sink that only counts bytes. The process's peak
//! resident memory (`VmHWM`) is read before and after the export: the
//! store itself is in both, so the difference is what the export held.
//!
//! ```sh
//! cargo bench -p restock-cli --bench export -- 10000 100000
//! ```
//!
//! Each size runs in its own process (a peak never goes down), so pass one
//! size per run to compare them: `bash scripts/export.sh` does.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use restock_app::admin::export::{self, Kind};
use restock_app::admin::{Admin, Command};
use restock_core::{Contact, Email, RequestId, Sku};
use restock_store::NewRequest;
use restock_store::prelude::*;
use restock_store_memory::MemoryStore;

const T0: i64 = 1_796_342_400_000;

/// Counts what it is given, keeps nothing.
#[derive(Default)]
struct Counting(u64);

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The process's peak resident memory, in MiB.
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

async fn fill(store: &MemoryStore, n: usize) {
    let sku = Sku::try_from("CHAIR-WAL").unwrap();
    for i in 0..n {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&(i as u64 + 1).to_le_bytes());
        let id = RequestId::from_random(bytes);
        let contact =
            Contact::Email(Email::try_from(format!("fan{i}@example.com").as_str()).unwrap());
        store
            .join(NewRequest {
                id,
                sku: sku.clone(),
                name: "Fan".try_into().unwrap(),
                contact_key: contact.key(b"bench-pepper"),
                contact,
                now: T0 + i as i64,
                shards: 1,
                lifetime_ms: 90 * 86_400_000,
                manage_hash: None,
                language: Some(if i % 3 == 0 { "de" } else { "en" }.parse().unwrap()),
                confirm_window_ms: None,
                consent: None,
            })
            .await
            .unwrap();
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000]
    } else {
        sizes
    };
    println!("| requests | CSV | export time | rows/s | peak memory before | after |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        let store = Arc::new(MemoryStore::new());
        fill(&store, n).await;
        let admin = Admin {
            store: store.clone(),
            pepper: None,
        };
        let before = peak_mib();
        let mut sink = Counting::default();
        let started = Instant::now();
        let rows = export::write(
            Kind::Requests,
            &mut sink,
            |after| {
                admin.run(
                    Command::ExportPage {
                        skus: vec![],
                        after,
                        with_contacts: false,
                    },
                    T0,
                )
            },
            |_| {},
        )
        .await
        .expect("exported");
        let took = started.elapsed();
        assert_eq!(rows, n as u64, "every request once");
        println!(
            "| {n} | {:.1} MiB | {:.2} s | {:.0} | {:.1} MiB | {:.1} MiB |",
            sink.0 as f64 / 1_048_576.0,
            took.as_secs_f64(),
            rows as f64 / took.as_secs_f64(),
            before,
            peak_mib()
        );
    }
}
