//! Positions by ticket (`docs/TABLE.md`, "Positions") against the oracle:
//! the same request's position counted from the queue entries, as positions
//! were counted before tickets. On the lagging endpoint (conflicts and
//! throttles injected), over four shards, with joins in the same
//! millisecond, racing joins, leaves, offers, offers given back and
//! confirmations.

use crate::support::set_level;
use restock_core::{Contact, Email, ListShare, RequestId, RequestState, Sku, Window};
use restock_store::prelude::*;
use restock_store::{Due, ExpireOutcome, JoinOutcome, NewRequest, Request, StoreError, WaveParams};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, lagging_dynamo_store};

const T0: i64 = 1_796_342_400_000;
const SHARDS: u16 = 4;
const DAY: i64 = 86_400_000;

fn sku() -> Sku {
    Sku::try_from("SNEAKER-DROP").unwrap()
}

fn new_request(i: u64, at: i64, confirm: bool) -> NewRequest {
    let contact = Contact::Email(Email::try_from(format!("fan{i}@example.com").as_str()).unwrap());
    NewRequest {
        id: RequestId::from_random(testing::random(i + 1_000)()),
        sku: sku(),
        name: "Fan".try_into().unwrap(),
        contact_key: contact.key(b"pepper"),
        contact,
        now: at,
        shards: SHARDS,
        lifetime_ms: 90 * DAY,
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: confirm.then_some(2 * DAY),
        consent: None,
    }
}

async fn join(store: &DynamoStore, i: u64, at: i64, confirm: bool) -> Request {
    match store.join(new_request(i, at, confirm)).await.unwrap() {
        JoinOutcome::Joined(r) => r,
        other => panic!("{other:?}"),
    }
}

/// Every live request of `ids`: its position by ticket equals its position
/// counted from the queue, and the waiting ones hold 1..=n in join order.
async fn positions_agree(store: &DynamoStore, ids: &[RequestId]) {
    let mut waiting = Vec::new();
    for id in ids {
        let r = store.request(id).await.unwrap().unwrap();
        if !matches!(r.state, RequestState::Waiting | RequestState::Unconfirmed) {
            assert_eq!(store.position(&r, SHARDS).await.unwrap(), None);
            continue;
        }
        assert!(r.ticket.is_some(), "{} has a ticket", r.id);
        let by_ticket = store.position(&r, SHARDS).await.unwrap();
        let counted = store
            .position(
                &Request {
                    ticket: None,
                    ..r.clone()
                },
                SHARDS,
            )
            .await
            .unwrap();
        assert_eq!(by_ticket, counted, "{} ({:?})", r.id, r.state);
        if r.state == RequestState::Waiting {
            waiting.push((r.key, by_ticket.unwrap()));
        }
    }
    waiting.sort();
    let places: Vec<usize> = waiting.iter().map(|(_, p)| *p).collect();
    assert_eq!(places, (1..=waiting.len()).collect::<Vec<_>>());
}

async fn restock(store: &DynamoStore, level: u32, at: i64) {
    set_level(store, &sku(), level, at).await;
}

#[tokio::test]
async fn positions_by_ticket_equal_the_queue_count_through_a_drop() {
    let store = lagging_dynamo_store().await;
    let mut ids = Vec::new();
    // 30 joins, five to a millisecond: tie-breaks and shards interleave.
    for i in 0..30u64 {
        ids.push(join(&store, i, T0 + (i / 5) as i64, false).await.id);
    }
    positions_agree(&store, &ids).await;

    // Some leave, from the front, the middle and the back.
    for i in [0usize, 7, 12, 18, 29] {
        store.cancel(&ids[i], T0 + 100).await.unwrap();
    }
    positions_agree(&store, &ids).await;

    // Double opt-in: sign-ups hold a ticket but no place until confirmed.
    let mut unconfirmed = Vec::new();
    for i in 30..34u64 {
        let r = join(&store, i, T0 + 200, true).await;
        unconfirmed.push(r.id);
        ids.push(r.id);
    }
    positions_agree(&store, &ids).await;

    // A restock of six: the six oldest are offered, the rest move up.
    restock(&store, 6, T0 + 300).await;
    let params = WaveParams {
        share: ListShare::ALL,
        offer_window: Window::from_mins(15),
        shards: SHARDS,
        max_offers: 1_000,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    };
    let mut random = testing::random(9);
    let wave = store
        .create_offers(&sku(), &params, T0 + 300, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 6);
    positions_agree(&store, &ids).await;

    // Offers whose notices never went out run out: back to their places
    // at the front.
    for offer in &wave.offers[..3] {
        let RequestState::Offered { expires_ms, .. } = offer.request.state else {
            panic!()
        };
        let due = Due {
            id: offer.request.id,
            sku: sku(),
            due: expires_ms,
        };
        assert_eq!(
            store.expire(&due, expires_ms + 1).await.unwrap(),
            ExpireOutcome::Requeued
        );
    }
    positions_agree(&store, &ids).await;
    let back = store
        .request(&wave.offers[0].request.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.position(&back, SHARDS).await.unwrap(), Some(1));

    // A late joiner is last; more join in the same millisecond as it.
    for i in 40..46u64 {
        ids.push(join(&store, i, T0 + 400, false).await.id);
    }
    positions_agree(&store, &ids).await;
}

#[tokio::test]
async fn racing_joins_in_one_millisecond_each_get_an_exact_place() {
    let store = testing::dynamo_store().await;
    let joins = (0..24u64).map(|i| {
        let store = &store;
        async move { join(store, i, T0, false).await.id }
    });
    let ids = futures::future::join_all(joins).await;
    positions_agree(&store, &ids).await;
}

#[tokio::test]
async fn an_imported_waitlist_holds_its_order_and_a_joiner_comes_after_it() {
    let store = testing::dynamo_store().await;
    let imported: Vec<Request> = (0..40u64)
        .map(|i| new_request(i, T0 + i as i64, false).into_request())
        .collect();
    store.import_waiting(&imported, SHARDS).await.unwrap();
    let mut ids: Vec<RequestId> = imported.iter().map(|r| r.id).collect();
    positions_agree(&store, &ids).await;
    let last = join(&store, 99, T0 + 1_000, false).await;
    assert_eq!(store.position(&last, SHARDS).await.unwrap(), Some(41));
    ids.push(last.id);
    positions_agree(&store, &ids).await;
    // The same import again writes nothing; another into the item is refused.
    let again = store.import_waiting(&imported, SHARDS).await.unwrap();
    assert_eq!((again.written, again.already), (0, 40));
    positions_agree(&store, &ids).await;
    assert!(store.import_waiting(&imported[..1], SHARDS).await.is_err());
    assert_eq!(
        sign_ups(&store).await,
        41,
        "each imported sign-up in the item's history once, and the joiner"
    );
}

/// The sign-ups in the item's history, every day added up.
async fn sign_ups(store: &restock_store_dynamo::DynamoStore) -> u64 {
    let history = store.item_history(&sku(), "1970-01-01").await.unwrap();
    history.days.values().map(|d| d.sign_ups).sum()
}

/// An import cut short, with a live join, a wave and a cancel before it is
/// run again, twice at once: every imported request goes in exactly once, in
/// its order, the joiner after them, and nothing that happened to a request
/// in between is undone.
#[tokio::test]
async fn an_import_cut_short_resumes_beside_live_joins_and_changes_nothing_twice() {
    let store = testing::dynamo_store().await;
    // Fifty chunks' worth, all in shard 0: over two presence blocks.
    let imported: Vec<Request> = (0..1_200u64)
        .map(|i| Request {
            shard: 0,
            ..new_request(i, T0 + i as i64, false).into_request()
        })
        .collect();
    let first = testing::import_cut_short(&store, &imported, SHARDS, 3)
        .await
        .unwrap();
    let done = first.written;
    assert!(first.already == 0 && done > 3 && done < 100, "{first:?}");
    // A live join while the import is half in comes after all of it.
    let live = join(&store, 9_999, T0 + 10_000, false).await;
    // The front of the line is told and one imported shopper leaves, before
    // the import is run again.
    restock(&store, 2, T0 + 10_001).await;
    let wave = store
        .create_offers(
            &sku(),
            &WaveParams {
                share: ListShare::ALL,
                offer_window: Window::from_mins(15),
                shards: SHARDS,
                max_offers: 1_000,
                quiet_hours: restock_core::QuietHours::default(),
                shop_zone: restock_core::Zone::utc(),
            },
            T0 + 10_002,
            &mut testing::random(7),
        )
        .await
        .unwrap();
    let told: Vec<RequestId> = wave.offers.iter().map(|o| o.request.id).collect();
    assert_eq!(told, [imported[0].id, imported[1].id]);
    store.cancel(&imported[5].id, T0 + 10_003).await.unwrap();
    let (a, b) = tokio::join!(
        store.import_waiting(&imported, SHARDS),
        store.import_waiting(&imported, SHARDS)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(a.already >= done && b.already >= done, "{a:?} {b:?}");
    assert_eq!(a.written + b.written, 1_200 - done, "{a:?} {b:?}");
    for id in told {
        assert!(matches!(
            store.request(&id).await.unwrap().unwrap().state,
            RequestState::Offered { .. }
        ));
    }
    assert_eq!(
        store.request(&imported[5].id).await.unwrap().unwrap().state,
        RequestState::Cancelled
    );
    // Positions: the 1,197 still waiting in import order, then the joiner.
    let r = store.request(&imported[1_199].id).await.unwrap().unwrap();
    assert_eq!(store.position(&r, SHARDS).await.unwrap(), Some(1_197));
    let r = store.request(&imported[6].id).await.unwrap().unwrap();
    assert_eq!(store.position(&r, SHARDS).await.unwrap(), Some(4));
    let live = store.request(&live.id).await.unwrap().unwrap();
    assert_eq!(store.position(&live, SHARDS).await.unwrap(), Some(1_198));
    assert_eq!(
        sign_ups(&store).await,
        1_201,
        "every chunk's sign-ups counted once, however often the import ran"
    );
    // A sample agrees with the queue's own count.
    for id in imported.iter().step_by(100).map(|r| r.id).chain([live.id]) {
        let r = store.request(&id).await.unwrap().unwrap();
        let counted = Request {
            ticket: None,
            ..r.clone()
        };
        assert_eq!(
            store.position(&r, SHARDS).await.unwrap(),
            store.position(&counted, SHARDS).await.unwrap()
        );
    }
}

/// An import goes only into an item nobody has joined yet: with a live
/// joiner it is refused and writes nothing (its tickets would be dealt
/// again from the start).
#[tokio::test]
async fn an_import_into_an_item_already_joined_is_refused() {
    let store = testing::dynamo_store().await;
    let live = join(&store, 99, T0, false).await;
    let imported: Vec<Request> = (0..40)
        .map(|i| new_request(i, T0 + i as i64, false).into_request())
        .collect();
    let refused = store.import_waiting(&imported, SHARDS).await;
    assert!(
        matches!(&refused, Err(StoreError::Refused(why)) if why.contains("has a queue already")),
        "{refused:?}"
    );
    assert_eq!(store.request(&imported[0].id).await.unwrap(), None);
    assert_eq!(store.position(&live, SHARDS).await.unwrap(), Some(1));
}

/// One place per person per item holds for imported rows too: a row for a
/// shopper whose sign-up awaits confirmation is refused, naming the row.
#[tokio::test]
async fn an_import_naming_a_shopper_already_signed_up_is_refused() {
    let store = testing::dynamo_store().await;
    let signed_up = join(&store, 1, T0, true).await;
    let twice = NewRequest {
        id: RequestId::from_random([7; 16]),
        ..new_request(1, T0 + 1, false)
    }
    .into_request();
    let refused = store
        .import_waiting(std::slice::from_ref(&twice), SHARDS)
        .await;
    assert!(
        matches!(&refused, Err(StoreError::Refused(why)) if why.contains(&twice.id.to_string())),
        "{refused:?}"
    );
    assert_eq!(store.request(&twice.id).await.unwrap(), None);
    assert_eq!(
        store.request(&signed_up.id).await.unwrap().map(|r| r.id),
        Some(signed_up.id)
    );
}
