//! A customer's or the shop's privacy request, as a platform forwards it
//! (Shopify's compliance topics). A customer's erasure is carried out: every
//! request of theirs, finished ones included, which reads the whole table,
//! so detect hands it to the sweep ([`Services::erasures`]) with only the
//! contact's keyed hashes, and the sweep erases ([`erase`]). A data request
//! and a shop's erasure are told to the team with the command that answers
//! them. The team sees masked contacts only; the shop has the customer in
//! full.

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
    pub contact_keys: Vec<ContactKey>,
    /// The platform's customer id, for the team.
    pub customer_id: Option<u64>,
}

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

/// Tells the team what `request` asks of them; the answer for the platform
/// (202: accepted, carried out by the team).
pub(crate) async fn privacy(s: &Services, request: PrivacyRequest) -> Response {
    let masked = |customer: &[Contact]| customer.iter().map(Contact::masked).collect::<Vec<_>>();
    let alert = match &request {
        PrivacyRequest::Erase {
            customer,
            customer_id,
        } => return customer_erasure(s, customer, *customer_id).await,
        PrivacyRequest::Report {
            customer,
            customer_id,
            request_id,
        } => alerts::data_request(&masked(customer), *customer_id, *request_id),
        PrivacyRequest::Shop { domain } => alerts::shop_erasure(domain),
    };
    tracing::warn!(subject = %alert.subject, "a privacy request for the team");
    s.alert(alert).await;
    (
        StatusCode::ACCEPTED,
        Json(json!({ "status": "the shop's team is told" })),
    )
        .into_response()
}
