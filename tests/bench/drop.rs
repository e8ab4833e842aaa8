//! The hyped drop through the real paths, in memory: N sign-ups through
//! capture's router, one signed restock of U units through detect's, then
//! notify passes as the stream runs them (each pass that hands on writes the
//! wake that starts the next) until nothing is left to send. Checks that the
//! U oldest sign-ups, and only they, were told, in join order, each once, and
//! that nothing is oversold; prints each phase's wall time and the passes.
//! Sends are paced on the real clock at the test settings' 1,000 a second.
//!
//!   cargo bench -p restock-e2e --bench drop -- 100000 10000 16

use std::time::Instant;

use restock_app::notify;
use restock_core::{CatalogueEntry, Sku};
use restock_e2e::*;

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let signups = args.first().copied().unwrap_or(100_000);
    let units = args.get(1).copied().unwrap_or(10_000);
    let shards = args.get(2).copied().unwrap_or(16) as u16;

    let (w, outbox) = World::memory().await;
    let mut s = settings();
    // A drop on purpose: nothing here is abuse, and the restock is expected.
    s.limits.joins_per_ip = u32::MAX;
    s.limits.signup_burst = u32::MAX;
    s.escalation.max_jump = u32::MAX;
    s.escalation.max_level = u32::MAX;
    w.store.put_settings(&s).await.unwrap();
    let sku = Sku::try_from("SNEAKER-DROP").unwrap();
    let mut entry = CatalogueEntry::new(sku.clone(), "Limited runner");
    entry.shards = shards;
    w.store.put_catalogue_entry(&entry).await.unwrap();
    println!(
        "the hyped drop, in memory through the real routers and notify: {signups} sign-ups over {shards} shards, {units} units"
    );

    let started = Instant::now();
    for i in 0..signups {
        let reply = w
            .capture_json(
                "POST",
                "/requests",
                serde_json::json!({"sku": sku.as_str(), "name": "Fan", "email": format!("fan{i}@example.com"), "consent": true}),
            )
            .await;
        assert_eq!(reply.status, 201, "sign-up {i}: {}", reply.body);
        w.advance(1);
        if (i + 1) % (signups / 10).max(1) == 0 {
            eprint!("\r  signed up {}/{signups}", i + 1);
        }
    }
    eprintln!();
    let signup_time = started.elapsed();

    let started = Instant::now();
    let now = restock_app::ports::Clock::now_ms(&*w.clock);
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(now) * 1_000_000)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let body = serde_json::json!({"sku": sku.as_str(), "level": units, "at": at}).to_string();
    let reply = w
        .call(Api::Detect, w.stock_request("drop-restock", &body))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let restock_time = started.elapsed();

    let started = Instant::now();
    let (mut passes, mut seen, mut handed_on) = (0, 0, 0);
    loop {
        let wakes = w.store.wakes(&sku).await.unwrap().len();
        if wakes == seen {
            break;
        }
        seen = wakes;
        let report = notify::notify_sku(&w.services, &sku).await.unwrap();
        passes += 1;
        handed_on += usize::from(report.handed_on);
        eprint!("\r  told {}/{units}", outbox.sent().len());
    }
    eprintln!();
    let notify_time = started.elapsed();

    let told: Vec<String> = outbox.sent().iter().map(|n| n.to().to_owned()).collect();
    let expected: Vec<String> = (0..units.min(signups))
        .map(|i| format!("fan{i}@example.com"))
        .collect();
    assert_eq!(
        told.len(),
        expected.len(),
        "every unit offered and told once"
    );
    assert!(told == expected, "told in join order, the oldest first");
    let c = w.store.snapshot(&sku).await.unwrap().counters;
    assert!(c.offered + c.held <= c.level, "never oversold: {c:?}");

    println!("| phase | wall time |");
    println!("|---|---|");
    println!(
        "| {signups} sign-ups through capture | {:.2} s |",
        signup_time.as_secs_f64()
    );
    println!(
        "| the restock through detect | {:.3} s |",
        restock_time.as_secs_f64()
    );
    println!(
        "| {} notices through notify, {passes} passes ({handed_on} handed on) | {:.2} s (paced at {} a second) |",
        told.len(),
        notify_time.as_secs_f64(),
        s.sends_per_second
    );
    println!(
        "checked: the {} oldest of {signups} told, in join order, once each, nothing oversold",
        told.len()
    );
}
