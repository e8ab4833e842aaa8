//! A customer's or the shop's privacy request, as a platform forwards it
//! (Shopify's compliance topics). An erasure is carried out: a customer's
//! (every request of theirs, finished ones included) or the shop's (every
//! shopper's request). Either reads the whole table, so detect hands it to
//! the sweep ([`Services::erasures`]) with only the contacts' keyed hashes,
//! and the sweep erases ([`erase`]); a shop's erasure a few pages per run,
//! handing the rest on. A data request is told to the team with the command
//! that answers it. The team sees masked contacts only; the shop has the
//! customer in full.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use restock_core::webhook::PrivacyRequest;
use restock_core::{Contact, ContactKey};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::{AppError, Services, alerts};

/// An erasure asked for: the contact's keyed hashes, every spelling of each
/// address and number, never the contact itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erasure {
    /// The keyed hashes to erase every request of.
    #[serde(default)]
    pub contact_keys: Vec<ContactKey>,
    /// The platform's customer id, for the team.
    #[serde(default)]
    pub customer_id: Option<u64>,
    /// The shop's erasure (`shop/redact`): every request, whoever's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shop: Option<ShopErasure>,
}

/// A shop's erasure, and how far it has gone: it scans the table in pages
/// and erases each request it reads ([`CaptureStore::forget_request`]:
/// one pass over the table, never a read of it per shopper). A pass that
/// erased anything is followed by another from the start, so a request the
/// scan's cursor passed over is found; the erasure ends with a pass that
/// finds none. Only opt-outs are kept, as keyed hashes, so a shop that
/// comes back never writes to someone who asked it not to.
///
/// [`CaptureStore::forget_request`]: restock_store::CaptureStore::forget_request
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShopErasure {
    /// The shop's domain, for the team.
    pub domain: String,
    /// Where the scan carries on; `None` at the start of a pass.
    #[serde(default)]
    pub after: Option<String>,
    /// Requests erased so far.
    #[serde(default)]
    pub erased: u32,
    /// Requests erased in this pass.
    #[serde(default)]
    pub pass_erased: u32,
}

/// Requests a shop's erasure reads per page.
pub const SHOP_PAGE: usize = 100;
/// Pages a shop's erasure takes per run before it hands the rest on: a
/// thousand requests, eight at a time, each a read, its end if live and two
/// deletes.
pub const SHOP_PAGES: usize = 10;

/// Hands an erasure to the function that may read the whole table
/// (EventBridge to the sweep in production: `restock_aws::EventBridgeErasures`).
#[async_trait::async_trait]
pub trait ErasureQueue: Send + Sync {
    /// Queues `erasure`; once it is accepted, it is carried out or, failing
    /// that, kept in the dead-letter queue.
    async fn queue(&self, erasure: &Erasure) -> Result<(), crate::ports::PublishError>;
}

/// Erases every request of the erasure's contacts (live ones end first,
/// their units passed on) and tells the team how many: the sweep, and a
/// redrive of its dead letter. Safe to run again.
///
/// # Errors
/// Store failures (the run is retried, then kept in the dead-letter queue).
pub async fn erase(s: &Services, erasure: &Erasure) -> Result<u32, AppError> {
    if let Some(shop) = &erasure.shop {
        return erase_shop(s, shop.clone(), SHOP_PAGES).await;
    }
    let erased = erased(s, erasure).await?;
    // The sweep has their keyed hashes only, never the address.
    s.alert(alerts::customer_erasure(
        &["by their keyed hashes".to_owned()],
        erasure.customer_id,
        Some(erased),
    ))
    .await;
    Ok(erased)
}

/// [`erase`] without telling the team.
async fn erased(s: &Services, erasure: &Erasure) -> Result<u32, AppError> {
    let now = s.clock.now_ms();
    let mut erased = 0;
    for key in &erasure.contact_keys {
        erased += s.store.forget_contact(key, now).await?.erased;
    }
    tracing::info!(erased, customer = ?erasure.customer_id, "a customer's requests erased");
    Ok(erased)
}

/// Takes a shop's erasure `pages` pages further, then hands the rest to
/// [`Services::erasures`] (or, with nothing to take it, carries on here);
/// tells the team once a pass finds nothing left. The requests this run
/// erased.
///
/// # Errors
/// Store failures, and a hand-on the bus refused (the run is retried, then
/// kept in the dead-letter queue; carried on from its event, it repeats no
/// harm).
pub async fn erase_shop(
    s: &Services,
    mut shop: ShopErasure,
    pages: usize,
) -> Result<u32, AppError> {
    let now = s.clock.now_ms();
    let mut run = 0;
    loop {
        for _ in 0..pages.max(1) {
            let page = s
                .store
                .requests_page(shop.after.as_deref(), SHOP_PAGE)
                .await?;
            let mut erased = 0;
            for eight in page.requests.chunks(8) {
                let gone = futures::future::try_join_all(
                    eight.iter().map(|r| s.store.forget_request(&r.id, now)),
                )
                .await?;
                erased += gone.iter().filter(|g| **g).count() as u32;
            }
            (run, shop.erased, shop.pass_erased) = (
                run + erased,
                shop.erased + erased,
                shop.pass_erased + erased,
            );
            shop.after = page.next;
            if shop.after.is_none() {
                if shop.pass_erased == 0 {
                    tracing::info!(erased = shop.erased, "the shop's requests erased");
                    s.alert(alerts::shop_erasure(&shop.domain, Some(shop.erased)))
                        .await;
                    return Ok(run);
                }
                shop.pass_erased = 0;
            }
        }
        if let Some(queue) = &s.erasures {
            let rest = Erasure {
                contact_keys: Vec::new(),
                customer_id: None,
                shop: Some(shop),
            };
            queue.queue(&rest).await?;
            return Ok(run);
        }
    }
}

/// Carries out a customer's erasure, or hands it to the sweep; the answer
/// for the platform (503 when it could be neither, so it is sent again).
async fn customer_erasure(
    s: &Services,
    customer: &[Contact],
    customer_id: Option<u64>,
) -> Response {
    let pepper = match s.keyring.keys().await {
        Ok(keys) => keys.contact_pepper.clone(),
        Err(e) => return unavailable(&e.to_string()),
    };
    let erasure = Erasure {
        contact_keys: customer.iter().flat_map(|c| c.keys(&pepper)).collect(),
        customer_id,
        shop: None,
    };
    let masked: Vec<String> = customer.iter().map(Contact::masked).collect();
    let (status, erased) = match &s.erasures {
        Some(queue) => match queue.queue(&erasure).await {
            Ok(()) => (StatusCode::ACCEPTED, None),
            Err(e) => return unavailable(&e.to_string()),
        },
        None => match erased(s, &erasure).await {
            Ok(n) => (StatusCode::OK, Some(n)),
            Err(e) => return unavailable(&e.to_string()),
        },
    };
    s.alert(alerts::customer_erasure(&masked, customer_id, erased))
        .await;
    let said = if erased.is_some() {
        "erased"
    } else {
        "queued for erasure"
    };
    (status, Json(json!({ "status": said, "erased": erased }))).into_response()
}

fn unavailable(why: &str) -> Response {
    tracing::error!(
        error = why,
        "a privacy request could not be carried out now"
    );
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(json!({ "error": "temporarily unavailable; please retry" })),
    )
        .into_response()
}

/// Starts the shop's erasure, or hands it to the sweep; the answer for the
/// platform (503 when it could be neither, so it is sent again).
async fn shop_erasure(s: &Services, domain: &str) -> Response {
    let shop = ShopErasure {
        domain: domain.to_owned(),
        after: None,
        erased: 0,
        pass_erased: 0,
    };
    let (status, erased) = match &s.erasures {
        Some(queue) => {
            let erasure = Erasure {
                contact_keys: Vec::new(),
                customer_id: None,
                shop: Some(shop),
            };
            if let Err(e) = queue.queue(&erasure).await {
                return unavailable(&e.to_string());
            }
            s.alert(alerts::shop_erasure(domain, None)).await;
            (StatusCode::ACCEPTED, None)
        }
        None => match erase_shop(s, shop, SHOP_PAGES).await {
            Ok(n) => (StatusCode::OK, Some(n)),
            Err(e) => return unavailable(&e.to_string()),
        },
    };
    let said = if erased.is_some() {
        "erased"
    } else {
        "queued for erasure"
    };
    (status, Json(json!({ "status": said, "erased": erased }))).into_response()
}

/// Carries out an erasure or tells the team what `request` asks of them;
/// the answer for the platform.
pub(crate) async fn privacy(s: &Services, request: PrivacyRequest) -> Response {
    let masked = |customer: &[Contact]| customer.iter().map(Contact::masked).collect::<Vec<_>>();
    let alert = match &request {
        PrivacyRequest::Erase {
            customer,
            customer_id,
        } => return customer_erasure(s, customer, *customer_id).await,
        PrivacyRequest::Shop { domain } => return shop_erasure(s, domain).await,
        PrivacyRequest::Report {
            customer,
            customer_id,
            request_id,
        } => alerts::data_request(&masked(customer), *customer_id, *request_id),
    };
    tracing::warn!(subject = %alert.subject, "a privacy request for the team");
    s.alert(alert).await;
    (
        StatusCode::ACCEPTED,
        Json(json!({ "status": "the shop's team is told" })),
    )
        .into_response()
}
