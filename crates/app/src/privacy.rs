//! A customer's or the shop's privacy request, as a platform forwards it
//! (Shopify's compliance topics), told to the team with the command that
//! answers it. Nothing is erased or read here: finding every request of a
//! contact, finished ones included, reads the whole table (`restock
//! forget`, `restock show`), which no webhook may do within its time or its
//! role's rights. Masked contacts only; the shop has the customer in full.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use restock_core::Contact;
use restock_core::webhook::PrivacyRequest;
use serde_json::json;

use crate::{Services, alerts};

/// Tells the team what `request` asks of them; the answer for the platform
/// (202: accepted, carried out by the team).
pub(crate) async fn privacy(s: &Services, request: PrivacyRequest) -> Response {
    let masked = |customer: &[Contact]| customer.iter().map(Contact::masked).collect::<Vec<_>>();
    let alert = match &request {
        PrivacyRequest::Erase {
            customer,
            customer_id,
        } => alerts::customer_erasure(&masked(customer), *customer_id),
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
