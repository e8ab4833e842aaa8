//! Lambda figures for the release binaries, printed as a table:
//!
//! - cold-start init: process start to the first Runtime API poll (config
//!   read, SDK clients built), p50 and max over several starts;
//! - peak RSS of notify during a 1,000-notice batch against moto's DynamoDB,
//!   with a zero-latency SES stand-in;
//! - stripped release binary sizes.
//!
//! `bash scripts/bench-functions.sh` builds the release binaries, starts moto
//! and runs this (`cargo bench -p restock-e2e --bench functions`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use restock_core::{Rules, Sku};
use restock_e2e::*;
use restock_store::Request;
use restock_store::prelude::*;

const STARTS: usize = 15;
const NOTICES: usize = 1_000;

/// A SESv2 stand-in that accepts every email at once.
async fn instant_ses() -> (String, Arc<AtomicUsize>) {
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    let app = axum::Router::new().route(
        "/v2/email/outbound-emails",
        axum::routing::post(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move { axum::Json(serde_json::json!({ "MessageId": format!("bench-{n}") })) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, sent)
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[tokio::main]
async fn main() {
    let mut settings = settings();
    settings.escalation.max_jump = 100_000;
    let d = Deployment::create(settings).await;
    println!("| binary | stripped size | init p50 | init max |\n|---|---|---|---|");
    for name in ["capture", "detect", "notify", "sweep"] {
        let size = std::fs::metadata(binary(name, "release"))
            .unwrap_or_else(|_| panic!("build {name} with --release first"))
            .len();
        let mut inits = Vec::with_capacity(STARTS);
        for _ in 0..STARTS {
            let api = RuntimeApi::start().await;
            let started = Instant::now();
            let mut child = d
                .command(&api, name, "release")
                .env("AWS_LAMBDA_LOG_LEVEL", "WARN")
                .spawn()
                .expect("starts");
            let polled = api
                .wait_first_poll(Duration::from_secs(10))
                .await
                .expect("polled for an event");
            inits.push(polled.duration_since(started));
            child.kill().await.ok();
        }
        inits.sort();
        println!(
            "| {name} | {:.1} MB | {:.1} ms | {:.1} ms |",
            size as f64 / 1_000_000.0,
            inits[STARTS / 2].as_secs_f64() * 1000.0,
            inits[STARTS - 1].as_secs_f64() * 1000.0
        );
    }

    // A 1,000-notice batch: 1,000 waiting, 1,000 units back.
    let sku = Sku::try_from(CHAIR).unwrap();
    let pepper = restock_app::ports::Secrets::from_json(&secrets_json())
        .unwrap()
        .contact_pepper;
    let t0 = T0 - 86_400_000;
    let waiting: Vec<Request> = (0..NOTICES)
        .map(|i| restock_store_dynamo::testing::waiting_request(i, &sku, t0 + i as i64, 2, &pepper))
        .collect();
    d.store.import_waiting(&waiting, 2).await.unwrap();
    let event = restock_core::StockEvent {
        delivery_id: "bench".into(),
        item: restock_core::ItemRef::Sku { sku: sku.clone() },
        location: "default".into(),
        level: restock_core::Level::Tracked(NOTICES as u32),
        at: time::OffsetDateTime::now_utc(),
        untimed: false,
    };
    let rules = Rules {
        threshold: 1,
        max_jump: 100_000,
        max_level: 100_000,
    };
    d.store.apply_stock(&sku, &event, &rules, T0).await.unwrap();

    let (ses, sent) = instant_ses().await;
    let api = RuntimeApi::start().await;
    let mut child = d
        .command(&api, "notify", "release")
        .env("AWS_LAMBDA_LOG_LEVEL", "WARN")
        .env("AWS_ENDPOINT_URL_SESV2", &ses)
        .spawn()
        .expect("starts");
    let pid = child.id().expect("pid");
    let record = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../events/notify-restock-record.json"
    ))
    .unwrap();
    let started = Instant::now();
    let outcome = api.invoke_within(&record, Duration::from_secs(900)).await;
    let took = started.elapsed();
    let peak = peak_rss_kib(pid);
    child.kill().await.ok();
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into())
    );
    println!(
        "\n| notify batch | notices sent | wall time | peak RSS |\n|---|---|---|---|\n| {NOTICES} waiting, {NOTICES} units | {} | {:.1} s | {} |",
        sent.load(Ordering::SeqCst),
        took.as_secs_f64(),
        peak.map_or("n/a".into(), |k| format!("{:.1} MB", k as f64 / 1024.0))
    );
}
