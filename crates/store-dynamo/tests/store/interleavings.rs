//! Races made certain. Some guards matter only when another operation lands
//! between two requests of one operation (its read and its conditional
//! write); parallel requests hit that window now and then, not every run.
//! Here one store's `n`th request is held, unsent, while the test runs the
//! other operation on a second client, then let go: the interleaving the
//! guard exists for, every time (`docs/guards.toml` names these tests).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use restock_core::{HoldId, LinkToken, ListShare, RequestState, Sku, Status, Window};
use restock_store::prelude::*;
use restock_store::{
    BuyOutcome, CancelOutcome, Claim, ConfirmLinks, ConfirmOutcome, Due, ExpireOutcome,
    HoldOutcome, NoticeOutcome, Order, Request, WaveParams,
};
use restock_store_dynamo::DynamoStore;
use restock_store_dynamo::testing::{self, dynamo_store};
use tokio::sync::oneshot;

const T0: i64 = 1_796_342_400_000;
const MIN: i64 = 60_000;
const LIFETIME_MS: i64 = 90 * 86_400_000;

/// Holds the `nth` request of operation `op` (a DynamoDB action name) that
/// its client sends, unsent, until the test lets it go, telling the test
/// when it got there.
struct PauseAt {
    op: &'static str,
    nth: usize,
    seen: AtomicUsize,
    reached: Mutex<Option<oneshot::Sender<()>>>,
    resume: Mutex<mpsc::Receiver<()>>,
}

impl std::fmt::Debug for PauseAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PauseAt({} #{})", self.op, self.nth)
    }
}

impl Intercept for PauseAt {
    fn name(&self) -> &'static str {
        "PauseAt"
    }

    fn read_before_transmit(
        &self,
        _: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if cfg.load::<Metadata>().map(Metadata::name) != Some(self.op)
            || self.seen.fetch_add(1, Ordering::SeqCst) + 1 != self.nth
        {
            return Ok(());
        }
        if let Some(reached) = self.reached.lock().unwrap().take() {
            let _ = reached.send(());
        }
        // Never for ever: a test that forgets to let go fails, not hangs.
        let _ = self
            .resume
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(30));
        Ok(())
    }
}

/// A held request: await `reached` for it to get there, send on `resume`
/// to let it go.
struct Stop {
    reached: oneshot::Receiver<()>,
    resume: mpsc::Sender<()>,
}

/// A store on `store`'s table whose `nth` request of each `(op, nth)` in
/// `stops` waits, one [`Stop`] each. Run what uses it with [`on_own_thread`].
fn paused_at_each(
    store: &DynamoStore,
    stops: &[(&'static str, usize)],
) -> (DynamoStore, Vec<Stop>) {
    let mut config = testing::config();
    let mut handles = Vec::new();
    for &(op, nth) in stops {
        let (reached_tx, reached) = oneshot::channel();
        let (resume, resume_rx) = mpsc::channel();
        config = config.interceptor(PauseAt {
            op,
            nth,
            seen: AtomicUsize::new(0),
            reached: Mutex::new(Some(reached_tx)),
            resume: Mutex::new(resume_rx),
        });
        handles.push(Stop { reached, resume });
    }
    let client = aws_sdk_dynamodb::Client::from_conf(config.build());
    (DynamoStore::new(client, store.table().to_owned()), handles)
}

/// [`paused_at_each`] with one stop.
fn paused_at(
    store: &DynamoStore,
    op: &'static str,
    nth: usize,
) -> (DynamoStore, oneshot::Receiver<()>, mpsc::Sender<()>) {
    let (paused, mut stops) = paused_at_each(store, &[(op, nth)]);
    let Stop { reached, resume } = stops.remove(0);
    (paused, reached, resume)
}

/// Runs `op` on a thread and runtime of its own, so a request held there
/// blocks nothing the test runs meanwhile (a held worker thread of the
/// test's runtime can strand the other client's connection tasks).
fn on_own_thread<T: Send + 'static>(
    op: impl Future<Output = T> + Send + 'static,
) -> oneshot::Receiver<T> {
    let (done, result) = oneshot::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let _ = done.send(runtime.block_on(op));
    });
    result
}

const WINDOW: Window = Window::from_mins(15);

/// One shard, offers open for [`WINDOW`].
fn wave_params() -> WaveParams {
    WaveParams {
        share: ListShare::ALL,
        offer_window: WINDOW,
        shards: 1,
        max_offers: 100,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    }
}

fn sku() -> Sku {
    Sku::try_from("CHAIR-WAL").unwrap()
}

fn link(r: &Request, seed: u8) -> LinkToken {
    LinkToken::new(r.sku.clone(), r.id, [seed; 16])
}

/// Shopper `i` signs up: unconfirmed with double opt-in (`confirming`),
/// else waiting.
async fn sign_up(store: &DynamoStore, i: usize) -> Request {
    join(store, i, true).await
}

async fn join(store: &DynamoStore, i: usize, confirming: bool) -> Request {
    crate::support::join_shopper(store, &sku(), i, confirming, T0).await
}

/// The links of one confirmation mail, `seed` telling mails apart.
async fn claim_confirmation(store: &DynamoStore, r: &Request, seed: u8) -> (Claim, LinkToken) {
    let confirm = link(r, seed);
    let links = ConfirmLinks {
        confirm: confirm.secret_hash(),
        manage: link(r, seed + 1).secret_hash(),
        optout: link(r, seed + 2).secret_hash(),
    };
    let claim = store
        .claim_confirmation(&r.sku, &r.id, &links, &r.contact_key, r.key.joined_ms)
        .await
        .unwrap();
    (claim, confirm)
}

/// A tap on a confirmation link has read the sign-up; before its write,
/// the mail's send failed, the link was given back and a new mail claimed.
/// The old link confirms nothing: the sign-up waits for the new one.
/// (Guard `confirm.link`: the write is conditional on the link's hash.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_on_a_link_given_back_while_it_was_in_flight_confirms_nothing() {
    let store = dynamo_store().await;
    let r = sign_up(&store, 1).await;
    let (claim, old) = claim_confirmation(&store, &r, 10).await;
    assert_eq!(claim, Claim::Claimed);
    // Held: the tap's write (it has read the sign-up).
    let (tapping, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let owner = link(&r, 99).secret_hash();
    let tap =
        on_own_thread(async move { tapping.confirm(&old, owner, LIFETIME_MS, T0 + MIN).await });
    reached.await.unwrap();
    store
        .release_confirmation(&sku(), &r.id, &link(&r, 10).secret_hash())
        .await
        .unwrap();
    let (again, _) = claim_confirmation(&store, &r, 20).await;
    assert_eq!(again, Claim::Claimed, "the new mail is claimed");
    resume.send(()).unwrap();
    assert_eq!(tap.await.unwrap().unwrap(), ConfirmOutcome::Refused);
}

/// A purchase has read the item's stock state; before its write, the shop's
/// webhook reports the level after the sale (5, read after the order was
/// placed). The purchase must not write its level over that reading: it
/// reads again and finds the sale already counted.
/// (Guard `buy.version`: the sale's write is conditional on the version read.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sale_landing_after_a_newer_stock_report_keeps_the_report_s_level() {
    let store = dynamo_store().await;
    let r = join(&store, 1, false).await;
    crate::support::set_level(&store, &sku(), 1, T0 + 100).await;
    let params = wave_params();
    let mut random = testing::random(9);
    let wave = store
        .create_offers(&sku(), &params, T0 + 100, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers[0].request.id, r.id);
    let hold = HoldId::from_random([4; 16]);
    let held = store
        .take_hold(&wave.offers[0].reserve, hold, 1, T0 + 200, WINDOW)
        .await
        .unwrap();
    assert!(matches!(held, HoldOutcome::Held { .. }), "{held:?}");
    // Held: the purchase's write (it has read the hold, the request and the item).
    let (buying, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let order = Order {
        placed_at: T0 + 400,
        items: None,
        prices: Default::default(),
    };
    let bought = on_own_thread(async move { buying.mark_bought(&hold, &order, T0 + 400).await });
    reached.await.unwrap();
    crate::support::set_level(&store, &sku(), 5, T0 + 500).await;
    resume.send(()).unwrap();
    assert!(matches!(
        bought.await.unwrap().unwrap(),
        BuyOutcome::Bought { .. }
    ));
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!((c.level, c.held), (5, 0), "the newer report stands: {c:?}");
}

/// A wave has counted the free units and picked who to offer them to;
/// before its write, the shop reports the item sold out. The wave offers
/// nothing: its write is refused, and read again, nothing is free.
/// (Guard `wave.version`: a chunk is written over the state it counted from.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wave_counted_before_a_sell_out_offers_nothing() {
    let store = dynamo_store().await;
    for i in 0..3 {
        join(&store, i, false).await;
    }
    crate::support::set_level(&store, &sku(), 2, T0 + 100).await;
    let params = wave_params();
    let (waving, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let wave = on_own_thread(async move {
        let mut random = testing::random(9);
        waving
            .create_offers(&sku(), &params, T0 + 200, &mut random)
            .await
    });
    reached.await.unwrap();
    crate::support::set_level(&store, &sku(), 0, T0 + 150).await;
    resume.send(()).unwrap();
    let wave = wave.await.unwrap().unwrap();
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!(
        (wave.offers.len(), c.level, c.offered),
        (0, 0, 0),
        "nothing offered for a level of 0: {c:?}"
    );
}

/// Shopper 1 waits, one unit comes back at `T0 + 100` and a wave offers it
/// to them: the offer runs for [`WINDOW`].
async fn one_offer(store: &DynamoStore) -> restock_store::Offer {
    let r = join(store, 1, false).await;
    offer_the_unit(store, &r).await
}

/// One unit comes back at `T0 + 100` and a wave offers it to `r`, the only
/// one waiting.
async fn offer_the_unit(store: &DynamoStore, r: &Request) -> restock_store::Offer {
    crate::support::set_level(store, &sku(), 1, T0 + 100).await;
    let mut random = testing::random(9);
    let wave = store
        .create_offers(&sku(), &wave_params(), T0 + 100, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 1);
    assert_eq!(wave.offers[0].request.id, r.id);
    wave.offers.into_iter().next().unwrap()
}

fn due(offer: &restock_store::Offer) -> Due {
    Due {
        id: offer.request.id,
        sku: sku(),
        due: T0 + 100 + WINDOW.as_millis(),
    }
}

/// The restock `r` is offered a unit in.
fn episode(r: &Request) -> u32 {
    match r.state {
        RequestState::Offered { episode, .. } => episode,
        _ => panic!("not offered: {:?}", r.state),
    }
}

/// A pass claims `offer`'s notice, as notify does before sending it.
async fn claim_notice(store: &DynamoStore, offer: &restock_store::Offer) -> Claim {
    let r = &offer.request;
    store
        .claim_notice(
            &sku(),
            &r.id,
            episode(r),
            &offer.reserve.secret_hash(),
            &r.contact_key,
        )
        .await
        .unwrap()
}

/// The item sells out at `T0 + 200`, the shopper's click on `offer`'s link
/// finds it sold out (back to the front of the line), and one unit comes
/// back at `T0 + 400`.
async fn sold_out_and_back(store: &DynamoStore, offer: &restock_store::Offer) {
    crate::support::set_level(store, &sku(), 0, T0 + 200).await;
    let click = store
        .take_hold(
            &offer.reserve,
            HoldId::from_random([4; 16]),
            1,
            T0 + 300,
            WINDOW,
        )
        .await
        .unwrap();
    assert_eq!(click, HoldOutcome::SoldOutAgain);
    crate::support::set_level(store, &sku(), 1, T0 + 400).await;
}

/// A cancel has read a waiting request; before its write, a wave offers
/// that request a unit. The cancel ends the offer and frees its unit, not
/// the waiting request it read (which would keep the unit out for ever).
/// (Guard `end.status`: an end is written over the state it read.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_that_read_a_waiting_request_frees_the_unit_offered_meanwhile() {
    let store = dynamo_store().await;
    let r = join(&store, 1, false).await;
    let (cancelling, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let id = r.id;
    let cancel = on_own_thread(async move { cancelling.cancel(&id, T0 + 200).await });
    reached.await.unwrap();
    offer_the_unit(&store, &r).await;
    resume.send(()).unwrap();
    assert_eq!(cancel.await.unwrap().unwrap(), CancelOutcome::Cancelled);
    let after = store.request(&r.id).await.unwrap().unwrap();
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!(
        (after.state, c.offered),
        (RequestState::Cancelled, 0),
        "the offer's unit is free again: {c:?}"
    );
}

/// A sweep has read an offer that ran out; before its write, the shopper's
/// click (on a clock a little behind) found the item sold out and sent the
/// request back to the front, and the unit's return offered it again. The
/// sweep leaves the new offer alone, whether the first one's notice went
/// out (it would lapse it) or not (it would send it back to the queue).
/// (Guards `end.same-offer` and `requeue.same-offer`: an end or a requeue
/// is written over the very offer read, by its expiry.)
async fn a_sweep_leaves_the_offer_made_again_meanwhile(notice_sent: bool) {
    let store = dynamo_store().await;
    let offer = one_offer(&store).await;
    let r = &offer.request;
    if notice_sent {
        assert_eq!(claim_notice(&store, &offer).await, Claim::Claimed);
        let sent = NoticeOutcome::Sent {
            message_id: "m-1".into(),
        };
        store
            .record_notice(&r.id, episode(r), sent, T0 + 150)
            .await
            .unwrap();
    }
    let ran_out = due(&offer);
    let (sweeping, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let sweep = on_own_thread(async move { sweeping.expire(&ran_out, ran_out.due + 1).await });
    reached.await.unwrap();
    sold_out_and_back(&store, &offer).await;
    let again_at = due(&offer).due + 2;
    let mut random = testing::random(10);
    let again = store
        .create_offers(&sku(), &wave_params(), again_at, &mut random)
        .await
        .unwrap();
    assert_eq!(again.offers.len(), 1, "offered again");
    resume.send(()).unwrap();
    assert_eq!(sweep.await.unwrap().unwrap(), ExpireOutcome::Skipped);
    let now = store.request(&r.id).await.unwrap().unwrap();
    assert!(
        matches!(now.state, RequestState::Offered { expires_ms, .. } if expires_ms == again_at + WINDOW.as_millis()),
        "the new offer stands: {:?}",
        now.state
    );
    assert_eq!(store.snapshot(&sku()).await.unwrap().counters.offered, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_that_read_a_lapsed_offer_leaves_the_offer_made_again_meanwhile() {
    a_sweep_leaves_the_offer_made_again_meanwhile(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_that_read_an_unsent_offer_leaves_the_offer_made_again_meanwhile() {
    a_sweep_leaves_the_offer_made_again_meanwhile(false).await;
}

/// A sweep has read an offer whose notice never went out and ran out;
/// before its write, the shopper clicked (on a clock a little behind), so
/// the hold ends exactly when the offer did. The sweep leaves the hold
/// alone: only an offer goes back to the queue.
/// (Guard `requeue.offered`: a requeue is written over an offer only.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_that_read_an_unsent_offer_leaves_the_hold_taken_meanwhile() {
    let store = dynamo_store().await;
    let offer = one_offer(&store).await;
    let ran_out = due(&offer);
    let (sweeping, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let sweep = on_own_thread(async move { sweeping.expire(&ran_out, ran_out.due + 1).await });
    reached.await.unwrap();
    let hold = HoldId::from_random([4; 16]);
    let held = store
        .take_hold(&offer.reserve, hold, 1, T0 + 100, WINDOW)
        .await
        .unwrap();
    assert_eq!(
        held,
        HoldOutcome::Held {
            hold,
            expires: due(&offer).due
        },
        "a hold ending when the offer did"
    );
    resume.send(()).unwrap();
    assert_eq!(sweep.await.unwrap().unwrap(), ExpireOutcome::Skipped);
    let now = store.request(&offer.request.id).await.unwrap().unwrap();
    assert_eq!(now.state.status(), Status::Held, "{:?}", now.state);
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!((c.offered, c.held), (0, 1), "{c:?}");
}

/// A click found the item sold out and has read the offer; before it sends
/// the request back to the queue, the offer is re-armed with a new link (its
/// notice had not gone out). The old link's click sends nothing back: the
/// re-armed offer, about to be sent, stands.
/// (Guard `sold-out-again.this-link`: the requeue is written over the link clicked.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sold_out_click_leaves_an_offer_re_armed_meanwhile() {
    let store = dynamo_store().await;
    let offer = one_offer(&store).await;
    crate::support::set_level(&store, &sku(), 0, T0 + 200).await;
    // Held: the click's second write, its requeue (the first, the hold,
    // found no unit).
    let (clicking, reached, resume) = paused_at(&store, "TransactWriteItems", 2);
    let old = offer.reserve.clone();
    let click = on_own_thread(async move {
        clicking
            .take_hold(&old, HoldId::from_random([4; 16]), 1, T0 + 300, WINDOW)
            .await
    });
    reached.await.unwrap();
    let mut random = testing::random(10);
    let rearmed = store.reissue_unsent(&sku(), &mut random).await.unwrap();
    assert_eq!(rearmed.len(), 1, "re-armed");
    resume.send(()).unwrap();
    let click = click.await.unwrap().unwrap();
    assert!(matches!(click, HoldOutcome::Refused(_)), "{click:?}");
    let now = store.request(&offer.request.id).await.unwrap().unwrap();
    assert_eq!(now.state.status(), Status::Offered, "{:?}", now.state);
    assert_eq!(now.reserve_hash, Some(rearmed[0].reserve.secret_hash()));
}

/// A recount has read the item's state; a wave then offers a unit (the
/// count sees it), and before the recount's write a cancel frees another.
/// `units_out` is back where it was read, but the count is out of date by
/// the cancel: the recount corrects nothing.
/// (Guard `reconcile.version`: a correction holds only if no wave wrote since.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recount_spanning_a_wave_and_a_cancel_corrects_nothing() {
    let store = dynamo_store().await;
    let a = join(&store, 1, false).await;
    join(&store, 2, false).await;
    crate::support::set_level(&store, &sku(), 2, T0 + 100).await;
    let one_at_a_time = WaveParams {
        max_offers: 1,
        ..wave_params()
    };
    let mut random = testing::random(9);
    let first = store
        .create_offers(&sku(), &one_at_a_time, T0 + 100, &mut random)
        .await
        .unwrap();
    assert_eq!(first.offers[0].request.id, a.id);
    // Held: after the state's read, the slots' (then the count runs); and
    // the correction's write.
    let (counting, mut stops) =
        paused_at_each(&store, &[("BatchGetItem", 1), ("TransactWriteItems", 1)]);
    let recount = on_own_thread(async move { counting.reconcile(&sku(), T0 + 300).await });
    let Stop { reached, resume } = stops.remove(0);
    reached.await.unwrap();
    let second = store
        .create_offers(&sku(), &one_at_a_time, T0 + 200, &mut random)
        .await
        .unwrap();
    assert_eq!(second.offers.len(), 1, "the wave offers the second unit");
    resume.send(()).unwrap();
    let Stop { reached, resume } = stops.remove(0);
    reached.await.unwrap();
    assert_eq!(
        store.cancel(&a.id, T0 + 250).await.unwrap(),
        CancelOutcome::Cancelled
    );
    resume.send(()).unwrap();
    assert_eq!(recount.await.unwrap().unwrap(), None, "nothing to correct");
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!(c.offered, 1, "one offer out: {c:?}");
    assert_eq!(store.reconcile(&sku(), T0 + 400).await.unwrap(), None);
}

/// A sweep has read a sign-up whose confirmation window has run out;
/// before its write, the shopper taps the link in the mail. The sweep
/// deletes nothing: the confirmed shopper keeps their place.
/// (Guard `expire-unconfirmed.status`: the deletion is conditional on the
/// sign-up still unconfirmed.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_that_read_an_unconfirmed_sign_up_leaves_it_confirmed_meanwhile() {
    let store = dynamo_store().await;
    let r = sign_up(&store, 1).await;
    let (claim, confirm) = claim_confirmation(&store, &r, 10).await;
    assert_eq!(claim, Claim::Claimed);
    let ran_out = Due {
        id: r.id,
        sku: sku(),
        due: r.stale_at,
    };
    let (sweeping, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let sweep = on_own_thread(async move { sweeping.expire(&ran_out, ran_out.due + 1).await });
    reached.await.unwrap();
    let owner = link(&r, 99).secret_hash();
    let tapped = store
        .confirm(&confirm, owner, LIFETIME_MS, T0 + MIN)
        .await
        .unwrap();
    assert!(
        matches!(tapped, ConfirmOutcome::Confirmed(..)),
        "{tapped:?}"
    );
    resume.send(()).unwrap();
    assert_eq!(sweep.await.unwrap().unwrap(), ExpireOutcome::Skipped);
    let now = store.request(&r.id).await.unwrap();
    assert_eq!(
        now.map(|r| r.state),
        Some(RequestState::Waiting),
        "the confirmed sign-up waits"
    );
}

/// A sweep has read an offer whose notice had not gone out and ran out;
/// before its write, a notify pass claims the notice. The sweep sends
/// nothing back to the queue: the notice on its way carries a link to an
/// offer that still stands (a later sweep lapses it as told).
/// (Guard `expire-unsent.unclaimed`: only an unclaimed offer goes back.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_that_read_an_unsent_offer_leaves_a_notice_claimed_meanwhile() {
    let store = dynamo_store().await;
    let offer = one_offer(&store).await;
    let r = offer.request.clone();
    let ran_out = due(&offer);
    let (sweeping, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let sweep = on_own_thread(async move { sweeping.expire(&ran_out, ran_out.due + 1).await });
    reached.await.unwrap();
    assert_eq!(claim_notice(&store, &offer).await, Claim::Claimed);
    resume.send(()).unwrap();
    assert_eq!(sweep.await.unwrap().unwrap(), ExpireOutcome::Skipped);
    let now = store.request(&r.id).await.unwrap().unwrap();
    assert_eq!(now.state.status(), Status::Offered, "{:?}", now.state);
    assert_eq!(now.notice, Some(NoticeOutcome::Sending));
}

/// A pass re-arming unsent offers has read one; before its write, the
/// shopper clicked (or a pass claimed its notice). It re-arms nothing: the
/// link the shopper holds, or the one on its way, keeps working.
/// (Guards `unsent.rearm-offered` and `unsent.rearm-unclaimed`.)
async fn a_re_arm_leaves_an_offer_taken_meanwhile(clicked: bool) {
    let store = dynamo_store().await;
    let offer = one_offer(&store).await;
    let (rearming, reached, resume) = paused_at(&store, "UpdateItem", 1);
    let rearmed = on_own_thread(async move {
        let mut random = testing::random(10);
        rearming.reissue_unsent(&sku(), &mut random).await
    });
    reached.await.unwrap();
    let hold = HoldId::from_random([4; 16]);
    if clicked {
        let held = store
            .take_hold(&offer.reserve, hold, 1, T0 + 200, WINDOW)
            .await
            .unwrap();
        assert!(matches!(held, HoldOutcome::Held { .. }), "{held:?}");
    } else {
        assert_eq!(claim_notice(&store, &offer).await, Claim::Claimed);
    }
    resume.send(()).unwrap();
    assert!(
        rearmed.await.unwrap().unwrap().is_empty(),
        "nothing re-armed"
    );
    let tap = store
        .take_hold(&offer.reserve, hold, 1, T0 + 300, WINDOW)
        .await
        .unwrap();
    assert!(
        matches!(
            tap,
            HoldOutcome::Held { .. } | HoldOutcome::AlreadyHeld { .. }
        ),
        "the link still works: {tap:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_arm_leaves_an_offer_clicked_meanwhile() {
    a_re_arm_leaves_an_offer_taken_meanwhile(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_arm_leaves_an_offer_whose_notice_was_claimed_meanwhile() {
    a_re_arm_leaves_an_offer_taken_meanwhile(false).await;
}

/// A pass re-arming the unsent offers of restock 1 has read one; before its
/// write, the shopper's click found the item sold out (back to the front),
/// and restock 2 offered them a unit with a link of its own. The old pass
/// re-arms nothing: restock 2's link stands.
/// (Guard `unsent.rearm-episode`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_arm_of_one_restock_leaves_the_next_restock_s_offer() {
    let store = dynamo_store().await;
    let offer = one_offer(&store).await;
    let (rearming, reached, resume) = paused_at(&store, "UpdateItem", 1);
    let rearmed = on_own_thread(async move {
        let mut random = testing::random(10);
        rearming.reissue_unsent(&sku(), &mut random).await
    });
    reached.await.unwrap();
    sold_out_and_back(&store, &offer).await;
    let mut random = testing::random(11);
    let next = store
        .create_offers(&sku(), &wave_params(), T0 + 500, &mut random)
        .await
        .unwrap();
    assert_eq!(next.offers.len(), 1);
    assert!(
        episode(&next.offers[0].request) > episode(&offer.request),
        "a new restock"
    );
    resume.send(()).unwrap();
    assert!(
        rearmed.await.unwrap().unwrap().is_empty(),
        "nothing re-armed"
    );
    let now = store.request(&offer.request.id).await.unwrap().unwrap();
    assert_eq!(now.reserve_hash, Some(next.offers[0].reserve.secret_hash()));
}

/// A recount has read the item's state (one offer too few stored) and
/// counted two offers; before its write, a cancel frees one of them. The
/// correction does not hold (it would count the cancelled offer again);
/// the next recount corrects from what is there.
/// (Guard `reconcile.out`: a correction holds only if no unit moved since.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recount_overtaken_by_a_cancel_corrects_nothing_until_the_next() {
    let store = dynamo_store().await;
    let a = join(&store, 1, false).await;
    join(&store, 2, false).await;
    crate::support::set_level(&store, &sku(), 2, T0 + 100).await;
    let mut random = testing::random(9);
    let wave = store
        .create_offers(&sku(), &wave_params(), T0 + 100, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 2);
    testing::set_counters(&store, &sku(), 1, 0).await;
    let (counting, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let recount = on_own_thread(async move { counting.reconcile(&sku(), T0 + 300).await });
    reached.await.unwrap();
    assert_eq!(
        store.cancel(&a.id, T0 + 250).await.unwrap(),
        CancelOutcome::Cancelled
    );
    resume.send(()).unwrap();
    assert_eq!(recount.await.unwrap().unwrap(), None, "overtaken");
    let next = store.reconcile(&sku(), T0 + 400).await.unwrap();
    assert_eq!(next.map(|d| d.counted.offered), Some(1));
    let c = store.snapshot(&sku()).await.unwrap().counters;
    assert_eq!(c.offered, 1, "one offer out: {c:?}");
}

/// A failed send pauses the sender; a second finds it paused and, before
/// it notes its item, the team resumes sending. The note makes no pause
/// record (one with no end would hold every send back for good).
/// (Guard `pause.note-while-paused`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_noted_after_a_resume_leaves_sending_on() {
    let store = dynamo_store().await;
    let until = T0 + 5 * MIN;
    assert!(
        store
            .pause_sender("sandbox", until, &sku(), T0)
            .await
            .unwrap()
    );
    // Held: the second pause's note (its first write found the pause open).
    let (pausing, reached, resume) = paused_at(&store, "UpdateItem", 2);
    let noted = on_own_thread(async move {
        let other = Sku::try_from("LAMP-OAK").unwrap();
        pausing.pause_sender("sandbox", until, &other, T0 + 1).await
    });
    reached.await.unwrap();
    assert!(store.resume_sender().await.unwrap().is_some(), "resumed");
    resume.send(()).unwrap();
    assert!(!noted.await.unwrap().unwrap(), "found it paused");
    assert_eq!(store.sender_pause().await.unwrap(), None, "sending is on");
}

/// The first two passes ever reserve send slots at once: each gets its own
/// (neither sends in the other's slots, over the pace the shop set).
/// (Guard `send-slots.first`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_two_passes_ever_get_send_slots_of_their_own() {
    let store = dynamo_store().await;
    const SECOND: i64 = 1_000;
    // Held: the first pass's write (it read no schedule).
    let (first, reached, resume) = paused_at(&store, "UpdateItem", 1);
    let one = on_own_thread(async move { first.reserve_sends(10, 100, T0).await });
    reached.await.unwrap();
    let two = store.reserve_sends(10, 100, T0).await.unwrap();
    resume.send(()).unwrap();
    let one = one.await.unwrap().unwrap();
    assert_eq!(two, T0);
    assert_eq!(one, T0 + SECOND, "after the other's ten slots");
}

/// A sweep met a request it cannot read (a manual edit); before it sets it
/// aside, the operator deletes it. Setting it aside leaves nothing behind: a
/// stub where the request was would be unreadable for good.
/// (Guard `quarantine.exists`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_request_deleted_meanwhile_is_not_set_aside_as_a_stub() {
    let store = dynamo_store().await;
    let r = join(&store, 1, false).await;
    crate::support::set_status_behind_the_store(&store, &r.id, "misplaced").await;
    let stale = Due {
        id: r.id,
        sku: sku(),
        due: r.stale_at,
    };
    let (sweeping, reached, resume) = paused_at(&store, "UpdateItem", 1);
    let sweep = on_own_thread(async move { sweeping.expire(&stale, stale.due + 1).await });
    reached.await.unwrap();
    store
        .sdk()
        .delete_item()
        .table_name(store.table())
        .set_key(Some(testing::request_key(&r.id)))
        .send()
        .await
        .unwrap();
    resume.send(()).unwrap();
    let outcome = sweep.await.unwrap().unwrap();
    assert!(
        matches!(outcome, ExpireOutcome::Unreadable { .. }),
        "{outcome:?}"
    );
    assert_eq!(store.request(&r.id).await.unwrap(), None, "nothing left");
}

/// A confirmation pass's send failed; before it gives the claim back, the
/// shopper cancelled. The give-back puts nothing back to be sent: no
/// pending marker for a request that has ended (each would take a place in
/// a pass's bounded read of the backlog for good).
/// (Guard `confirmation-release.unconfirmed`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_given_back_after_a_cancel_leaves_nothing_pending() {
    let store = dynamo_store().await;
    let r = sign_up(&store, 1).await;
    let (claim, _) = claim_confirmation(&store, &r, 10).await;
    assert_eq!(claim, Claim::Claimed);
    assert_eq!(
        store.cancel(&r.id, T0 + MIN).await.unwrap(),
        CancelOutcome::Cancelled
    );
    store
        .release_confirmation(&sku(), &r.id, &link(&r, 10).secret_hash())
        .await
        .unwrap();
    let marker = store
        .sdk()
        .get_item()
        .table_name(store.table())
        .set_key(Some(testing::confirm_key(&sku(), &r.id)))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(marker.item, None, "no pending marker");
}

/// Two sweeps list an item's sleepers' wake; the first is held before its
/// write while the second records the wake. The first records nothing:
/// the item is woken once. (Guard `sleepers.as-listed`: the wake's item is
/// deleted only as it was listed.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sweeps_wake_an_item_for_its_sleepers_once() {
    let store = dynamo_store().await;
    crate::support::set_level(&store, &sku(), 1, T0).await;
    store.wake_at(&sku(), T0 + MIN).await.unwrap();
    let before = store.wakes(&sku()).await.unwrap().len();
    // Held: the first sweep's write (it has listed the wake and read the item).
    let (first, reached, resume) = paused_at(&store, "TransactWriteItems", 1);
    let woken = on_own_thread(async move { first.wake_sleepers(T0 + MIN).await });
    reached.await.unwrap();
    assert_eq!(store.wake_sleepers(T0 + MIN).await.unwrap(), [sku()]);
    resume.send(()).unwrap();
    assert!(woken.await.unwrap().unwrap().is_empty(), "woken once");
    assert_eq!(store.wakes(&sku()).await.unwrap().len(), before + 1);
}

/// The sweep has read an offer whose reminder is due; before its write,
/// the shopper clicks. The reminder is not claimed: nobody holding a unit
/// is reminded to hold it. (Guard `reminder.claim`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_landing_before_the_reminder_s_claim_stops_the_reminder() {
    let store = dynamo_store().await;
    let r = join(&store, 1, false).await;
    crate::support::set_level(&store, &sku(), 1, T0 + 100).await;
    let mut random = testing::random(5);
    let wave = store
        .create_offers(&sku(), &wave_params(), T0 + 100, &mut random)
        .await
        .unwrap();
    let offer = &wave.offers[0];
    let claim = store
        .claim_notice(
            &sku(),
            &r.id,
            1,
            &offer.reserve.secret_hash(),
            &r.contact_key,
        )
        .await
        .unwrap();
    assert_eq!(claim, Claim::Claimed);
    let sent = NoticeOutcome::Sent {
        message_id: "notice-1".into(),
    };
    store.record_notice(&r.id, 1, sent, T0 + 101).await.unwrap();
    let at = T0 + 100 + 10 * MIN;
    assert!(store.schedule_reminder(&r.id, 1, at).await.unwrap());
    // Held: the claim's write (it has read the offer, its reminder due).
    let (claiming, reached, resume) = paused_at(&store, "UpdateItem", 1);
    let links = restock_store::ReminderLinks {
        reserve: link(&r, 30).secret_hash(),
        optout: link(&r, 31).secret_hash(),
        manage: link(&r, 32).secret_hash(),
    };
    let id = r.id;
    let claimed =
        on_own_thread(async move { claiming.claim_reminder(&id, 1, Some(&links), at).await });
    reached.await.unwrap();
    let held = store
        .take_hold(&offer.reserve, HoldId::from_random([6; 16]), 1, at, WINDOW)
        .await
        .unwrap();
    assert!(matches!(held, HoldOutcome::Held { .. }), "{held:?}");
    resume.send(()).unwrap();
    assert_eq!(
        claimed.await.unwrap().unwrap(),
        None,
        "no reminder to a shopper holding"
    );
    let r = store.request(&r.id).await.unwrap().unwrap();
    assert!(matches!(r.state, RequestState::Held { .. }));
    assert_eq!(r.remind_hash, None);
}

/// A confirmation pass finds a sign-up covered by its address's day; before
/// it marks the pending confirmation to wait for the day's end, the shopper
/// cancelled. The mark recreates nothing: no pending marker for a request
/// that has ended. (Guard `confirmation-covered.unconfirmed`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_up_cancelled_while_its_cover_was_marked_leaves_nothing_pending() {
    let store = dynamo_store().await;
    let chair = sign_up(&store, 1).await;
    let throw_sku = Sku::try_from("THROW-OAT").unwrap();
    // The same address on a second item, under an id of its own.
    let mut second = crate::support::new_shopper(&throw_sku, 1, true, T0 + MIN);
    second.id = restock_core::RequestId::from_random([7; 16]);
    let restock_store::JoinOutcome::Joined(throw) = store.join(second).await.unwrap() else {
        panic!("a second sign-up of the address")
    };
    assert_eq!(
        claim_confirmation(&store, &chair, 10).await.0,
        Claim::Claimed
    );
    // Held: the second write, which marks the cover (the first, the claim,
    // was cancelled on the address's day).
    let (claiming, reached, resume) = paused_at(&store, "TransactWriteItems", 2);
    let pass = {
        let throw = throw.clone();
        on_own_thread(async move { claim_confirmation(&claiming, &throw, 20).await.0 })
    };
    reached.await.unwrap();
    assert_eq!(
        store.cancel(&throw.id, T0 + 2 * MIN).await.unwrap(),
        CancelOutcome::Cancelled
    );
    resume.send(()).unwrap();
    assert_eq!(pass.await.unwrap(), Claim::NotClaimable);
    let marker = store
        .sdk()
        .get_item()
        .table_name(store.table())
        .set_key(Some(testing::confirm_key(&throw_sku, &throw.id)))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(marker.item, None, "no pending marker");
}
