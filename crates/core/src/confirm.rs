//! The confirmation message of double opt-in: the first and only message a
//! sign-up gets before it is confirmed. Fixed words (no model call), the
//! shopper's confirmation link, a link to see or leave their place, and the
//! way to stop. A sign-up nobody confirms is never mailed again.
//!
//! It carries nothing the person who signed up typed (not even a first
//! name): it goes to an address that has agreed to nothing yet, so a
//! stranger's words must not reach it. The name is used once the address
//! has confirmed.
//!
//! An address that has not confirmed is asked at most once a day
//! ([`ASK_ONCE_IN`]), however many items it is signed up for: a sign-up
//! within the day of the last confirmation sent is covered by it until the
//! day ends, and then sent its own ([`may_ask`]). A tap confirms only the
//! sign-up its link was sent for: a stranger may have made the others.

use crate::Millis;
use crate::lang::{Texts, arg};
use crate::notice::{
    EmailNotice, SmsNotice, budget_for, button, email_html, escape_html, fit, sms_notice,
};
use crate::window::Window;

/// How long an unconfirmed address is left alone after a confirmation
/// was sent to it: a day.
pub const ASK_ONCE_IN: Millis = 86_400_000;

/// Whether an address may be sent a confirmation at `now`: never asked, or
/// the last one it was sent (until `asked_until`) is a day old.
pub fn may_ask(asked_until: Option<Millis>, now: Millis) -> bool {
    asked_until.is_none_or(|until| until <= now)
}

/// Until when an address asked at `now` is left alone.
pub fn asked_until(now: Millis) -> Millis {
    now + ASK_ONCE_IN
}

/// Everything one confirmation says.
#[derive(Debug, Clone)]
pub struct ConfirmInput<'a> {
    /// The shop's name.
    pub store: &'a str,
    /// The product's name.
    pub product: &'a str,
    /// The confirmation link (absolute).
    pub confirm_url: &'a str,
    /// The link to see or leave their place (absolute).
    pub manage_url: &'a str,
    /// The opt-out link (absolute).
    pub optout_url: &'a str,
    /// How long the confirmation link lasts.
    pub window: Window,
    /// Told on both channels: the other channel's contact, masked (the
    /// shopper sees what an opt-out or a hold there will end here).
    pub together: Option<&'a str>,
    /// The words, in the shopper's language.
    pub texts: &'a Texts,
}

/// Renders the confirmation email in the shopper's language.
pub fn render_confirm_email(n: &ConfirmInput<'_>) -> EmailNotice {
    let t = n.texts;
    let window = t.window(n.window);
    let subject = t.get(
        "confirm-subject",
        &[arg("product", n.product), arg("store", n.store)],
    );
    let asked = t.get(
        "confirm-asked",
        &[
            arg("store", n.store),
            arg("product", n.product),
            arg("window", &window),
        ],
    );
    let mut not_you = t.get("confirm-not-you", &[arg("window", &window)]);
    if let Some(contact) = n.together {
        not_you = format!(
            "{} {not_you}",
            t.get("confirm-together", &[arg("contact", contact)])
        );
    }
    let manage = t.word("manage-link");
    let stop = t.get("confirm-stop", &[arg("store", n.store)]);
    let text = format!(
        "{asked}\n\n{confirm}\n\n{not_you}\n\n{manage}: {manage_url}\n{stop}: {optout}\n",
        confirm = n.confirm_url,
        manage_url = n.manage_url,
        optout = n.optout_url,
    );
    let body = format!(
        concat!(
            "<p>{asked}</p>{button}",
            "<p style=\"font-size:14px;color:#555\">{not_you}</p>",
            "<p style=\"font-size:13px;color:#555\"><a href=\"{manage_url}\" style=\"color:#555\">{manage}</a> · <a href=\"{optout}\" style=\"color:#555\">{stop}</a></p>",
        ),
        asked = escape_html(&asked),
        button = button(t, &t.word("confirm-button"), n.confirm_url),
        not_you = escape_html(&not_you),
        manage_url = escape_html(n.manage_url),
        manage = escape_html(&manage),
        optout = escape_html(n.optout_url),
        stop = escape_html(&stop),
    );
    EmailNotice {
        html: email_html(t, &subject, &body),
        subject,
        text,
        list_unsubscribe: format!("<{}>", n.optout_url),
        tags: Vec::new(),
    }
}

/// Renders the confirmation text: the link and the way to stop always fit
/// in [`crate::notice::sms_budget`] (the product name gives way first, then the
/// shop's name is shortened).
pub fn render_confirm_sms(n: &ConfirmInput<'_>) -> SmsNotice {
    let t = n.texts;
    let window = t.window(n.window);
    let compose = |store: &str, product: &str| {
        let mut args = vec![
            arg("store", store),
            arg("product", product),
            arg("window", &window),
            arg("url", n.confirm_url),
        ];
        match n.together {
            Some(contact) => {
                args.push(arg("contact", contact));
                t.get("confirm-sms-together", &args)
            }
            None => t.get("confirm-sms", &args),
        }
    };
    let budget = budget_for(&compose("", ""));
    let fit = |text| fit(text, budget);
    let item = t.word("notice-sms-item");
    let short: String = n.store.chars().take(11).collect();
    let last = compose(short.trim_end(), &item);
    let text = fit(compose(n.store, n.product))
        .or_else(|| fit(compose(n.store, &item)))
        .or_else(|| fit(last.clone()))
        .unwrap_or(last);
    sms_notice(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_asked_again_only_once_the_day_is_over() {
        let asked = 1_000;
        let until = asked_until(asked);
        assert_eq!(until, asked + 86_400_000);
        assert!(may_ask(None, asked), "never asked");
        assert!(!may_ask(Some(until), asked), "just asked");
        assert!(
            !may_ask(Some(until), until - 1),
            "a moment before the day is over"
        );
        assert!(may_ask(Some(until), until), "the day is over");
        assert!(may_ask(Some(until), until + 1));
    }

    fn input<'a>(product: &'a str) -> ConfirmInput<'a> {
        ConfirmInput {
            store: "Loom & Last",
            product,
            confirm_url: "https://n.example/c/CHAIR-WAL~id.secret",
            manage_url: "https://n.example/m/CHAIR-WAL~id.manage",
            optout_url: "https://n.example/o/CHAIR-WAL~id.optout",
            window: Window::from_secs(48 * 3_600),
            texts: &EN,
            together: None,
        }
    }

    static EN: std::sync::LazyLock<Texts> = std::sync::LazyLock::new(|| {
        let en = crate::Language::english();
        Texts::new(&en, &en, &crate::lang::Overrides::new())
    });

    #[test]
    fn every_language_confirms_within_the_text_budget() {
        for (tag, _) in crate::lang::SHIPPED {
            let l: crate::Language = tag.parse().unwrap();
            let t = Texts::new(&l, &l, &crate::lang::Overrides::new());
            let long = "An extraordinarily long product name ".repeat(8);
            let both = [
                (None, "Chair"),
                (None, &long),
                (Some("d***@example.com"), "Chair"),
                (Some("t***@example.com"), &long),
            ];
            for (together, product) in both {
                let mut n = input(product);
                n.texts = &t;
                n.together = together;
                let sms = render_confirm_sms(&n);
                assert!(
                    sms.segments <= crate::notice::sms_budget(sms.encoding)
                        && sms.text.contains(n.confirm_url)
                        && sms.text.contains("STOP"),
                    "{tag}: {sms:?}"
                );
                let mail = render_confirm_email(&n);
                assert!(
                    mail.html
                        .contains(&format!("lang=\"{tag}\" dir=\"{}\"", l.dir()))
                );
            }
        }
    }

    #[test]
    fn told_on_both_channels_each_confirmation_names_the_other_contact() {
        let mut n = input("Walnut Lounge Chair");
        n.together = Some("+44 •••• ••3456");
        let mail = render_confirm_email(&n);
        assert!(
            mail.text.contains("This sign-up also gave +44 •••• ••3456"),
            "{}",
            mail.text
        );
        assert!(mail.html.contains("+44 •••• ••3456"));
        n.together = Some("d***@example.com");
        let sms = render_confirm_sms(&n);
        assert!(
            sms.text.contains("here and at d***@example.com"),
            "{}",
            sms.text
        );
        assert!(
            !render_confirm_sms(&input("Chair"))
                .text
                .contains("here and at")
        );
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
        let odd = render_confirm_email(&input("Chair <b>"));
        assert!(odd.html.contains("Chair &lt;b&gt;"), "escaped");
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
