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
use restock_store_memory::MemoryStore;
use support::{fill, peak_mib, sizes};

mod support;

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

#[tokio::main(flavor = "current_thread")]
async fn main() {
    println!("| requests | CSV | export time | rows/s | peak memory before | after |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in sizes() {
        let store = Arc::new(MemoryStore::new());
        fill(&store, n, T0, 1).await;
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
