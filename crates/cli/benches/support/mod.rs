//! What the benches share: a store of many waiting shoppers and the
//! process's peak memory.

use restock_core::{Contact, Email, RequestId, Sku};
use restock_store::NewRequest;
use restock_store::prelude::*;
use restock_store_memory::MemoryStore;

/// The process's peak resident memory, in MiB.
pub fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Joins `n` shoppers to CHAIR-WAL, the `i`th at `t0 + i * spacing_ms`, a
/// third of them in German.
pub async fn fill(store: &MemoryStore, n: usize, t0: i64, spacing_ms: i64) {
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
                now: t0 + i as i64 * spacing_ms,
                shards: 1,
                lifetime_ms: 90 * 86_400_000,
                manage_hash: None,
                language: Some(if i % 3 == 0 { "de" } else { "en" }.parse().unwrap()),
                zone: None,
                confirm_window_ms: None,
                consent: None,
            })
            .await
            .unwrap();
    }
}

/// The sizes named on the command line (10,000 when none is).
pub fn sizes() -> Vec<usize> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if sizes.is_empty() {
        vec![10_000]
    } else {
        sizes
    }
}
