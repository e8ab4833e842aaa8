//! A scheduled launch in simulated time, in memory through the real paths:
//! N people sign up through capture for an item launching at 09:00 in New
//! York, from five time zones (New York, London, Los Angeles, Sydney,
//! Tokyo), half by text and half by email, with quiet hours 21:00-08:00 on
//! both channels. The shop reports U units an hour before the launch. Then
//! the clock runs a minute at a time for a day: the sweep every minute, and
//! notify for every wake; a third of the people told click and buy at once,
//! the others let their offer lapse so the unit passes on.
//!
//! Checks: nothing is offered before the launch and the first notice goes
//! at it; nobody is told inside their quiet hours on their own clock; every
//! unit is offered (each sold or offered until the queue runs out); never
//! oversold; each person told once. Prints when the first notice went, how
//! many were told in each zone and when each zone's first notice went, the
//! units sold, and the wall time.
//!
//!   cargo bench -p restock-e2e --bench launch -- 10000 3000

use std::collections::BTreeMap;
use std::time::Instant;

use restock_app::ports::{Clock, Sent};
use restock_core::{Channel, QuietHours, Sku, Sleepers, Zone};
use restock_e2e::*;

const MIN: i64 = 60_000;
const ZONES: [&str; 5] = [
    "America/New_York",
    "Europe/London",
    "America/Los_Angeles",
    "Australia/Sydney",
    "Asia/Tokyo",
];

fn rfc3339(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

/// Shopper `i`'s zone (New York for four in ten) and contact.
fn shopper(i: usize) -> (&'static str, &'static str, String) {
    let zone = match i % 10 {
        0..=3 => 0,
        4 | 5 => 1,
        6 => 2,
        7 | 8 => 3,
        _ => 4,
    };
    if i % 2 == 1 {
        return (ZONES[zone], "email", format!("fan{i}@example.com"));
    }
    let phone = match zone {
        0 | 2 => format!("+1212736{:04}", i % 10_000),
        1 => format!("+447400{:06}", i),
        3 => format!("+61412{:06}", i),
        _ => format!("+8190{:08}", i),
    };
    (ZONES[zone], "phone", phone)
}

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let people = args.first().copied().unwrap_or(10_000).min(10_000);
    let units = args.get(1).copied().unwrap_or(3_000);

    let (w, outbox) = World::memory().await;
    let mut s = settings();
    s.limits.joins_per_ip = u32::MAX;
    s.limits.joins_per_contact = u32::MAX;
    s.limits.reads_per_ip = u32::MAX;
    s.limits.signup_burst = u32::MAX;
    s.escalation.max_jump = u32::MAX;
    s.escalation.max_level = u32::MAX;
    s.sms_countries = vec!["US".into(), "GB".into(), "AU".into(), "JP".into()];
    s.quiet_hours = QuietHours {
        email: restock_core::quiet::Span::parse("21:00-08:00").ok(),
        ..QuietHours::default()
    };
    w.store.put_settings(&s).await.unwrap();
    let sku = Sku::try_from(CHAIR).unwrap();
    // 14:00 UTC on the world's first day: 09:00 in New York.
    let launch_at = T0 + 5 * 60 * MIN;
    let mut entry = w.store.catalogue_entry(&sku).await.unwrap().unwrap();
    entry.shards = 16;
    entry.launch_at = Some(launch_at);
    w.store.put_catalogue_entry(&entry).await.unwrap();
    println!(
        "a launch at {} (09:00 in New York), in memory through the real paths: {people} people in five zones, half by text, {units} units",
        rfc3339(launch_at)
    );

    let started = Instant::now();
    let mut zone_of: BTreeMap<String, (usize, &'static str)> = BTreeMap::new();
    for i in 0..people {
        let (zone, field, contact) = shopper(i);
        let mut body =
            serde_json::json!({"sku": CHAIR, "name": "Fan", "consent": true, "time_zone": zone});
        body[field] = contact.clone().into();
        let reply = w.capture_json("POST", "/requests", body).await;
        assert_eq!(reply.status, 201, "sign-up {i}: {}", reply.body);
        zone_of.insert(contact, (i, zone));
        w.advance(1);
    }
    let signups = started.elapsed();

    // The shop's stock arrives an hour early; nothing may go before the launch.
    w.advance(launch_at - 60 * MIN - w.clock.now_ms());
    let body = serde_json::json!({"sku": CHAIR, "level": units, "at": rfc3339(w.clock.now_ms())})
        .to_string();
    let reply = w
        .call(Api::Detect, w.stock_request("launch-stock", &body))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);

    let quiet = QuietHours {
        email: s.quiet_hours.email,
        ..QuietHours::default()
    };
    let shop = Zone::utc();
    let started = Instant::now();
    let (mut seen, mut bought, mut first_notice) = (0, 0usize, None);
    let mut first_in_zone: BTreeMap<&str, (i64, usize)> = BTreeMap::new();
    let end = launch_at + 24 * 60 * MIN;
    let mut orders = 0;
    while w.clock.now_ms() < end {
        w.advance(MIN);
        w.sweep().await;
        w.pump().await;
        let now = w.clock.now_ms();
        let sent = outbox.sent();
        let mut sleepers = Sleepers::new(&quiet, &shop, now);
        for notice in &sent[seen..] {
            let Some(link) = notice.reserve_link() else {
                continue;
            };
            assert!(
                now >= launch_at,
                "a notice before the launch, at {}",
                rfc3339(now)
            );
            first_notice.get_or_insert(now);
            let (i, zone) = zone_of[notice.to()];
            let channel = match notice {
                Sent::Email { .. } => Channel::Email,
                Sent::Sms { .. } => Channel::Sms,
            };
            let contact = restock_core::Contact::on(channel, notice.to()).unwrap();
            let zone_id = Zone::named(zone).unwrap();
            assert_eq!(
                sleepers.asleep_until(&contact, Some(&zone_id)),
                None,
                "{} told inside their quiet hours ({zone}) at {}",
                notice.to(),
                rfc3339(now)
            );
            let first = first_in_zone.entry(zone).or_insert((now, 0));
            first.1 += 1;
            // A third click and buy at once; the rest let it lapse.
            if i % 3 == 0 {
                let reply = w.capture("POST", &path_of(&link)).await;
                let token: restock_core::LinkToken =
                    link.rsplit("/r/").next().unwrap().parse().unwrap();
                let held = w
                    .store
                    .request(&token.request())
                    .await
                    .unwrap()
                    .unwrap()
                    .state;
                assert!(
                    reply.status.is_redirection(),
                    "a click: {} {}",
                    reply.status,
                    reply.body
                );
                if let restock_core::RequestState::Held { hold, .. } = held {
                    orders += 1;
                    let order = serde_json::json!({"hold": hold.to_string(), "at": rfc3339(now)})
                        .to_string();
                    let reply = w
                        .call(
                            Api::Detect,
                            w.signed_request(
                                "/webhooks/orders",
                                &format!("order-{orders}"),
                                &order,
                            ),
                        )
                        .await;
                    assert_eq!(reply.status, 200, "{}", reply.body);
                    bought += 1;
                }
            }
        }
        seen = sent.len();
        let c = w.store.snapshot(&sku).await.unwrap().counters;
        assert!(c.offered + c.held <= c.level, "never oversold: {c:?}");
    }
    let simulated = started.elapsed();
    let sent = outbox.sent();
    let notices: Vec<&Sent> = sent.iter().filter(|n| n.reserve_link().is_some()).collect();
    let told = notices.len();
    let mut once = std::collections::HashSet::new();
    assert!(
        notices.iter().all(|n| once.insert(n.to().to_owned())),
        "each told once"
    );
    let c = w.store.snapshot(&sku).await.unwrap().counters;
    let waiting = w.store.stats(&sku, 16).await.unwrap().waiting;
    // Every unit offered: each sold, or still out, unless nobody is left to offer it to.
    assert!(
        bought + (c.offered + c.held) as usize == units || waiting == 0,
        "units left unoffered: {bought} bought, {c:?}, {waiting} waiting"
    );
    assert_eq!(
        first_notice,
        Some(launch_at),
        "the first notice at the launch"
    );

    println!("| what | figure |");
    println!("|---|---|");
    println!(
        "| {people} sign-ups through capture | {:.1} s |",
        signups.as_secs_f64()
    );
    println!(
        "| the stock, an hour before the launch | nothing offered until {} |",
        rfc3339(launch_at)
    );
    println!(
        "| the first notice | {} (the sweep's first minute at the launch) |",
        rfc3339(first_notice.unwrap())
    );
    for zone in ZONES {
        if let Some((at, n)) = first_in_zone.get(zone) {
            println!("| {zone} | {n} told, the first at {} |", rfc3339(*at));
        } else {
            println!("| {zone} | nobody told |");
        }
    }
    println!("| told in 24 hours | {told}, once each, nobody inside their quiet hours |");
    println!(
        "| units | {units}: {bought} bought, {} offered or held at the end, {waiting} still waiting |",
        c.offered + c.held
    );
    println!(
        "| 1,440 simulated minutes (a sweep each, notify for every wake) | {:.1} s |",
        simulated.as_secs_f64()
    );
}
