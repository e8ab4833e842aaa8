//! The contact parser: any text as an email address or a phone number.
//! Whatever is accepted is in its one canonical form: parsing it again
//! gives the same contact, so every spelling of a mailbox keys alike.
#![no_main]

use libfuzzer_sys::fuzz_target;
use restock_core::{Channel, Contact};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for channel in [Channel::Email, Channel::Sms] {
        if let Ok(contact) = Contact::on(channel, text) {
            let again = Contact::on(channel, contact.address()).expect("a canonical contact parses");
            assert_eq!(again, contact, "the canonical form is a fixed point");
            let _ = contact.masked();
        }
    }
});
