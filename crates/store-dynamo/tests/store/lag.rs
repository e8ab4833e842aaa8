//! The DynamoDB store on DynamoDB as it really behaves: the lagging endpoint
//! (`RESTOCK_DYNAMODB_LAGGING_ENDPOINT`, the strict double in
//! `scripts/dynamo_strict.py`) answers index reads 250 ms behind the table,
//! honours `ClientRequestToken` as DynamoDB documents it, and injects
//! transaction conflicts and throttles. Each test here failed on the store
//! as it was before its fix.

use crate::support::{set_level, set_status_behind_the_store};
use restock_core::{Contact, Email, ListShare, RequestId, RequestState, Sku, Window};
use restock_store::prelude::*;
use restock_store::{
    CancelOutcome, Due, ExpireOutcome, JoinOutcome, NewRequest, Request, WaveParams,
};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, LAG, lagging_dynamo_store};

const T0: i64 = 1_796_342_400_000;
const MIN: i64 = 60_000;

fn sku() -> Sku {
    Sku::try_from("CHAIR-WAL").unwrap()
}

fn params() -> WaveParams {
    WaveParams {
        share: ListShare::ALL,
        offer_window: Window::from_mins(15),
        shards: 1,
        max_offers: 1_000,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    }
}

async fn join(store: &DynamoStore, name: &str, at: i64) -> Request {
    let contact = Contact::Email(Email::try_from(format!("{name}@example.com").as_str()).unwrap());
    let new = NewRequest {
        id: RequestId::from_random(testing::random(at as u64)()),
        sku: sku(),
        name: name.try_into().unwrap(),
        contact_key: contact.key(b"pepper"),
        contact,
        now: at,
        shards: 1,
        lifetime_ms: 90 * 86_400_000,
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: None,
        consent: None,
    };
    match store.join(new).await.unwrap() {
        JoinOutcome::Joined(r) => r,
        other => panic!("{other:?}"),
    }
}

async fn restock(store: &DynamoStore, level: u32, at: i64) {
    set_level(store, &sku(), level, at).await;
}

/// Lets the index catch up with everything written so far.
async fn settle() {
    tokio::time::sleep(LAG * 2).await;
}

#[tokio::test]
async fn a_lapsed_offer_passes_its_unit_on_while_the_index_still_shows_it() {
    // DESIGN §1: Fay's offer lapses, the sweep runs, Marcus is told next.
    let store = lagging_dynamo_store().await;
    let fay = join(&store, "fay", T0).await;
    let marcus = join(&store, "marcus", T0 + 1).await;
    settle().await;
    restock(&store, 1, T0 + MIN).await;
    let mut random = testing::random(7);
    let wave = store
        .create_offers(&sku(), &params(), T0 + MIN, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 1);
    assert_eq!(wave.offers[0].request.id, fay.id);
    // Her notice goes out (an offer never told would return to the queue).
    assert_eq!(
        store
            .claim_notice(
                &sku(),
                &fay.id,
                1,
                &wave.offers[0].reserve.secret_hash(),
                &fay.contact_key
            )
            .await
            .unwrap(),
        restock_store::Claim::Claimed
    );
    settle().await;

    // The offer lapses; the sweep reconciles at once, while the `units`
    // index still shows Fay as offered.
    let after = T0 + 20 * MIN;
    let due = Due {
        id: fay.id,
        sku: sku(),
        due: T0 + 16 * MIN,
    };
    assert_eq!(
        store.expire(&due, after).await.unwrap(),
        ExpireOutcome::Lapsed
    );
    let drift = store.reconcile(&sku(), after).await.unwrap();
    assert!(
        drift.is_none_or(|d| d.stored == d.counted),
        "a lagging index must not raise the counter back: {drift:?}"
    );
    assert_eq!(store.snapshot(&sku()).await.unwrap().counters.offered, 0);

    let wave = store
        .create_offers(&sku(), &params(), after, &mut random)
        .await
        .unwrap();
    let told: Vec<RequestId> = wave.offers.iter().map(|o| o.request.id).collect();
    assert_eq!(told, [marcus.id], "the freed unit goes to Marcus");
}

#[tokio::test]
async fn a_wave_retried_without_a_request_that_left_is_not_refused_for_its_token() {
    let store = lagging_dynamo_store().await;
    let ann = join(&store, "ann", T0).await;
    let bea = join(&store, "bea", T0 + 1).await;
    let cat = join(&store, "cat", T0 + 2).await;
    settle().await;
    restock(&store, 3, T0 + MIN).await;
    // Bea leaves between the wave's read of the queue and its write (her
    // request ends; her queue entry is still there when the wave reads it),
    // so the wave's first transaction names her, fails on her, and is sent
    // again without her.
    set_status_behind_the_store(&store, &bea.id, "cancelled").await;
    let mut random = testing::random(11);
    let wave = store
        .create_offers(&sku(), &params(), T0 + MIN, &mut random)
        .await
        .expect("the retried wave is written, not refused as a token mismatch");
    let told: Vec<RequestId> = wave.offers.iter().map(|o| o.request.id).collect();
    assert_eq!(told, [ann.id, cat.id]);
    let counters = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!((counters.level, counters.offered), (3, 2));
}

#[tokio::test]
async fn positions_count_exactly_who_is_ahead_at_once() {
    // Before the queue moved into the base table, thirteen joins in a row
    // were told 1, 1, 1, 2, 3, … (counted on a lagging index), and after
    // three ahead left Della was still told 7th.
    let store = lagging_dynamo_store().await;
    let mut joined = Vec::new();
    for i in 0..13 {
        let r = join(&store, &format!("shopper{i}"), T0 + i).await;
        assert_eq!(
            store.position(&r, 1).await.unwrap(),
            Some(i as usize + 1),
            "joiner {i}"
        );
        joined.push(r);
    }
    for r in &joined[..3] {
        assert_eq!(
            store.cancel(&r.id, T0 + MIN).await.unwrap(),
            CancelOutcome::Cancelled
        );
    }
    assert_eq!(store.position(&joined[6], 1).await.unwrap(), Some(4));
}

#[tokio::test]
async fn a_wave_right_after_a_join_offers_the_joiner() {
    // The wave reads the queue strongly consistent: a join a moment before
    // the restock is not missed (on a lagging index it was, and nothing
    // looked again until another unit freed up).
    let store = lagging_dynamo_store().await;
    let ann = join(&store, "ann", T0).await;
    restock(&store, 1, T0 + 1).await;
    let mut random = testing::random(5);
    let wave = store
        .create_offers(&sku(), &params(), T0 + 2, &mut random)
        .await
        .unwrap();
    let told: Vec<RequestId> = wave.offers.iter().map(|o| o.request.id).collect();
    assert_eq!(told, [ann.id]);
}

#[tokio::test]
async fn an_unreadable_request_is_set_aside_once_and_the_sweep_goes_on() {
    let store = lagging_dynamo_store().await;
    let ann = join(&store, "ann", T0).await;
    let bea = join(&store, "bea", T0 + 1).await;
    // A manual edit leaves Ann's request unreadable (an unknown status).
    set_status_behind_the_store(&store, &ann.id, "misplaced").await;
    settle().await;
    let stale = T0 + 91 * 86_400_000;
    let due = store.due(stale, 100).await.unwrap();
    assert_eq!(due.len(), 2, "{due:?}");
    let mut outcomes = Vec::new();
    for d in &due {
        outcomes.push((d.id, store.expire(d, stale).await.unwrap()));
    }
    assert!(
        outcomes.iter().any(|(id, o)| *id == ann.id && matches!(o, ExpireOutcome::Unreadable { reason } if reason.contains(&ann.id.to_string()))),
        "{outcomes:?}"
    );
    assert!(
        outcomes.contains(&(bea.id, ExpireOutcome::Stale)),
        "{outcomes:?}"
    );
    // Set aside: the next sweep does not meet it again.
    settle().await;
    assert!(store.due(stale, 100).await.unwrap().is_empty());
    let bea_now = store.request(&bea.id).await.unwrap().unwrap();
    assert_eq!(bea_now.state, RequestState::Stale);
}

#[tokio::test]
async fn a_claim_given_back_is_re_armed_by_the_very_next_pass() {
    // A send fails transiently and the claim is given back; Lambda
    // redelivers the record at once. Read from the lagging `units` index,
    // the offer still looked claimed and was never sent.
    let store = lagging_dynamo_store().await;
    let ann = join(&store, "ann", T0).await;
    restock(&store, 1, T0 + 1).await;
    let mut random = testing::random(13);
    let wave = store
        .create_offers(&sku(), &params(), T0 + 2, &mut random)
        .await
        .unwrap();
    let offer = &wave.offers[0];
    settle().await;
    assert_eq!(
        store
            .claim_notice(
                &sku(),
                &ann.id,
                1,
                &offer.reserve.secret_hash(),
                &ann.contact_key
            )
            .await
            .unwrap(),
        restock_store::Claim::Claimed
    );
    settle().await;
    store.release_notice(&sku(), &ann.id, 1).await.unwrap();
    let again = store.reissue_unsent(&sku(), &mut random).await.unwrap();
    let rearmed: Vec<RequestId> = again.iter().map(|o| o.request.id).collect();
    assert_eq!(rearmed, [ann.id]);
    // And once its notice is claimed, no later pass re-arms it.
    let fresh = again[0].reserve.secret_hash();
    assert_eq!(
        store
            .claim_notice(&sku(), &ann.id, 1, &fresh, &ann.contact_key)
            .await
            .unwrap(),
        restock_store::Claim::Claimed
    );
    assert!(
        store
            .reissue_unsent(&sku(), &mut random)
            .await
            .unwrap()
            .is_empty()
    );
}
