//! Quiet hours: no notice or reminder reaches a shopper inside their quiet
//! hours, in their own time zone (DESIGN I2, §3 "Quiet hours").
//!
//! A shopper's zone is the one their browser said when they signed up
//! ([`Zone::named`]), else their phone number's country ([`Zone::of_phone`]:
//! asleep when it is quiet anywhere in that country), else the shop's
//! `time_zone`. Each channel has its own span (texts 21:00–08:00 by default,
//! email none). A shopper asleep at a wave keeps their place: the units go
//! to the next people in line who are awake, and the wave says when the
//! first of those passed over wakes, so the units still free then are
//! offered to them first.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use jiff::Timestamp;
use jiff::civil::Time;
use jiff::tz::TimeZone;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Millis;
use crate::contact::{Channel, Contact, Phone};

pub mod legal;

/// The tz database's table of countries and their zones (public domain).
const ZONE_TABLE: &str = include_str!("zone1970.tab");

/// The longest zone name taken from a browser (the longest in the tz
/// database is 32 characters).
const MAX_NAME: usize = 64;

/// Where a shopper's clock is: a zone of the tz database
/// (`Europe/Paris`), or a country (`US`, an ISO 3166 code) when only their
/// phone number says where they are, which counts as every zone of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Zone(String);

/// Why a stored or configured zone was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a time zone of the tz database (such as `Europe/London` or `America/New_York`)"
)]
pub struct ZoneError(String);

impl Zone {
    /// Coordinated Universal Time.
    pub fn utc() -> Self {
        Self("UTC".into())
    }

    /// A zone by its tz database name, as a browser gives it
    /// (`Intl.DateTimeFormat().resolvedOptions().timeZone`); `None` for a
    /// name the database does not know.
    pub fn named(name: &str) -> Option<Self> {
        let name = name.trim();
        if name.is_empty() || name.len() > MAX_NAME || is_country(name) {
            return None;
        }
        jiff::tz::db().get(name).ok().map(|_| Self(name.to_owned()))
    }

    /// The zones of a phone number's country, if the tz database lists it.
    pub fn of_phone(phone: &Phone) -> Option<Self> {
        let number = phonenumber::parse(None, phone.as_str()).ok()?;
        let country = number.country().id()?;
        let code: &str = country.as_ref();
        countries()
            .contains_key(code)
            .then(|| Self(code.to_owned()))
    }

    /// Reads a stored zone (a name or a country code).
    ///
    /// # Errors
    /// [`ZoneError`] for one that is neither.
    pub fn from_stored(s: &str) -> Result<Self, ZoneError> {
        if is_country(s) {
            if countries().contains_key(s) {
                return Ok(Self(s.to_owned()));
            }
            return Err(ZoneError(s.to_owned()));
        }
        Self::named(s).ok_or_else(|| ZoneError(s.to_owned()))
    }

    /// As stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The zone's names: one, or each of a country's.
    fn names(&self) -> Vec<String> {
        if is_country(&self.0) {
            countries()
                .get(self.0.as_str())
                .map(|names| names.iter().map(|n| (*n).to_owned()).collect())
                .unwrap_or_default()
        } else {
            vec![self.0.clone()]
        }
    }

    /// The zone's clocks: one, or each of a country's.
    fn clocks(&self) -> Vec<TimeZone> {
        clocks(&self.names())
    }

    /// Whether this is a whole country (a phone number's), not a browser's
    /// zone.
    fn is_country(&self) -> bool {
        is_country(&self.0)
    }
}

impl Default for Zone {
    fn default() -> Self {
        Self::utc()
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Zone {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Zone {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::from_stored(&s).map_err(serde::de::Error::custom)
    }
}

/// The clocks of zones named in the tz database.
fn clocks(names: &[String]) -> Vec<TimeZone> {
    names
        .iter()
        .filter_map(|name| jiff::tz::db().get(name).ok())
        .collect()
}

fn is_country(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())
}

/// Country code to its zones, from the tz database's table.
fn countries() -> &'static HashMap<&'static str, Vec<&'static str>> {
    static TABLE: OnceLock<HashMap<&'static str, Vec<&'static str>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: HashMap<&str, Vec<&str>> = HashMap::new();
        for line in ZONE_TABLE.lines().filter(|l| !l.starts_with('#')) {
            let mut columns = line.split('\t');
            let (Some(codes), Some(_), Some(zone)) =
                (columns.next(), columns.next(), columns.next())
            else {
                continue;
            };
            for code in codes.split(',') {
                table.entry(code).or_default().push(zone);
            }
        }
        table
    })
}

/// A daily span of local time, `21:00-08:00`: from the first time up to
/// (not including) the second, over midnight when the second is earlier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    from: Time,
    to: Time,
}

/// Why a span was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a span of local time: write it as `HH:MM-HH:MM` (`21:00-08:00`), or `\"\"` for none"
)]
pub struct SpanError(String);

impl Span {
    /// Reads `HH:MM-HH:MM`.
    ///
    /// # Errors
    /// [`SpanError`] otherwise, or for an empty span (both times the same).
    pub fn parse(s: &str) -> Result<Self, SpanError> {
        let bad = || SpanError(s.to_owned());
        let (from, to) = s.trim().split_once('-').ok_or_else(bad)?;
        let time = |t: &str| -> Result<Time, SpanError> {
            let (h, m) = t.trim().split_once(':').ok_or_else(bad)?;
            let (h, m): (i8, i8) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
            Time::new(h, m, 0, 0).map_err(|_| bad())
        };
        let span = Self {
            from: time(from)?,
            to: time(to)?,
        };
        if span.from == span.to {
            return Err(bad());
        }
        Ok(span)
    }

    /// Its first time and its last.
    fn times(self) -> (Time, Time) {
        (self.from, self.to)
    }

    /// Whether local time `t` is inside.
    fn covers(self, t: Time) -> bool {
        if self.from < self.to {
            self.from <= t && t < self.to
        } else {
            t >= self.from || t < self.to
        }
    }

    /// When the span `at` is inside ends, in zone `tz`; `None` when `at` is
    /// outside it.
    fn ends_after(self, tz: &TimeZone, at: Timestamp) -> Option<Timestamp> {
        let local = at.to_zoned_datetime(tz.clone());
        let now = local.time();
        if !self.covers(now) {
            return None;
        }
        let day = if now < self.to {
            local.date()
        } else {
            local.date().tomorrow().ok()?
        };
        // A span ending in a clock change's gap ends when the clock shows a
        // later time (jiff's compatible reading).
        day.to_datetime(self.to)
            .to_zoned_datetime(tz.clone())
            .ok()
            .map(|z| z.timestamp())
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02}:{:02}-{:02}:{:02}",
            self.from.hour(),
            self.from.minute(),
            self.to.hour(),
            self.to.minute()
        )
    }
}

/// A channel's quiet hours in the settings: a span, or `""` for none.
fn span_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Span>, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Ok(None);
    }
    Span::parse(&s).map(Some).map_err(serde::de::Error::custom)
}

fn span_serialize<S: Serializer>(span: &Option<Span>, s: S) -> Result<S::Ok, S::Error> {
    match span {
        Some(span) => s.collect_str(span),
        None => s.serialize_str(""),
    }
}

/// Quiet hours per channel (the settings' `[quiet_hours]`), and the shop's
/// own legal hours for texts by place (`[quiet_hours.legal]`, replacing
/// [`legal::RULES`]' for that place).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuietHours {
    /// Texts: 21:00–08:00 by default.
    #[serde(
        default = "default_sms",
        deserialize_with = "span_option",
        serialize_with = "span_serialize"
    )]
    pub sms: Option<Span>,
    /// Email: none by default.
    #[serde(
        default,
        deserialize_with = "span_option",
        serialize_with = "span_serialize"
    )]
    pub email: Option<Span>,
    /// The shop's legal hours for texts, by place (`US-FL`, `FR`).
    #[serde(default, skip_serializing_if = "legal::Overrides::is_empty")]
    pub legal: legal::Overrides,
}

fn default_sms() -> Option<Span> {
    Span::parse("21:00-08:00").ok()
}

impl Default for QuietHours {
    fn default() -> Self {
        Self {
            sms: default_sms(),
            email: None,
            legal: legal::Overrides::new(),
        }
    }
}

impl QuietHours {
    /// The channel's span, if it has one.
    pub fn on(&self, channel: Channel) -> Option<Span> {
        match channel {
            Channel::Sms => self.sms,
            Channel::Email => self.email,
        }
    }
}

/// What decides when a shopper wakes: the channel, their zone, their place.
type Asleep = (Channel, Option<Zone>, Option<Arc<legal::Place>>);

/// Asks, for many shoppers at one moment, who is asleep (inside their quiet
/// hours, or, for a text, outside their place's legal hours) and until
/// when; each zone, place and channel is worked out once.
#[derive(Debug)]
pub struct Sleepers<'a> {
    hours: &'a QuietHours,
    shop: &'a Zone,
    now: Millis,
    known: HashMap<Asleep, Option<Millis>>,
    /// Places by a number's first seven digits, which tell its country
    /// and, in North America, its area code (shared with `known`'s keys).
    places: HashMap<String, Option<Arc<legal::Place>>>,
}

impl<'a> Sleepers<'a> {
    /// At `now`, with the settings' quiet hours and the shop's zone (for
    /// shoppers whose zone is not known).
    pub fn new(hours: &'a QuietHours, shop: &'a Zone, now: Millis) -> Self {
        Self {
            hours,
            shop,
            now,
            known: HashMap::new(),
            places: HashMap::new(),
        }
    }

    /// When a shopper at `contact`, in `zone` (`None`: the shop's), is next
    /// awake and may lawfully be told; `None` when that is now. A text's
    /// number is placed ([`legal::Place`]): its area code's zones stand for
    /// a zone known only by country, and its rules hold on those and on the
    /// browser's zone.
    pub fn asleep_until(&mut self, contact: &Contact, zone: Option<&Zone>) -> Option<Millis> {
        let channel = contact.channel();
        let place = match contact {
            Contact::Sms(phone) => {
                let digits = phone.as_str();
                let prefix = digits.get(..8).unwrap_or(digits);
                self.places
                    .entry(prefix.to_owned())
                    .or_insert_with(|| legal::Place::of_phone(phone).map(Arc::new))
                    .clone()
            }
            Contact::Email(_) => None,
        };
        let key = (channel, zone.cloned(), place);
        if let Some(known) = self.known.get(&key) {
            return *known;
        }
        let (_, zone, place) = &key;
        // A browser's zone is the shopper's; a country's, or the shop's, only
        // a guess the number's place betters.
        let browser = zone.as_ref().filter(|z| !z.is_country());
        let own = match (browser, place) {
            (Some(browser), _) => browser.clocks(),
            (None, Some(place)) if !place.zones.is_empty() => clocks(&place.zones),
            (None, _) => zone.as_ref().unwrap_or(self.shop).clocks(),
        };
        let mut blocks = Vec::new();
        if let Some(span) = self.hours.on(channel) {
            blocks.push(Block::Quiet(span, own.clone()));
        }
        if let Some(place) = place {
            let mut on = clocks(&place.zones);
            on.extend(browser.map(Zone::clocks).unwrap_or_default());
            blocks.extend(
                place
                    .rules(&self.hours.legal)
                    .into_iter()
                    .map(|rule| Block::Legal(rule, on.clone())),
            );
        }
        let at = wakes_at(&blocks, self.now);
        self.known.insert(key, at);
        at
    }
}

/// What keeps a message back, on which clocks.
enum Block {
    /// Quiet hours.
    Quiet(Span, Vec<TimeZone>),
    /// A place's legal hours.
    Legal(legal::Rule, Vec<TimeZone>),
}

impl Block {
    /// When this block, on the clock it ends latest, lets go of `at`;
    /// `None` when it does not hold `at`.
    fn ends_after(&self, at: Timestamp) -> Option<Timestamp> {
        match self {
            Self::Quiet(span, clocks) => {
                clocks.iter().filter_map(|tz| span.ends_after(tz, at)).max()
            }
            Self::Legal(rule, clocks) => clocks
                .iter()
                .filter_map(|tz| rule.closed_until(tz, at))
                .max(),
        }
    }
}

/// How many times the wake is moved on before it is taken as it is (a span
/// of hours that, over every zone of a wide country, leaves no waking hour
/// at all).
const MAX_STEPS: usize = 64;

/// When no block holds, from `now` on; `None` when that is now.
fn wakes_at(blocks: &[Block], now: Millis) -> Option<Millis> {
    let start = Timestamp::from_millisecond(now).ok()?;
    let mut at = start;
    for _ in 0..MAX_STEPS {
        let later = blocks.iter().filter_map(|b| b.ends_after(at)).max();
        match later {
            Some(end) if end > at => at = end,
            _ => break,
        }
    }
    (at > start).then(|| at.as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> Millis {
        s.parse::<Timestamp>().unwrap().as_millisecond()
    }

    fn zone(s: &str) -> Zone {
        Zone::from_stored(s).unwrap()
    }

    /// A text to `number`.
    fn sms(number: &str) -> Contact {
        Contact::Sms(Phone::parse(number).unwrap())
    }

    /// A British number: no legal hours of its own, only quiet hours.
    fn uk() -> Contact {
        sms("+44 7911 123456")
    }

    fn email() -> Contact {
        Contact::on(Channel::Email, "della@example.com").unwrap()
    }

    #[test]
    fn a_text_waits_for_eight_in_the_shoppers_own_zone() {
        let hours = QuietHours::default();
        let shop = zone("America/New_York");
        // 09:00 in New York is 01:00 the next day in Sydney (summer there).
        let now = ms("2026-12-07T14:00:00Z");
        let mut sleepers = Sleepers::new(&hours, &shop, now);
        assert_eq!(sleepers.asleep_until(&uk(), None), None);
        assert_eq!(
            sleepers.asleep_until(&uk(), Some(&zone("Australia/Sydney"))),
            Some(ms("2026-12-07T21:00:00Z")),
            "08:00 on the 8th in Sydney (UTC+11)"
        );
        assert_eq!(
            sleepers.asleep_until(&email(), Some(&zone("Australia/Sydney"))),
            None,
            "email has no quiet hours by default"
        );
    }

    #[test]
    fn the_span_starts_at_its_first_minute_and_ends_before_its_last() {
        let hours = QuietHours::default();
        let london = zone("Europe/London");
        for (at, asleep) in [
            ("2026-12-07T20:59:59Z", None),
            ("2026-12-07T21:00:00Z", Some("2026-12-08T08:00:00Z")),
            ("2026-12-08T07:59:59Z", Some("2026-12-08T08:00:00Z")),
            ("2026-12-08T08:00:00Z", None),
        ] {
            let mut sleepers = Sleepers::new(&hours, &london, ms(at));
            assert_eq!(
                sleepers.asleep_until(&uk(), None),
                asleep.map(ms),
                "at {at}"
            );
        }
    }

    #[test]
    fn a_span_ending_in_the_spring_gap_ends_when_the_clock_passes_it() {
        let hours = QuietHours {
            sms: Some(Span::parse("22:00-02:30").unwrap()),
            ..QuietHours::default()
        };
        let ny = zone("America/New_York");
        // 2027-03-14: 02:00 EST jumps to 03:00 EDT; 02:30 never shows.
        let mut sleepers = Sleepers::new(&hours, &ny, ms("2027-03-14T05:00:00Z"));
        assert_eq!(
            sleepers.asleep_until(&uk(), Some(&ny)),
            Some(ms("2027-03-14T07:30:00Z")),
            "03:30 EDT, the compatible reading of 02:30"
        );
    }

    #[test]
    fn a_country_is_quiet_while_any_of_its_zones_is() {
        let hours = QuietHours::default();
        let shop = Zone::utc();
        let perth = sms("+61 412 345 678");
        let country = Zone::of_phone(&Phone::parse("+61 412 345 678").unwrap()).unwrap();
        assert_eq!(country.as_str(), "AU");
        // 22:00 UTC: 09:00 in Sydney (summer), 06:00 in Perth.
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-07T22:00:00Z"));
        assert_eq!(
            sleepers.asleep_until(&perth, Some(&country)),
            Some(ms("2026-12-08T00:00:00Z")),
            "08:00 in Perth"
        );
    }

    #[test]
    fn a_us_number_is_placed_by_its_area_code_not_its_whole_country() {
        let hours = QuietHours::default();
        let shop = Zone::utc();
        let new_york = sms("+1 212 555 0100");
        let country = Zone::of_phone(&Phone::parse("+1 212 555 0100").unwrap()).unwrap();
        assert_eq!(country.as_str(), "US");
        // 14:00 UTC: 09:00 in New York (04:00 in Honolulu, no matter).
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-07T14:00:00Z"));
        assert_eq!(sleepers.asleep_until(&new_york, Some(&country)), None);
        // A browser in Honolulu: the stricter of the two.
        assert_eq!(
            sleepers.asleep_until(&new_york, Some(&zone("Pacific/Honolulu"))),
            Some(ms("2026-12-07T18:00:00Z")),
            "08:00 in Honolulu"
        );
    }

    #[test]
    fn florida_texts_stop_at_eight_and_france_waits_out_sundays_and_holidays() {
        let hours = QuietHours::default();
        let shop = Zone::utc();
        let miami = sms("+1 305 555 0100");
        // 20:30 EST in Miami: inside the federal window, outside Florida's.
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-08T01:30:00Z"));
        assert_eq!(
            sleepers.asleep_until(&miami, None),
            Some(ms("2026-12-08T13:00:00Z")),
            "08:00 EST"
        );
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-08T13:00:00Z"));
        assert_eq!(sleepers.asleep_until(&miami, None), None, "08:00 EST");
        let paris = sms("+33 6 12 34 56 78");
        // Sunday 2026-12-06, noon in Paris: Monday 08:00.
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-06T11:00:00Z"));
        assert_eq!(
            sleepers.asleep_until(&paris, None),
            Some(ms("2026-12-07T07:00:00Z"))
        );
        // Saturday 2026-12-26 at 21:00: Sunday, then Monday the 28th.
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-26T20:00:00Z"));
        assert_eq!(
            sleepers.asleep_until(&paris, None),
            Some(ms("2026-12-28T07:00:00Z"))
        );
        // Christmas Day, a Friday: Saturday 08:00.
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-25T10:00:00Z"));
        assert_eq!(
            sleepers.asleep_until(&paris, None),
            Some(ms("2026-12-26T07:00:00Z"))
        );
        // Email keeps no legal hours.
        assert_eq!(sleepers.asleep_until(&email(), None), None);
    }

    proptest::proptest! {
        /// Whoever is held back is awake and within the law at the moment
        /// given for them, across places, browser zones and three years.
        #[test]
        fn the_moment_a_shopper_wakes_is_a_moment_they_may_be_told(
            number in 0..7usize,
            browser in 0..4usize,
            // 2026-01-01 to 2028-12-31.
            second in 1_767_225_600i64..1_861_919_999,
        ) {
            let numbers = ["+1 305 736 5000", "+1 808 736 5000", "+1 401 736 5000", "+1 214 736 5000", "+33 6 12 34 56 78", "+44 7911 123456", "+81 90 1234 5678"];
            let browsers = [None, Some("America/New_York"), Some("Europe/Paris"), Some("Pacific/Auckland")];
            let (hours, shop) = (QuietHours::default(), Zone::utc());
            let contact = sms(numbers[number]);
            let zone = browsers[browser].map(zone);
            let now = second * 1_000;
            let mut sleepers = Sleepers::new(&hours, &shop, now);
            if let Some(wakes) = sleepers.asleep_until(&contact, zone.as_ref()) {
                proptest::prop_assert!(wakes > now);
                let mut then = Sleepers::new(&hours, &shop, wakes);
                proptest::prop_assert_eq!(then.asleep_until(&contact, zone.as_ref()), None, "{} at {}", numbers[number], wakes);
            }
        }
    }

    #[test]
    fn a_shop_s_own_rule_replaces_the_place_s() {
        let mut hours = QuietHours::default();
        hours
            .legal
            .insert("FR".into(), legal::Override::parse("").unwrap());
        let shop = Zone::utc();
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-06T11:00:00Z"));
        assert_eq!(
            sleepers.asleep_until(&sms("+33 6 12 34 56 78"), None),
            None,
            "a Sunday, lifted"
        );
    }

    #[test]
    fn a_span_without_a_waking_hour_still_ends() {
        let hours = QuietHours {
            sms: Some(Span::parse("08:01-08:00").unwrap()),
            ..QuietHours::default()
        };
        let shop = Zone::utc();
        let mut sleepers = Sleepers::new(&hours, &shop, ms("2026-12-07T03:00:00Z"));
        let russia = zone("RU");
        assert!(
            sleepers
                .asleep_until(&sms("+7 912 345 6789"), Some(&russia))
                .is_some()
        );
    }

    #[test]
    fn zones_from_browsers_and_settings_are_checked() {
        assert_eq!(
            Zone::named(" Asia/Kolkata ").unwrap().as_str(),
            "Asia/Kolkata"
        );
        assert!(
            Zone::named("Asia/Calcutta").is_some(),
            "an old name still known"
        );
        for bad in [
            "",
            "Mars/Olympus",
            "US",
            "x".repeat(65).as_str(),
            "../../etc/passwd",
        ] {
            assert!(Zone::named(bad).is_none(), "{bad}");
        }
        assert!(Zone::from_stored("ZZ").is_err());
        assert_eq!(
            Zone::from_stored("Nowhere/Land").unwrap_err().to_string(),
            "`Nowhere/Land` is not a time zone of the tz database (such as `Europe/London` or `America/New_York`)"
        );
    }

    #[test]
    fn spans_read_and_print_as_written() {
        let span = Span::parse("21:00-08:00").unwrap();
        assert_eq!(span.to_string(), "21:00-08:00");
        for bad in [
            "21:00",
            "25:00-08:00",
            "21:00-08:60",
            "08:00-08:00",
            "nine-five",
        ] {
            assert!(Span::parse(bad).is_err(), "{bad}");
        }
        let hours: QuietHours = toml::from_str("sms = \"\"\nemail = \"22:00-07:30\"").unwrap();
        assert_eq!(hours.sms, None);
        assert_eq!(hours.email, Some(Span::parse("22:00-07:30").unwrap()));
        let back: QuietHours = toml::from_str(&toml::to_string(&hours).unwrap()).unwrap();
        assert_eq!(back, hours);
    }
}
