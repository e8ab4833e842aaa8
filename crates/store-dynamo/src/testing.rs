//! Test support shared by this crate's tests and the end-to-end tests: a
//! DynamoDB store on a fresh, uniquely named table at the endpoint in
//! `RESTOCK_DYNAMODB_ENDPOINT` (moto's server in CI), and a deterministic
//! source of random bytes.
//!
//! A missing endpoint is a loud failure, never a skip: a test that says it
//! ran against DynamoDB did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeDeserializationInterceptorContextRef, BeforeTransmitInterceptorContextRef,
};
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};

use crate::DynamoStore;

/// The variable naming the DynamoDB endpoint tests use.
pub const ENDPOINT_VAR: &str = "RESTOCK_DYNAMODB_ENDPOINT";
/// The variable naming the lagging endpoint: the strict double with index
/// reads 250 ms behind the table and injected conflicts and throttles.
pub const LAGGING_ENDPOINT_VAR: &str = "RESTOCK_DYNAMODB_LAGGING_ENDPOINT";
/// How far the lagging endpoint's index reads trail the table
/// (`scripts/test.sh` starts it so).
pub const LAG: std::time::Duration = std::time::Duration::from_millis(250);

/// How far the index reads of the endpoint in `RESTOCK_DYNAMODB_ENDPOINT`
/// trail its writes: `RESTOCK_INDEX_LAG_MS`, which `scripts/test.sh` sets
/// when it points the suites at a lagging endpoint (zero when unset).
pub fn index_lag() -> std::time::Duration {
    std::env::var("RESTOCK_INDEX_LAG_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(std::time::Duration::ZERO, std::time::Duration::from_millis)
}

static TABLES: AtomicU64 = AtomicU64::new(0);

/// The endpoint tests use.
///
/// # Panics
/// When the variable is not set: run the tests through `scripts/test.sh`,
/// which starts moto's server and sets it.
pub fn endpoint() -> String {
    endpoint_in(ENDPOINT_VAR)
}

/// The lagging endpoint.
///
/// # Panics
/// When the variable is not set (as [`endpoint`]).
pub fn lagging_endpoint() -> String {
    endpoint_in(LAGGING_ENDPOINT_VAR)
}

/// The endpoint whose transactions really contend (the strict double's
/// contention model, `RESTOCK_TX_INFLIGHT_MS`).
///
/// # Panics
/// When the variable is not set (as [`endpoint`]).
pub fn contended_endpoint() -> String {
    endpoint_in("RESTOCK_DYNAMODB_CONTENDED_ENDPOINT")
}

/// A DynamoDB store on a new table of its own at the contended endpoint, and
/// a client for that endpoint.
///
/// # Panics
/// When the endpoint is unset or the table cannot be created.
pub async fn contended_dynamo_store() -> (DynamoStore, aws_sdk_dynamodb::Client) {
    let client = aws_sdk_dynamodb::Client::from_conf(config_at(&contended_endpoint()).build());
    let store = DynamoStore::new(client.clone(), unique_table("restock-contended"));
    store
        .create_table()
        .await
        .unwrap_or_else(|e| panic!("creating test table at {}: {e:?}", contended_endpoint()));
    (store, client)
}

fn endpoint_in(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run `bash scripts/test.sh`, which starts the local DynamoDB APIs (moto behind the strict double) and sets it")
    })
}

/// Client configuration for the test endpoint with dummy credentials (add an
/// interceptor to it to observe requests).
pub fn config() -> aws_sdk_dynamodb::config::Builder {
    config_at(&endpoint())
}

/// Client configuration for `endpoint` with dummy credentials.
pub fn config_at(endpoint: &str) -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new("eu-west-2"))
        .credentials_provider(Credentials::new(
            "testing",
            "testing",
            None,
            None,
            "restock-tests",
        ))
}

/// A client for the test endpoint.
pub fn client() -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::from_conf(config().build())
}

/// A table name no other test in this run uses.
pub fn unique_table(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}-{}-{}-{nanos}",
        std::process::id(),
        TABLES.fetch_add(1, Ordering::Relaxed)
    )
}

/// A DynamoDB store on a new table of its own.
///
/// # Panics
/// When the endpoint is unset or the table cannot be created.
pub async fn dynamo_store() -> DynamoStore {
    let store = DynamoStore::new(client(), unique_table("restock-test"));
    store
        .create_table()
        .await
        .unwrap_or_else(|e| panic!("creating test table at {}: {e:?}", endpoint()));
    store
}

/// A DynamoDB store on a new table of its own whose stream the endpoint
/// keeps, to be read back with the DynamoDB Streams API
/// (`scripts/moto_serial.py` keeps the streams of `restock-streamed-*`
/// tables only).
///
/// # Panics
/// When the endpoint is unset or the table cannot be created.
pub async fn streamed_dynamo_store() -> DynamoStore {
    let store = DynamoStore::new(client(), unique_table("restock-streamed"));
    store
        .create_table()
        .await
        .unwrap_or_else(|e| panic!("creating test table at {}: {e:?}", endpoint()));
    store
}

/// A DynamoDB store on a new table of its own at the lagging endpoint.
///
/// # Panics
/// When the endpoint is unset or the table cannot be created.
pub async fn lagging_dynamo_store() -> DynamoStore {
    let client = aws_sdk_dynamodb::Client::from_conf(config_at(&lagging_endpoint()).build());
    let store = DynamoStore::new(client, unique_table("restock-lag"));
    store
        .create_table()
        .await
        .unwrap_or_else(|e| panic!("creating test table at {}: {e:?}", lagging_endpoint()));
    store
}

/// Deterministic "random" bytes: distinct on every call, the same sequence
/// for the same seed.
pub fn random(seed: u64) -> impl FnMut() -> [u8; 16] + Send {
    restock_store::port::seeded(seed)
}

/// Records the operation name of every request sent (an SDK interceptor):
/// `config().interceptor(recorder.clone())` counts a client's round trips.
#[derive(Debug, Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<String>>>);

impl Intercept for Recorder {
    fn name(&self) -> &'static str {
        "RequestRecorder"
    }

    fn read_before_transmit(
        &self,
        _: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let op = cfg.load::<Metadata>().map_or("?", |m| m.name()).to_owned();
        self.0.lock().unwrap().push(op);
        Ok(())
    }
}

impl Recorder {
    /// The operations recorded since the last take.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// Where a test makes a DynamoDB store's requests fail: the fault-injection
/// suite's plan, consulted for every request the client sends (retries
/// included), so an operation of several requests can be cut short after
/// any one of them, as a Lambda timeout or a crash would.
pub trait CrashPlan: Send + Sync {
    /// Before the request is sent: `Err` fails it unsent; `Ok(n)` is its
    /// call number, handed to [`after`](CrashPlan::after).
    ///
    /// # Errors
    /// When the plan fails this request before it is sent.
    fn before(&self) -> Result<usize, Injected>;
    /// After the answer arrived (the write landed): `Err` tells the caller
    /// it failed; a panic ends the handler there.
    ///
    /// # Errors
    /// When the plan fails this request after it landed.
    fn after(&self, n: usize) -> Result<(), Injected>;
}

/// A request the plan fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected;

/// The SDK interceptor that applies a [`CrashPlan`]:
/// `config().interceptor(Crashes(plan))`.
#[derive(Clone)]
pub struct Crashes(pub Arc<dyn CrashPlan>);

impl std::fmt::Debug for Crashes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Crashes")
    }
}

/// A request's call number, between its two hooks.
#[derive(Debug, Clone, Copy)]
struct CallNo(usize);

impl Storable for CallNo {
    type Storer = StoreReplace<Self>;
}

impl Intercept for Crashes {
    fn name(&self) -> &'static str {
        "CrashPoints"
    }

    fn read_before_transmit(
        &self,
        _: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let n = self
            .0
            .before()
            .map_err(|Injected| BoxError::from("injected: failed before it was sent"))?;
        cfg.interceptor_state().store_put(CallNo(n));
        Ok(())
    }

    fn read_after_transmit(
        &self,
        _: &BeforeDeserializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let n = cfg.load::<CallNo>().map_or(0, |c| c.0);
        self.0
            .after(n)
            .map_err(|Injected| BoxError::from("injected: failed after it landed"))
    }
}

/// A DynamoDB store on a new table of its own whose requests go wrong
/// where `plan` says (the table is created before the plan is consulted).
///
/// # Panics
/// When the endpoint is unset or the table cannot be created.
pub async fn crashing_dynamo_store(plan: Arc<dyn CrashPlan>) -> DynamoStore {
    let table = dynamo_store().await.table().to_owned();
    let client = aws_sdk_dynamodb::Client::from_conf(config().interceptor(Crashes(plan)).build());
    DynamoStore::new(client, table)
}

/// Shopper `i` (`fan{i}@example.com`, its id drawn from [`random`] seeded
/// `i + 1`) waiting for `sku` since `joined` over `shards` queue shards, as a
/// join leaves a request but with no ticket yet: for loading a queue with
/// [`DynamoStore::import_waiting`](crate::DynamoStore::import_waiting) (which
/// deals them) in benchmarks.
pub fn waiting_request(
    i: usize,
    sku: &restock_core::Sku,
    joined: restock_core::Millis,
    shards: u16,
    pepper: &[u8],
) -> restock_store::Request {
    use restock_core::{Contact, Email, JoinKey, RequestId, RequestState};
    let id = RequestId::from_random(random(i as u64 + 1)());
    let contact = Contact::Email(
        Email::try_from(format!("fan{i}@example.com").as_str()).expect("a valid address"),
    );
    restock_store::Request {
        id,
        sku: sku.clone(),
        name: "Fan".try_into().expect("a valid name"),
        contact_key: contact.key(pepper),
        contact,
        key: JoinKey::new(joined, &id),
        shard: id.shard(shards),
        state: RequestState::Waiting,
        stale_at: joined + 90 * 86_400_000,
        last_offered_episode: None,
        reserve_hash: None,
        optout_hashes: Vec::new(),
        notice: None,
        remind_at: None,
        remind_hash: None,
        manage_hash: None,
        language: None,
        zone: None,
        inbox_hashes: Vec::new(),
        confirm_hash: None,
        consent: None,
        ticket: None,
        moments: restock_store::Moments::default(),
        story: restock_core::story::Story::starting(joined, restock_core::story::Event::Joined),
    }
}

/// An import cut short after `chunks` transactions per SKU, as an
/// interrupted `restock` process would leave it.
///
/// # Errors
/// As [`DynamoStore::import_waiting`](crate::DynamoStore::import_waiting).
pub async fn import_cut_short(
    store: &DynamoStore,
    requests: &[restock_store::Request],
    shards: u16,
    chunks: usize,
) -> restock_store::port::Result<crate::Imported> {
    store.import_some(requests, shards, Some(chunks)).await
}

/// Sets a shard's ticket counter as if `dealt` sign-ups had joined it (the
/// last at `last`) and left (their presence blocks deleted once empty): a
/// long-lived item, for measuring what a join costs as an item ages.
///
/// # Panics
/// When the endpoint cannot be written.
pub async fn age_queue(
    store: &DynamoStore,
    sku: &restock_core::Sku,
    shard: u16,
    dealt: u64,
    last: restock_core::JoinKey,
) {
    use crate::attr::{LAST_KEY, NEXT_TICKET};
    use crate::codec::{n, s, ticket_counter_key};
    let mut item = ticket_counter_key(sku, shard);
    item.insert(NEXT_TICKET.into(), n(dealt));
    item.insert(LAST_KEY.into(), s(last.to_string()));
    store.put_item(item).await.expect("counter written");
}

/// The size in bytes, as DynamoDB counts it (names and values), of the
/// presence block holding `ticket`'s bit in a shard.
///
/// # Panics
/// When the endpoint cannot be read.
pub async fn presence_block_size(
    store: &DynamoStore,
    sku: &restock_core::Sku,
    shard: u16,
    ticket: u64,
) -> usize {
    let key = crate::codec::presence_block_key(sku, shard, ticket / crate::tickets::BLOCK);
    let item = store
        .get_consistent([key])
        .await
        .expect("block read")
        .pop()
        .unwrap_or_default();
    item.iter()
        .map(|(name, value)| {
            name.len()
                + match value {
                    aws_sdk_dynamodb::types::AttributeValue::S(s) => s.len(),
                    aws_sdk_dynamodb::types::AttributeValue::N(n) => n.len().div_ceil(2) + 1,
                    _ => 8,
                }
        })
        .sum()
}

/// Writes `contact`'s opt-out record as `opt_out_contact`'s first step
/// does, and stops there (a Lambda timeout before any request ended).
///
/// # Panics
/// When the endpoint cannot be written.
pub async fn opt_out_record_only(
    store: &DynamoStore,
    contact: &restock_core::ContactKey,
    now: i64,
) {
    use crate::attr::{VIA, WRITTEN_AT};
    use crate::codec::{ONE_SK, key, n, optout_pk, s};
    let mut item = key(optout_pk(contact), ONE_SK);
    item.insert(WRITTEN_AT.into(), n(now));
    item.insert(VIA.into(), s(restock_core::OptOutVia::Link.as_str()));
    store
        .put_item(item)
        .await
        .expect("the opt-out record written");
}

/// Makes the SKU's stored counters say `offered` and `held` (the level
/// kept), as a defect would leave them: reconcile's tests set a drift with
/// this and check it is corrected.
///
/// # Panics
/// When the endpoint cannot be written.
pub async fn set_counters(store: &DynamoStore, sku: &restock_core::Sku, offered: u32, held: u32) {
    use crate::attr::{ALLOWANCE, HOLD_SLOTS, LEVEL, OUT};
    use crate::codec::{hold_slot_key, n, sku_pk};
    let state = store
        .get(sku_pk(sku), crate::codec::STATE_SK)
        .await
        .expect("state read")
        .expect("a state item");
    let level: i64 = crate::codec::opt_n(&state, LEVEL)
        .expect("lvl")
        .unwrap_or(0);
    let slots: usize = crate::codec::opt_n(&state, HOLD_SLOTS)
        .expect("hs")
        .unwrap_or(1);
    store
        .client
        .update_item()
        .table_name(&store.table)
        .set_key(Some(crate::codec::key(sku_pk(sku), crate::codec::STATE_SK)))
        .update_expression(format!("SET {OUT} = :o"))
        .expression_attribute_values(":o", n(offered + held))
        .send()
        .await
        .expect("state written");
    for slot in 0..slots.max(1) {
        let fr = if slot == 0 {
            level - i64::from(held)
        } else {
            0
        };
        let mut item = hold_slot_key(sku, slot);
        item.insert(ALLOWANCE.into(), n(fr));
        store
            .client
            .put_item()
            .table_name(&store.table)
            .set_item(Some(item))
            .send()
            .await
            .expect("slot written");
    }
}

/// The table key of request `id`'s item, for tests that edit or delete it
/// behind the store's back.
pub fn request_key(
    id: &restock_core::RequestId,
) -> std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue> {
    crate::codec::key(crate::codec::request_pk(id), crate::codec::REQUEST_SK)
}

/// The table key of the pending-confirmation marker of sign-up `id` on
/// `sku`, for tests that look for it behind the store's back.
pub fn confirm_key(
    sku: &restock_core::Sku,
    id: &restock_core::RequestId,
) -> std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue> {
    crate::codec::confirm_key(sku, id)
}
