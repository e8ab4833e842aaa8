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
use restock_core::{Contact, Email, HoldId, LinkToken, ListShare, RequestId, Sku, Window};
use restock_store::prelude::*;
use restock_store::{
    BuyOutcome, Claim, ConfirmLinks, ConfirmOutcome, HoldOutcome, JoinOutcome, NewRequest, Order,
    Request, WaveParams,
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

/// A store on `store`'s table whose `nth` `op` request waits: await the
/// receiver for it to get there, send on the sender to let it go. Run what
/// uses it with [`on_own_thread`].
fn paused_at(
    store: &DynamoStore,
    op: &'static str,
    nth: usize,
) -> (DynamoStore, oneshot::Receiver<()>, mpsc::Sender<()>) {
    let (reached_tx, reached) = oneshot::channel();
    let (resume, resume_rx) = mpsc::channel();
    let pause = PauseAt {
        op,
        nth,
        seen: AtomicUsize::new(0),
        reached: Mutex::new(Some(reached_tx)),
        resume: Mutex::new(resume_rx),
    };
    let client = aws_sdk_dynamodb::Client::from_conf(testing::config().interceptor(pause).build());
    (
        DynamoStore::new(client, store.table().to_owned()),
        reached,
        resume,
    )
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
    let contact = Contact::Email(Email::try_from(format!("fan{i}@example.com").as_str()).unwrap());
    let new = NewRequest {
        id: RequestId::from_random(testing::random(i as u64 + 1)()),
        sku: sku(),
        name: "Fan".try_into().unwrap(),
        contact_key: contact.key(b"pepper"),
        contact,
        now: T0,
        shards: 1,
        lifetime_ms: LIFETIME_MS,
        manage_hash: None,
        confirm_window_ms: confirming.then_some(2 * 86_400_000),
        consent: None,
    };
    match store.join(new).await.unwrap() {
        JoinOutcome::Joined(r) => r,
        other => panic!("shopper {i} did not join: {other:?}"),
    }
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
        .claim_confirmation(&r.sku, &r.id, &links, &r.contact_key)
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
