//! Who a notice goes to: email addresses, phone numbers, names and channels.

use std::fmt;
use std::str::FromStr;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Why a contact detail was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContactError {
    /// Not an email address a message can be delivered to.
    #[error("enter an email address like name@example.com")]
    Email,
    /// A quoted local part or an escape (`"della"@…`, `d\ella@…`): the
    /// same mailbox as the plain address, which no shopper types.
    #[error("enter the address without quotation marks or backslashes, like name@example.com")]
    EmailQuoted,
    /// Not a phone number in international format that exists.
    #[error("enter a mobile number in international format, like +44 7911 123456")]
    Phone,
    /// The name was empty, too long, or had control characters.
    #[error("enter a name of 1 to {max} characters without control characters", max = ShopperName::MAX_CHARS)]
    Name,
    /// Neither `email` nor `sms`.
    #[error("the channel is `email` or `sms`")]
    Channel,
}

/// Why a valid number may not be told by text (SMS pumping: premium-rate and
/// far-away numbers run up the shop's bill).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmsRefusal {
    /// The shop lists no countries: it sends no texts.
    #[error("this shop does not send text messages; please use an email address")]
    Off,
    /// Not in a country the shop texts.
    #[error(
        "this shop texts mobile numbers in {0} only; please use one of those or an email address"
    )]
    Country(String),
    /// Not a mobile number.
    #[error("that is a {0} number, not a mobile; please use a mobile number or an email address")]
    NotMobile(&'static str),
}

/// An email address in its one canonical form, so every spelling of a
/// mailbox is one person for opt-outs, places and limits: trimmed and
/// lower-cased, the local part in Unicode's composed form (NFC), the domain
/// in its ASCII (punycode) form as IDNA maps it (`BÜCHER.example.` and
/// `xn--bcher-kva.example` are one domain) without a trailing dot. Quoted
/// local parts and escapes are refused ([`ContactError::EmailQuoted`]).
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Email(String);

impl Email {
    /// The longest address accepted (RFC 5321's path limit).
    pub const MAX_LEN: usize = 254;

    /// The address as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<&str> for Email {
    type Error = ContactError;

    fn try_from(value: &str) -> Result<Self, Self::Error> {
        let value = canonical_email(value)?;
        if value.len() > Self::MAX_LEN {
            return Err(ContactError::Email);
        }
        let options = email_address::Options::default()
            .without_display_text()
            .without_domain_literal()
            .with_required_tld();
        email_address::EmailAddress::parse_with_options(&value, options)
            .map_err(|_| ContactError::Email)?;
        Ok(Self(value))
    }
}

/// The canonical spelling of `input` (see [`Email`]), not yet checked as
/// an address.
fn canonical_email(input: &str) -> Result<String, ContactError> {
    let input = input.trim();
    // Longer than any address: refused before any work on it.
    if input.len() > 4 * Email::MAX_LEN {
        return Err(ContactError::Email);
    }
    let (local, domain) = input.rsplit_once('@').ok_or(ContactError::Email)?;
    if local.contains(['"', '\\']) {
        return Err(ContactError::EmailQuoted);
    }
    let local: String = icu_normalizer::ComposingNormalizerBorrowed::new_nfc()
        .normalize(&local.to_lowercase())
        .into_owned();
    let domain = domain.strip_suffix('.').unwrap_or(domain);
    if domain.is_empty() || domain.ends_with('.') {
        return Err(ContactError::Email);
    }
    // UTS 46 as browsers apply it: case folded, normalised, to punycode.
    let domain = idna::domain_to_ascii(domain).map_err(|_| ContactError::Email)?;
    Ok(format!("{local}@{domain}"))
}

impl TryFrom<String> for Email {
    type Error = ContactError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::try_from(value.as_str())
    }
}

impl From<Email> for String {
    fn from(value: Email) -> Self {
        value.0
    }
}

/// Addresses are personal data: debug output masks them.
impl fmt::Debug for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&mask_email(&self.0))
    }
}

/// A phone number in E.164 form (`+447911123456`).
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(String);

impl Phone {
    /// Parses a number written in international form (`+44 7911 123456`,
    /// `0044 7911 123456`), checking it against the numbering plan of its
    /// country.
    ///
    /// # Errors
    /// [`ContactError::Phone`] for junk, numbers without a country code, and
    /// numbers that cannot exist in their country.
    pub fn parse(input: &str) -> Result<Self, ContactError> {
        let trimmed = input.trim();
        if trimmed.len() > 32
            || !trimmed
                .chars()
                .all(|c| c.is_ascii_digit() || " +-().".contains(c))
        {
            return Err(ContactError::Phone);
        }
        let international = match trimmed.strip_prefix("00") {
            Some(rest) => format!("+{rest}"),
            None if trimmed.starts_with('+') => trimmed.to_owned(),
            None => return Err(ContactError::Phone),
        };
        let number = phonenumber::parse(None, &international).map_err(|_| ContactError::Phone)?;
        if !phonenumber::is_valid(&number) {
            return Err(ContactError::Phone);
        }
        Ok(Self(
            number.format().mode(phonenumber::Mode::E164).to_string(),
        ))
    }

    /// The number in E.164 form.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the shop may text this number: a mobile number (or one its
    /// plan cannot tell from a landline, as in North America) in one of
    /// `countries` (ISO 3166 codes). No countries: no texts at all.
    ///
    /// # Errors
    /// [`SmsRefusal`] saying why, in words a shopper can act on.
    pub fn sms_allowed(&self, countries: &[String]) -> Result<(), SmsRefusal> {
        use phonenumber::Type;
        if countries.is_empty() {
            return Err(SmsRefusal::Off);
        }
        let number =
            phonenumber::parse(None, &self.0).map_err(|_| SmsRefusal::NotMobile("unknown"))?;
        let country = number.country().id().map(|id| id.as_ref().to_owned());
        if !country.is_some_and(|c| {
            countries
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(&c))
        }) {
            return Err(SmsRefusal::Country(countries.join(", ")));
        }
        match number.number_type(&phonenumber::metadata::DATABASE) {
            Type::Mobile | Type::FixedLineOrMobile => Ok(()),
            other => Err(SmsRefusal::NotMobile(match other {
                Type::FixedLine => "landline",
                Type::TollFree => "freephone",
                Type::PremiumRate => "premium-rate",
                Type::SharedCost => "shared-cost",
                Type::PersonalNumber => "personal",
                Type::Voip => "internet (VoIP)",
                Type::Pager => "pager",
                Type::Uan => "company",
                Type::Voicemail => "voicemail",
                _ => "non-mobile",
            })),
        }
    }
}

/// Whether `code` is an ISO 3166 country code the numbering plans know.
pub fn is_country_code(code: &str) -> bool {
    code.len() == 2
        && code
            .to_ascii_uppercase()
            .parse::<phonenumber::country::Id>()
            .is_ok()
}

impl TryFrom<String> for Phone {
    type Error = ContactError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<Phone> for String {
    fn from(value: Phone) -> Self {
        value.0
    }
}

impl fmt::Debug for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&mask_phone(&self.0))
    }
}

/// Where a shopper is told: by email or by SMS.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "channel", content = "address", rename_all = "lowercase")]
pub enum Contact {
    /// Told by email.
    Email(Email),
    /// Told by SMS.
    Sms(Phone),
}

impl Contact {
    /// The contact at `address` on `channel`, checked as capture checks it.
    ///
    /// # Errors
    /// [`ContactError`] when the address is not one the channel can reach.
    pub fn on(channel: Channel, address: &str) -> Result<Self, ContactError> {
        match channel {
            Channel::Email => Email::try_from(address).map(Self::Email),
            Channel::Sms => Phone::parse(address).map(Self::Sms),
        }
    }

    /// The channel this contact is reached on.
    pub fn channel(&self) -> Channel {
        match self {
            Self::Email(_) => Channel::Email,
            Self::Sms(_) => Channel::Sms,
        }
    }

    /// The address or number, unmasked: only for the sender.
    pub fn address(&self) -> &str {
        match self {
            Self::Email(e) => e.as_str(),
            Self::Sms(p) => p.as_str(),
        }
    }

    /// A form safe for logs and admin screens: `d***@example.com`, `+44*******123`.
    pub fn masked(&self) -> String {
        match self {
            Self::Email(e) => mask_email(e.as_str()),
            Self::Sms(p) => mask_phone(p.as_str()),
        }
    }

    /// A stable keyed hash of the contact: the same person gives the same key,
    /// and the key reveals nothing without `pepper`. Used for one-place-per-person
    /// and for opt-outs, which hold across channels only for the same address.
    pub fn key(&self, pepper: &[u8]) -> ContactKey {
        let kind: &[u8] = match self {
            Self::Email(_) => b"email:",
            Self::Sms(_) => b"phone:",
        };
        keyed(pepper, kind, self.address())
    }

    /// The key this address may have had before addresses were canonical,
    /// where it can differ: an internationalised domain was keyed as typed,
    /// lower-cased (in Unicode, as a shopper types it), and is punycode now.
    /// Opt-outs recorded under it still hold (capture and the admin
    /// commands look both up).
    pub fn former_key(&self, pepper: &[u8]) -> Option<ContactKey> {
        let Self::Email(email) = self else {
            return None;
        };
        let (local, domain) = email.as_str().rsplit_once('@')?;
        if !domain.split('.').any(|label| label.starts_with("xn--")) {
            return None;
        }
        let (unicode, result) = idna::domain_to_unicode(domain);
        result.ok()?;
        (unicode != domain).then(|| keyed(pepper, b"email:", &format!("{local}@{unicode}")))
    }

    /// Every key the contact may be on record under: [`Self::key`], then
    /// [`Self::former_key`] if it has one.
    pub fn keys(&self, pepper: &[u8]) -> Vec<ContactKey> {
        std::iter::once(self.key(pepper))
            .chain(self.former_key(pepper))
            .collect()
    }
}

/// The keyed hash of `kind` and `text`.
fn keyed(pepper: &[u8], kind: &[u8], text: &str) -> ContactKey {
    let mut mac = Hmac::<Sha256>::new_from_slice(pepper).expect("HMAC takes any key length");
    mac.update(kind);
    mac.update(text.as_bytes());
    ContactKey(URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
}

/// A contact's keyed hash (43 characters of base64url).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ContactKey(String);

impl ContactKey {
    /// The key as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Reads a stored key back.
    pub fn from_stored(s: impl Into<String>) -> Self {
        Self(s.into())
    }
}

/// The keyed hash of a client address (`ip:203.0.113.7`) kept with a
/// sign-up's consent: the same address gives the same hash, which reveals
/// nothing without `pepper`.
pub fn source_key(pepper: &[u8], client: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(pepper).expect("HMAC takes any key length");
    mac.update(b"source:");
    mac.update(client.as_bytes());
    URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

impl fmt::Display for ContactKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A delivery channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// Email through SES.
    Email,
    /// SMS through SNS.
    Sms,
}

impl Channel {
    /// `email` or `sms`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Email => "email",
            Self::Sms => "sms",
        }
    }
}

impl FromStr for Channel {
    type Err = ContactError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "email" => Ok(Self::Email),
            "sms" | "phone" => Ok(Self::Sms),
            _ => Err(ContactError::Channel),
        }
    }
}

/// The name a shopper gave: trimmed, inner whitespace folded, no control or
/// direction-override characters, at most [`ShopperName::MAX_CHARS`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ShopperName(String);

impl ShopperName {
    /// The longest name accepted, in characters.
    pub const MAX_CHARS: usize = 80;

    /// The name as text (escape it before putting it in HTML).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<&str> for ShopperName {
    type Error = ContactError;

    fn try_from(value: &str) -> Result<Self, Self::Error> {
        let folded = value.split_whitespace().collect::<Vec<_>>().join(" ");
        let forbidden = |c: char| {
            c.is_control()
                || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
        };
        let count = folded.chars().count();
        if count == 0 || count > Self::MAX_CHARS || folded.chars().any(forbidden) {
            return Err(ContactError::Name);
        }
        Ok(Self(folded))
    }
}

impl TryFrom<String> for ShopperName {
    type Error = ContactError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::try_from(value.as_str())
    }
}

impl From<ShopperName> for String {
    fn from(value: ShopperName) -> Self {
        value.0
    }
}

/// `text` from a provider (an error message, a delivery log's response)
/// with every email address and phone number in it masked as
/// [`Contact::masked`] masks them, before it reaches an event, an alert, a
/// log line or a page: SES's sandbox names the recipient it refused. An
/// address is a run of address characters around an `@`; a number is a
/// run of seven or more digits, with or without a leading `+`.
pub fn mask_personal(text: &str) -> String {
    mask_words(&mask_written_numbers(text))
}

/// Phone numbers written with spaces, hyphens, dots or brackets between
/// their digits (`+44 7911 123-456`, `(646) 736-5000`), masked as one
/// number: from a `+`, seven digits or more; else ten or more, so a date
/// (`2026-12-07`) or a code stays as it is.
fn mask_written_numbers(text: &str) -> String {
    let separator = |c: char| matches!(c, ' ' | '-' | '.' | '(' | ')');
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let starts = (chars[i] == '+' || chars[i] == '(' || chars[i].is_ascii_digit())
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '@'));
        if !starts {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        // The run: digits, with single separators between them.
        let mut end = i + 1;
        let mut last_digit = chars[i].is_ascii_digit().then_some(i);
        while end < chars.len() {
            let c = chars[end];
            if c.is_ascii_digit() {
                last_digit = Some(end);
            } else if !(separator(c) && end + 1 < chars.len() && !separator(chars[end + 1])
                || c == '('
                || c == ')')
            {
                break;
            }
            end += 1;
        }
        let Some(last) = last_digit else {
            out.push(chars[i]);
            i += 1;
            continue;
        };
        let run: String = chars[i..=last].iter().collect();
        let digits: String = run.chars().filter(char::is_ascii_digit).collect();
        let spaced = run.chars().any(separator);
        let next_is_word = chars
            .get(last + 1)
            .is_some_and(|c| c.is_alphanumeric() || *c == '@');
        let enough = if run.starts_with('+') { 7 } else { 10 };
        if spaced && !next_is_word && digits.len() >= enough {
            let plus = if run.starts_with('+') { "+" } else { "" };
            out.push_str(&mask_phone(&format!("{plus}{digits}")));
            i = last + 1;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

fn mask_words(text: &str) -> String {
    let part_of_address = |c: char| c.is_alphanumeric() || "._%+-@'!#$&*=?^`{|}~/".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(part_of_address) {
        out.push_str(&rest[..start]);
        let run = &rest[start..];
        let end = run.find(|c| !part_of_address(c)).unwrap_or(run.len());
        let word = &run[..end];
        // A sentence's full stop is not part of an address.
        let trimmed = word.trim_end_matches('.');
        let digits = trimmed.chars().filter(char::is_ascii_digit).count();
        let numeric = trimmed
            .strip_prefix('+')
            .unwrap_or(trimmed)
            .chars()
            .all(|c| c.is_ascii_digit());
        match trimmed.split_once('@') {
            Some((local, domain)) if !local.is_empty() && !domain.is_empty() => {
                out.push_str(&mask_email(trimmed));
                out.push_str(&word[trimmed.len()..]);
            }
            _ if numeric && digits >= 7 => {
                out.push_str(&mask_phone(trimmed));
                out.push_str(&word[trimmed.len()..]);
            }
            _ => out.push_str(word),
        }
        rest = &run[end..];
    }
    out.push_str(rest);
    out
}

fn mask_email(address: &str) -> String {
    match address.split_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}***@{domain}")
        }
        None => "***".to_owned(),
    }
}

fn mask_phone(number: &str) -> String {
    let chars: Vec<char> = number.chars().collect();
    if chars.len() <= 6 {
        return "***".to_owned();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 3..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 6))
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_mobiles_in_the_listed_countries_may_be_texted() {
        let gb = vec!["GB".to_owned()];
        let ok = |n: &str| Phone::parse(n).unwrap().sms_allowed(&gb);
        assert_eq!(ok("+447400123456"), Ok(()));
        assert_eq!(
            ok("+449090901234"),
            Err(SmsRefusal::NotMobile("premium-rate"))
        );
        assert_eq!(ok("+442079460000"), Err(SmsRefusal::NotMobile("landline")));
        assert_eq!(ok("+33612345678"), Err(SmsRefusal::Country("GB".into())));
        // +44 7911 is a Guernsey range: the numbering plan, not the prefix, decides.
        assert_eq!(ok("+447911123456"), Err(SmsRefusal::Country("GB".into())));
        let islands = vec!["GB".to_owned(), "GG".to_owned()];
        assert_eq!(
            Phone::parse("+447911123456").unwrap().sms_allowed(&islands),
            Ok(())
        );
        assert_eq!(
            Phone::parse("+447911123456").unwrap().sms_allowed(&[]),
            Err(SmsRefusal::Off)
        );
        // North American numbers cannot be told apart from landlines: allowed.
        let us = vec!["us".to_owned()];
        assert_eq!(
            Phone::parse("+12025550123").unwrap().sms_allowed(&us),
            Ok(())
        );
        assert!(is_country_code("gb") && is_country_code("US") && !is_country_code("UK"));
    }
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn emails_are_normalised_and_junk_refused() {
        assert_eq!(
            Email::try_from("  Della@Example.CO.UK ").unwrap().as_str(),
            "della@example.co.uk"
        );
        assert!(Email::try_from("a.b+tag@sub.example.com").is_ok());
        for bad in [
            "",
            "della",
            "della@",
            "@example.com",
            "della@localhost",
            "Della <della@example.com>",
            "della@[127.0.0.1]",
            "a b@example.com",
            &format!("{}@example.com", "a".repeat(250)),
        ] {
            assert_eq!(Email::try_from(bad), Err(ContactError::Email), "{bad:?}");
        }
    }

    #[test]
    fn an_address_on_an_internationalised_domain_keeps_the_key_it_had_before() {
        // Before addresses were canonical: the address as typed, lower-cased.
        let before = |typed: &str| {
            let mut mac = Hmac::<Sha256>::new_from_slice(b"pepper").unwrap();
            mac.update(b"email:");
            mac.update(typed.trim().to_lowercase().as_bytes());
            ContactKey(URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
        };
        let della = Contact::Email(Email::try_from("Della@Bücher.Example").unwrap());
        assert_eq!(della.address(), "della@xn--bcher-kva.example");
        assert_eq!(
            della.former_key(b"pepper"),
            Some(before("Della@Bücher.Example"))
        );
        assert_eq!(
            della.keys(b"pepper"),
            [della.key(b"pepper"), before("della@bücher.example")]
        );
        // Typed in punycode, it was keyed as it is now; the Unicode
        // spelling's key is looked up too (it may have been typed so).
        let typed = "della@xn--bcher-kva.example";
        let c = Contact::Email(Email::try_from(typed).unwrap());
        assert_eq!(c.key(b"pepper"), before(typed));
        assert_eq!(
            c.keys(b"pepper"),
            [before(typed), before("della@bücher.example")]
        );
        // An ASCII domain was keyed as it is now, and had no other key.
        let c = Contact::Email(Email::try_from("Della@Example.com").unwrap());
        assert_eq!(c.former_key(b"pepper"), None);
        assert_eq!(c.keys(b"pepper"), [before("della@example.com")]);
        let phone = Contact::Sms(Phone::parse("+447400123456").unwrap());
        assert_eq!(phone.former_key(b"pepper"), None);
    }

    #[test]
    fn every_spelling_of_a_mailbox_is_one_address_and_quoting_is_refused() {
        let one = |text: &str| Email::try_from(text).map(|e| e.as_str().to_owned());
        // The domain: its case, a trailing dot, Unicode or punycode.
        for spelling in [
            "della@bücher.example",
            "Della@BÜCHER.Example",
            "della@bücher.example.",
            "della@xn--bcher-kva.example",
            "DELLA@XN--BCHER-KVA.EXAMPLE.",
            // ü written as u and a combining diaeresis (NFD).
            "della@bu\u{308}cher.example",
            // Full-width letters, which IDNA maps to ASCII.
            "della@ｂüｃｈｅｒ.example",
        ] {
            assert_eq!(
                one(spelling),
                Ok("della@xn--bcher-kva.example".to_owned()),
                "{spelling:?}"
            );
        }
        // A Unicode local part, composed or not, is one address.
        assert_eq!(one("jose\u{301}@example.com"), one("JOSÉ@example.com"));
        // Quoted local parts and escapes: the same mailbox as the plain
        // address, which no shopper types.
        for quoted in [
            "\"della\"@example.com",
            "\"d\\ella\"@example.com",
            "d\\ella@example.com",
            "\"della smith\"@example.com",
        ] {
            assert_eq!(one(quoted), Err(ContactError::EmailQuoted), "{quoted:?}");
        }
        for bad in [
            "della@example..com",
            "della@.",
            "della@example.com..",
            "della@xn--.example",
        ] {
            assert_eq!(one(bad), Err(ContactError::Email), "{bad:?}");
        }
    }

    #[test]
    fn provider_texts_name_nobody() {
        let sandbox = "MessageRejected: Email address is not verified. The following identities failed the check in region EU-WEST-2: Della.Smith@example.com, <bob+x@mail.example.co.uk>.";
        let masked = mask_personal(sandbox);
        assert_eq!(
            masked,
            "MessageRejected: Email address is not verified. The following identities failed the check in region EU-WEST-2: D***@example.com, <b***@mail.example.co.uk>."
        );
        assert_eq!(
            mask_personal("Phone number +447911123456 is opted out; 07911123456 too"),
            "Phone number +44*******456 is opted out; 079*****456 too"
        );
        // However the number is written.
        for (written, masked) in [
            ("+44 7911 123456 failed", "+44*******456 failed"),
            ("to +1-646-736-5000.", "to +16******000."),
            ("(646) 736-5000 is blocked", "646****000 is blocked"),
            ("call 07911 123 456", "call 079*****456"),
            ("+33 6.12.34.56.78", "+33******678"),
        ] {
            assert_eq!(mask_personal(written), masked, "{written}");
            let digits: String = written.chars().filter(char::is_ascii_digit).collect();
            assert!(!mask_personal(written).contains(&digits[digits.len() - 7..]));
        }
        // Codes, versions, dates and short numbers stay as they are.
        for kept in [
            "smtp; 550 5.1.1 user unknown",
            "Throttling: Rate exceeded (request 1234-abcd)",
            "offered 2026-12-07 at 09:00, 1,000 units, order 12-34",
            "",
        ] {
            assert_eq!(mask_personal(kept), kept);
        }
    }

    #[test]
    fn phones_become_e164_and_need_a_country() {
        assert_eq!(
            Phone::parse("+44 7911 123456").unwrap().as_str(),
            "+447911123456"
        );
        assert_eq!(
            Phone::parse("0044 (7911) 123-456").unwrap().as_str(),
            "+447911123456"
        );
        assert_eq!(
            Phone::parse("+1 415 555 2671").unwrap().as_str(),
            "+14155552671"
        );
        for bad in [
            "",
            "07911 123456",
            "+44 12",
            "+999 1234567",
            "+44 7911 123456 ext 5",
            "+4479111234561234567890",
            "call me",
        ] {
            assert_eq!(Phone::parse(bad), Err(ContactError::Phone), "{bad:?}");
        }
    }

    #[test]
    fn contact_keys_are_stable_keyed_and_channel_aware() {
        let a = Contact::Email(Email::try_from("della@example.com").unwrap());
        let b = Contact::Email(Email::try_from("DELLA@example.com ").unwrap());
        assert_eq!(a.key(b"pepper"), b.key(b"pepper"));
        assert_ne!(a.key(b"pepper"), a.key(b"other"));
        assert!(!a.key(b"pepper").as_str().contains("della"));
        assert_eq!(a.key(b"pepper").as_str().len(), 43);
    }

    #[test]
    fn contacts_mask_for_logs() {
        let e = Contact::Email(Email::try_from("della@example.com").unwrap());
        assert_eq!(e.masked(), "d***@example.com");
        assert!(!format!("{e:?}").contains("della"));
        let p = Contact::Sms(Phone::parse("+447911123456").unwrap());
        assert_eq!(p.masked(), "+44*******456");
        assert!(!format!("{p:?}").contains("7911123"));
    }

    #[test]
    fn names_are_tidied_and_hostile_ones_refused() {
        assert_eq!(
            ShopperName::try_from("  Della   Ray ").unwrap().as_str(),
            "Della Ray"
        );
        assert_eq!(
            ShopperName::try_from("<script>alert(1)</script>")
                .unwrap()
                .as_str(),
            "<script>alert(1)</script>",
            "markup is kept and escaped on output, not silently changed"
        );
        for bad in ["", "   ", "a\u{0}b", "evil\u{202E}txt", &"x".repeat(81)] {
            assert!(ShopperName::try_from(bad).is_err(), "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn any_valid_email_survives_a_round_trip(local in "[a-z0-9]{1,20}", domain in "[a-z]{1,20}") {
            let text = format!("{local}@{domain}.com");
            let email = Email::try_from(text.as_str()).unwrap();
            prop_assert_eq!(Email::try_from(email.as_str()).unwrap(), email);
        }

        #[test]
        fn phone_parsing_never_panics(s in "\\PC{0,40}") {
            let _ = Phone::parse(&s);
        }

        /// However a mailbox is spelled (the case of each letter, spaces
        /// around it, the domain in Unicode or punycode, composed or not,
        /// with or without its trailing dot), it gives one contact key: one
        /// opt-out, one place per item, one per-contact limit.
        #[test]
        fn every_spelling_of_one_mailbox_gives_one_key(
            local in "[a-z0-9][a-z0-9._+-]{0,15}",
            label in prop::sample::select(vec!["bücher", "münchen", "straße", "例え", "shop", "ὕδωρ"]),
            tld in prop::sample::select(vec!["example", "co.uk", "de"]),
            upper in proptest::collection::vec(any::<bool>(), 40),
            punycode in any::<bool>(),
            decomposed in any::<bool>(),
            dot in any::<bool>(),
            pad in "[ \t]{0,2}",
        ) {
            let plain = format!("{local}@{label}.{tld}");
            let Ok(expected) = Email::try_from(plain.as_str()) else {
                return Ok(());
            };
            let mut domain = if punycode {
                idna::domain_to_ascii(&format!("{label}.{tld}")).unwrap()
            } else if decomposed {
                icu_normalizer::DecomposingNormalizerBorrowed::new_nfd()
                    .normalize(&format!("{label}.{tld}"))
                    .into_owned()
            } else {
                format!("{label}.{tld}")
            };
            if dot {
                domain.push('.');
            }
            let spelled: String = format!("{local}@{domain}")
                .chars()
                .zip(upper.iter().cycle())
                .flat_map(|(c, up)| {
                    // A letter whose capital lower-cases back to it (not ß,
                    // whose capital SS is another name).
                    let capital: String = c.to_uppercase().collect();
                    if *up && capital.to_lowercase() == c.to_string() {
                        capital.chars().collect::<Vec<_>>()
                    } else {
                        vec![c]
                    }
                })
                .collect();
            let spelled = format!("{pad}{spelled}{pad}");
            let email = Email::try_from(spelled.as_str());
            prop_assert_eq!(email.as_ref(), Ok(&expected), "{:?}", spelled);
            let pepper = b"pepper";
            prop_assert_eq!(
                Contact::Email(email.unwrap()).key(pepper),
                Contact::Email(expected).key(pepper)
            );
        }
    }
}
