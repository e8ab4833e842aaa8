//! Correctly signed test deliveries in each format detect accepts, for curl
//! (`restock sign-webhook`) and for the local demo's buttons. Each
//! platform signs its own ([`Platform::sign_test`]); this adds the curl line
//! and the delivery id.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use restock_core::Platform;
pub use restock_core::platform::{SignError, SignedDelivery as Delivery, TestEvent};

/// A curl command that posts `delivery` to `base` (the detect URL).
pub fn curl(delivery: &Delivery, base: &str) -> String {
    let mut out = format!(
        "curl -sS -X POST '{}{}'",
        base.trim_end_matches('/'),
        delivery.path
    );
    for (name, value) in &delivery.headers {
        out.push_str(&format!(" \\\n  -H '{name}: {value}'"));
    }
    out.push_str(&format!(
        " \\\n  --data-raw '{}'",
        delivery.body.replace('\'', r"'\''")
    ));
    out
}

/// Signs `event` for `platform` with `key` at `now` (Unix seconds); `id` is
/// the delivery id.
///
/// # Errors
/// [`SignError`] naming what the event lacks for the platform, or a key not
/// in the platform's form.
pub fn sign(
    platform: Platform,
    event: &TestEvent,
    key: &str,
    id: &str,
    now: i64,
) -> Result<Delivery, SignError> {
    platform.sign_test(event, key, id, now)
}

/// A fresh delivery id from 12 random bytes.
pub fn delivery_id(random: [u8; 16]) -> String {
    format!(
        "msg_{}",
        STANDARD.encode(&random[..12]).replace(['+', '/'], "x")
    )
}
