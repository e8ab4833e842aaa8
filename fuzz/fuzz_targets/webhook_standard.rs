//! Standard Webhooks stock and order deliveries, signed correctly, plus
//! fuzzed signature and timestamp headers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use restock_core::platform::standard;
use restock_core::webhook::Keys;

const KEY: &[u8] = b"restock-fuzz-stock-key";
const NOW: i64 = 1_796_374_800;

fuzz_target!(|data: &[u8]| {
    let keys = Keys::raw([KEY]);
    let now = time::OffsetDateTime::from_unix_timestamp(NOW).unwrap();
    let signature = standard::sign(KEY, "msg_fuzz", NOW, data);
    let ts = NOW.to_string();
    let headers = [
        (standard::ID, "msg_fuzz"),
        (standard::TIMESTAMP, ts.as_str()),
        (standard::SIGNATURE, signature.as_str()),
    ];
    let _ = standard::parse_stock(&keys, &headers[..], data, now);
    let _ = standard::parse_order(&keys, &headers[..], data, now);
    if let Ok(text) = std::str::from_utf8(data) {
        let (stamp, sig) = text.split_once('\n').unwrap_or((text, text));
        let headers = [
            (standard::ID, "msg_fuzz"),
            (standard::TIMESTAMP, stamp),
            (standard::SIGNATURE, sig),
        ];
        assert!(
            standard::parse_stock(&keys, &headers[..], b"{}", now).is_err(),
            "a forged signature passed"
        );
    }
});
