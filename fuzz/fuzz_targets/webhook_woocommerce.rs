//! WooCommerce product webhooks (and their unsigned ping), signed correctly
//! and with the fuzzed bytes as the signature.
#![no_main]

use libfuzzer_sys::fuzz_target;
use restock_core::platform::woocommerce;
use restock_core::webhook::Keys;

const KEY: &[u8] = b"wc_fuzz_key";

fuzz_target!(|data: &[u8]| {
    let keys = Keys::raw([KEY]);
    let now = time::OffsetDateTime::from_unix_timestamp(1_796_374_800).unwrap();
    let signature = woocommerce::sign(KEY, data);
    let headers = [
        (woocommerce::SIGNATURE, signature.as_str()),
        (woocommerce::DELIVERY_ID, "fuzz"),
    ];
    let _ = woocommerce::parse(&keys, &headers[..], data, now);
    // Unsigned, a body is at most the ping WooCommerce sends when a webhook
    // is saved: never a stock report.
    let unsigned: [(&str, &str); 0] = [];
    assert!(
        matches!(
            woocommerce::parse(&keys, &unsigned[..], data, now),
            Ok(woocommerce::Delivery::Ping { .. }) | Err(_)
        ),
        "an unsigned body was taken as a stock report"
    );
    if let Ok(forged) = std::str::from_utf8(data) {
        let headers = [(woocommerce::SIGNATURE, forged), (woocommerce::DELIVERY_ID, "fuzz")];
        assert!(
            woocommerce::parse(&keys, &headers[..], br#"{"id":1,"stock_quantity":3}"#, now)
                .is_err(),
            "a forged signature passed"
        );
    }
});
