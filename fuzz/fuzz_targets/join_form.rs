//! capture's input: a notify-me request as JSON or as an HTML form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use restock_core::join::JoinForm;

fuzz_target!(|data: &[u8]| {
    if let Ok(form) = serde_json::from_slice::<JoinForm>(data) {
        let _ = form.parse();
    }
    if let Ok(form) = serde_urlencoded::from_bytes::<JoinForm>(data) {
        let _ = form.parse();
    }
});
