//! The settings document (DESIGN §6): one TOML file, defaults for all but the
//! first three fields, validated on load with errors that name the field.

use serde::{Deserialize, Serialize};
use url::Url;

use crate::allocate::ListShare;
use crate::lang::{self, Language, Overrides, Texts};
use crate::stock::Rules;
use crate::window::Window;

/// Why a settings document was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// Not TOML, or a field of the wrong type or unknown (toml's message names it).
    #[error("settings are not valid: {0}")]
    Parse(String),
    /// A field's value is out of range.
    #[error("settings field `{field}`: {reason}")]
    Invalid {
        /// The field, as written in the document.
        field: &'static str,
        /// What is wrong and what would be right.
        reason: String,
    },
}

/// Escalation rules: rises that wait for the team.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EscalationRules {
    /// A restock or top-up larger than this waits for the team.
    pub max_jump: u32,
    /// A level above this waits for the team.
    pub max_level: u32,
}

impl Default for EscalationRules {
    fn default() -> Self {
        Self {
            max_jump: 500,
            max_level: 100_000,
        }
    }
}

/// The UTM parameters every link to the shop carries, so the shop's
/// analytics sees what restock brought: `utm_source`, `utm_medium` by the
/// channel the shopper was told on, `utm_campaign`, and `utm_content` the
/// item's SKU. A link the shop already tagged (`utm_source` in it) is kept
/// as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Utm {
    /// Off: links to the shop carry no UTM parameters.
    pub enabled: bool,
    /// `utm_source`.
    pub source: String,
    /// `utm_medium` for a shopper told by email.
    pub medium_email: String,
    /// `utm_medium` for a shopper told by text.
    pub medium_sms: String,
    /// `utm_campaign`.
    pub campaign: String,
}

impl Default for Utm {
    fn default() -> Self {
        Self {
            enabled: true,
            source: "restock".into(),
            medium_email: "email".into(),
            medium_sms: "sms".into(),
            campaign: "back-in-stock".into(),
        }
    }
}

impl Utm {
    /// `url` with the UTM parameters of a shopper told on `channel` (none
    /// known: `utm_medium` left out) about `sku`; `url` unchanged when off,
    /// already tagged, or not a URL.
    pub fn tag(&self, url: &str, channel: Option<crate::Channel>, sku: &crate::Sku) -> String {
        let Ok(mut parsed) = url::Url::parse(url) else {
            return url.to_owned();
        };
        if !self.enabled || parsed.query_pairs().any(|(k, _)| k == "utm_source") {
            return url.to_owned();
        }
        {
            let mut q = parsed.query_pairs_mut();
            q.append_pair("utm_source", &self.source);
            match channel {
                Some(crate::Channel::Email) => {
                    q.append_pair("utm_medium", &self.medium_email);
                }
                Some(crate::Channel::Sms) => {
                    q.append_pair("utm_medium", &self.medium_sms);
                }
                None => {}
            }
            q.append_pair("utm_campaign", &self.campaign);
            q.append_pair("utm_content", sku.as_str());
        }
        parsed.to_string()
    }

    /// Each value is 1 to 100 characters.
    fn check(&self) -> Result<(), SettingsError> {
        for (field, value) in [
            ("utm.source", &self.source),
            ("utm.medium_email", &self.medium_email),
            ("utm.medium_sms", &self.medium_sms),
            ("utm.campaign", &self.campaign),
        ] {
            if value.trim().is_empty() || value.chars().count() > 100 {
                return Err(SettingsError::Invalid {
                    field,
                    reason: "1 to 100 characters".into(),
                });
            }
        }
        Ok(())
    }
}

/// Abuse limits, per fixed `window`: a shop behind one NAT, or a load test,
/// raises them here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Notify-me posts from one client address.
    pub joins_per_ip: u32,
    /// Notify-me posts for one contact, from any address.
    pub joins_per_contact: u32,
    /// Status reads and reserve / opt-out page visits from one client address.
    pub reads_per_ip: u32,
    /// New sign-ups for one item that tell the team of a burst (a drop going
    /// viral, or a bot filling the queue with other people's addresses):
    /// once per window, nothing refused.
    pub signup_burst: u32,
    /// The window the counts are kept over.
    pub window: Window,
    /// How much of an IPv6 address is one client (`/64`: one customer's
    /// allocation); an IPv4 client is its address.
    pub ipv6_prefix: u8,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            joins_per_ip: 30,
            joins_per_contact: 5,
            reads_per_ip: 300,
            signup_burst: 1_000,
            window: Window::from_mins(10),
            ipv6_prefix: 64,
        }
    }
}

/// The shop's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The shop's name, as notices say it.
    pub store_name: String,
    /// Where reserve and opt-out links live (`https://...`, no trailing path).
    pub public_base_url: Url,
    /// The SES sender, `Name <address>`.
    pub email_from: String,
    /// How the model should sound.
    #[serde(default = "default_voice")]
    pub voice: String,
    /// The SMS sender id (up to 11 letters and digits).
    #[serde(default)]
    pub sms_sender_id: Option<String>,
    /// Units in stock that count as "back".
    #[serde(default = "default_threshold")]
    pub default_threshold: u32,
    /// How long a reserve link stays live.
    #[serde(default = "default_window")]
    pub offer_window: Window,
    /// How long a held unit waits for checkout.
    #[serde(default = "default_window")]
    pub hold_window: Window,
    /// How long after a notice an order for the item by the contact told
    /// counts as assisted revenue (an order without a hold; at most 90d).
    #[serde(default = "default_attribution_window")]
    pub attribution_window: Window,
    /// One reminder this long before an unclaimed offer runs out (off when
    /// unset): on the channel the notice went on, never in quiet hours, at
    /// most once per offer.
    #[serde(default)]
    pub remind_before: Option<Window>,
    /// A request older than this goes stale.
    #[serde(default = "default_lifetime")]
    pub request_lifetime: Window,
    /// Fraction of the level offered to the queue.
    #[serde(default)]
    pub list_share: ListShare,
    /// Sends per second across SES and SNS.
    #[serde(default = "default_rate")]
    pub sends_per_second: u32,
    /// Origins allowed to call capture from a browser.
    #[serde(default)]
    pub storefront_origins: Vec<String>,
    /// Countries whose mobile numbers may be told by text (ISO 3166 codes,
    /// e.g. `["GB", "IE"]`). Empty (the default): no texts, email only.
    #[serde(default)]
    pub sms_countries: Vec<String>,
    /// Proxies in front of capture whose `X-Forwarded-For` is believed
    /// (CIDR ranges, e.g. a CloudFront distribution's). Empty (the default):
    /// the caller's address is the platform's and the header is ignored.
    #[serde(default)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Rises that wait for the team.
    #[serde(default)]
    pub escalation: EscalationRules,
    /// Which locations count toward a SKU's level.
    #[serde(default)]
    pub locations: crate::stock::Locations,
    /// Abuse limits.
    #[serde(default)]
    pub limits: Limits,
    /// The UTM parameters on every link to the shop.
    #[serde(default)]
    pub utm: Utm,
    /// The shop's time zone (a tz database name): the clock of a shopper
    /// whose own zone is not known, for their quiet hours.
    #[serde(default = "crate::quiet::Zone::utc")]
    pub time_zone: crate::quiet::Zone,
    /// Hours, per channel and in each shopper's own time zone, in which
    /// nobody is sent a notice or a reminder (their place is kept).
    #[serde(default)]
    pub quiet_hours: crate::quiet::QuietHours,
    /// How long a platform that used to deliver stock webhooks may be
    /// silent, while people wait on its items, before the team is told.
    #[serde(default = "default_webhook_silence")]
    pub webhook_silence: Window,
    /// Double opt-in: a sign-up is first sent a confirmation link, and is
    /// offered nothing until it is followed (its place is kept). On by default.
    #[serde(default = "default_confirm")]
    pub confirm: bool,
    /// How long a sign-up may stay unconfirmed; then it ends and its contact
    /// details are deleted.
    #[serde(default = "default_confirm_window")]
    pub confirm_window: Window,
    /// The version of the consent wording the widget shows, recorded with
    /// every sign-up (change it when the wording changes).
    #[serde(default = "default_consent_version")]
    pub consent_version: String,
    /// Whether restock's events on the shop's event bus (`docs/EVENTS.md`)
    /// carry the shopper's address and first name; off by default, when
    /// they carry the address masked and the contact's keyed hash.
    #[serde(default)]
    pub events_include_contact: bool,
    /// The languages shoppers are spoken to in (BCP 47 tags): a shopper
    /// gets the closest to their page's language, else `default_language`.
    /// Each is one restock ships (`restock_core::lang::SHIPPED`) or one the
    /// shop writes every message for under `[messages.<tag>]`.
    #[serde(default = "default_languages")]
    pub languages: Vec<Language>,
    /// The language of a shopper whose language the shop does not offer.
    #[serde(default = "Language::english")]
    pub default_language: Language,
    /// The shop's own wording, per language and message id (Fluent
    /// patterns), in place of restock's (`docs/LANGUAGES.md`).
    #[serde(default, skip_serializing_if = "Overrides::is_empty")]
    pub messages: Overrides,
}

fn default_languages() -> Vec<Language> {
    vec![Language::english()]
}

fn default_voice() -> String {
    "warm, brief and plain".to_owned()
}
fn default_threshold() -> u32 {
    1
}
fn default_attribution_window() -> Window {
    Window::from_secs(7 * 86_400)
}

/// The longest attribution window: the told markers are kept this long.
pub const MAX_ATTRIBUTION: Window = Window::from_secs(90 * 86_400);

fn default_window() -> Window {
    Window::from_mins(15)
}
fn default_lifetime() -> Window {
    Window::from_secs(90 * 86_400)
}
fn default_rate() -> u32 {
    10
}
fn default_confirm() -> bool {
    true
}
fn default_confirm_window() -> Window {
    Window::from_secs(48 * 3_600)
}
fn default_consent_version() -> String {
    "1".to_owned()
}
fn default_webhook_silence() -> Window {
    Window::from_secs(24 * 3_600)
}

impl Settings {
    /// Parses and validates a TOML document.
    ///
    /// # Errors
    /// [`SettingsError`] naming the first bad field.
    pub fn from_toml(text: &str) -> Result<Self, SettingsError> {
        let settings: Self = toml::from_str(text).map_err(|e| {
            SettingsError::Parse(e.message().to_owned() + &span_hint(text, e.span()))
        })?;
        settings.validate()?;
        Ok(settings)
    }

    /// The document as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("settings always serialise")
    }

    /// The escalation and threshold rules for a SKU (`threshold` from its catalogue entry, if any).
    pub fn rules(&self, threshold: Option<u32>) -> Rules {
        Rules {
            threshold: threshold.unwrap_or(self.default_threshold).max(1),
            max_jump: self.escalation.max_jump,
            max_level: self.escalation.max_level,
        }
    }

    /// A link under `public_base_url`: `link("r", token)` is `https://.../r/<token>`.
    pub fn link(&self, prefix: &str, token: &impl std::fmt::Display) -> String {
        format!(
            "{}/{prefix}/{token}",
            self.public_base_url.as_str().trim_end_matches('/')
        )
    }

    /// Checks every field's range.
    ///
    /// # Errors
    /// [`SettingsError::Invalid`] naming the field.
    pub fn validate(&self) -> Result<(), SettingsError> {
        self.check_shop()?;
        self.check_pace()?;
        self.check_reach()?;
        self.check_consent()?;
        self.utm.check()?;
        self.check_languages()
    }

    /// The language a shopper is spoken to in, from what their page asked.
    pub fn language_for(&self, asked: Option<&Language>) -> Language {
        lang::negotiate(asked, &self.languages, &self.default_language)
    }

    /// The language for a visitor known only by their browser's
    /// `Accept-Language`.
    pub fn language_for_visitor(&self, accept_language: Option<&str>) -> Language {
        lang::negotiate_accepted(
            accept_language.unwrap_or(""),
            &self.languages,
            &self.default_language,
        )
    }

    /// The words for a shopper who speaks `language`.
    pub fn texts(&self, language: &Language) -> Texts {
        Texts::new(language, &self.default_language, &self.messages)
    }

    /// Every offered language has its words, and the default is offered.
    fn check_languages(&self) -> Result<(), SettingsError> {
        if !self.languages.contains(&self.default_language) {
            return Err(SettingsError::Invalid {
                field: "default_language",
                reason: format!("`{}` must be one of `languages`", self.default_language),
            });
        }
        for language in &self.languages {
            let written = self
                .messages
                .get(&language.to_string())
                .map_or(0, std::collections::BTreeMap::len);
            if !lang::is_shipped(language) && written < lang::MESSAGES.len() {
                return Err(SettingsError::Invalid {
                    field: "languages",
                    reason: format!(
                        "restock has no catalogue for `{language}`: write all {} messages under [messages.{language}] (docs/LANGUAGES.md), or choose one of {}",
                        lang::MESSAGES.len(),
                        lang::SHIPPED.map(|(t, _)| t).join(", ")
                    ),
                });
            }
        }
        lang::check_overrides(&self.messages).map_err(|reason| SettingsError::Invalid {
            field: "messages",
            reason,
        })
    }

    /// The shop's name, address, sender and voice.
    fn check_shop(&self) -> Result<(), SettingsError> {
        if self.store_name.trim().is_empty() || self.store_name.chars().count() > 60 {
            return invalid("store_name", "give the shop's name, 1 to 60 characters");
        }
        let url = &self.public_base_url;
        let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
        if !(url.scheme() == "https" || (url.scheme() == "http" && local)) {
            return invalid(
                "public_base_url",
                "must be an https:// URL (http:// only for localhost)",
            );
        }
        if url.query().is_some() || url.fragment().is_some() || url.as_str().len() > 100 {
            return invalid(
                "public_base_url",
                "must be at most 100 characters, without a query or fragment",
            );
        }
        let address = self
            .email_from
            .rsplit_once('<')
            .map_or(self.email_from.as_str(), |(_, a)| a.trim_end_matches('>'));
        if crate::contact::Email::try_from(address).is_err() {
            return invalid(
                "email_from",
                "write it as `Shop Name <hello@example.com>` or a bare address",
            );
        }
        if self.voice.chars().count() > 200 {
            return invalid("voice", "keep it under 200 characters");
        }
        if let Some(id) = &self.sms_sender_id {
            let letters = id.chars().all(|c| c.is_ascii_alphanumeric());
            if id.is_empty() || id.len() > 11 || !letters || id.chars().all(|c| c.is_ascii_digit())
            {
                return invalid(
                    "sms_sender_id",
                    "1 to 11 letters and digits, with at least one letter",
                );
            }
        }
        Ok(())
    }

    /// The threshold, the windows and the send rate.
    fn check_pace(&self) -> Result<(), SettingsError> {
        if self.default_threshold == 0 {
            return invalid("default_threshold", "must be at least 1");
        }
        if self.offer_window.as_secs() < 60 || self.hold_window.as_secs() < 60 {
            let field = if self.offer_window.as_secs() < 60 {
                "offer_window"
            } else {
                "hold_window"
            };
            return invalid(field, "must be at least 1m so a shopper can act on it");
        }
        if self.request_lifetime < self.offer_window {
            return invalid("request_lifetime", "must be longer than offer_window");
        }
        if self.attribution_window > MAX_ATTRIBUTION {
            return invalid("attribution_window", "at most 90d");
        }
        if let Some(before) = self.remind_before
            && (before.as_secs() < 60 || before >= self.offer_window)
        {
            return invalid(
                "remind_before",
                "at least 1m and shorter than offer_window (the reminder goes that long before the reserve link runs out)",
            );
        }
        if self.sends_per_second == 0 || self.sends_per_second > 1_000 {
            return invalid("sends_per_second", "between 1 and 1000");
        }
        Ok(())
    }

    /// Who may call in, where texts may go, and the limits.
    fn check_reach(&self) -> Result<(), SettingsError> {
        for origin in &self.storefront_origins {
            let ok = Url::parse(origin).is_ok_and(|u| {
                matches!(u.scheme(), "https" | "http")
                    && u.host().is_some()
                    && u.path() == "/"
                    && !origin.ends_with('/')
            });
            if !ok {
                return invalid(
                    "storefront_origins",
                    "each origin is scheme and host only, like https://shop.example",
                );
            }
        }
        if let Some(bad) = self
            .sms_countries
            .iter()
            .find(|c| !crate::contact::is_country_code(c))
        {
            return Err(SettingsError::Invalid {
                field: "sms_countries",
                reason: format!("`{bad}` is not a country code; write ISO 3166 codes like \"GB\""),
            });
        }
        let l = &self.limits;
        if l.joins_per_ip == 0
            || l.joins_per_contact == 0
            || l.reads_per_ip == 0
            || l.signup_burst == 0
        {
            return invalid(
                "limits",
                "joins_per_ip, joins_per_contact, reads_per_ip and signup_burst must be at least 1",
            );
        }
        if !(32..=128).contains(&l.ipv6_prefix) {
            return invalid(
                "limits",
                "ipv6_prefix is between 32 and 128 (64: one customer's allocation)",
            );
        }
        if self.escalation.max_jump == 0 || self.escalation.max_level == 0 {
            return invalid("escalation", "max_jump and max_level must be at least 1");
        }
        Ok(())
    }

    /// The confirmation window and the consent version.
    fn check_consent(&self) -> Result<(), SettingsError> {
        if self.confirm_window.as_secs() < 3_600 || self.confirm_window >= self.request_lifetime {
            return invalid(
                "confirm_window",
                "at least 1h (time to open the mail) and shorter than request_lifetime",
            );
        }
        let version = &self.consent_version;
        if version.is_empty()
            || version.len() > 40
            || !version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
        {
            return invalid(
                "consent_version",
                "1 to 40 letters, digits, `-`, `.` or `_`, like \"2026-11\"",
            );
        }
        Ok(())
    }
}

/// A field out of range, and what it should be.
fn invalid(field: &'static str, reason: &str) -> Result<(), SettingsError> {
    Err(SettingsError::Invalid {
        field,
        reason: reason.to_owned(),
    })
}

fn span_hint(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(span) => {
            let start = span.start.min(text.len());
            let line_no = text[..start].matches('\n').count() + 1;
            let line = text.lines().nth(line_no - 1).unwrap_or("");
            match line.split_once('=') {
                Some((key, _)) => format!(" (line {line_no}, `{}`)", key.trim()),
                None => format!(" (line {line_no})"),
            }
        }
        None => String::new(),
    }
}

impl<'de> Deserialize<'de> for ListShare {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ListShare::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl Serialize for ListShare {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_to_the_shop_carry_utm_parameters_by_channel_and_item() {
        let utm = Utm::default();
        let sku = crate::Sku::try_from("CHAIR-WAL").unwrap();
        let cart = "https://loomandlast.co.uk/cart/4242:1?attributes[hold]=abc";
        assert_eq!(
            utm.tag(cart, Some(crate::Channel::Email), &sku),
            "https://loomandlast.co.uk/cart/4242:1?attributes[hold]=abc&utm_source=restock&utm_medium=email&utm_campaign=back-in-stock&utm_content=CHAIR-WAL"
        );
        let product = "https://shop.example/p/lamp?hold=h1";
        assert_eq!(
            utm.tag(product, Some(crate::Channel::Sms), &sku),
            "https://shop.example/p/lamp?hold=h1&utm_source=restock&utm_medium=sms&utm_campaign=back-in-stock&utm_content=CHAIR-WAL"
        );
        assert_eq!(
            utm.tag("https://shop.example/p", None, &sku),
            "https://shop.example/p?utm_source=restock&utm_campaign=back-in-stock&utm_content=CHAIR-WAL",
            "no channel known: no medium"
        );
        let tagged = "https://shop.example/p?utm_source=mail&hold=h1";
        assert_eq!(
            utm.tag(tagged, None, &sku),
            tagged,
            "the shop's own tags stand"
        );
        let off = Utm {
            enabled: false,
            ..Utm::default()
        };
        assert_eq!(off.tag(cart, Some(crate::Channel::Email), &sku), cart);
        assert_eq!(utm.tag("not a url", None, &sku), "not a url");
        let spaced = Utm {
            campaign: "spring drop & co".into(),
            ..Utm::default()
        };
        assert!(
            spaced
                .tag("https://s.example/", None, &sku)
                .contains("utm_campaign=spring+drop+%26+co")
        );
    }

    #[test]
    fn a_utm_value_is_one_to_a_hundred_characters() {
        let mut settings = Settings::from_toml(EXAMPLE).unwrap();
        settings.utm.source = " ".into();
        assert!(matches!(
            settings.validate(),
            Err(SettingsError::Invalid {
                field: "utm.source",
                ..
            })
        ));
        settings.utm.source = "restock".into();
        settings.utm.campaign = "c".repeat(101);
        assert!(matches!(
            settings.validate(),
            Err(SettingsError::Invalid {
                field: "utm.campaign",
                ..
            })
        ));
        settings.utm.campaign = "c".repeat(100);
        assert!(settings.validate().is_ok());
    }

    pub(crate) const EXAMPLE: &str = r#"
store_name = "Loom & Last"
public_base_url = "https://notify.loomandlast.co.uk"
email_from = "Loom & Last <hello@loomandlast.co.uk>"
voice = "warm, brief, plain British English"
sms_sender_id = "LoomLast"
default_threshold = 1
offer_window = "15m"
hold_window = "15m"
request_lifetime = "90d"
list_share = 1.0
sends_per_second = 10
storefront_origins = ["https://loomandlast.co.uk"]
[escalation]
max_jump = 500
max_level = 100000
"#;

    #[test]
    fn languages_are_offered_only_with_their_words() {
        let base = "store_name = \"S\"\npublic_base_url = \"https://s.example\"\nemail_from = \"a@s.example\"\n";
        let plain = Settings::from_toml(base).unwrap();
        assert_eq!(plain.languages, vec![Language::english()]);
        let de = |asked: &str| asked.parse::<Language>().unwrap();
        assert_eq!(plain.language_for(Some(&de("de"))).to_string(), "en");
        let shop = Settings::from_toml(&format!(
            "{base}languages = [\"en\", \"de\", \"ar\"]\ndefault_language = \"de\"\n[messages.de]\nnotice-button = \"Sichern\"\n"
        ))
        .unwrap();
        assert_eq!(shop.language_for(Some(&de("de-AT"))).to_string(), "de");
        assert_eq!(shop.language_for(Some(&de("xx-YY"))).to_string(), "de");
        assert_eq!(shop.language_for(None).to_string(), "de");
        assert_eq!(shop.texts(&de("de")).word("notice-button"), "Sichern");
        assert_eq!(Settings::from_toml(&shop.to_toml()).unwrap(), shop);
        for (doc, field) in [
            (
                "languages = [\"en\"]\ndefault_language = \"de\"\n",
                "default_language",
            ),
            ("languages = [\"en\", \"sv\"]\n", "languages"),
            (
                "[messages.de]\nnotice-subject = \"{ $price }\"\n",
                "messages",
            ),
        ] {
            let refused = Settings::from_toml(&format!("{base}{doc}"));
            assert!(
                matches!(&refused, Err(SettingsError::Invalid { field: f, .. }) if *f == field),
                "{doc}: {refused:?}"
            );
        }
        assert!(Settings::from_toml(&format!("{base}languages = [\"not a tag\"]\n")).is_err());
    }

    #[test]
    fn limits_can_be_raised_and_never_zero() {
        let base = "store_name = \"S\"\npublic_base_url = \"https://s.example\"\nemail_from = \"a@s.example\"\n";
        let raised = Settings::from_toml(&format!(
            "{base}[limits]\njoins_per_ip = 500\nwindow = \"1m\"\n"
        ))
        .unwrap();
        assert_eq!(raised.limits.joins_per_ip, 500);
        assert_eq!(raised.limits.joins_per_contact, 5);
        assert_eq!(raised.limits.window, Window::from_mins(1));
        let zero = Settings::from_toml(&format!("{base}[limits]\nreads_per_ip = 0\n"));
        assert!(
            matches!(
                zero,
                Err(SettingsError::Invalid {
                    field: "limits",
                    ..
                })
            ),
            "{zero:?}"
        );
        let typo = Settings::from_toml(&format!("{base}[limits]\njoins_per_day = 3\n"));
        assert!(typo.is_err());
        assert_eq!(raised.limits.ipv6_prefix, 64);
        for prefix in [0, 31, 129, 255] {
            let bad = Settings::from_toml(&format!("{base}[limits]\nipv6_prefix = {prefix}\n"));
            assert!(
                matches!(&bad, Err(SettingsError::Invalid { field: "limits", reason }) if reason.contains("ipv6_prefix")),
                "{prefix}: {bad:?}"
            );
        }
    }

    #[test]
    fn double_opt_in_is_on_by_default_and_its_window_is_checked() {
        let base = "store_name = \"S\"\npublic_base_url = \"https://s.example\"\nemail_from = \"a@s.example\"\n";
        let s = Settings::from_toml(base).unwrap();
        assert!(s.confirm, "on unless the shop turns it off");
        assert_eq!(s.confirm_window, Window::from_secs(48 * 3_600));
        assert_eq!(s.consent_version, "1");
        for (bad, field) in [
            ("confirm_window = \"30m\"", "confirm_window"),
            ("confirm_window = \"91d\"", "confirm_window"),
            ("consent_version = \"\"", "consent_version"),
            ("consent_version = \"v 1; drop\"", "consent_version"),
        ] {
            let err = Settings::from_toml(&format!("{base}{bad}\n")).unwrap_err();
            assert!(
                matches!(err, SettingsError::Invalid { field: f, .. } if f == field),
                "{bad}: {err:?}"
            );
        }
        let off = Settings::from_toml(&format!("{base}confirm = false\n")).unwrap();
        assert!(!off.confirm);
    }

    #[test]
    fn the_documented_example_loads() {
        let s = Settings::from_toml(EXAMPLE).unwrap();
        assert_eq!(s.offer_window, Window::from_mins(15));
        assert_eq!(
            s.link("r", &"abc"),
            "https://notify.loomandlast.co.uk/r/abc"
        );
        assert_eq!(Settings::from_toml(&s.to_toml()).unwrap(), s);
    }

    #[test]
    fn only_the_first_three_fields_are_required() {
        let s = Settings::from_toml(
            "store_name = \"Shop\"\npublic_base_url = \"http://localhost:3000\"\nemail_from = \"hi@shop.example\"\n",
        )
        .unwrap();
        assert_eq!(s.request_lifetime.as_secs(), 90 * 86_400);
        assert_eq!(s.escalation, EscalationRules::default());
        assert_eq!(s.limits, Limits::default());
        let err = Settings::from_toml("store_name = \"Shop\"\n").unwrap_err();
        assert!(err.to_string().contains("public_base_url"), "{err}");
    }

    #[test]
    fn bad_fields_are_named() {
        let cases = [
            (
                "offer_window = \"15m\"",
                "offer_window = \"soon\"",
                "offer_window",
            ),
            ("list_share = 1.0", "list_share = 1.5", "list_share"),
            (
                "public_base_url = \"https://notify.loomandlast.co.uk\"",
                "public_base_url = \"http://notify.example\"",
                "public_base_url",
            ),
            (
                "sms_sender_id = \"LoomLast\"",
                "sms_sender_id = \"Loom & Last Ltd\"",
                "sms_sender_id",
            ),
            (
                "default_threshold = 1",
                "default_threshold = 0",
                "default_threshold",
            ),
            (
                "[\"https://loomandlast.co.uk\"]",
                "[\"loomandlast.co.uk\"]",
                "storefront_origins",
            ),
            (
                "sends_per_second = 10",
                "sends_per_second = 10\nsend_rate = 3",
                "send_rate",
            ),
        ];
        for (from, to, field) in cases {
            let err = Settings::from_toml(&EXAMPLE.replace(from, to)).unwrap_err();
            assert!(err.to_string().contains(field), "{field}: {err}");
        }
    }
}
