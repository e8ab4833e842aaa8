//! Shopify inventory webhooks: any body, signed correctly (so parsing is
//! reached) and with the fuzzed bytes as the signature (so verification is).
#![no_main]

use libfuzzer_sys::fuzz_target;
use restock_core::platform::shopify;
use restock_core::webhook::Keys;

const KEY: &[u8] = b"shpss_fuzz_key";

fuzz_target!(|data: &[u8]| {
    let keys = Keys::raw([KEY]);
    let signature = shopify::sign(KEY, data);
    let headers = [
        (shopify::SIGNATURE, signature.as_str()),
        (shopify::WEBHOOK_ID, "fuzz"),
        (shopify::TOPIC, "inventory_levels/update"),
    ];
    let _ = shopify::parse(&keys, &headers[..], data);
    if let Ok(forged) = std::str::from_utf8(data) {
        let headers = [(shopify::SIGNATURE, forged), (shopify::WEBHOOK_ID, "fuzz")];
        assert!(shopify::parse(&keys, &headers[..], b"{}").is_err(), "a forged signature passed");
    }
});
