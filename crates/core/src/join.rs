//! Capture's input: a notify-me form, parsed into a request or a list of field
//! errors a shopper can act on.

use serde::{Deserialize, Serialize};

use crate::contact::{Channel, Contact, Email, Phone, ShopperName};
use crate::ids::Sku;
use crate::lang::Language;
use crate::quiet::Zone;

/// The most bytes of body capture reads.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The honeypot field: hidden from people, filled in by bots.
pub const HONEYPOT_FIELD: &str = "website";

/// A notify-me submission as posted (JSON or an HTML form).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct JoinForm {
    /// The SKU.
    pub sku: Option<String>,
    /// The shopper's name.
    pub name: Option<String>,
    /// Email address.
    pub email: Option<String>,
    /// Phone number.
    pub phone: Option<String>,
    /// `email`, `sms` or `both`; inferred from the contacts given when
    /// absent (both when both are given).
    pub channel: Option<String>,
    /// Consent to be told (a JSON bool, or a form checkbox's `on`).
    pub consent: Option<Consent>,
    /// The page's language (a BCP 47 tag: `<html lang>`, else the
    /// browser's); the shopper is spoken to in the closest one the shop offers.
    pub language: Option<String>,
    /// The shopper's time zone as their browser says it (a tz database
    /// name, `Intl.DateTimeFormat().resolvedOptions().timeZone`), for their
    /// quiet hours. One the database does not know counts as not said.
    pub time_zone: Option<String>,
    /// The honeypot.
    pub website: Option<String>,
}

/// A consent value from JSON or a form.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Consent {
    /// JSON `true` / `false`.
    Flag(bool),
    /// Form values: `on`, `true`, `yes`, `1`.
    Text(String),
}

impl Consent {
    fn given(&self) -> bool {
        match self {
            Self::Flag(b) => *b,
            Self::Text(t) => matches!(
                t.trim().to_ascii_lowercase().as_str(),
                "on" | "true" | "yes" | "1"
            ),
        }
    }
}

/// One field's problem, shown next to the field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The form field.
    pub field: String,
    /// What to do about it.
    pub message: String,
}

/// A valid notify-me request's details: what the shopper asked for, before
/// it has an id or a place (the store's `NewRequest` adds those).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinDetails {
    /// The SKU.
    pub sku: Sku,
    /// Who.
    pub name: ShopperName,
    /// Where they are told.
    pub contact: Contact,
    /// The sign-up's mobile number when it asks to be told by email and
    /// text (`channel: both`): a second request, made with the first and
    /// linked to it, so an opt-out on either channel ends both.
    pub also: Option<Contact>,
    /// The language their page asked for, if it said.
    pub language: Option<Language>,
    /// Their clock, for quiet hours: the browser's zone, else their phone
    /// number's country; `None`: the shop's.
    pub zone: Option<Zone>,
}

/// What a submission amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinInput {
    /// A real request.
    Request(JoinDetails),
    /// A bot filled the honeypot: answer as if accepted, store nothing.
    Honeypot,
}

impl JoinForm {
    /// Parses the form, collecting every field's error at once.
    ///
    /// # Errors
    /// The list of field errors, in form order.
    pub fn parse(&self) -> Result<JoinInput, Vec<FieldError>> {
        if self
            .website
            .as_deref()
            .is_some_and(|w| !w.trim().is_empty())
        {
            return Ok(JoinInput::Honeypot);
        }
        let mut errors = Vec::new();
        let mut fail = |field: &str, message: String| {
            errors.push(FieldError {
                field: field.to_owned(),
                message,
            })
        };
        let sku = match present(&self.sku) {
            Some(s) => Sku::from_shop(&s)
                .map_err(|e| fail("sku", e.to_string()))
                .ok(),
            None => {
                fail("sku", "say which product to wait for".into());
                None
            }
        };
        let name = ShopperName::try_from(self.name.as_deref().unwrap_or(""))
            .map_err(|e| fail("name", e.to_string()))
            .ok();
        let contacts = self.contacts(&mut fail);
        let language = present(&self.language).and_then(|l| {
            l.parse::<Language>()
                .map_err(|e| fail("language", e.to_string()))
                .ok()
        });
        if !self.consent.as_ref().is_some_and(Consent::given) {
            fail(
                "consent",
                "tick the box to agree to one message when it is back".into(),
            );
        }
        match (sku, name, contacts) {
            (Some(sku), Some(name), Some((contact, also))) if errors.is_empty() => {
                let zone = present(&self.time_zone)
                    .and_then(|z| Zone::named(&z))
                    .or_else(|| match also.as_ref().unwrap_or(&contact) {
                        Contact::Sms(phone) => Zone::of_phone(phone),
                        Contact::Email(_) => None,
                    });
                Ok(JoinInput::Request(JoinDetails {
                    sku,
                    name,
                    contact,
                    also,
                    language,
                    zone,
                }))
            }
            _ => Err(errors),
        }
    }

    /// The contacts the form gives: its channel's (said, or the fields
    /// filled) and, told on both, the mobile number beside the address;
    /// each error told to `fail`.
    fn contacts(&self, fail: &mut impl FnMut(&str, String)) -> Option<(Contact, Option<Contact>)> {
        let email = present(&self.email)
            .map(|e| Email::try_from(e.as_str()).map_err(|e| fail("email", e.to_string())));
        let phone = present(&self.phone)
            .map(|p| Phone::parse(&p).map_err(|e| fail("phone", e.to_string())));
        let said = present(&self.channel);
        let both = match said.as_deref() {
            Some(c) => c.eq_ignore_ascii_case("both"),
            None => email.is_some() && phone.is_some(),
        };
        let channel = match said {
            _ if both => Some(Channel::Email),
            Some(c) => c
                .parse::<Channel>()
                .map_err(|e| fail("channel", e.to_string()))
                .ok(),
            None if email.is_some() => Some(Channel::Email),
            None if phone.is_some() => Some(Channel::Sms),
            None => None,
        };
        if both && phone.is_none() {
            fail("phone", "enter a mobile number to be told by text".into());
        }
        match (channel, email, phone) {
            (Some(Channel::Email), Some(Ok(e)), Some(Ok(p))) if both => {
                Some((Contact::Email(e), Some(Contact::Sms(p))))
            }
            (Some(Channel::Email), Some(Ok(e)), _) if !both => Some((Contact::Email(e), None)),
            (Some(Channel::Sms), _, Some(Ok(p))) => Some((Contact::Sms(p), None)),
            (Some(Channel::Email), None, _) => {
                fail("email", "enter an email address to be told by email".into());
                None
            }
            (Some(Channel::Sms), _, None) => {
                fail("phone", "enter a mobile number to be told by text".into());
                None
            }
            (None, None, None) => {
                fail("email", "enter an email address or a mobile number".into());
                None
            }
            _ => None,
        }
    }
}

/// A field's text, trimmed, if anything is left.
fn present(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Result<JoinInput, Vec<FieldError>> {
        serde_json::from_str::<JoinForm>(text).unwrap().parse()
    }

    fn fields(r: Result<JoinInput, Vec<FieldError>>) -> Vec<String> {
        r.unwrap_err().into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn the_browsers_zone_travels_else_the_phones_country() {
        let zone = |body: &str| match json(body).unwrap() {
            JoinInput::Request(r) => r.zone.map(|z| z.to_string()),
            JoinInput::Honeypot => panic!("not a bot"),
        };
        assert_eq!(
            zone(r#"{"sku":"CHAIR-WAL","name":"Della","email":"della@example.com","consent":true,"time_zone":"Australia/Sydney"}"#).as_deref(),
            Some("Australia/Sydney")
        );
        assert_eq!(
            zone(
                r#"{"sku":"CHAIR-WAL","name":"Della","email":"della@example.com","consent":true,"time_zone":"Mars/Olympus"}"#
            ),
            None,
            "an unknown zone is not said: the shop's clock"
        );
        assert_eq!(
            zone(r#"{"sku":"CHAIR-WAL","name":"Della","phone":"+61 412 345 678","consent":true}"#)
                .as_deref(),
            Some("AU"),
            "a text without the script: the number's country"
        );
        assert_eq!(
            zone(r#"{"sku":"CHAIR-WAL","name":"Della","phone":"+61 412 345 678","consent":true,"time_zone":"Australia/Perth"}"#).as_deref(),
            Some("Australia/Perth"),
            "the browser's zone first"
        );
    }

    #[test]
    fn a_good_email_request_parses() {
        let r = json(
            r#"{"sku":"CHAIR-WAL","name":"Della","email":"della@example.com","consent":true}"#,
        )
        .unwrap();
        let JoinInput::Request(r) = r else { panic!() };
        assert_eq!(r.contact.channel(), Channel::Email);
    }

    #[test]
    fn told_on_both_a_sign_up_carries_its_number_beside_its_address() {
        let both = |extra: &str| {
            json(&format!(
                r#"{{"sku":"A","name":"N","email":"a@b.example","phone":"+44 7400 123456","consent":true{extra}}}"#
            ))
        };
        for extra in ["", r#","channel":"both""#, r#","channel":"BOTH""#] {
            let Ok(JoinInput::Request(r)) = both(extra) else {
                panic!("{extra}")
            };
            assert_eq!(r.contact.channel(), Channel::Email);
            assert_eq!(r.also.map(|c| c.channel()), Some(Channel::Sms), "{extra}");
            assert_eq!(
                r.zone.map(|z| z.to_string()).as_deref(),
                Some("GB"),
                "the number places it"
            );
        }
        for (channel, told) in [("email", Channel::Email), ("sms", Channel::Sms)] {
            let Ok(JoinInput::Request(r)) = both(&format!(r#","channel":"{channel}""#)) else {
                panic!()
            };
            assert_eq!(
                (r.contact.channel(), r.also),
                (told, None),
                "one channel said, one told"
            );
        }
        let fields = |text: &str| {
            json(text)
                .unwrap_err()
                .into_iter()
                .map(|e| e.field)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            fields(
                r#"{"sku":"A","name":"N","email":"a@b.example","channel":"both","consent":true}"#
            ),
            vec!["phone"]
        );
        assert_eq!(
            fields(
                r#"{"sku":"A","name":"N","phone":"+447400123456","channel":"both","consent":true}"#
            ),
            vec!["email"]
        );
    }

    #[test]
    fn the_pages_language_travels_and_junk_is_refused_by_name() {
        let with = |l: &str| {
            json(&format!(
                r#"{{"sku":"CHAIR-WAL","name":"Della","email":"della@example.com","consent":true,"language":{l}}}"#
            ))
        };
        let JoinInput::Request(r) = with("\"de-AT\"").unwrap() else {
            panic!()
        };
        assert_eq!(r.language.unwrap().to_string(), "de-AT");
        let JoinInput::Request(r) = with("\"  \"").unwrap() else {
            panic!()
        };
        assert_eq!(r.language, None, "blank: not said");
        assert_eq!(fields(with("\"<script>\"")), ["language"]);
        assert_eq!(
            fields(with(&format!("\"{}\"", "a".repeat(40)))),
            ["language"]
        );
    }

    #[test]
    fn a_form_post_with_a_phone_parses() {
        let form: JoinForm = serde_urlencoded::from_str(
            "sku=CHAIR-WAL&name=Marcus&phone=%2B447911123456&consent=on&website=",
        )
        .unwrap();
        let JoinInput::Request(r) = form.parse().unwrap() else {
            panic!()
        };
        assert_eq!(
            r.contact,
            Contact::Sms(Phone::parse("+447911123456").unwrap())
        );
    }

    #[test]
    fn a_shop_s_sku_is_taken_as_the_catalogue_keys_it() {
        let Ok(JoinInput::Request(d)) = json(
            r#"{"sku":"TEE / BLUE M","name":"Della","email":"della@example.com","consent":true}"#,
        ) else {
            panic!("a sign-up")
        };
        assert_eq!(d.sku.as_str(), "TEE-BLUE-M");
    }

    #[test]
    fn every_bad_field_is_listed() {
        assert_eq!(
            fields(json(
                r#"{"sku":" / ","name":"","email":"nope","consent":false}"#
            )),
            vec!["sku", "name", "email", "consent"]
        );
        assert_eq!(
            fields(json(r#"{"sku":"A","name":"N","consent":true}"#)),
            vec!["email"]
        );
        assert_eq!(
            fields(json(
                r#"{"sku":"A","name":"N","email":"a@b.example","channel":"sms","consent":true}"#
            )),
            vec!["phone"]
        );
        assert_eq!(
            fields(json(
                r#"{"sku":"A","name":"N","email":"a@b.example","channel":"pigeon","consent":true}"#
            )),
            vec!["channel"]
        );
    }

    #[test]
    fn a_filled_honeypot_is_a_bot() {
        assert_eq!(
            json(r#"{"website":"http://spam.example"}"#).unwrap(),
            JoinInput::Honeypot
        );
    }
}
