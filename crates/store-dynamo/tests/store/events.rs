//! restock's events as the table's stream really carries them: a story
//! through the store's own operations on the DynamoDB API, then every
//! record of the table's stream (moto's DynamoDB Streams API, images before
//! and after) decoded by `restock_store_dynamo::events`. Each thing a shop
//! may care about is exactly one event, in the order it happened, and no
//! other write is one.

use restock_core::{
    HoldId, ItemRef, Level, LinkToken, ListShare, RequestState, Rules, Sku, StockEvent, Window,
};
use restock_store::prelude::*;
use restock_store::{
    BuyOutcome, Claim, ConfirmLinks, ConfirmOutcome, Due, Event, ExpireOutcome, HoldOutcome,
    NoticeOutcome, Order, Request, WaveParams,
};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::events::decode_images;
use restock_store_dynamo::testing::{self, streamed_dynamo_store};
use serde_json::{Value, json};
use time::OffsetDateTime;

const T0: i64 = 1_796_342_400_000;
const MIN: i64 = 60_000;
const WINDOW: Window = Window::from_mins(15);

fn sku() -> Sku {
    Sku::try_from("CHAIR-WAL").unwrap()
}

async fn join(store: &DynamoStore, i: usize, confirming: bool) -> Request {
    crate::support::join_shopper(store, &sku(), i, confirming, T0 + i as i64).await
}

async fn level(
    store: &DynamoStore,
    level: u32,
    at: i64,
    rules: &Rules,
) -> restock_store::ApplyOutcome {
    let event = StockEvent {
        delivery_id: format!("level-{level}-{at}"),
        item: ItemRef::Sku { sku: sku() },
        location: "default".into(),
        level: Level::Tracked(level),
        at: OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).unwrap(),
        untimed: false,
    };
    store.apply_stock(&sku(), &event, rules, at).await.unwrap()
}

/// One call of the DynamoDB Streams API (JSON over HTTP, as the SDK sends
/// it) on the endpoint the store talks to.
async fn streams(action: &str, body: Value) -> Value {
    reqwest::Client::new()
        .post(testing::endpoint())
        .header("x-amz-target", format!("DynamoDBStreams_20120810.{action}"))
        .header("content-type", "application/x-amz-json-1.0")
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=testing/20261202/eu-west-2/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
        )
        .body(body.to_string())
        .send()
        .await
        .expect("the streams API answers")
        .json()
        .await
        .expect("JSON")
}

/// Every record of the store's table's stream so far, oldest first: its
/// event name and the images before and after.
async fn stream_records(store: &DynamoStore) -> Vec<Value> {
    let table = store
        .sdk()
        .describe_table()
        .table_name(store.table())
        .send()
        .await
        .unwrap();
    let arn = table
        .table()
        .unwrap()
        .latest_stream_arn()
        .unwrap()
        .to_owned();
    let described = streams("DescribeStream", json!({ "StreamArn": arn })).await;
    let mut records = Vec::new();
    for shard in described["StreamDescription"]["Shards"].as_array().unwrap() {
        let mut iterator = streams(
            "GetShardIterator",
            json!({ "StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "TRIM_HORIZON" }),
        )
        .await["ShardIterator"]
            .clone();
        loop {
            let page = streams("GetRecords", json!({ "ShardIterator": iterator })).await;
            let got = page["Records"].as_array().cloned().unwrap_or_default();
            if got.is_empty() {
                break;
            }
            records.extend(got);
            iterator = page["NextShardIterator"].clone();
            if iterator.is_null() {
                break;
            }
        }
    }
    records
}

/// Each event as one line: what it is and what it names.
fn line(e: &Event) -> String {
    let who = |r: &Request| r.contact.address().to_owned();
    match e {
        Event::SignUpConfirmed { request } => format!("sign-up confirmed {}", who(request)),
        Event::NoticeSent { request, episode } => format!("notice sent {} {episode}", who(request)),
        Event::HoldCreated { request, episode } => {
            format!("hold created {} {episode}", who(request))
        }
        Event::HoldBought { request } => format!("hold bought {}", who(request)),
        Event::OfferLapsed { request, episode } => {
            format!("offer lapsed {} {episode}", who(request))
        }
        Event::RestockDetected {
            sku,
            episode,
            level,
        } => {
            format!("restock detected {sku} {episode} at {level}")
        }
        Event::RestockEscalated {
            sku,
            episode,
            level,
        } => {
            format!("restock escalated {sku} {episode} at {level}")
        }
        Event::SendingPaused { reason, .. } => format!("sending paused: {reason}"),
        Event::ItemPaused { sku, reason } => format!("item paused {sku}: {reason}"),
        Event::ItemResumed { sku } => format!("item resumed {sku}"),
    }
}

async fn send_notice(store: &DynamoStore, offer: &restock_store::Offer, at: i64) {
    let r = &offer.request;
    let RequestState::Offered { episode, .. } = r.state else {
        panic!("not offered: {:?}", r.state)
    };
    let claim = store
        .claim_notice(
            &sku(),
            &r.id,
            episode,
            &offer.reserve.secret_hash(),
            &r.contact_key,
        )
        .await
        .unwrap();
    assert_eq!(claim, Claim::Claimed);
    let sent = NoticeOutcome::Sent {
        message_id: format!("m-{}", r.id),
    };
    store.record_notice(&r.id, episode, sent, at).await.unwrap();
}

#[tokio::test]
async fn each_thing_a_shop_may_care_about_is_one_event_in_the_table_s_stream() {
    let store = streamed_dynamo_store().await;
    let rules = Rules {
        threshold: 1,
        max_jump: 100,
        max_level: 100_000,
    };
    // Fan 1 signs up with double opt-in and confirms; fan 2 joins waiting.
    let one = join(&store, 1, true).await;
    let confirm = LinkToken::new(sku(), one.id, [10; 16]);
    let links = ConfirmLinks {
        confirm: confirm.secret_hash(),
        manage: LinkToken::new(sku(), one.id, [11; 16]).secret_hash(),
        optout: LinkToken::new(sku(), one.id, [12; 16]).secret_hash(),
    };
    let claimed = store
        .claim_confirmation(&sku(), &one.id, &links, &one.contact_key, one.key.joined_ms)
        .await
        .unwrap();
    assert_eq!(claimed, Claim::Claimed);
    let owner = LinkToken::new(sku(), one.id, [13; 16]).secret_hash();
    let confirmed = store
        .confirm(&confirm, owner, 90 * 86_400_000, T0 + MIN)
        .await
        .unwrap();
    assert!(
        matches!(confirmed, ConfirmOutcome::Confirmed(..)),
        "{confirmed:?}"
    );
    join(&store, 2, false).await;

    // Two units come back; both are told; fan 1 holds and buys; fan 2's
    // offer runs out.
    level(&store, 2, T0 + 2 * MIN, &rules).await;
    let params = WaveParams {
        share: ListShare::ALL,
        offer_window: WINDOW,
        shards: 1,
        max_offers: 100,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    };
    let mut random = testing::random(5);
    let wave = store
        .create_offers(&sku(), &params, T0 + 2 * MIN, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 2);
    for offer in &wave.offers {
        send_notice(&store, offer, T0 + 3 * MIN).await;
    }
    let hold = HoldId::from_random([7; 16]);
    let held = store
        .take_hold(&wave.offers[0].reserve, hold, 1, T0 + 4 * MIN, WINDOW)
        .await
        .unwrap();
    assert!(matches!(held, HoldOutcome::Held { .. }), "{held:?}");
    let order = Order {
        placed_at: T0 + 5 * MIN,
        items: None,
        prices: Default::default(),
    };
    let bought = store
        .mark_bought(&hold, &order, T0 + 5 * MIN)
        .await
        .unwrap();
    assert!(matches!(bought, BuyOutcome::Bought { .. }), "{bought:?}");
    let two = &wave.offers[1].request;
    let due = Due {
        id: two.id,
        sku: sku(),
        due: T0 + 2 * MIN + WINDOW.as_millis(),
    };
    assert_eq!(
        store.expire(&due, due.due + 1).await.unwrap(),
        ExpireOutcome::Lapsed
    );

    // Sold out, then a rise too large to trust, released by the team.
    level(&store, 0, T0 + 30 * MIN, &rules).await;
    level(&store, 500, T0 + 31 * MIN, &rules).await;
    store.release_paused(&sku(), T0 + 32 * MIN).await.unwrap();

    // The provider refuses the sender: sending pauses once.
    let until = T0 + 38 * MIN;
    assert!(
        store
            .pause_sender("account in the sandbox", until, &sku(), T0 + 33 * MIN)
            .await
            .unwrap()
    );
    assert!(
        !store
            .pause_sender("account in the sandbox", until, &sku(), T0 + 34 * MIN)
            .await
            .unwrap()
    );

    // The team pauses the item's notices, renames it (no event), resumes.
    let mut entry = restock_core::CatalogueEntry::new(sku(), "Walnut chair");
    store.put_catalogue_entry(&entry).await.unwrap();
    entry.paused = Some(restock_core::catalogue::ItemPause {
        reason: "wrong price".into(),
        since_ms: T0 + 35 * MIN,
    });
    store.put_catalogue_entry(&entry).await.unwrap();
    entry.name = "Walnut dining chair".into();
    store.put_catalogue_entry(&entry).await.unwrap();
    entry.paused = None;
    store.put_catalogue_entry(&entry).await.unwrap();

    let records = stream_records(&store).await;
    let mut events = Vec::new();
    for record in &records {
        let images = &record["dynamodb"];
        let decoded = decode_images(images.get("OldImage"), images.get("NewImage"))
            .unwrap_or_else(|e| panic!("{e}: {record}"));
        events.extend(decoded.iter().map(line));
    }
    assert_eq!(
        events,
        [
            "sign-up confirmed fan1@example.com",
            "sign-up confirmed fan2@example.com",
            "restock detected CHAIR-WAL 1 at 2",
            "notice sent fan1@example.com 1",
            "notice sent fan2@example.com 1",
            "hold created fan1@example.com 1",
            "hold bought fan1@example.com",
            "offer lapsed fan2@example.com 1",
            "restock escalated CHAIR-WAL 2 at 500",
            "restock detected CHAIR-WAL 2 at 500",
            "sending paused: account in the sandbox",
            "item paused CHAIR-WAL: wrong price",
            "item resumed CHAIR-WAL",
        ],
        "from {} stream records",
        records.len()
    );
}
