//! Notices: one phrased sentence per restock batch (from the model, or the
//! fixed fallback), rendered into each shopper's email or SMS.
//!
//! The model only writes words (DESIGN I7). [`Phrase::check`] decides whether
//! its sentence is usable; anything else falls back to [`Phrase::fallback`].
//! Everything the shopper needs — product, store, window, links — comes from
//! the template, never from the model.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::window::Window;

/// The longest phrase accepted from the model, in characters.
pub const MAX_PHRASE_CHARS: usize = 160;

/// A sentence fit to go in a notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phrase(String);

/// Why the model's sentence was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PhraseRejection {
    /// Nothing, or only whitespace.
    #[error("empty")]
    Empty,
    /// Longer than [`MAX_PHRASE_CHARS`].
    #[error("too long")]
    TooLong,
    /// Contains something that looks like a link.
    #[error("contains a URL")]
    Url,
    /// Contains markup or template brackets.
    #[error("contains markup or a placeholder")]
    Markup,
    /// Contains digits or currency: figures come from the template only.
    #[error("contains a number or price")]
    Number,
    /// More than two sentences, or several lines.
    #[error("more than two sentences")]
    Rambling,
}

impl Phrase {
    /// The sentence used when the model fails, times out or is refused.
    pub fn fallback() -> Self {
        Self("Good news: it's back in stock, and we've set one aside for you.".to_owned())
    }

    /// Accepts the model's output if it is one or two plain sentences with no
    /// links, markup, placeholders, numbers or prices. Surrounding quotes and
    /// whitespace are trimmed.
    ///
    /// # Errors
    /// The first rule it breaks.
    pub fn check(raw: &str) -> Result<Self, PhraseRejection> {
        let text = raw
            .trim()
            .trim_matches(|c| matches!(c, '"' | '\u{201C}' | '\u{201D}'))
            .trim();
        if text.is_empty() {
            return Err(PhraseRejection::Empty);
        }
        if text.chars().count() > MAX_PHRASE_CHARS {
            return Err(PhraseRejection::TooLong);
        }
        let lower = text.to_lowercase();
        if [
            "http", "://", "www.", ".com", ".co.", ".uk", ".net", ".org", "@",
        ]
        .iter()
        .any(|p| lower.contains(p))
        {
            return Err(PhraseRejection::Url);
        }
        if text.chars().any(|c| "<>{}[]`*#|\\_=".contains(c)) {
            return Err(PhraseRejection::Markup);
        }
        if text.chars().any(|c| c.is_numeric() || "£$€¥%".contains(c)) {
            return Err(PhraseRejection::Number);
        }
        let sentences = text
            .split(['.', '!', '?'])
            .filter(|s| !s.trim().is_empty())
            .count();
        if text.contains(['\n', '\r']) || sentences > 2 || text.chars().any(char::is_control) {
            return Err(PhraseRejection::Rambling);
        }
        Ok(Self(text.to_owned()))
    }

    /// The sentence.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What the model is asked, as a system prompt and a user message.
pub fn phrase_prompt(store: &str, voice: &str, product: &str) -> (String, String) {
    let system = format!(
        "You write one short sentence for a back-in-stock notice from the shop {store}. Voice: {voice}. \
         Reply with the sentence only: at most {MAX_PHRASE_CHARS} characters, no links, no numbers, no prices, \
         no names, no emoji, no markup, no placeholders. Do not promise anything."
    );
    let user = format!("The product that is back: {product}");
    (system, user)
}

/// Everything one shopper's notice says.
#[derive(Debug, Clone)]
pub struct NoticeInput<'a> {
    /// The shop's name.
    pub store: &'a str,
    /// The product's name.
    pub product: &'a str,
    /// The shopper's name.
    pub shopper: &'a str,
    /// The batch's sentence.
    pub phrase: &'a Phrase,
    /// The shopper's own reserve link (absolute).
    pub reserve_url: &'a str,
    /// The shopper's opt-out link (absolute).
    pub optout_url: &'a str,
    /// The link to see or leave their place (absolute; email only: a text
    /// keeps to the reserve link and STOP).
    pub manage_url: &'a str,
    /// How long the reserve link lasts.
    pub window: Window,
}

/// A rendered email.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmailNotice {
    /// Subject line.
    pub subject: String,
    /// The plain-text part.
    pub text: String,
    /// The HTML part (every value escaped).
    pub html: String,
    /// `List-Unsubscribe` header value.
    pub list_unsubscribe: String,
    /// Tags the provider hands back with its feedback about this email
    /// (`crate::feedback::tags`); empty until the sender sets them.
    pub tags: Vec<(String, String)>,
}

/// `List-Unsubscribe-Post` header value for one-click unsubscribe (RFC 8058).
pub const LIST_UNSUBSCRIBE_POST: &str = "List-Unsubscribe=One-Click";

/// Renders the email.
pub fn render_email(n: &NoticeInput<'_>) -> EmailNotice {
    let window = n.window.in_words();
    let subject = format!("{} is back at {}", n.product, n.store);
    let text = format!(
        "Hi {shopper},\n\n{phrase}\n\n{product} is back in stock at {store}. Your reserve link holds one for you if you tap it within {window}:\n\n{reserve}\n\nOnce held, it waits for you at checkout for a little while. If you don't tap, it passes to the next person waiting.\n\nSee or leave your place: {manage}\nStop these messages: {optout}\n",
        shopper = n.shopper,
        phrase = n.phrase.as_str(),
        product = n.product,
        store = n.store,
        reserve = n.reserve_url,
        optout = n.optout_url,
        manage = n.manage_url,
    );
    let mut html = String::with_capacity(2048);
    let _ = write!(
        html,
        concat!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{subject}</title></head>",
            "<body style=\"margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1a1a1a;background:#ffffff\">",
            "<main style=\"max-width:480px;margin:0 auto\">",
            "<p>Hi {shopper},</p><p>{phrase}</p>",
            "<p><strong>{product}</strong> is back in stock at {store}. Your reserve link holds one for you if you tap it within <strong>{window}</strong>.</p>",
            "<p><a href=\"{reserve}\" style=\"display:inline-block;padding:14px 24px;background:#1a1a1a;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600\">Reserve mine</a></p>",
            "<p style=\"font-size:14px;color:#555\">If the button does not work, open this link: <a href=\"{reserve}\" style=\"color:#1a1a1a\">{reserve}</a></p>",
            "<p style=\"font-size:14px;color:#555\">If you don't tap, it passes to the next person waiting.</p>",
            "<p style=\"font-size:13px;color:#555\"><a href=\"{manage}\" style=\"color:#555\">See or leave your place</a> · <a href=\"{optout}\" style=\"color:#555\">Stop these messages</a></p>",
            "</main></body></html>"
        ),
        subject = escape_html(&subject),
        shopper = escape_html(n.shopper),
        phrase = escape_html(n.phrase.as_str()),
        product = escape_html(n.product),
        store = escape_html(n.store),
        window = escape_html(&window),
        reserve = escape_html(n.reserve_url),
        optout = escape_html(n.optout_url),
        manage = escape_html(n.manage_url),
    );
    EmailNotice {
        subject,
        text,
        html,
        list_unsubscribe: format!("<{}>", n.optout_url),
        tags: Vec::new(),
    }
}

/// How an SMS is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SmsEncoding {
    /// The GSM 03.38 alphabet: 160 per single segment, 153 per part.
    Gsm7,
    /// Anything else: 70 UTF-16 units per single segment, 67 per part.
    Ucs2,
}

/// A rendered SMS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmsNotice {
    /// The message.
    pub text: String,
    /// Its encoding.
    pub encoding: SmsEncoding,
    /// How many segments it takes (at most 2).
    pub segments: u32,
}

/// Renders the SMS within two segments. If it does not fit, the phrase is
/// dropped; then the text is folded into the GSM alphabet (UCS-2 halves the
/// room); then the product name is shortened. The link and the way to stop
/// always stay.
pub fn render_sms(n: &NoticeInput<'_>) -> SmsNotice {
    let window = n.window.in_words();
    let compose = |store: &str, phrase: Option<&str>, product: &str| {
        let lead = phrase.map(|p| format!("{p} ")).unwrap_or_default();
        format!(
            "{store}: {lead}{product} is back. Tap within {window} to hold one: {url} Reply STOP to opt out",
            url = n.reserve_url
        )
    };
    let fits = |text: &str| sms_segments(text).1 <= 2;
    let mut text = compose(n.store, Some(n.phrase.as_str()), n.product);
    if !fits(&text) {
        text = compose(n.store, None, n.product);
    }
    if !fits(&text) {
        let store = fold_to_gsm(n.store);
        let mut product = fold_to_gsm(n.product);
        if product.is_empty() {
            product = "Your item".to_owned();
        }
        text = compose(&store, None, &product);
        while !fits(&text) && product.chars().count() > 8 {
            let keep = product.chars().count() * 3 / 4;
            product = product
                .chars()
                .take(keep)
                .collect::<String>()
                .trim_end()
                .to_owned()
                + "...";
            text = compose(&store, None, &product);
        }
    }
    let (encoding, segments) = sms_segments(&text);
    SmsNotice {
        text,
        encoding,
        segments,
    }
}

/// Maps typographic punctuation to its GSM look-alike and drops anything else
/// outside the GSM alphabet, folding the spaces left behind.
fn fold_to_gsm(text: &str) -> String {
    let mapped: String = text
        .chars()
        .filter_map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{2032}' => Some('\''),
            '\u{201C}' | '\u{201D}' => Some('"'),
            '\u{2013}' | '\u{2014}' => Some('-'),
            '\u{2026}' => Some('.'),
            c if gsm7_septets(c) == Some(1) && c != '\n' && c != '\r' => Some(c),
            c if c.is_whitespace() => Some(' '),
            _ => None,
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Counts an SMS's encoding and segments.
pub fn sms_segments(text: &str) -> (SmsEncoding, u32) {
    let septets: Option<u32> = text.chars().map(gsm7_septets).sum();
    match septets {
        Some(n) => (
            SmsEncoding::Gsm7,
            if n <= 160 { 1 } else { n.div_ceil(153) },
        ),
        None => {
            let units = text.encode_utf16().count() as u32;
            (
                SmsEncoding::Ucs2,
                if units <= 70 { 1 } else { units.div_ceil(67) },
            )
        }
    }
}

fn gsm7_septets(c: char) -> Option<u32> {
    const BASIC: &str = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
    const EXTENDED: &str = "^{}\\[~]|€\u{000C}";
    if BASIC.contains(c) {
        Some(1)
    } else if EXTENDED.contains(c) {
        Some(2)
    } else {
        None
    }
}

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn input<'a>(phrase: &'a Phrase, shopper: &'a str, product: &'a str) -> NoticeInput<'a> {
        NoticeInput {
            store: "Loom & Last",
            product,
            shopper,
            phrase,
            reserve_url: "https://notify.loomandlast.co.uk/r/AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBB",
            optout_url: "https://notify.loomandlast.co.uk/o/AAAAAAAAAAAAAAAAAAAAAA.CCCCCCCCCCCCCCCCCCCCCC",
            manage_url: "https://notify.loomandlast.co.uk/m/AAAAAAAAAAAAAAAAAAAAAA.DDDDDDDDDDDDDDDDDDDDDD",
            window: Window::from_mins(15),
        }
    }

    #[test]
    fn the_model_is_kept_to_plain_words() {
        assert!(Phrase::check("  \"The walnut chair is home again.\" ").is_ok());
        let cases = [
            ("", PhraseRejection::Empty),
            ("Visit https://evil.example now.", PhraseRejection::Url),
            ("Click <a>here</a>.", PhraseRejection::Markup),
            ("Hi {name}, it's back.", PhraseRejection::Markup),
            ("Only 4 left!", PhraseRejection::Number),
            ("Now £240.", PhraseRejection::Number),
            ("One. Two. Three.", PhraseRejection::Rambling),
            ("Line one\nline two", PhraseRejection::Rambling),
        ];
        for (text, why) in cases {
            assert_eq!(Phrase::check(text), Err(why), "{text:?}");
        }
        assert_eq!(
            Phrase::check(&"a".repeat(161)),
            Err(PhraseRejection::TooLong)
        );
        assert!(Phrase::check(Phrase::fallback().as_str()).is_ok());
    }

    #[test]
    fn the_email_carries_link_window_and_opt_out_with_everything_escaped() {
        let phrase = Phrase::fallback();
        let email = render_email(&input(
            &phrase,
            "<script>alert(1)</script>",
            "Walnut \"dining\" chair",
        ));
        assert_eq!(
            email.subject,
            "Walnut \"dining\" chair is back at Loom & Last"
        );
        assert!(email.text.contains("15 minutes"));
        assert!(email.text.contains("/r/AAAAAAAAAAAAAAAAAAAAAA.BBBB"));
        assert!(
            email.text.contains("/m/AAAAAAAAAAAAAAAAAAAAAA.DDDD"),
            "the manage link"
        );
        assert!(email.html.contains("/m/AAAAAAAAAAAAAAAAAAAAAA.DDDD"));
        assert!(email.html.contains("Loom &amp; Last"));
        assert!(email.html.contains("&lt;script&gt;"));
        assert!(!email.html.contains("<script>"));
        assert!(email.html.contains("Walnut &quot;dining&quot; chair"));
        assert!(
            email
                .list_unsubscribe
                .starts_with("<https://notify.loomandlast.co.uk/o/")
        );
    }

    #[test]
    fn an_sms_stays_within_two_segments_and_keeps_the_link() {
        let phrase = Phrase::check("It's home again, and one is set aside for you.").unwrap();
        let sms = render_sms(&input(&phrase, "Della", "Walnut dining chair"));
        assert_eq!(sms.encoding, SmsEncoding::Gsm7);
        assert!(sms.segments <= 2);
        assert!(sms.text.contains("/r/AAAAAAAAAAAAAAAAAAAAAA.BBBB") && sms.text.contains("STOP"));

        let long =
            "Handwoven organic linen throw blanket in oat with tassels, extra large".repeat(3);
        let sms = render_sms(&input(&phrase, "Della", &long));
        assert!(sms.segments <= 2, "{sms:?}");
        assert!(sms.text.contains("/r/") && sms.text.contains("STOP"));

        let sms = render_sms(&input(
            &phrase,
            "Della",
            "Chaise longue — noyer ✨ édition limitée",
        ));
        assert!(sms.segments <= 2, "{sms:?}");
        assert!(
            sms.text.contains("Chaise longue - noyer édition limitée"),
            "folded, accents kept: {sms:?}"
        );
    }

    #[test]
    fn segments_are_counted_per_encoding() {
        assert_eq!(sms_segments(&"a".repeat(160)), (SmsEncoding::Gsm7, 1));
        assert_eq!(sms_segments(&"a".repeat(161)), (SmsEncoding::Gsm7, 2));
        assert_eq!(
            sms_segments(&"€".repeat(80)),
            (SmsEncoding::Gsm7, 1),
            "extension chars take two septets"
        );
        assert_eq!(sms_segments(&"€".repeat(81)), (SmsEncoding::Gsm7, 2));
        assert_eq!(
            sms_segments(&"é".repeat(160)),
            (SmsEncoding::Gsm7, 1),
            "é is in the GSM alphabet"
        );
        assert_eq!(sms_segments(&"ê".repeat(70)), (SmsEncoding::Ucs2, 1));
        assert_eq!(sms_segments(&"ê".repeat(71)), (SmsEncoding::Ucs2, 2));
        assert_eq!(
            sms_segments(&"😀".repeat(35)),
            (SmsEncoding::Ucs2, 1),
            "an emoji is two UTF-16 units"
        );
    }

    proptest! {
        #[test]
        fn every_sms_fits_two_segments(product in "\\PC{1,200}", shopper in "\\PC{1,80}") {
            let phrase = Phrase::fallback();
            let sms = render_sms(&input(&phrase, &shopper, &product));
            prop_assert!(sms.segments <= 2, "{:?}", sms);
            prop_assert!(sms.text.contains("/r/AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBB"));
        }

        #[test]
        fn escaped_html_never_contains_markup(s in "\\PC{0,100}") {
            let e = escape_html(&s);
            prop_assert!(!e.contains('<') && !e.contains('>') && !e.contains('"'));
        }
    }
}
