//! Every shopper in their own language: the language a request carries, the
//! rule that picks it from what the shop offers, and every word restock says
//! to a shopper, from one Project Fluent catalogue per language
//! (`crates/core/locales/<tag>.ftl`), which the shop may override message by
//! message in its settings (`[messages.<tag>]`).
//!
//! A message is looked up in the shop's override for the shopper's language,
//! then the shipped catalogue for it, then the same two for the shop's
//! default language, then English: never an id or an empty string.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use fluent_langneg::{NegotiationStrategy, negotiate_languages};
use icu_decimal::DecimalFormatter;
use icu_decimal::input::Decimal;
use intl_memoizer::concurrent::IntlLangMemoizer;
use serde::{Deserialize, Serialize};
use unic_langid::{CharacterDirection, LanguageIdentifier};

use crate::window::Window;

/// The longest language tag accepted (RFC 5646 §4.4.1 advises 35).
pub const MAX_TAG_LEN: usize = 35;

/// A language, as a BCP 47 tag in its canonical form (`de`, `pt-BR`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Language(LanguageIdentifier);

/// Why a language tag was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a language tag: write a BCP 47 tag like \"de\" or \"pt-BR\"")]
pub struct LanguageError;

impl Language {
    /// English, the language of last resort.
    pub fn english() -> Self {
        Self(LanguageIdentifier::from_parts(
            "en".parse().expect("en is a language"),
            None,
            None,
            &[],
        ))
    }

    /// The text direction HTML gives it: `rtl` for Arabic, Hebrew, Persian
    /// and the other right-to-left scripts, else `ltr`.
    pub fn dir(&self) -> &'static str {
        match self.0.character_direction() {
            CharacterDirection::RTL => "rtl",
            _ => "ltr",
        }
    }

    /// Its name in English, for the model's prompt (the tag itself for a
    /// language restock does not ship).
    pub fn english_name(&self) -> &str {
        match self.primary() {
            "en" => "English",
            "de" => "German",
            "fr" => "French",
            "es" => "Spanish",
            "it" => "Italian",
            "nl" => "Dutch",
            "pl" => "Polish",
            "pt" => "Portuguese",
            "ja" => "Japanese",
            "ar" => "Arabic",
            other => other,
        }
    }

    /// The primary language subtag (`pt` of `pt-BR`).
    pub fn primary(&self) -> &str {
        self.0.language.as_str()
    }
}

impl FromStr for Language {
    type Err = LanguageError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() || s.len() > MAX_TAG_LEN || !s.is_ascii() {
            return Err(LanguageError);
        }
        let id: LanguageIdentifier = s.parse().map_err(|_| LanguageError)?;
        if id.language.is_empty() {
            return Err(LanguageError);
        }
        Ok(Self(id))
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Language {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse()
            .map_err(|_| serde::de::Error::custom(format!("`{s}`: {LanguageError}")))
    }
}

/// The language a shopper is spoken to in: the closest of `offered` to what
/// their page asked for (`de-AT` finds `de`; `pt` finds `pt-BR`), else the
/// shop's `default`.
pub fn negotiate(asked: Option<&Language>, offered: &[Language], default: &Language) -> Language {
    let Some(asked) = asked else {
        return default.clone();
    };
    let available: Vec<&LanguageIdentifier> = offered.iter().map(|l| &l.0).collect();
    negotiate_languages(
        &[&asked.0],
        &available,
        Some(&&default.0),
        NegotiationStrategy::Lookup,
    )
    .first()
    .map_or_else(|| default.clone(), |id| Language((**id).clone()))
}

/// The language for a visitor known only by their browser (a link that names
/// no request we know): the first of their `Accept-Language` the shop
/// offers, by closeness, else the shop's `default`.
pub fn negotiate_accepted(header: &str, offered: &[Language], default: &Language) -> Language {
    let asked = fluent_langneg::accepted_languages::parse(header);
    // A browser sends a handful; a script's thousand are not all read.
    let asked: Vec<&LanguageIdentifier> = asked.iter().take(12).collect();
    let available: Vec<&LanguageIdentifier> = offered.iter().map(|l| &l.0).collect();
    negotiate_languages(
        &asked,
        &available,
        Some(&&default.0),
        NegotiationStrategy::Lookup,
    )
    .first()
    .map_or_else(|| default.clone(), |id| Language((**id).clone()))
}

/// The catalogues restock ships, by tag.
pub const SHIPPED: [(&str, &str); 10] = [
    ("en", include_str!("../locales/en.ftl")),
    ("de", include_str!("../locales/de.ftl")),
    ("fr", include_str!("../locales/fr.ftl")),
    ("es", include_str!("../locales/es.ftl")),
    ("it", include_str!("../locales/it.ftl")),
    ("nl", include_str!("../locales/nl.ftl")),
    ("pl", include_str!("../locales/pl.ftl")),
    ("pt", include_str!("../locales/pt.ftl")),
    ("ja", include_str!("../locales/ja.ftl")),
    ("ar", include_str!("../locales/ar.ftl")),
];

/// Every message a catalogue holds, with the variables it may use: a
/// shipped catalogue has each one with exactly these, and a shop's override
/// may use no others.
pub const MESSAGES: &[(&str, &[&str])] = &[
    ("duration-seconds", &["n"]),
    ("duration-minutes", &["n"]),
    ("duration-hours", &["n"]),
    ("duration-days", &["n"]),
    ("duration-under-minute", &[]),
    ("greeting", &["shopper"]),
    ("button-fallback", &[]),
    ("manage-link", &[]),
    ("notice-subject", &["product", "store"]),
    ("notice-fallback-phrase", &[]),
    ("notice-back", &["product", "store", "window"]),
    ("notice-button", &[]),
    ("notice-held-waits", &[]),
    ("notice-passes-on", &[]),
    ("notice-stop", &[]),
    ("notice-sms", &["store", "product", "window", "url"]),
    ("notice-sms-item", &[]),
    ("reminder-subject", &["product", "store"]),
    ("reminder-phrase", &[]),
    ("reminder-back", &["product", "window"]),
    ("reminder-sms", &["store", "product", "window", "url"]),
    ("confirm-subject", &["product", "store"]),
    ("confirm-asked", &["store", "product", "window"]),
    ("confirm-button", &[]),
    ("confirm-not-you", &["window"]),
    ("confirm-together", &["contact"]),
    ("confirm-stop", &["store"]),
    ("confirm-sms", &["store", "product", "window", "url"]),
    (
        "confirm-sms-together",
        &["store", "product", "window", "url", "contact"],
    ),
    ("sms-help", &["store"]),
    ("join-check-title", &[]),
    ("join-check", &["contact", "window", "position", "product"]),
    ("join-check-short", &["contact", "window"]),
    ("page-on-list-title", &[]),
    ("page-position", &["position", "product"]),
    ("page-position-told-once", &["position", "product"]),
    ("page-on-list", &["product"]),
    ("page-wait-title", &[]),
    ("page-wait", &["time"]),
    ("page-reserve-title", &["product"]),
    ("page-reserve-back", &["product"]),
    ("page-reserve-left", &["time"]),
    ("page-reserve-button", &[]),
    ("page-held-title", &[]),
    ("page-held-left", &["product", "time"]),
    ("page-held-number", &["hold"]),
    ("page-checkout-button", &[]),
    ("page-ended-title", &[]),
    ("page-ended", &[]),
    ("page-used", &[]),
    ("page-rejoin-button", &[]),
    ("page-sold-out-title", &[]),
    ("page-sold-out", &["product"]),
    ("page-sold-out-front", &[]),
    ("page-invalid-title", &[]),
    ("page-invalid", &[]),
    ("page-opted-out-title", &[]),
    ("page-opted-out", &[]),
    ("page-back-title", &[]),
    ("page-stop-title", &[]),
    ("page-stop", &[]),
    ("page-stop-button", &[]),
    ("page-link-unknown-title", &[]),
    ("page-link-unknown", &[]),
    ("page-stopped-title", &[]),
    ("page-stopped", &[]),
    ("page-confirm-title", &[]),
    ("page-confirm", &[]),
    ("page-confirm-button", &[]),
    ("page-confirm-ended-title", &[]),
    ("page-confirm-ended", &[]),
    ("page-manage-keep", &[]),
    ("page-manage-from-email", &[]),
    ("page-manage-unknown-title", &[]),
    ("page-manage-unknown", &[]),
    ("page-manage-title", &[]),
    ("page-manage-unconfirmed", &["position", "product"]),
    ("page-manage-offered", &["product"]),
    ("page-manage-held", &["product"]),
    ("page-manage-ended", &["product"]),
    ("page-leave-button", &[]),
    ("page-left-title", &[]),
    ("page-left", &[]),
    ("page-already-ended-title", &[]),
    ("page-already-ended", &[]),
    ("error-fields", &[]),
    ("field-sku", &[]),
    ("field-name", &[]),
    ("field-email", &[]),
    ("field-phone", &[]),
    ("field-channel", &[]),
    ("field-language", &[]),
    ("field-consent", &[]),
    ("field-body", &[]),
    ("error-unknown-item", &[]),
    ("error-item-ended", &[]),
    ("error-opted-out", &[]),
    ("error-too-many", &[]),
    ("error-busy", &[]),
    ("error-unavailable", &[]),
    ("error-no-request", &[]),
    ("widget-heading", &[]),
    ("widget-coming", &["when"]),
    ("widget-contact-both", &[]),
    ("widget-contact-email", &[]),
    ("widget-contact-sms", &[]),
    ("widget-name", &[]),
    ("widget-consent", &["product"]),
    ("widget-submit", &[]),
    ("widget-enter-contact", &[]),
    ("widget-tick", &[]),
    ("widget-enter-name", &[]),
    ("widget-adding", &[]),
    ("widget-retrying", &[]),
    ("widget-position", &["position"]),
    ("widget-check", &["product"]),
    ("widget-told-once", &["product"]),
    ("widget-left", &["product"]),
    ("widget-from-inbox", &[]),
    ("widget-try-again", &[]),
    ("widget-unreachable", &[]),
    ("widget-went-wrong", &[]),
];

type Bundle = FluentBundle<FluentResource>;

/// Whole numbers as the language writes them ("12.345" in German, "12 345"
/// in French): Fluent's own formatting groups no digits. One per language,
/// kept by the bundle's memoizer.
struct Numbers(DecimalFormatter);

impl intl_memoizer::Memoizable for Numbers {
    type Args = ();
    type Error = ();

    fn construct(language: LanguageIdentifier, (): ()) -> Result<Self, ()> {
        let locale: icu_locale_core::Locale = language.to_string().parse().map_err(|_| ())?;
        DecimalFormatter::try_new(locale.into(), Default::default())
            .map(Numbers)
            .map_err(|_| ())
    }
}

/// The bundles' number formatter: whole numbers grouped per language;
/// anything else as Fluent writes it.
fn format_number(value: &FluentValue<'_>, memo: &IntlLangMemoizer) -> Option<String> {
    let FluentValue::Number(number) = value else {
        return None;
    };
    let n = number.value;
    if n.fract() != 0.0 || n.abs() >= 1e15 {
        return None;
    }
    memo.with_try_get::<Numbers, _, _>((), |f| f.0.format(&Decimal::from(n as i64)).to_string())
        .ok()
}

fn bundle(language: &Language, source: String) -> Result<Bundle, String> {
    let resource = FluentResource::try_new(source)
        .map_err(|(_, errors)| errors.first().map_or_else(String::new, ToString::to_string))?;
    let mut bundle = FluentBundle::new_concurrent(vec![language.0.clone()]);
    // Values go into texts and URLs as they are: no bidi isolation marks.
    bundle.set_use_isolating(false);
    bundle.set_formatter(Some(format_number));
    bundle
        .add_resource(resource)
        .map_err(|errors| format!("{errors:?}"))?;
    Ok(bundle)
}

static CATALOGUES: LazyLock<Vec<(Language, Bundle)>> = LazyLock::new(|| {
    SHIPPED
        .iter()
        .map(|(tag, source)| {
            let language: Language = tag.parse().expect("a shipped tag");
            let bundle = bundle(&language, (*source).to_owned())
                .unwrap_or_else(|e| panic!("the shipped {tag} catalogue: {e}"));
            (language, bundle)
        })
        .collect()
});

/// The shipped catalogue closest to `language` (`pt-BR` uses `pt`), if any.
fn shipped(language: &Language) -> Option<&'static Bundle> {
    let catalogues = &*CATALOGUES;
    catalogues
        .iter()
        .find(|(l, _)| l == language)
        .or_else(|| {
            catalogues
                .iter()
                .find(|(l, _)| l.primary() == language.primary())
        })
        .map(|(_, b)| b)
}

/// Whether restock ships a catalogue for `language` (or its primary language).
pub fn is_shipped(language: &Language) -> bool {
    shipped(language).is_some()
}

/// The shop's own wording: per language tag, message id → Fluent pattern.
pub type Overrides = BTreeMap<String, BTreeMap<String, String>>;

/// Checks a shop's overrides: known languages and messages, patterns that
/// parse, and no variable the message does not have.
///
/// # Errors
/// What is wrong, naming the language and message.
pub fn check_overrides(overrides: &Overrides) -> Result<(), String> {
    for (tag, messages) in overrides {
        let language: Language = tag.parse().map_err(|e| format!("`{tag}`: {e}"))?;
        for (id, pattern) in messages {
            let Some((_, allowed)) = MESSAGES.iter().find(|(m, _)| m == id) else {
                return Err(format!(
                    "[messages.{tag}] `{id}` is not a message restock sends"
                ));
            };
            let bundle = bundle(&language, override_source(id, pattern))
                .map_err(|e| format!("[messages.{tag}] `{id}` is not a Fluent pattern: {e}"))?;
            let mut errors = Vec::new();
            let message = bundle
                .get_message(id)
                .and_then(|m| m.value())
                .ok_or_else(|| format!("[messages.{tag}] `{id}` is empty"))?;
            let mut args = FluentArgs::new();
            for v in *allowed {
                args.set(*v, "x");
            }
            let _ = bundle.format_pattern(message, Some(&args), &mut errors);
            if let Some(e) = errors.first() {
                return Err(format!(
                    "[messages.{tag}] `{id}`: {e}; it may use {}",
                    if allowed.is_empty() {
                        "no variables".to_owned()
                    } else {
                        allowed
                            .iter()
                            .map(|v| format!("{{ ${v} }}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ));
            }
        }
    }
    Ok(())
}

fn override_source(id: &str, pattern: &str) -> String {
    format!("{id} = {}\n", pattern.trim().replace('\n', "\n    "))
}

/// The words for one shopper: their language, and where each message comes from.
pub struct Texts {
    language: Language,
    /// Bundles in lookup order.
    chain: Vec<Source>,
}

enum Source {
    Own(Box<Bundle>),
    Shipped(&'static Bundle),
}

impl Source {
    fn bundle(&self) -> &Bundle {
        match self {
            Self::Own(b) => b,
            Self::Shipped(b) => b,
        }
    }
}

impl fmt::Debug for Texts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Texts")
            .field("language", &self.language)
            .field("sources", &self.chain.len())
            .finish()
    }
}

/// A message's arguments.
pub type Args<'a> = [(&'a str, FluentValue<'a>)];

impl Texts {
    /// The words for `language`, with the shop's `overrides` and its
    /// `default` language behind them, and English last.
    pub fn new(language: &Language, default: &Language, overrides: &Overrides) -> Self {
        let own = |l: &Language| {
            let tagged = overrides
                .iter()
                .filter_map(|(tag, m)| Some((tag.parse::<Language>().ok()?, m)));
            let tagged: Vec<_> = tagged.collect();
            tagged
                .iter()
                .find(|(t, _)| t == l)
                .or_else(|| tagged.iter().find(|(t, _)| t.primary() == l.primary()))
                .and_then(|(_, messages)| {
                    let source: String = messages
                        .iter()
                        .map(|(id, p)| override_source(id, p))
                        .collect();
                    bundle(l, source).ok()
                })
                .map(|b| Source::Own(Box::new(b)))
        };
        let mut chain = Vec::with_capacity(5);
        for l in [language, default] {
            chain.extend(own(l));
            chain.extend(shipped(l).map(Source::Shipped));
        }
        chain.extend(shipped(&Language::english()).map(Source::Shipped));
        Self {
            language: language.clone(),
            chain,
        }
    }

    /// English as shipped: for an answer given before the shop's settings
    /// could be read.
    pub fn english() -> Self {
        let en = Language::english();
        Self::new(&en, &en, &Overrides::new())
    }

    /// The language spoken.
    pub fn language(&self) -> &Language {
        &self.language
    }

    /// A message with its arguments: the first source that has it and
    /// formats it without error.
    pub fn get(&self, id: &str, args: &Args<'_>) -> String {
        let mut fluent = FluentArgs::with_capacity(args.len());
        for (k, v) in args {
            fluent.set(*k, v.clone());
        }
        for source in &self.chain {
            let bundle = source.bundle();
            let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
                continue;
            };
            let mut errors = Vec::new();
            let text = bundle.format_pattern(pattern, Some(&fluent), &mut errors);
            if errors.is_empty() && !text.trim().is_empty() {
                return text.into_owned();
            }
        }
        unreachable!("the English catalogue has every message (lang tests): {id}")
    }

    /// A message with no arguments.
    pub fn word(&self, id: &str) -> String {
        self.get(id, &[])
    }

    /// The time left on a link, in words: "14 minutes", "2 hours", "less
    /// than a minute" (rounded down).
    pub fn time_left(&self, ms: i64) -> String {
        match ms / 60_000 {
            m if m <= 0 => self.word("duration-under-minute"),
            m if m < 120 => self.get("duration-minutes", &[("n", FluentValue::from(m))]),
            m => self.get("duration-hours", &[("n", FluentValue::from(m / 60))]),
        }
    }

    /// How long a window lasts, in words: "15 minutes", "15 Minuten".
    pub fn window(&self, window: Window) -> String {
        let (n, id) = match window.as_secs() {
            s if s % 86_400 == 0 => (s / 86_400, "duration-days"),
            s if s % 3_600 == 0 => (s / 3_600, "duration-hours"),
            s if s % 60 == 0 => (s / 60, "duration-minutes"),
            s => (s, "duration-seconds"),
        };
        self.get(id, &[("n", FluentValue::from(n))])
    }
}

/// A string argument.
pub fn arg<'a>(name: &'a str, value: &'a str) -> (&'a str, FluentValue<'a>) {
    (name, FluentValue::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fluent_bundle::FluentResource;
    use fluent_syntax::ast;

    fn lang(s: &str) -> Language {
        s.parse().unwrap()
    }

    fn variables(pattern: &ast::Pattern<&str>, out: &mut Vec<String>) {
        for element in &pattern.elements {
            if let ast::PatternElement::Placeable { expression } = element {
                expression_variables(expression, out);
            }
        }
    }

    fn expression_variables(e: &ast::Expression<&str>, out: &mut Vec<String>) {
        match e {
            ast::Expression::Select { selector, variants } => {
                inline_variables(selector, out);
                for v in variants {
                    variables(&v.value, out);
                }
            }
            ast::Expression::Inline(i) => inline_variables(i, out),
        }
    }

    fn inline_variables(e: &ast::InlineExpression<&str>, out: &mut Vec<String>) {
        match e {
            ast::InlineExpression::VariableReference { id } => out.push(id.name.to_owned()),
            ast::InlineExpression::Placeable { expression } => {
                expression_variables(expression, out);
            }
            ast::InlineExpression::FunctionReference { arguments, .. } => {
                for a in &arguments.positional {
                    inline_variables(a, out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_catalogue_has_every_message_with_the_same_variables() {
        for (tag, source) in SHIPPED {
            let resource = FluentResource::try_new(source.to_owned())
                .unwrap_or_else(|(_, e)| panic!("{tag}: {e:?}"));
            let mut found = BTreeMap::new();
            for entry in resource.entries() {
                if let ast::Entry::Message(m) = entry {
                    let mut vars = Vec::new();
                    if let Some(value) = &m.value {
                        variables(value, &mut vars);
                    }
                    vars.sort();
                    vars.dedup();
                    found.insert(m.id.name.to_owned(), vars);
                }
            }
            for (id, expected) in MESSAGES {
                let vars = found
                    .remove(*id)
                    .unwrap_or_else(|| panic!("{tag} has no `{id}`"));
                let mut expected: Vec<String> = expected.iter().map(|v| (*v).to_owned()).collect();
                expected.sort();
                assert_eq!(vars, expected, "{tag} `{id}` variables");
            }
            assert!(
                found.is_empty(),
                "{tag} has messages restock never sends: {found:?}"
            );
            // Every message formats to words in its own catalogue.
            let texts = Texts::new(&lang(tag), &lang(tag), &Overrides::new());
            for (id, vars) in MESSAGES {
                let args: Vec<_> = vars.iter().map(|v| arg(v, "X")).collect();
                let own = shipped(&lang(tag)).unwrap();
                let pattern = own.get_message(id).and_then(|m| m.value()).unwrap();
                let mut errors = Vec::new();
                let mut fluent = FluentArgs::new();
                for (k, v) in &args {
                    fluent.set(*k, v.clone());
                }
                let text = own.format_pattern(pattern, Some(&fluent), &mut errors);
                assert!(
                    errors.is_empty() && !text.trim().is_empty(),
                    "{tag} `{id}`: {errors:?}"
                );
                assert_eq!(texts.get(id, &args), text);
            }
        }
    }

    #[test]
    fn a_text_keeps_its_link_and_the_stop_word_in_every_language() {
        for (tag, _) in SHIPPED {
            let texts = Texts::new(&lang(tag), &lang(tag), &Overrides::new());
            for id in ["notice-sms", "confirm-sms", "confirm-sms-together"] {
                let sms = texts.get(
                    id,
                    &[
                        arg("store", "S"),
                        arg("product", "P"),
                        arg("window", "W"),
                        arg("url", "https://u.example/x"),
                        arg("contact", "d***@example.com"),
                    ],
                );
                assert!(
                    sms.contains("https://u.example/x") && sms.contains("STOP"),
                    "{tag} {id}: {sms}"
                );
            }
        }
    }

    #[test]
    fn a_visitor_gets_the_first_of_their_browsers_languages_the_shop_offers() {
        let offered = [lang("en"), lang("de"), lang("ar")];
        let en = lang("en");
        let pick = |header: &str| negotiate_accepted(header, &offered, &en).to_string();
        assert_eq!(pick("de-CH,de;q=0.9,en;q=0.8"), "de");
        assert_eq!(pick("fr-FR,fr;q=0.9,ar;q=0.5"), "ar");
        assert_eq!(pick("fr"), "en");
        assert_eq!(pick(""), "en");
        assert_eq!(pick("*"), "en");
        assert_eq!(pick(&"x-junk,".repeat(1_000)), "en");
        let t = Texts::new(&lang("en"), &en, &Overrides::new());
        assert_eq!(t.time_left(59_999), "less than a minute");
        assert_eq!(t.time_left(60_000), "1 minute");
        assert_eq!(t.time_left(119 * 60_000), "119 minutes");
        assert_eq!(t.time_left(150 * 60_000), "2 hours");
    }

    #[test]
    fn the_closest_offered_language_is_kept_else_the_default() {
        let offered = [lang("en"), lang("de"), lang("pt-BR"), lang("ar")];
        let en = lang("en");
        let pick = |asked: &str| negotiate(Some(&lang(asked)), &offered, &en).to_string();
        assert_eq!(pick("de"), "de");
        assert_eq!(pick("de-AT"), "de");
        assert_eq!(pick("DE-at"), "de");
        assert_eq!(pick("pt"), "pt-BR");
        assert_eq!(pick("ar-SA"), "ar");
        assert_eq!(pick("xx-YY"), "en");
        assert_eq!(pick("fr"), "en");
        assert_eq!(negotiate(None, &offered, &lang("de")).to_string(), "de");
        for bad in [
            "",
            "e",
            "not a tag",
            "en_US_",
            "<script>",
            &"a".repeat(36),
            "日本語",
        ] {
            assert!(bad.parse::<Language>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn durations_follow_each_languages_plural_rules() {
        let t = |tag: &str| Texts::new(&lang(tag), &lang("en"), &Overrides::new());
        assert_eq!(t("en").window(Window::from_mins(1)), "1 minute");
        assert_eq!(t("en").window(Window::from_mins(15)), "15 minutes");
        assert_eq!(t("de").window(Window::from_mins(15)), "15 Minuten");
        assert_eq!(t("de").window(Window::from_secs(86_400)), "1 Tag");
        // Polish durations follow "w ciągu": the genitive.
        assert_eq!(t("pl").window(Window::from_mins(1)), "1 minuty");
        assert_eq!(t("pl").window(Window::from_mins(2)), "2 minut");
        assert_eq!(t("pl").window(Window::from_secs(2 * 86_400)), "2 dni");
        assert_eq!(t("ar").window(Window::from_mins(5)), "5 دقائق");
        assert_eq!(t("ar").window(Window::from_mins(15)), "15 دقيقة");
        assert_eq!(t("fr").window(Window::from_secs(2 * 3_600)), "2 heures");
        assert_eq!(t("ja").window(Window::from_mins(15)), "15分");
        assert_eq!(t("ar").window(Window::from_mins(2)), "دقيقتين");
        assert_eq!(t("de").window(Window::from_secs(2 * 86_400)), "2 Tagen");
    }

    #[test]
    fn numbers_are_grouped_as_each_language_writes_them() {
        let place = |tag: &str, n: u32| {
            Texts::new(&lang(tag), &lang("en"), &Overrides::new())
                .get("widget-position", &[("position", n.into())])
        };
        assert_eq!(place("en", 12_345), "You're number 12,345 in line.");
        assert_eq!(
            place("de", 12_345),
            "Du bist Nummer 12.345 in der Warteschlange."
        );
        assert!(
            place("fr", 12_345).contains("12\u{202f}345"),
            "{}",
            place("fr", 12_345)
        );
        // Polish and Spanish group only from five digits.
        assert!(
            place("pl", 1_234).contains(" 1234 "),
            "{}",
            place("pl", 1_234)
        );
        assert!(
            place("es", 1_234).contains(" 1234 "),
            "{}",
            place("es", 1_234)
        );
        assert!(
            place("ja", 12_345).contains("12,345"),
            "{}",
            place("ja", 12_345)
        );
        assert_eq!(place("en", 7), "You're number 7 in line.");
        // A shop's own wording is formatted the same way.
        let overrides = Overrides::from([(
            "de".to_owned(),
            BTreeMap::from([(
                "widget-position".to_owned(),
                "Platz { $position }".to_owned(),
            )]),
        )]);
        let t = Texts::new(&lang("de"), &lang("en"), &overrides);
        assert_eq!(
            t.get("widget-position", &[("position", 100_000.into())]),
            "Platz 100.000"
        );
    }

    #[test]
    fn a_shops_words_come_first_and_a_gap_falls_back_to_the_default_then_english() {
        let mut overrides = Overrides::new();
        overrides.insert(
            "de".into(),
            BTreeMap::from([("notice-button".to_owned(), "Jetzt sichern".to_owned())]),
        );
        check_overrides(&overrides).unwrap();
        let de = Texts::new(&lang("de-CH"), &lang("en"), &overrides);
        assert_eq!(de.word("notice-button"), "Jetzt sichern");
        assert_eq!(de.language().to_string(), "de-CH");
        assert_eq!(de.window(Window::from_mins(15)), "15 Minuten");
        // A language restock does not ship, offered with overrides for one message.
        let mut sv = Overrides::new();
        sv.insert(
            "sv".into(),
            BTreeMap::from([("notice-button".to_owned(), "Reservera".to_owned())]),
        );
        let texts = Texts::new(&lang("sv"), &lang("de"), &sv);
        assert_eq!(texts.word("notice-button"), "Reservera");
        assert_eq!(
            texts.word("confirm-button"),
            Texts::new(&lang("de"), &lang("de"), &sv).word("confirm-button")
        );
        assert_eq!(lang("ar").dir(), "rtl");
        assert_eq!(lang("he").dir(), "rtl");
        assert_eq!(lang("de").dir(), "ltr");
    }

    #[test]
    fn a_shops_bad_override_is_refused_with_what_to_write() {
        let one = |tag: &str, id: &str, p: &str| {
            let mut o = Overrides::new();
            o.insert(tag.into(), BTreeMap::from([(id.to_owned(), p.to_owned())]));
            check_overrides(&o)
        };
        assert!(one("de", "notice-button", "Sichern").is_ok());
        assert!(one("de", "notice-subject", "{ $product } ist zurück").is_ok());
        let e = one("de", "notice-subject", "{ $price } ist zurück").unwrap_err();
        assert!(e.contains("$product"), "{e}");
        assert!(
            one("de", "no-such-message", "x")
                .unwrap_err()
                .contains("not a message")
        );
        assert!(one("de", "notice-button", "{ unclosed").is_err());
        assert!(one("not a tag", "notice-button", "x").is_err());
    }
}
