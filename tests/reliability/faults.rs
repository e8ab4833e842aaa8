//! A fault at every step. Each flow (join, webhook, notify batch, hold,
//! sweep) is first run clean to count its store and sender calls; then, for
//! every k, the k-th call fails before it happens, fails after it committed
//! (the caller sees an error for a write that landed), or aborts the handler
//! (a panic, as a killed Lambda) after it committed. Then the flow is retried
//! as Lambda, the shop or the shopper would, and the invariants are checked:
//! no request lost, no unit stuck past its expiry, no offer notified twice,
//! never `offered + held > level`, counters equal to a recount.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use restock_app::ports::{Clock, FixedPhraser, Outbox, SendError, Sender, StaticKeyring};
use restock_core::feedback::MailDay;
use restock_core::notice::{EmailNotice, SmsNotice};
use restock_core::webhook::ItemRef;
use restock_core::{
    CatalogueEntry, Contact, ContactKey, Email, HoldId, Language, OptOutToken, RequestId,
    ReserveToken, Rules, Settings, Sku, StockEvent, StockOutcome, Window,
};
use restock_core::{Message, Millis, TokenHash};
use restock_e2e::*;
use restock_store::port::Random;
use restock_store::*;
use restock_store_dynamo::testing::Injected;
use restock_store_memory::MemoryStore;

/// How the k-th call goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// It fails and nothing happens.
    FailBefore,
    /// It happens, then the caller is told it failed.
    FailAfter,
    /// It happens, then the handler dies.
    AbortAfter,
}

const ABORT: &str = "injected abort";

/// Counts calls while armed and injects the fault at the k-th.
#[derive(Default)]
pub struct Plan {
    armed: AtomicBool,
    calls: AtomicUsize,
    at: AtomicUsize,
    fault: std::sync::Mutex<Option<Fault>>,
}

impl Plan {
    /// Injects `fault` at the `at`-th call from now.
    pub(crate) fn arm(&self, at: usize, fault: Option<Fault>) {
        self.calls.store(0, Ordering::SeqCst);
        self.at.store(at, Ordering::SeqCst);
        *self.fault.lock().unwrap() = fault;
        self.armed.store(true, Ordering::SeqCst);
    }

    /// Stops injecting; answers the calls counted while armed.
    pub(crate) fn disarm(&self) -> usize {
        self.armed.store(false, Ordering::SeqCst);
        self.calls.load(Ordering::SeqCst)
    }

    fn before(&self) -> Result<usize, ()> {
        if !self.armed.load(Ordering::SeqCst) {
            return Ok(0);
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.at.load(Ordering::SeqCst)
            && *self.fault.lock().unwrap() == Some(Fault::FailBefore)
        {
            return Err(());
        }
        Ok(n)
    }

    fn after(&self, n: usize) -> Result<(), ()> {
        if n == 0 || n != self.at.load(Ordering::SeqCst) {
            return Ok(());
        }
        match *self.fault.lock().unwrap() {
            Some(Fault::FailAfter) => Err(()),
            Some(Fault::AbortAfter) => panic!("{ABORT}"),
            _ => Ok(()),
        }
    }
}

/// On DynamoDB the plan sits in the SDK client: every request the store
/// sends is a call, so an operation of several requests (an opt-out's
/// record, then each request it ends) is cut short after each of them.
impl restock_store_dynamo::testing::CrashPlan for Plan {
    fn before(&self) -> Result<usize, Injected> {
        Plan::before(self).map_err(|()| Injected)
    }

    fn after(&self, n: usize) -> Result<(), Injected> {
        Plan::after(self, n).map_err(|()| Injected)
    }
}

/// Where the flows run: the in-memory store behind a wrapper that fails at
/// its k-th call, or the DynamoDB store (the strict double) failing at its
/// k-th request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Dynamo,
}

fn injected() -> StoreError {
    StoreError::Backend {
        service: "the faulty store",
        operation: "injected",
        source: "injected fault".into(),
    }
}

/// A store that fails where the plan says.
pub struct FaultyStore {
    inner: MemoryStore,
    plan: Arc<Plan>,
}

macro_rules! faulty {
    ($( impl $section:ident { $( fn $name:ident(&self $(, $arg:ident : $ty:ty)*) -> $ret:ty; )* } )*) => {
        $(
            #[async_trait]
            impl $section for FaultyStore {
                $(
                    async fn $name(&self $(, $arg: $ty)*) -> restock_store::port::Result<$ret> {
                        let n = self.plan.before().map_err(|()| injected())?;
                        let out = self.inner.$name($($arg),*).await;
                        self.plan.after(n).map_err(|()| injected())?;
                        out
                    }
                )*
            }
        )*
    };
}

faulty! {
    impl CatalogueStore {
    fn put_settings(&self, settings: &Settings) -> ();
    fn settings(&self) -> Option<Settings>;
    fn put_catalogue_entry(&self, entry: &CatalogueEntry) -> ();
    fn catalogue(&self) -> Vec<CatalogueEntry>;
    fn catalogue_entry(&self, sku: &Sku) -> Option<CatalogueEntry>;
    fn resolve_item(&self, item: &ItemRef) -> Option<CatalogueEntry>;
    }
    impl CaptureStore {
    fn join(&self, request: NewRequest) -> JoinOutcome;
    fn request(&self, id: &RequestId) -> Option<Request>;
    fn position(&self, request: &Request, shards: u16) -> Option<usize>;
    fn cancel(&self, id: &RequestId, now: Millis) -> CancelOutcome;
    fn assist(&self, sku: &Sku, contacts: &[ContactKey], order: &str, paid: Option<&restock_core::Money>, since: Millis, now: Millis) -> restock_store::Assist;
    fn take_hold(&self, token: &ReserveToken, hold: HoldId, shards: u16, now: Millis, window: Window) -> HoldOutcome;
    fn mark_bought(&self, hold: &HoldId, order: &restock_store::Order, now: Millis) -> BuyOutcome;
    fn opt_out(&self, token: &OptOutToken, now: Millis) -> OptOutOutcome;
    fn confirm(&self, token: &restock_core::LinkToken, owner: TokenHash, lifetime_ms: Millis, now: Millis) -> ConfirmOutcome;
    fn opt_out_contact(&self, contact: &ContactKey, via: restock_core::OptOutVia, now: Millis) -> u32;
    fn forget_contact(&self, contact: &ContactKey, now: Millis) -> Forgotten;
    fn forget_request(&self, id: &RequestId, now: Millis) -> bool;
    fn live_requests(&self, contact: &ContactKey) -> Vec<Request>;
    fn remove_opt_out(&self, contact: &ContactKey) -> bool;
    fn is_opted_out(&self, contact: &ContactKey) -> bool;
    fn opt_out_record(&self, contact: &ContactKey) -> Option<restock_store::OptOutRecord>;
    }
    impl DetectStore {
    fn apply_stock(&self, sku: &Sku, event: &StockEvent, rules: &Rules, now: Millis) -> ApplyOutcome;
    fn release_paused(&self, sku: &Sku, now: Millis) -> Option<StockOutcome>;
    fn reject_paused(&self, sku: &Sku, now: Millis) -> bool;
    fn snapshot(&self, sku: &Sku) -> SkuSnapshot;
    fn wakes(&self, sku: &Sku) -> Vec<Wake>;
    fn heard(&self, source: &str, now: Millis) -> ();
    fn first_time(&self, key: &str, now: Millis) -> bool;
    }
    impl NotifyStore {
    fn create_offers(&self, sku: &Sku, params: &WaveParams, now: Millis, random: Random<'_>) -> Wave;
    fn claim_notice(&self, sku: &Sku, id: &RequestId, episode: u32, reserve: &TokenHash, contact: &ContactKey) -> Claim;
    fn record_notice(&self, id: &RequestId, episode: u32, outcome: NoticeOutcome, now: Millis) -> ();
    fn release_notice(&self, sku: &Sku, id: &RequestId, episode: u32) -> ();
    fn reissue_unsent(&self, sku: &Sku, random: Random<'_>) -> Vec<Offer>;
    fn pending_confirmations(&self, sku: &Sku, limit: usize, now: Millis) -> Vec<Request>;
    fn claim_confirmation(&self, sku: &Sku, id: &RequestId, links: &ConfirmLinks, contact: &ContactKey, now: Millis) -> Claim;
    fn release_confirmation(&self, sku: &Sku, id: &RequestId, confirm: &TokenHash) -> ();
    fn wake_again(&self, sku: &Sku, episode: u32, now: Millis) -> ();
    fn wake_at(&self, sku: &Sku, at: Millis) -> ();
    fn schedule_reminder(&self, id: &RequestId, episode: u32, at: Millis) -> bool;
    fn record_reminder(&self, id: &RequestId, episode: u32, message_id: &str, now: Millis) -> ();
    fn reserve_sends(&self, count: u32, interval_ms: Millis, now: Millis) -> Millis;
    fn sender_pause(&self) -> Option<SenderPause>;
    fn pause_sender(&self, reason: &str, until: Millis, sku: &Sku, now: Millis) -> bool;
    fn take_over_sender_pause(&self, reason: &str, until: Millis, now: Millis) -> bool;
    fn resume_sender(&self) -> Option<Vec<Sku>>;
    fn restock_phrase(&self, sku: &Sku, episode: u32, language: &Language) -> Option<String>;
    fn save_restock_phrase(&self, sku: &Sku, episode: u32, language: &Language, phrase: &str) -> ();
    }
    impl AbuseStore {
    fn rate_limit(&self, key: &str, limit: u32, window_ms: Millis, now: Millis) -> RateDecision;
    }
    impl SweepStore {
    fn due(&self, now: Millis, limit: usize) -> Vec<Due>;
    fn expire(&self, due: &Due, now: Millis) -> ExpireOutcome;
    fn reconcile(&self, sku: &Sku, now: Millis) -> Option<Drift>;
    fn wake_sleepers(&self, now: Millis) -> Vec<Sku>;
    fn claim_reminder(&self, id: &RequestId, episode: u32, links: Option<&restock_store::ReminderLinks>, now: Millis) -> Option<Request>;
    fn heard_from(&self) -> Vec<Heard>;
    fn claim_silence_alert(&self, source: &str, last_heard: Millis, now: Millis) -> bool;
    }
    impl FiguresStore {
    fn queue(&self, sku: &Sku, shards: u16, limit: usize) -> Vec<Request>;
    fn live_units(&self, sku: &Sku) -> Vec<Request>;
    fn contact_requests(&self, contact: &ContactKey) -> Vec<Request>;
    fn stats(&self, sku: &Sku, shards: u16) -> SkuStats;
    fn counts(&self, sku: &Sku, shards: u16) -> SkuStats;
    fn anyone_waiting(&self, sku: &Sku, shards: u16) -> bool;
    fn count_mail(&self, day: &str, add: MailDay) -> MailDay;
    fn mail_day(&self, day: &str) -> MailDay;
    fn item_history(&self, sku: &Sku, since: &str) -> ItemHistory;
    fn requests_page(&self, after: Option<&str>, limit: usize) -> RequestPage;
    }
}

/// A sender that fails where the plan says (sends count as calls too).
pub struct FaultySender {
    inner: Arc<Outbox>,
    plan: Arc<Plan>,
}

#[async_trait]
impl Sender for FaultySender {
    async fn send(&self, to: &Contact, message: &Message) -> Result<String, SendError> {
        let n = self
            .plan
            .before()
            .map_err(|()| SendError::Transient("injected".into()))?;
        let out = self.inner.send(to, message).await;
        self.plan
            .after(n)
            .map_err(|()| SendError::Unknown("injected after sending".into()))?;
        out
    }
}

/// A world on a store and a sender that fail where its plan says.
pub(crate) struct Rig {
    pub(crate) world: Arc<World>,
    pub(crate) outbox: Arc<Outbox>,
    pub(crate) plan: Arc<Plan>,
}

pub(crate) async fn rig(backend: Backend) -> Rig {
    let plan = Arc::new(Plan::default());
    let outbox = Arc::new(Outbox::default());
    let store: Arc<dyn Store> = match backend {
        Backend::Memory => Arc::new(FaultyStore {
            inner: MemoryStore::new(),
            plan: plan.clone(),
        }),
        Backend::Dynamo => {
            Arc::new(restock_store_dynamo::testing::crashing_dynamo_store(plan.clone()).await)
        }
    };
    let world = World::new(
        store,
        Arc::new(FaultySender {
            inner: outbox.clone(),
            plan: plan.clone(),
        }),
        Arc::new(FixedPhraser(Ok("It is back.".into()))),
        Arc::new(StaticKeyring(Arc::new(
            restock_app::ports::Secrets::from_json(&secrets_json()).expect("secret"),
        ))),
    )
    .await;
    Rig {
        world: Arc::new(world),
        outbox,
        plan,
    }
}

fn chair() -> Sku {
    Sku::try_from(CHAIR).unwrap()
}

/// The flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Join,
    Webhook,
    NotifyBatch,
    Hold,
    Sweep,
}

async fn join(world: &World, name: &str) -> bool {
    world.join(name).await.status.is_success()
}

fn stock_body(world: &World, level: u32) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(
        i128::from(world.clock.now_ms()) * 1_000_000,
    )
    .unwrap()
    .format(&time::format_description::well_known::Rfc3339)
    .unwrap();
    serde_json::json!({ "sku": CHAIR, "level": level, "at": at }).to_string()
}

/// Everything before the flow, run clean.
async fn setup(rig: &Rig, flow: Flow) {
    let w = &rig.world;
    if matches!(flow, Flow::Join) {
        return;
    }
    for name in ["Ada", "Bea", "Cy"] {
        assert!(join(w, name).await);
    }
    if matches!(flow, Flow::Webhook) {
        return;
    }
    let body = stock_body(w, 2);
    assert!(
        w.call(Api::Detect, w.stock_request("setup", &body))
            .await
            .status
            .is_success()
    );
    if matches!(flow, Flow::NotifyBatch) {
        return;
    }
    restock_app::notify::notify_sku(&w.services, &chair())
        .await
        .expect("notify");
    if matches!(flow, Flow::Sweep) {
        w.advance(16 * MIN);
    }
}

/// One attempt of the flow; `Ok(true)` when it completed.
async fn attempt(world: Arc<World>, outbox: Arc<Outbox>, flow: Flow, body: String) -> bool {
    let task = tokio::spawn(async move {
        match flow {
            Flow::Join => join(&world, "Ada").await,
            Flow::Webhook => world
                .call(Api::Detect, world.stock_request("restock-1", &body))
                .await
                .status
                .is_success(),
            Flow::NotifyBatch => restock_app::notify::notify_sku(&world.services, &chair())
                .await
                .is_ok_and(|r| r.transient == 0),
            Flow::Hold => {
                // The first shopper told (joins in one millisecond are
                // ordered by their ids' tie-break).
                let link = outbox
                    .sent()
                    .first()
                    .and_then(|n| n.reserve_link())
                    .expect("someone was told");
                let status = world.capture("POST", &path_of(&link)).await.status;
                status.is_redirection() || status.is_success()
            }
            Flow::Sweep => restock_app::sweep::run(&world.services, 500).await.is_ok(),
        }
    });
    task.await.unwrap_or(false)
}

/// Runs the flow with `fault` at call `k` (`None`: clean), retries it, and
/// checks. Returns the number of calls the armed attempt made.
async fn scenario(
    backend: Backend,
    flow: Flow,
    k: usize,
    fault: Option<Fault>,
) -> Result<usize, String> {
    let rig = rig(backend).await;
    setup(&rig, flow).await;
    let body = stock_body(&rig.world, 2);
    rig.plan.arm(k, fault);
    let first = attempt(rig.world.clone(), rig.outbox.clone(), flow, body.clone()).await;
    let calls = rig.plan.disarm();
    if fault.is_none() && !first {
        return Err("the clean run failed".into());
    }
    // Retried as Lambda, the shop or the shopper would, until it completes.
    let mut done = first;
    for _ in 0..3 {
        if done {
            break;
        }
        done = attempt(rig.world.clone(), rig.outbox.clone(), flow, body.clone()).await;
    }
    if !done {
        return Err("the flow never completed on retry".into());
    }
    check(&rig, flow).await?;
    Ok(calls)
}

async fn waiting(world: &World) -> Vec<Request> {
    world.store.queue(&chair(), 2, 100).await.unwrap()
}

async fn check(rig: &Rig, flow: Flow) -> Result<(), String> {
    let w = &rig.world;
    let snapshot = w
        .store
        .snapshot(&chair())
        .await
        .map_err(|e| e.to_string())?;
    let c = snapshot.counters;
    if c.offered + c.held > c.level {
        return Err(format!("I1: {c:?}"));
    }
    // No offer notified twice.
    let links: Vec<String> = rig
        .outbox
        .sent()
        .iter()
        .filter_map(|n| n.reserve_link())
        .collect();
    let unique: HashSet<&String> = links.iter().collect();
    if unique.len() != links.len() {
        return Err(format!("I8: a notice went twice: {links:?}"));
    }
    let told: HashSet<String> = rig
        .outbox
        .sent()
        .iter()
        .map(|n| n.to().to_owned())
        .collect();
    if told.len() != links.len() {
        return Err(format!(
            "I3: someone was told twice in one restock: {links:?}"
        ));
    }
    // No request lost: every shopper who was answered has a request.
    let waiting = waiting(w).await;
    let stats = w
        .store
        .stats(&chair(), 2)
        .await
        .map_err(|e| e.to_string())?;
    let expected = match flow {
        Flow::Join => 1,
        _ => 3,
    };
    let alive = stats.waiting + stats.offered + stats.held + stats.bought + stats.lapsed;
    if alive as usize != expected {
        return Err(format!(
            "I8: {expected} requests expected, {alive} accounted for ({stats:?})"
        ));
    }
    if flow == Flow::Join && waiting.len() != 1 {
        return Err(format!("I4: {} places for one shopper", waiting.len()));
    }
    if flow == Flow::Webhook && snapshot.stock.episode != 1 {
        return Err(format!(
            "I3: {} restocks from one delivery",
            snapshot.stock.episode
        ));
    }
    // No unit stuck: an hour on, after a sweep and a notify pass, nothing is
    // past its expiry and the counters agree with a recount.
    w.advance(60 * MIN);
    restock_app::sweep::run(&w.services, 500)
        .await
        .map_err(|e| e.to_string())?;
    restock_app::notify::notify_sku(&w.services, &chair())
        .await
        .map_err(|e| e.to_string())?;
    let now = w.clock.now_ms();
    let overdue = w.store.due(now, 500).await.map_err(|e| e.to_string())?;
    if !overdue.is_empty() {
        return Err(format!(
            "I8: still past their deadline after a sweep: {overdue:?}"
        ));
    }
    if let Some(drift) = w
        .store
        .reconcile(&chair(), now + 120_000)
        .await
        .map_err(|e| e.to_string())?
    {
        return Err(format!("counters drifted: {drift:?}"));
    }
    let c = w
        .store
        .snapshot(&chair())
        .await
        .map_err(|e| e.to_string())?
        .counters;
    if c.offered + c.held > c.level {
        return Err(format!("I1 at the end: {c:?}"));
    }
    Ok(())
}

fn quiet_aborts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.to_string().contains(ABORT) {
                default(info);
            }
        }));
    });
}

/// The faults tried at each call. On DynamoDB every request of a flow is a
/// call (a notify batch makes about 50), so CI crashes the handler after
/// each one (the Lambda timeout between two requests);
/// `RESTOCK_DYNAMODB_FAULTS=all` tries all three there too (about 330
/// faults, 20 minutes on moto).
fn faults(backend: Backend) -> &'static [Fault] {
    const ALL: &[Fault] = &[Fault::FailBefore, Fault::FailAfter, Fault::AbortAfter];
    match backend {
        Backend::Memory => ALL,
        Backend::Dynamo if std::env::var("RESTOCK_DYNAMODB_FAULTS").as_deref() == Ok("all") => ALL,
        Backend::Dynamo => &[Fault::AbortAfter],
    }
}

async fn every_fault(flow: Flow) -> usize {
    every_fault_on(Backend::Memory, flow).await
}

async fn every_fault_on(backend: Backend, flow: Flow) -> usize {
    quiet_aborts();
    let calls = scenario(backend, flow, 0, None)
        .await
        .unwrap_or_else(|e| panic!("{flow:?} clean: {e}"));
    assert!(calls > 0, "{flow:?} made no calls");
    let mut injected = 0;
    for k in 1..=calls {
        for &fault in faults(backend) {
            scenario(backend, flow, k, Some(fault))
                .await
                .unwrap_or_else(|e| {
                    panic!("{backend:?}: {flow:?} with {fault:?} at call {k} of {calls}: {e}")
                });
            injected += 1;
        }
    }
    println!("{backend:?}: {flow:?}: {calls} calls, {injected} faults injected");
    injected
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_every_call_of_a_join() {
    every_fault(Flow::Join).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_every_call_of_a_webhook() {
    every_fault(Flow::Webhook).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_every_call_of_a_notify_batch() {
    every_fault(Flow::NotifyBatch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_every_call_of_a_hold() {
    every_fault(Flow::Hold).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_every_call_of_a_sweep() {
    every_fault(Flow::Sweep).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_every_dynamodb_request_of_a_join() {
    every_fault_on(Backend::Dynamo, Flow::Join).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_every_dynamodb_request_of_a_webhook() {
    every_fault_on(Backend::Dynamo, Flow::Webhook).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_every_dynamodb_request_of_a_notify_batch() {
    every_fault_on(Backend::Dynamo, Flow::NotifyBatch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_every_dynamodb_request_of_a_hold() {
    every_fault_on(Backend::Dynamo, Flow::Hold).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_every_dynamodb_request_of_a_sweep() {
    every_fault_on(Backend::Dynamo, Flow::Sweep).await;
}

fn a_notice() -> EmailNotice {
    EmailNotice {
        tags: Vec::new(),
        subject: "It is back".into(),
        text: "It is back.".into(),
        html: "<p>It is back.</p>".into(),
        list_unsubscribe: "<https://example.com/o/x>".into(),
    }
}

fn from_the_shop(notice: EmailNotice) -> Message {
    Message::Email {
        from: "Shop <shop@example.com>".into(),
        notice,
    }
}

#[tokio::test]
async fn a_dropped_connection_is_an_unknown_outcome_not_a_retry() {
    // Nothing listens on this port: the SDK's request may not have left, but
    // the sender cannot tell a dropped connection from a lost answer, so it
    // must not be resent.
    let sdk = aws_config("http://127.0.0.1:9").await;
    let sender = restock_aws::AwsSender::new(
        aws_sdk_sesv2::Client::new(&sdk),
        aws_sdk_sns::Client::new(&sdk),
    );
    let notice = a_notice();
    let to = Email::try_from("ann@example.com").unwrap();
    let outcome = sender
        .send(&Contact::Email(to), &from_the_shop(notice))
        .await;
    assert!(matches!(outcome, Err(SendError::Unknown(_))), "{outcome:?}");
}

/// A provider that answers every request with a 500, counting them.
async fn failing_provider() -> (String, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let mut read = 0;
                // Read the head, then as much body as it announces.
                loop {
                    let Ok(n) = socket.read(&mut buf[read..]).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    read += n;
                    let text = String::from_utf8_lossy(&buf[..read]).to_string();
                    if let Some(head_end) = text.find("\r\n\r\n") {
                        let length = text[..head_end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if read >= head_end + 4 + length {
                            break;
                        }
                    }
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = socket
                    .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    (url, hits)
}

#[tokio::test]
async fn the_deployed_sender_never_retries_a_send_on_its_own() {
    let (url, hits) = failing_provider().await;
    let sdk = aws_config(&url).await;
    let sender = restock_aws::wiring::sender(&sdk);
    let notice = a_notice();
    let to = Email::try_from("ann@example.com").unwrap();
    let outcome = sender
        .send(&Contact::Email(to), &from_the_shop(notice))
        .await;
    assert!(outcome.is_err(), "{outcome:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 1, "one attempt, no SDK retry");
    let phone = restock_core::Phone::parse("+447911123456").unwrap();
    let sms = SmsNotice {
        text: "It is back.".into(),
        encoding: restock_core::notice::SmsEncoding::Gsm7,
        segments: 1,
    };
    let sms = Message::Sms {
        sender_id: None,
        notice: sms,
    };
    let outcome = sender.send(&Contact::Sms(phone), &sms).await;
    assert!(outcome.is_err(), "{outcome:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 2, "one attempt, no SDK retry");
}

#[tokio::test]
async fn an_unreadable_request_is_reported_once_and_the_sweep_goes_on() {
    let store = Arc::new(restock_store_dynamo::testing::dynamo_store().await);
    let w = World::new(
        store.clone(),
        Arc::new(Outbox::default()),
        Arc::new(FixedPhraser(Ok("It is back.".into()))),
        Arc::new(StaticKeyring(Arc::new(
            restock_app::ports::Secrets::from_json(&secrets_json()).unwrap(),
        ))),
    )
    .await;
    let ann = w.join("Ann").await.json()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(w.join("Bea").await.status, 201);
    // A manual edit leaves Ann's request unreadable.
    use aws_sdk_dynamodb::types::AttributeValue::S;
    store
        .sdk()
        .update_item()
        .table_name(store.table())
        .key("pk", S(format!("REQ#{ann}")))
        .key("sk", S("REQ".into()))
        .update_expression("SET ch = :bad")
        .expression_attribute_values(":bad", S("pigeon".into()))
        .send()
        .await
        .unwrap();
    // Both go stale; the sweep ends Bea's and sets Ann's aside, once.
    w.advance(91 * 86_400_000);
    let first = w.sweep().await;
    assert_eq!((first.stale, first.unreadable), (1, 1), "{first:?}");
    let second = w.sweep().await;
    assert_eq!((second.stale, second.unreadable), (0, 0), "{second:?}");
    let alerts = w.alerts.all();
    let set_aside: Vec<_> = alerts
        .iter()
        .filter(|a| a.subject.contains("unreadable"))
        .collect();
    assert_eq!(set_aside.len(), 1, "{alerts:?}");
    assert!(set_aside[0].body.contains(&ann), "{}", set_aside[0].body);
}

#[tokio::test]
async fn a_provider_that_never_answers_costs_one_attempt_timeout_not_the_function_timeout() {
    // Accepts connections and reads, never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let sdk = restock_aws::wiring::sdk_config(Some(&url)).await;
    let sender = restock_aws::wiring::sender(&sdk);
    let notice = a_notice();
    let to = Email::try_from("ann@example.com").unwrap();
    let started = std::time::Instant::now();
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        sender.send(&Contact::Email(to), &from_the_shop(notice)),
    )
    .await
    .expect("the SDK's own timeout ends the call");
    let took = started.elapsed();
    assert!(matches!(outcome, Err(SendError::Unknown(_))), "{outcome:?}");
    assert!(
        took < std::time::Duration::from_secs(12),
        "ended by the 5 s attempt timeout, took {took:?}"
    );
}
