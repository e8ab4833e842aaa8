//! The conformance suite's fixtures: a store under test with the verbs the
//! cases speak in, and the [`Harness`] an adapter gives for what only it
//! can do (let its indexes catch up, make its counters wrong).

use std::sync::{Arc, Mutex};

use crate::{
    ApplyOutcome, Claim, ConfirmLinks, Consent, JoinOutcome, NewRequest, Offer, Request, Store,
    Wave, WaveParams,
};
use restock_core::Millis;
use restock_core::{
    CatalogueEntry, Contact, ContactKey, Email, Level, LinkToken, ListShare, RequestId, Rules, Sku,
    StockEvent, TokenHash, Window,
};
use time::OffsetDateTime;

pub const MIN: Millis = 60_000;
pub const DAY: Millis = 86_400_000;
/// 2026-12-04T00:00:00Z: the tests' clock starts here and moves only when told.
pub const T0: Millis = 1_796_342_400_000;
pub const PEPPER: &[u8] = b"conformance-pepper";
pub const RULES: Rules = Rules {
    threshold: 1,
    max_jump: 500,
    max_level: 100_000,
};
pub const WINDOW: Window = Window::from_mins(15);
pub const LIFETIME: Window = Window::from_secs(90 * 86_400);

/// What only the store's adapter can do for a test.
#[async_trait::async_trait]
pub trait Harness: Send + Sync {
    /// Lets the indexes catch up (a no-op for a store whose reads are never
    /// behind).
    async fn settle(&self);
    /// Makes the stored counters of `sku` say `offered` and `held`, as a
    /// drift would.
    async fn set_counters(&self, sku: &Sku, offered: u32, held: u32);
    /// Writes `contact`'s opt-out record and nothing else: what an opt-out
    /// leaves when it stops after its first step (on DynamoDB the record is
    /// one write and each of the contact's requests ends after it).
    async fn opt_out_record_only(&self, contact: &ContactKey, now: Millis);
}

/// A store under test with the verbs the tests speak in.
pub struct App {
    pub store: Arc<dyn Store>,
    harness: Box<dyn Harness>,
    random: Mutex<Box<dyn FnMut() -> [u8; 16] + Send>>,
}

/// The suite's random bytes: the same on every run.
pub use crate::port::seeded as random;

pub fn sku(s: &str) -> Sku {
    Sku::try_from(s).unwrap()
}

/// A double opt-in sign-up (a 48h window) of `contact` for `s` on one
/// shard, its consent naming the request its sign-up made on the other
/// channel, if any.
fn signing_up(
    id: RequestId,
    s: &str,
    contact: Contact,
    now: Millis,
    together: Option<RequestId>,
) -> NewRequest {
    NewRequest {
        id,
        sku: sku(s),
        name: "Shopper".try_into().unwrap(),
        contact_key: contact.key(PEPPER),
        contact,
        now,
        shards: 1,
        lifetime_ms: LIFETIME.as_millis(),
        manage_hash: None,
        language: None,
        zone: None,
        confirm_window_ms: Some(2 * DAY),
        consent: Some(Consent {
            version: "2026-11".into(),
            at: now,
            source: "hashed-source".into(),
            confirmed_at: None,
            together,
        }),
    }
}

pub fn email(i: usize) -> Contact {
    Contact::Email(Email::try_from(format!("shopper{i}@example.com").as_str()).unwrap())
}

/// A wave's parameters: no quiet hours (the cases of quiet hours set their own).
pub fn params(shards: u16) -> WaveParams {
    WaveParams {
        share: ListShare::ALL,
        offer_window: WINDOW,
        shards,
        max_offers: 10_000,
        quiet_hours: restock_core::QuietHours {
            sms: None,
            email: None,
            legal: restock_core::quiet::legal::Overrides::new(),
        },
        shop_zone: restock_core::Zone::utc(),
    }
}

impl App {
    /// `store` under test, with its adapter's `harness`.
    pub fn new(store: Arc<dyn Store>, harness: impl Harness + 'static) -> Self {
        Self {
            store,
            harness: Box::new(harness),
            random: Mutex::new(Box::new(random(7))),
        }
    }

    /// Lets the indexes catch up. The tests' clock jumps minutes or days
    /// where real time would pass: a due index entry is written a whole
    /// window before it is due, and a stream retry re-reads unsent offers
    /// long after they were written. Called before those index reads (the
    /// sweep's due listing, re-arming unsent offers, reconcile) and never
    /// before the queue reads, which must be right at once.
    pub async fn settle(&self) {
        self.harness.settle().await;
    }

    /// Makes the stored counters of `s` say `offered` and `held`.
    pub async fn set_counters(&self, s: &str, offered: u32, held: u32) {
        self.harness.set_counters(&sku(s), offered, held).await;
    }

    /// Writes `contact`'s opt-out record and stops, as an opt-out cut
    /// short after its first step.
    pub async fn opt_out_record_only(&self, contact: &ContactKey, now: Millis) {
        self.harness.opt_out_record_only(contact, now).await;
    }

    pub fn bytes(&self) -> [u8; 16] {
        (self.random.lock().unwrap())()
    }

    pub async fn catalogue(&self, s: &str, shards: u16) {
        let mut entry = CatalogueEntry::new(sku(s), format!("Product {s}"));
        entry.shards = shards;
        self.store.put_catalogue_entry(&entry).await.unwrap();
    }

    pub async fn join_as(
        &self,
        s: &str,
        contact: Contact,
        now: Millis,
        shards: u16,
    ) -> JoinOutcome {
        self.join_in(s, contact, now, shards, None).await
    }

    /// [`Self::join_as`] on the clock of `zone` (`None`: the shop's).
    pub async fn join_in(
        &self,
        s: &str,
        contact: Contact,
        now: Millis,
        shards: u16,
        zone: Option<restock_core::Zone>,
    ) -> JoinOutcome {
        let key = contact.key(PEPPER);
        let new = NewRequest {
            id: RequestId::from_random(self.bytes()),
            sku: sku(s),
            name: "Shopper".try_into().unwrap(),
            contact,
            contact_key: key,
            now,
            shards,
            lifetime_ms: LIFETIME.as_millis(),
            manage_hash: None,
            language: None,
            zone,
            confirm_window_ms: None,
            consent: None,
        };
        self.store.join(new).await.unwrap()
    }

    /// Shopper `i` signs up with double opt-in (a 48h confirmation window).
    pub async fn sign_up(&self, s: &str, i: usize, now: Millis) -> Request {
        self.sign_up_managed(s, i, now, None).await
    }

    /// [`Self::sign_up`], the joining browser keeping a manage secret
    /// hashing to `manage`.
    pub async fn sign_up_managed(
        &self,
        s: &str,
        i: usize,
        now: Millis,
        manage: Option<TokenHash>,
    ) -> Request {
        self.sign_up_in(s, i, now, manage, Some("pt-BR".parse().unwrap()))
            .await
    }

    /// [`Self::sign_up_managed`] in `language` (`None`: a request kept
    /// before languages were).
    pub async fn sign_up_in(
        &self,
        s: &str,
        i: usize,
        now: Millis,
        manage: Option<TokenHash>,
        language: Option<restock_core::Language>,
    ) -> Request {
        let mut new = signing_up(RequestId::from_random(self.bytes()), s, email(i), now, None);
        (new.shards, new.manage_hash, new.language) = (2, manage, language);
        match self.store.join(new).await.unwrap() {
            JoinOutcome::Joined(r) => r,
            other => panic!("shopper {i} did not sign up: {other:?}"),
        }
    }

    /// Shopper `i` signs up to be told by email and text (double opt-in):
    /// two requests, each naming the other, as capture makes them.
    pub async fn sign_up_on_both(&self, s: &str, i: usize, now: Millis) -> (Request, Request) {
        let phone = Contact::Sms(restock_core::Phone::parse(&format!("+4474001{i:05}")).unwrap());
        let ids = [
            RequestId::from_random(self.bytes()),
            RequestId::from_random(self.bytes()),
        ];
        let mut made = Vec::new();
        for (n, contact) in [email(i), phone].into_iter().enumerate() {
            let new = signing_up(ids[n], s, contact, now, Some(ids[1 - n]));
            match self.store.join(new).await.unwrap() {
                JoinOutcome::Joined(r) => made.push(r),
                other => panic!("shopper {i} did not sign up: {other:?}"),
            }
        }
        let phone = made.pop().unwrap();
        (made.pop().unwrap(), phone)
    }

    /// Follows `r`'s confirmation link at `now`.
    pub async fn confirm(&self, r: &Request, now: Millis) {
        let (_, link) = self.claim_confirmation_at(r, now).await;
        let confirmed = self
            .store
            .confirm(&link, owner(), LIFETIME.as_millis(), now);
        assert!(matches!(
            confirmed.await.unwrap(),
            crate::ConfirmOutcome::Confirmed(_)
        ));
    }

    /// Claims `r`'s confirmation with fresh links as it signs up; the
    /// confirmation link.
    pub async fn claim_confirmation(&self, r: &Request) -> (Claim, LinkToken) {
        self.claim_confirmation_at(r, r.key.joined_ms).await
    }

    /// [`Self::claim_confirmation`] at `now`.
    pub async fn claim_confirmation_at(&self, r: &Request, now: Millis) -> (Claim, LinkToken) {
        let token = || LinkToken::new(r.sku.clone(), r.id, self.bytes());
        let (confirm, manage, optout) = (token(), token(), token());
        let links = ConfirmLinks {
            confirm: confirm.secret_hash(),
            manage: manage.secret_hash(),
            optout: optout.secret_hash(),
        };
        let claim = self
            .store
            .claim_confirmation(&r.sku, &r.id, &links, &r.contact_key, now)
            .await
            .unwrap();
        (claim, confirm)
    }

    /// Shopper `i` joins; panics unless it is a new place.
    pub async fn join(&self, s: &str, i: usize, now: Millis) -> Request {
        match self.join_as(s, email(i), now, 1).await {
            JoinOutcome::Joined(r) => r,
            other => panic!("shopper {i} did not join: {other:?}"),
        }
    }

    pub async fn level(&self, s: &str, level: u32, at: Millis, delivery: &str) -> ApplyOutcome {
        let event = StockEvent {
            delivery_id: delivery.to_owned(),
            item: restock_core::ItemRef::Sku { sku: sku(s) },
            location: "default".into(),
            level: Level::Tracked(level),
            at: OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).unwrap(),
            untimed: false,
        };
        self.store
            .apply_stock(&sku(s), &event, &RULES, at)
            .await
            .unwrap()
    }

    pub async fn wave(&self, s: &str, now: Millis) -> Wave {
        self.wave_sharded(s, now, 1).await
    }

    pub async fn wave_sharded(&self, s: &str, now: Millis, shards: u16) -> Wave {
        let mut random = random(self.bytes()[0] as u64 + now as u64);
        self.store
            .create_offers(&sku(s), &params(shards), now, &mut random)
            .await
            .unwrap()
    }

    /// A stream retry's pass over the unsent offers of `s`, once the
    /// indexes have caught up: the offers it re-armed with new links.
    pub async fn reissue_unsent(&self, s: &str) -> Vec<Offer> {
        self.settle().await;
        let seed = self.bytes();
        let mut random = random(u64::from_le_bytes(seed[..8].try_into().unwrap()));
        self.store
            .reissue_unsent(&sku(s), &mut random)
            .await
            .unwrap()
    }

    /// A wave whose notices all went out (notify claims each before it
    /// sends): its offers lapse, rather than return to the queue, if nobody
    /// clicks.
    pub async fn wave_sent(&self, s: &str, now: Millis) -> Wave {
        let wave = self.wave(s, now).await;
        for o in &wave.offers {
            assert_eq!(
                self.claim(&o.request.id, &o.reserve.secret_hash()).await,
                Claim::Claimed
            );
        }
        wave
    }

    /// Claims the notice of `id`'s offer in restock 1 with the link `link`.
    pub async fn claim(&self, id: &RequestId, link: &TokenHash) -> Claim {
        let r = self.get(id).await;
        self.store
            .claim_notice(&r.sku, id, 1, link, &r.contact_key)
            .await
            .unwrap()
    }

    pub async fn get(&self, id: &RequestId) -> Request {
        self.store
            .request(id)
            .await
            .unwrap()
            .expect("request exists")
    }

    /// Sweeps everything due at `now`; returns the outcomes.
    pub async fn sweep(&self, now: Millis) -> Vec<crate::ExpireOutcome> {
        self.settle().await;
        let mut outcomes = Vec::new();
        for due in self.store.due(now, 1_000).await.unwrap() {
            outcomes.push(self.store.expire(&due, now).await.unwrap());
        }
        outcomes
    }

    /// I1: never more live offers plus holds than the level.
    pub async fn assert_never_oversold(&self, s: &str) {
        let c = self.store.snapshot(&sku(s)).await.unwrap().counters;
        assert!(c.offered + c.held <= c.level, "oversold: {c:?}");
    }
}

/// An order placed at `at` that lists no line items (the generic format).
pub fn order_at(at: Millis) -> crate::Order {
    crate::Order {
        placed_at: at,
        items: None,
        prices: Default::default(),
    }
}

/// A manage link's hash for whoever confirms (the confirmation page's).
pub fn owner() -> restock_core::TokenHash {
    restock_core::LinkToken::new(
        sku("CHAIR-WAL"),
        restock_core::RequestId::from_random([7; 16]),
        [8; 16],
    )
    .secret_hash()
}
