//! The shoppers' links (`/r/`, `/o/`, `/c/`, `/m/`): any text a stranger puts
//! in a path is parsed as a link token without panicking, and a token that
//! parses names its own request and SKU; and a confirmation rendered from
//! a hostile shop and product name keeps every value escaped and its link
//! intact.
#![no_main]

use libfuzzer_sys::fuzz_target;
use restock_core::{LinkToken, Texts};
use restock_core::confirm::{ConfirmInput, render_confirm_email, render_confirm_sms};
use restock_core::window::Window;

static EN: std::sync::LazyLock<Texts> = std::sync::LazyLock::new(|| {
    let en = restock_core::Language::english();
    Texts::new(&en, &en, &restock_core::lang::Overrides::new())
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(token) = text.parse::<LinkToken>() {
        // What parses prints back as a token naming the same request.
        let again: LinkToken = token.to_string().parse().expect("round trip");
        assert_eq!(again.request(), token.request());
        assert_eq!(again.sku(), token.sku());
    }
    let mid = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(i, _)| i);
    let (store, product) = text.split_at(mid);
    let input = ConfirmInput {
        store,
        product,
        confirm_url: "https://n.example/c/CHAIR-WAL~id.secret",
        manage_url: "https://n.example/m/CHAIR-WAL~id.manage",
        optout_url: "https://n.example/o/CHAIR-WAL~id.optout",
        window: Window::from_secs(48 * 3_600),
        texts: &EN,
    };
    let mail = render_confirm_email(&input);
    assert!(mail.html.contains("https://n.example/c/CHAIR-WAL~id.secret"));
    assert!(!mail.html.contains("<script"), "a value went out unescaped");
    let sms = render_confirm_sms(&input);
    assert!(sms.text.contains("/c/CHAIR-WAL~id.secret") && sms.segments <= 2);
});
