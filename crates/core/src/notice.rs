//! Notices: one phrased sentence per restock batch (from the model, or the
//! fixed fallback), rendered into each shopper's email or SMS.
//!
//! The model only writes words (DESIGN I7). [`Phrase::check`] decides whether
//! its sentence is usable; anything else falls back to [`Phrase::fallback`].
//! Everything the shopper needs — product, store, window, links — comes from
//! the template, never from the model.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::lang::{Language, Texts, arg};
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
    /// Not in the script of the language asked for.
    #[error("not written in the language asked for")]
    WrongScript,
}

/// The scripts restock can tell apart, to check the model answered in the
/// language it was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Arabic,
    Hebrew,
    Cyrillic,
    Greek,
    /// Kana and kanji.
    Japanese,
    /// Han.
    Chinese,
    /// Hangul.
    Korean,
}

impl Script {
    fn of(language: &Language) -> Option<Self> {
        Some(match language.primary() {
            "en" | "de" | "fr" | "es" | "it" | "nl" | "pl" | "pt" | "sv" | "da" | "nb" | "nn"
            | "no" | "fi" | "cs" | "sk" | "hu" | "ro" | "hr" | "sl" | "et" | "lv" | "lt" | "ca"
            | "ga" | "cy" | "tr" | "id" | "ms" | "vi" => Self::Latin,
            "ar" | "fa" | "ur" => Self::Arabic,
            "he" | "yi" => Self::Hebrew,
            "ru" | "uk" | "bg" | "sr" | "mk" | "be" => Self::Cyrillic,
            "el" => Self::Greek,
            "ja" => Self::Japanese,
            "zh" => Self::Chinese,
            "ko" => Self::Korean,
            _ => return None,
        })
    }

    fn has(self, c: char) -> bool {
        let u = u32::from(c);
        match self {
            Self::Latin => {
                c.is_ascii_alphabetic()
                    || (0xC0..=0x24F).contains(&u)
                    || (0x1E00..=0x1EFF).contains(&u)
            }
            Self::Arabic => {
                (0x600..=0x6FF).contains(&u)
                    || (0x750..=0x77F).contains(&u)
                    || (0x8A0..=0x8FF).contains(&u)
                    || (0xFB50..=0xFDFF).contains(&u)
                    || (0xFE70..=0xFEFF).contains(&u)
            }
            Self::Hebrew => (0x590..=0x5FF).contains(&u) || (0xFB1D..=0xFB4F).contains(&u),
            Self::Cyrillic => (0x400..=0x52F).contains(&u),
            Self::Greek => (0x370..=0x3FF).contains(&u) || (0x1F00..=0x1FFF).contains(&u),
            Self::Japanese => {
                (0x3040..=0x30FF).contains(&u)
                    || Self::Chinese.has(c)
                    || (0xFF66..=0xFF9F).contains(&u)
            }
            Self::Chinese => (0x4E00..=0x9FFF).contains(&u) || (0x3400..=0x4DBF).contains(&u),
            Self::Korean => (0xAC00..=0xD7AF).contains(&u) || (0x1100..=0x11FF).contains(&u),
        }
    }
}

impl Phrase {
    /// The sentence used when the model fails, times out or is refused, in
    /// the shopper's language.
    pub fn fallback(texts: &Texts) -> Self {
        Self(texts.word("notice-fallback-phrase"))
    }

    /// [`Phrase::check`], and the sentence must be written in `language`'s
    /// script (a model asked for Arabic that answers in English is refused).
    ///
    /// # Errors
    /// The first rule it breaks.
    pub fn check_in(raw: &str, language: &Language) -> Result<Self, PhraseRejection> {
        let phrase = Self::check(raw)?;
        if let Some(script) = Script::of(language) {
            let letters: Vec<char> = phrase.0.chars().filter(|c| c.is_alphabetic()).collect();
            let own = letters.iter().filter(|c| script.has(**c)).count();
            // Most of it: a borrowed word in Latin letters is fine.
            if own * 5 < letters.len() * 4 {
                return Err(PhraseRejection::WrongScript);
            }
        }
        Ok(phrase)
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
            .split(['.', '!', '?', '。', '！', '？', '؟'])
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

/// What the model is asked, as a system prompt and a user message: one
/// sentence in `language`.
pub fn phrase_prompt(
    store: &str,
    voice: &str,
    product: &str,
    language: &Language,
) -> (String, String) {
    let system = format!(
        "You write one short sentence for a back-in-stock notice from the shop {store}. Voice: {voice}. \
         Write it in {name} (language tag {language}), whatever language the product's name is in. \
         Reply with the sentence only: at most {MAX_PHRASE_CHARS} characters, no links, no numbers, no prices, \
         no names, no emoji, no markup, no placeholders. Do not promise anything.",
        name = language.english_name(),
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
    /// The words, in the shopper's language.
    pub texts: &'a Texts,
    /// The one reminder before the offer runs out (`window` is then the
    /// time left), not the notice.
    pub reminder: bool,
}

impl NoticeInput<'_> {
    /// The message id of `part` (`subject`, `back`, `sms`): the notice's,
    /// or the reminder's.
    fn id(&self, part: &str) -> String {
        format!(
            "{}-{part}",
            if self.reminder { "reminder" } else { "notice" }
        )
    }
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

/// Renders the email in the shopper's language.
pub fn render_email(n: &NoticeInput<'_>) -> EmailNotice {
    let t = n.texts;
    let window = t.window(n.window);
    let subject = t.get(
        &n.id("subject"),
        &[arg("product", n.product), arg("store", n.store)],
    );
    let greeting = t.get("greeting", &[arg("shopper", n.shopper)]);
    let back = t.get(
        &n.id("back"),
        &[
            arg("product", n.product),
            arg("store", n.store),
            arg("window", &window),
        ],
    );
    let (held, passes, manage, stop) = (
        t.word("notice-held-waits"),
        t.word("notice-passes-on"),
        t.word("manage-link"),
        t.word("notice-stop"),
    );
    let text = format!(
        "{greeting}\n\n{phrase}\n\n{back}\n\n{reserve}\n\n{held} {passes}\n\n{manage}: {manage_url}\n{stop}: {optout}\n",
        phrase = n.phrase.as_str(),
        reserve = n.reserve_url,
        optout = n.optout_url,
        manage_url = n.manage_url,
    );
    let body = format!(
        concat!(
            "<p>{greeting}</p><p>{phrase}</p><p>{back}</p>",
            "{button}",
            "<p style=\"font-size:14px;color:#555\">{passes}</p>",
            "<p style=\"font-size:13px;color:#555\"><a href=\"{manage_url}\" style=\"color:#555\">{manage}</a> · <a href=\"{optout}\" style=\"color:#555\">{stop}</a></p>",
        ),
        greeting = escape_html(&greeting),
        phrase = escape_html(n.phrase.as_str()),
        back = escape_html(&back),
        button = button(t, &t.word("notice-button"), n.reserve_url),
        passes = escape_html(&passes),
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

/// A call-to-action button, with the link written out beneath it for
/// clients that do not show buttons.
pub(crate) fn button(t: &Texts, label: &str, url: &str) -> String {
    format!(
        concat!(
            "<p><a href=\"{url}\" style=\"display:inline-block;padding:14px 24px;background:#1a1a1a;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600\">{label}</a></p>",
            "<p style=\"font-size:14px;color:#555\">{fallback} <a href=\"{url}\" style=\"color:#1a1a1a\">{url}</a></p>",
        ),
        url = escape_html(url),
        label = escape_html(label),
        fallback = escape_html(&t.word("button-fallback")),
    )
}

/// An HTML email around `body` (already escaped), in the shopper's
/// language and its direction.
pub(crate) fn email_html(t: &Texts, subject: &str, body: &str) -> String {
    let language = t.language();
    let mut html = String::with_capacity(2048);
    let _ = write!(
        html,
        concat!(
            "<!doctype html><html lang=\"{lang}\" dir=\"{dir}\"><head><meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{subject}</title></head>",
            "<body style=\"margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1a1a1a;background:#ffffff\">",
            "<main style=\"max-width:480px;margin:0 auto\">{body}</main></body></html>"
        ),
        lang = escape_html(&language.to_string()),
        dir = language.dir(),
        subject = escape_html(subject),
        body = body,
    );
    html
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
    /// How many segments it takes (within [`sms_budget`] but for a link too long for it).
    pub segments: u32,
}

/// The most segments a text may take, by the encoding its language's own
/// words need: two GSM segments (306 characters), three UCS-2 ones (201
/// UTF-16 units), so a text in a script GSM lacks still carries the link,
/// the window and the way to stop in words. A name in another script does
/// not raise the budget: it is folded into GSM first.
pub fn sms_budget(encoding: SmsEncoding) -> u32 {
    match encoding {
        SmsEncoding::Gsm7 => 2,
        SmsEncoding::Ucs2 => 3,
    }
}

/// Renders the SMS in the shopper's language within its [`sms_budget`]
/// (GSM 03.38 where every character allows, else UCS-2 at 70/67 a
/// segment). Each step is tried as written, then with its letters in the
/// GSM alphabet (accents dropped, as Polish or French texts often are) when
/// that is all it takes: the phrase; then without it; then with the shop's
/// and product's names folded into the GSM alphabet; then the product name
/// shortened, then "your item", then the shop's name cut to 11 characters.
/// The link and the way to stop are never cut: only a link too long for the
/// budget on its own makes a longer text.
pub fn render_sms(n: &NoticeInput<'_>) -> SmsNotice {
    let t = n.texts;
    let window = t.window(n.window);
    let compose = |store: &str, phrase: Option<&str>, product: &str| {
        let sms = t.get(
            &n.id("sms"),
            &[
                arg("store", store),
                arg("product", product),
                arg("window", &window),
                arg("url", n.reserve_url),
            ],
        );
        match phrase {
            Some(p) => format!("{p} {sms}"),
            None => sms,
        }
    };
    let budget = budget_for(&compose("", None, ""));
    let fit = |text| fit(text, budget);
    if let Some(text) = fit(compose(n.store, Some(n.phrase.as_str()), n.product)) {
        return sms_notice(text);
    }
    let (mut store, mut product) = (n.store.to_owned(), n.product.to_owned());
    if let Some(text) = fit(compose(&store, None, &product)) {
        return sms_notice(text);
    }
    (store, product) = (fold_to_gsm(&store), fold_to_gsm(&product));
    while product.chars().count() > 12 {
        if let Some(text) = fit(compose(&store, None, &product)) {
            return sms_notice(text);
        }
        let keep = product.chars().count() * 3 / 4;
        product = product
            .chars()
            .take(keep)
            .collect::<String>()
            .trim_end()
            .to_owned()
            + "...";
    }
    if !product.trim_matches(['.', ' ']).is_empty()
        && let Some(text) = fit(compose(&store, None, &product))
    {
        return sms_notice(text);
    }
    product = t.word("notice-sms-item");
    if let Some(text) = fit(compose(&store, None, &product)) {
        return sms_notice(text);
    }
    store = store
        .chars()
        .take(11)
        .collect::<String>()
        .trim_end()
        .to_owned();
    let text = compose(&store, None, &product);
    sms_notice(fit(text.clone()).unwrap_or(text))
}

/// The budget of a text whose words, without names or links, are `words`.
pub(crate) fn budget_for(words: &str) -> u32 {
    let gsm = words.chars().all(|c| gsm_letter(c).is_some());
    sms_budget(if gsm {
        SmsEncoding::Gsm7
    } else {
        SmsEncoding::Ucs2
    })
}

/// The text if it fits the budget as written, else with every letter in the
/// GSM alphabet if that makes it fit (never for a script GSM lacks).
pub(crate) fn fit(text: String, budget: u32) -> Option<String> {
    let fits = |text: &str| sms_segments(text).1 <= budget;
    if fits(&text) {
        return Some(text);
    }
    let plain: String = text.chars().map(gsm_letter).collect::<Option<_>>()?;
    fits(&plain).then_some(plain)
}

/// A character as GSM 03.38 can send it: itself, or its letter without the
/// accent GSM lacks, or the punctuation it looks like; `None` if GSM has no
/// stand-in (another script).
fn gsm_letter(c: char) -> Option<char> {
    const PLAIN: [(&str, char); 24] = [
        ("áâãāăą", 'a'),
        ("ÁÂÃĀĂĄÀ", 'A'),
        ("çćĉčċ", 'c'),
        ("ĆĈČĊ", 'C'),
        ("ďđ", 'd'),
        ("ĎĐ", 'D'),
        ("êëēėęě", 'e'),
        ("ÊËĒĖĘĚÈ", 'E'),
        ("íîïīįı", 'i'),
        ("ÍÎÏĪĮİÌ", 'I'),
        ("łľĺ", 'l'),
        ("ŁĽĹ", 'L'),
        ("ńňņ", 'n'),
        ("ŃŇŅ", 'N'),
        ("óôõōő", 'o'),
        ("ÓÔÕŌŐÒ", 'O'),
        ("ŕřśšşșťţț", '\0'),
        ("úûūůűų", 'u'),
        ("ÚÛŪŮŰŲÙ", 'U'),
        ("ýÿ", 'y'),
        ("Ýź", '\0'),
        ("žż", 'z'),
        ("ŹŽŻ", 'Z'),
        ("\u{A0}\u{202F}", ' '),
    ];
    if gsm7_septets(c).is_some() {
        return Some(c);
    }
    let mapped = match c {
        '\u{2018}' | '\u{2019}' | '\u{2032}' => '\'',
        '\u{201C}' | '\u{201D}' | '«' | '»' | '„' => '"',
        '\u{2013}' | '\u{2014}' => '-',
        '\u{2026}' => '.',
        'ŕ' | 'ř' => 'r',
        'ś' | 'š' | 'ş' | 'ș' => 's',
        'ť' | 'ţ' | 'ț' => 't',
        'Ý' => 'Y',
        'ź' => 'z',
        'Ř' => 'R',
        'Ś' | 'Š' | 'Ş' | 'Ș' => 'S',
        'Ť' | 'Ţ' | 'Ț' => 'T',
        c => PLAIN
            .iter()
            .find(|(from, to)| *to != '\0' && from.contains(c))
            .map(|(_, to)| *to)?,
    };
    Some(mapped)
}

pub(crate) fn sms_notice(text: String) -> SmsNotice {
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
            texts: &EN,
            reminder: false,
        }
    }

    #[test]
    fn a_reminder_says_the_time_left_in_every_language_and_fits_a_text() {
        let phrase = Phrase::check("Still yours.").unwrap();
        for (tag, _) in crate::lang::SHIPPED {
            let texts = texts(tag);
            let notice = NoticeInput {
                texts: &texts,
                ..input(&phrase, "Della", "Walnut dining chair")
            };
            let reminder = NoticeInput {
                reminder: true,
                window: Window::from_mins(5),
                ..notice.clone()
            };
            let (email, first) = (render_email(&reminder), render_email(&notice));
            assert_ne!(email.subject, first.subject, "{tag}: its own subject");
            assert!(email.text.contains(notice.reserve_url), "{tag}: the link");
            assert!(
                email.text.contains(&texts.window(Window::from_mins(5))),
                "{tag}: the time left"
            );
            let sms = render_sms(&reminder);
            assert!(sms.text.contains(notice.reserve_url), "{tag}: {}", sms.text);
            assert!(
                sms.segments <= sms_budget(sms.encoding),
                "{tag}: {}",
                sms.text
            );
        }
    }

    static EN: std::sync::LazyLock<Texts> = std::sync::LazyLock::new(|| texts("en"));

    fn texts(tag: &str) -> Texts {
        let l: Language = tag.parse().unwrap();
        Texts::new(&l, &l, &crate::lang::Overrides::new())
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
        assert!(Phrase::check(Phrase::fallback(&EN).as_str()).is_ok());
    }

    #[test]
    fn the_email_carries_link_window_and_opt_out_with_everything_escaped() {
        let phrase = Phrase::fallback(&EN);
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

    #[test]
    fn each_language_gets_its_own_words_direction_and_a_text_within_budget() {
        for (tag, _) in crate::lang::SHIPPED {
            let t = texts(tag);
            let phrase = Phrase::fallback(&t);
            assert!(
                Phrase::check_in(phrase.as_str(), t.language()).is_ok(),
                "{tag}: the fixed phrase passes its own checks"
            );
            let mut n = input(&phrase, "Della", "Walnut dining chair");
            n.texts = &t;
            let email = render_email(&n);
            assert!(
                email.html.starts_with(&format!(
                    "<!doctype html><html lang=\"{tag}\" dir=\"{}\">",
                    t.language().dir()
                )),
                "{tag}"
            );
            assert!(email.text.contains(&phrase.as_str().to_owned()));
            let sms = render_sms(&n);
            assert!(sms.segments <= sms_budget(sms.encoding), "{tag}: {sms:?}");
            assert!(
                sms.text.contains(n.reserve_url) && sms.text.contains("STOP"),
                "{tag}: {sms:?}"
            );
        }
        let ar = texts("ar");
        let phrase = Phrase::fallback(&ar);
        let mut n = input(&phrase, "ديلا", "كرسي طعام من خشب الجوز");
        n.texts = &ar;
        let email = render_email(&n);
        assert!(email.html.contains("dir=\"rtl\"") && email.subject.contains("كرسي"));
        let sms = render_sms(&n);
        assert_eq!(sms.encoding, SmsEncoding::Ucs2);
        assert!(
            sms.segments <= 3 && sms.text.contains(n.reserve_url),
            "{sms:?}"
        );
        let de = texts("de");
        let phrase = Phrase::fallback(&de);
        n = input(&phrase, "Della", "Stuhl");
        n.texts = &de;
        assert!(render_email(&n).text.contains("innerhalb von 15 Minuten"));
    }

    #[test]
    fn the_model_must_answer_in_the_script_asked_for() {
        let l = |t: &str| t.parse::<Language>().unwrap();
        let english = "It's home again, and one is set aside for you.";
        assert!(Phrase::check_in(english, &l("en")).is_ok());
        assert!(
            Phrase::check_in(english, &l("de")).is_ok(),
            "same script: not told apart"
        );
        assert_eq!(
            Phrase::check_in(english, &l("ar")),
            Err(PhraseRejection::WrongScript)
        );
        assert_eq!(
            Phrase::check_in(english, &l("ja")),
            Err(PhraseRejection::WrongScript)
        );
        assert!(Phrase::check_in("عاد إلى المخزون، وحجزنا واحدًا لك.", &l("ar")).is_ok());
        assert!(Phrase::check_in("再入荷しました。お取り置きしています。", &l("ja")).is_ok());
        assert_eq!(
            Phrase::check_in("再入荷しました。", &l("fr")),
            Err(PhraseRejection::WrongScript)
        );
        assert!(Phrase::check_in(english, &l("sv-FI")).is_ok());
        assert!(
            Phrase::check_in(english, &l("xx")).is_ok(),
            "an unknown language is not checked"
        );
        let (system, _) = phrase_prompt("Loom", "warm", "Chair", &l("de"));
        assert!(system.contains("German (language tag de)"), "{system}");
    }

    proptest! {
        #[test]
        fn every_language_keeps_link_and_stop_within_budget(
            product in "\\PC{1,200}",
            store in "\\PC{1,60}",
            which in 0usize..10,
        ) {
            let t = texts(crate::lang::SHIPPED[which].0);
            let phrase = Phrase::fallback(&t);
            let mut n = input(&phrase, "Della", &product);
            n.store = &store;
            n.texts = &t;
            let sms = render_sms(&n);
            prop_assert!(sms.segments <= sms_budget(sms.encoding), "{:?}", sms);
            prop_assert!(sms.text.contains(n.reserve_url) && sms.text.contains("STOP"));
        }

        #[test]
        fn every_sms_fits_its_budget(product in "\\PC{1,200}", shopper in "\\PC{1,80}") {
            let phrase = Phrase::fallback(&EN);
            let sms = render_sms(&input(&phrase, &shopper, &product));
            prop_assert!(sms.segments <= sms_budget(sms.encoding), "{:?}", sms);
            prop_assert!(sms.text.contains("/r/AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBB"));
        }

        #[test]
        fn escaped_html_never_contains_markup(s in "\\PC{0,100}") {
            let e = escape_html(&s);
            prop_assert!(!e.contains('<') && !e.contains('>') && !e.contains('"'));
        }
    }
}
