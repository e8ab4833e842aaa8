//! A customer's or the shop's privacy request, as a platform forwards it
//! (Shopify's compliance topics): a customer's erasure is done at once, as
//! `restock forget` does it; a data request and a shop's erasure are told
//! to the team with the command that answers them. Idempotent: a
//! redelivery erases nothing more.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use restock_core::Contact;
use restock_core::webhook::PrivacyRequest;
use serde_json::json;

use crate::{AppError, Services, alerts};

/// Carries out `request`; the answer for the platform.
pub(crate) async fn privacy(s: &Services, request: PrivacyRequest) -> Result<Response, AppError> {
    let now = s.clock.now_ms();
    match request {
        PrivacyRequest::Erase {
            customer,
            customer_id,
        } => {
            let (erased, ended) = erase(s, &customer, now).await?;
            tracing::info!(
                customer_id,
                erased,
                ended,
                "customer erased on the shop's request (only an opt-out's keyed hash is kept)"
            );
            Ok(Json(json!({ "status": "erased", "requests_erased": erased })).into_response())
        }
        PrivacyRequest::Report {
            customer,
            customer_id,
            request_id,
        } => {
            let mut held = 0;
            let pepper = s.keyring.keys().await?.contact_pepper.clone();
            for key in customer.iter().flat_map(|c| c.keys(&pepper)) {
                held += s.store.contact_requests(&key).await?.len();
            }
            let masked: Vec<String> = customer.iter().map(Contact::masked).collect();
            tracing::info!(
                customer_id,
                request_id,
                held,
                "customer data request told to the team"
            );
            s.alert(alerts::data_request(&masked, customer_id, request_id, held))
                .await;
            Ok((
                StatusCode::ACCEPTED,
                Json(json!({ "status": "the shop's team is told", "requests_held": held })),
            )
                .into_response())
        }
        PrivacyRequest::Shop { domain } => {
            tracing::warn!(%domain, "the shop asks for its data to be erased");
            s.alert(alerts::shop_erasure(&domain)).await;
            Ok((
                StatusCode::ACCEPTED,
                Json(json!({ "status": "the shop's team is told" })),
            )
                .into_response())
        }
    }
}

/// Every request of the customer's contacts (each spelling's key) ended
/// and erased; how many were erased and ended.
async fn erase(
    s: &Services,
    customer: &[Contact],
    now: restock_core::Millis,
) -> Result<(u32, u32), AppError> {
    let pepper = s.keyring.keys().await?.contact_pepper.clone();
    let (mut erased, mut ended) = (0, 0);
    for key in customer.iter().flat_map(|c| c.keys(&pepper)) {
        let forgotten = s.store.forget_contact(&key, now).await?;
        erased += forgotten.erased;
        ended += forgotten.ended;
    }
    Ok((erased, ended))
}
