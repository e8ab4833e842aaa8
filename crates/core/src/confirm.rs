//! The confirmation message of double opt-in: the first and only message a
//! sign-up gets before it is confirmed. Fixed words (no model call), the
//! shopper's confirmation link, a link to see or leave their place, and the
//! way to stop. A sign-up nobody confirms is never mailed again.

use std::fmt::Write;

use crate::notice::{EmailNotice, SmsNotice, escape_html, sms_segments};
use crate::window::Window;

/// Everything one confirmation says.
#[derive(Debug, Clone)]
pub struct ConfirmInput<'a> {
    /// The shop's name.
    pub store: &'a str,
    /// The product's name.
    pub product: &'a str,
    /// The shopper's name.
    pub shopper: &'a str,
    /// The confirmation link (absolute).
    pub confirm_url: &'a str,
    /// The link to see or leave their place (absolute).
    pub manage_url: &'a str,
    /// The opt-out link (absolute).
    pub optout_url: &'a str,
    /// How long the confirmation link lasts.
    pub window: Window,
}

/// Renders the confirmation email.
pub fn render_confirm_email(n: &ConfirmInput<'_>) -> EmailNotice {
    let window = n.window.in_words();
    let subject = format!("Confirm: tell me when {} is back at {}", n.product, n.store);
    let text = format!(
        "Hi {shopper},\n\nSomeone, we hope you, asked {store} to tell this address when {product} is back in stock. Confirm within {window} to keep your place in line:\n\n{confirm}\n\nIf it wasn't you, do nothing: you won't hear from us again, and this address is deleted after {window}.\n\nSee or leave your place: {manage}\nStop all messages from {store}: {optout}\n",
        shopper = n.shopper,
        store = n.store,
        product = n.product,
        confirm = n.confirm_url,
        manage = n.manage_url,
        optout = n.optout_url,
    );
    let mut html = String::with_capacity(2048);
    let _ = write!(
        html,
        concat!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{subject}</title></head>",
            "<body style=\"margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1a1a1a;background:#ffffff\">",
            "<main style=\"max-width:480px;margin:0 auto\">",
            "<p>Hi {shopper},</p>",
            "<p>Someone, we hope you, asked {store} to tell this address when <strong>{product}</strong> is back in stock. Confirm within <strong>{window}</strong> to keep your place in line.</p>",
            "<p><a href=\"{confirm}\" style=\"display:inline-block;padding:14px 24px;background:#1a1a1a;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600\">Yes, tell me</a></p>",
            "<p style=\"font-size:14px;color:#555\">If the button does not work, open this link: <a href=\"{confirm}\" style=\"color:#1a1a1a\">{confirm}</a></p>",
            "<p style=\"font-size:14px;color:#555\">If it wasn't you, do nothing: you won't hear from us again, and this address is deleted after {window}.</p>",
            "<p style=\"font-size:13px;color:#555\"><a href=\"{manage}\" style=\"color:#555\">See or leave your place</a> · <a href=\"{optout}\" style=\"color:#555\">Stop all messages</a></p>",
            "</main></body></html>"
        ),
        subject = escape_html(&subject),
        shopper = escape_html(n.shopper),
        store = escape_html(n.store),
        product = escape_html(n.product),
        window = escape_html(&window),
        confirm = escape_html(n.confirm_url),
        manage = escape_html(n.manage_url),
        optout = escape_html(n.optout_url),
    );
    EmailNotice {
        subject,
        text,
        html,
        list_unsubscribe: format!("<{}>", n.optout_url),
        tags: Vec::new(),
    }
}

/// Renders the confirmation text: the link and the way to stop always fit
/// in two segments (the product name is dropped first).
pub fn render_confirm_sms(n: &ConfirmInput<'_>) -> SmsNotice {
    let window = n.window.in_words();
    let with_product = format!(
        "{store}: confirm within {window} to be told when {product} is back: {url} Not you? Ignore this. Reply STOP to opt out",
        store = n.store,
        product = n.product,
        url = n.confirm_url,
    );
    let text = if sms_segments(&with_product).1 <= 2 {
        with_product
    } else {
        format!(
            "{store}: confirm within {window} to be told when your item is back: {url} Reply STOP to opt out",
            store = n.store.chars().take(30).collect::<String>(),
            url = n.confirm_url,
        )
    };
    let (encoding, segments) = sms_segments(&text);
    SmsNotice {
        text,
        encoding,
        segments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(product: &'a str) -> ConfirmInput<'a> {
        ConfirmInput {
            store: "Loom & Last",
            product,
            shopper: "Della <b>",
            confirm_url: "https://n.example/c/CHAIR-WAL~id.secret",
            manage_url: "https://n.example/m/CHAIR-WAL~id.manage",
            optout_url: "https://n.example/o/CHAIR-WAL~id.optout",
            window: Window::from_secs(48 * 3_600),
        }
    }

    #[test]
    fn the_confirmation_carries_its_links_and_escapes_every_value() {
        let mail = render_confirm_email(&input("Walnut Lounge Chair"));
        assert!(mail.subject.contains("Walnut Lounge Chair"));
        for url in [
            "/c/CHAIR-WAL~id.secret",
            "/m/CHAIR-WAL~id.manage",
            "/o/CHAIR-WAL~id.optout",
        ] {
            assert!(mail.text.contains(url) && mail.html.contains(url), "{url}");
        }
        assert!(mail.text.contains("2 days"));
        assert!(mail.html.contains("Della &lt;b&gt;"), "escaped");
        assert_eq!(
            mail.list_unsubscribe,
            "<https://n.example/o/CHAIR-WAL~id.optout>"
        );
        let sms = render_confirm_sms(&input("Walnut Lounge Chair"));
        assert!(sms.text.contains("/c/CHAIR-WAL~id.secret") && sms.text.contains("STOP"));
        let long = "An extraordinarily long product name ".repeat(8);
        let sms = render_confirm_sms(&input(&long));
        assert!(
            sms.segments <= 2 && sms.text.contains("/c/CHAIR-WAL~id.secret"),
            "{sms:?}"
        );
    }
}
