//! Legal hours: when the law of the place a phone number belongs to lets a
//! shop text it, beside the shop's own quiet hours. A number is placed by
//! its country, and a US or Canadian one by its area code (its state or
//! province, and the time zones libphonenumber gives it, `area_codes.tab`);
//! a text may go only when every rule of the place allows it on every clock
//! the shopper may keep (the area code's zones and their browser's, the
//! stricter). Each rule's source is beside it; docs/DESIGN.md §3 sums them
//! up; the settings may replace any place's (`[quiet_hours.legal]`).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::OnceLock;

use jiff::Timestamp;
use jiff::civil::{Date, Time, Weekday};
use jiff::tz::TimeZone;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::contact::Phone;

/// The area-code table (`scripts/area-codes.py` writes it).
const AREA_CODES: &str = include_str!("area_codes.tab");

/// Which public holidays close a rule's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holidays {
    /// None: holidays are days like any other.
    Open,
    /// France's eleven public holidays (Easter's computed for any year).
    France,
}

/// When a place's law lets a shop text: hours on weekdays, Saturdays and
/// Sundays (`None`: not that day), and the holidays that close it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Monday to Friday.
    pub weekdays: Option<(Time, Time)>,
    /// Saturday.
    pub saturday: Option<(Time, Time)>,
    /// Sunday.
    pub sunday: Option<(Time, Time)>,
    /// Holidays with no texts.
    pub holidays: Holidays,
}

const fn at(hour: i8, minute: i8) -> Time {
    Time::constant(hour, minute, 0, 0)
}

const fn every_day(from: Time, to: Time) -> Rule {
    Rule {
        weekdays: Some((from, to)),
        saturday: Some((from, to)),
        sunday: Some((from, to)),
        holidays: Holidays::Open,
    }
}

const fn not_sunday(from: Time, to: Time) -> Rule {
    Rule {
        weekdays: Some((from, to)),
        saturday: Some((from, to)),
        sunday: None,
        holidays: Holidays::Open,
    }
}

/// The built-in rules by place (ISO 3166 country, or `country-region`),
/// read in December 2026. The US states' hours and days are as two
/// compilations give them alike, Drop Cowboy's "State Calling Restrictions
/// Guide" (updated 2025-11-01) and Referrizer's "TCPA Quiet Hours and
/// State-Specific Rules for Text Campaigns"; where a statute is named, it
/// was read too. Holidays of US states are not encoded.
pub const RULES: &[(&str, Rule)] = &[
    // 47 CFR § 64.1200(c)(1) (TCPA): 8am–9pm at the called party's location.
    ("US", every_day(at(8, 0), at(21, 0))),
    ("US-AL", not_sunday(at(8, 0), at(20, 0))),
    ("US-CT", every_day(at(9, 0), at(20, 0))),
    // Fla. Stat. § 501.059(8)(a), as amended in 2021 (SB 1120).
    ("US-FL", every_day(at(8, 0), at(20, 0))),
    ("US-KY", every_day(at(10, 0), at(21, 0))),
    ("US-LA", not_sunday(at(8, 0), at(20, 0))),
    ("US-MA", every_day(at(8, 0), at(20, 0))),
    ("US-MD", every_day(at(8, 0), at(20, 0))),
    ("US-MI", every_day(at(9, 0), at(21, 0))),
    ("US-MN", every_day(at(9, 0), at(21, 0))),
    ("US-MS", not_sunday(at(8, 0), at(20, 0))),
    ("US-NJ", every_day(at(8, 0), at(20, 0))),
    ("US-NM", every_day(at(9, 0), at(21, 0))),
    ("US-NV", every_day(at(9, 0), at(20, 0))),
    // Okla. Stat. tit. 15 § 775C.4 (Telephone Solicitation Act of 2022).
    ("US-OK", every_day(at(8, 0), at(20, 0))),
    (
        "US-RI",
        Rule {
            weekdays: Some((at(9, 0), at(18, 0))),
            saturday: Some((at(10, 0), at(17, 0))),
            sunday: None,
            holidays: Holidays::Open,
        },
    ),
    // Tex. Bus. & Com. Code § 301.051 (SB 140, 2025).
    (
        "US-TX",
        Rule {
            weekdays: Some((at(9, 0), at(21, 0))),
            saturday: Some((at(9, 0), at(21, 0))),
            sunday: Some((at(12, 0), at(21, 0))),
            holidays: Holidays::Open,
        },
    ),
    // CRTC Unsolicited Telecommunications Rules, Part III: weekdays
    // 9:00–21:30, weekends 10:00–18:00.
    (
        "CA",
        Rule {
            weekdays: Some((at(9, 0), at(21, 30))),
            saturday: Some((at(10, 0), at(18, 0))),
            sunday: Some((at(10, 0), at(18, 0))),
            holidays: Holidays::Open,
        },
    ),
    // AF2M's SMS code of conduct, as French marketing texts keep it: not
    // before 8:00 or after 20:30, never on Sundays or public holidays.
    (
        "FR",
        Rule {
            weekdays: Some((at(8, 0), at(20, 30))),
            saturday: Some((at(8, 0), at(20, 30))),
            sunday: None,
            holidays: Holidays::France,
        },
    ),
];

/// A shop's own rule for a place (`[quiet_hours.legal]`): the hours of
/// every day texts may go, `"08:00-20:00"`, or `""` for no limit of law
/// (the shop's quiet hours still apply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Override(Option<super::Span>);

/// Why an override was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a span of the day: write the hours texts may go as `HH:MM-HH:MM` (`08:00-20:00`, the first earlier), or `\"\"` for no limit"
)]
pub struct OverrideError(String);

impl Override {
    /// Reads `HH:MM-HH:MM` (the first time earlier) or `""`.
    ///
    /// # Errors
    /// [`OverrideError`] otherwise.
    pub fn parse(s: &str) -> Result<Self, OverrideError> {
        if s.trim().is_empty() {
            return Ok(Self(None));
        }
        let span = super::Span::parse(s).map_err(|_| OverrideError(s.to_owned()))?;
        let (from, to) = span.times();
        if from >= to {
            return Err(OverrideError(s.to_owned()));
        }
        Ok(Self(Some(span)))
    }
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(span) => span.fmt(f),
            None => Ok(()),
        }
    }
}

impl Serialize for Override {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Override {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// The shop's overrides, by place.
pub type Overrides = BTreeMap<String, Override>;

/// Where a number belongs: its places (the country first, then its state or
/// province where the area code says) and the zones its clock may show.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Place {
    /// `US`, `US-FL`, `FR`…
    pub places: Vec<String>,
    /// tz database names.
    pub zones: Vec<String>,
}

impl Place {
    /// Places `phone`: a US or Canadian number by its area code, any other
    /// by its country; `None` for a number of no country.
    pub fn of_phone(phone: &Phone) -> Option<Self> {
        let number = phonenumber::parse(None, phone.as_str()).ok()?;
        let id = number.country().id()?;
        let country: &str = id.as_ref();
        let national = number.national().value().to_string();
        if matches!(country, "US" | "CA")
            && let Some((regions, zones)) = national.get(..3).and_then(|npa| area_codes().get(npa))
        {
            let mut places = vec![country.to_owned()];
            places.extend(regions.iter().map(|r| (*r).to_owned()));
            return Some(Self {
                places,
                zones: zones.iter().map(|z| (*z).to_owned()).collect(),
            });
        }
        Some(Self {
            places: vec![country.to_owned()],
            zones: super::Zone::from_stored(country)
                .map(|z| z.names())
                .unwrap_or_default(),
        })
    }

    /// The rules that hold here: each place's, the shop's where it gives one.
    pub fn rules(&self, overrides: &Overrides) -> Vec<Rule> {
        self.places
            .iter()
            .filter_map(|place| match overrides.get(place) {
                Some(Override(Some(span))) => {
                    let (from, to) = span.times();
                    Some(every_day(from, to))
                }
                Some(Override(None)) => None,
                None => RULES.iter().find(|(p, _)| p == place).map(|(_, r)| *r),
            })
            .collect()
    }
}

/// An area code's places and zones.
type AreaCode = (Vec<&'static str>, Vec<&'static str>);

/// Area code to its places and zones.
fn area_codes() -> &'static HashMap<&'static str, AreaCode> {
    static TABLE: OnceLock<HashMap<&'static str, AreaCode>> = OnceLock::new();
    TABLE.get_or_init(|| {
        AREA_CODES
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|line| {
                let mut columns = line.split('\t');
                let (npa, places, zones) = (columns.next()?, columns.next()?, columns.next()?);
                Some((
                    npa,
                    (places.split(',').collect(), zones.split(',').collect()),
                ))
            })
            .collect()
    })
}

impl Rule {
    /// The hours texts may go on `day`.
    fn hours_on(&self, day: Date) -> Option<(Time, Time)> {
        if self.holidays == Holidays::France && is_french_holiday(day) {
            return None;
        }
        match day.weekday() {
            Weekday::Saturday => self.saturday,
            Weekday::Sunday => self.sunday,
            _ => self.weekdays,
        }
    }

    /// When texts may next go in zone `tz`, from `at`; `None` when they may
    /// go now.
    pub(super) fn closed_until(&self, tz: &TimeZone, at: Timestamp) -> Option<Timestamp> {
        let local = at.to_zoned_datetime(tz.clone());
        let (today, now) = (local.date(), local.time());
        let mut day = today;
        // A fortnight holds an open day of any rule that has one.
        for _ in 0..14 {
            if let Some((from, to)) = self.hours_on(day) {
                if day != today || now < from {
                    return day
                        .to_datetime(from)
                        .to_zoned_datetime(tz.clone())
                        .ok()
                        .map(|z| z.timestamp());
                }
                if now < to {
                    return None;
                }
            }
            day = day.tomorrow().ok()?;
        }
        None
    }
}

/// Easter Sunday of `year` (the Gregorian computus, Meeus/Jones/Butcher).
fn easter(year: i16) -> Option<Date> {
    let y = i32::from(year);
    let (a, b, c) = (y % 19, y / 100, y % 100);
    let (d, e) = (b / 4, b % 4);
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let (i, k) = (c / 4, c % 4);
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    Date::new(year, i8::try_from(month).ok()?, i8::try_from(day).ok()?).ok()
}

/// France's public holidays (Code du travail, art. L3133-1): eleven, three
/// of them set by Easter.
fn is_french_holiday(day: Date) -> bool {
    const FIXED: [(i8, i8); 8] = [
        (1, 1),
        (5, 1),
        (5, 8),
        (7, 14),
        (8, 15),
        (11, 1),
        (11, 11),
        (12, 25),
    ];
    if FIXED.contains(&(day.month(), day.day())) {
        return true;
    }
    let Some(easter) = easter(day.year()) else {
        return false;
    };
    // Easter Monday, Ascension Thursday, Whit Monday.
    [1, 39, 50]
        .iter()
        .any(|offset| easter.checked_add(jiff::Span::new().days(*offset)).ok() == Some(day))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> Date {
        s.parse().unwrap()
    }

    #[test]
    fn easter_and_the_french_holidays_that_follow_it() {
        assert_eq!(easter(2026), Some(date("2026-04-05")));
        assert_eq!(easter(2027), Some(date("2027-03-28")));
        assert_eq!(easter(2028), Some(date("2028-04-16")));
        for holiday in [
            "2026-04-06",
            "2026-05-14",
            "2026-05-25",
            "2027-03-29",
            "2027-05-06",
            "2027-05-17",
            "2028-04-17",
            "2028-05-25",
            "2028-06-05",
            "2026-07-14",
            "2027-11-11",
            "2028-01-01",
        ] {
            assert!(is_french_holiday(date(holiday)), "{holiday}");
        }
        for day in ["2026-04-05", "2026-04-07", "2026-12-26", "2027-07-13"] {
            assert!(!is_french_holiday(date(day)), "{day}");
        }
    }

    #[test]
    fn a_number_is_placed_by_its_area_code_or_its_country() {
        let place = |n: &str| Place::of_phone(&Phone::parse(n).unwrap()).unwrap();
        let miami = place("+1 305 555 0100");
        assert_eq!(miami.places, ["US", "US-FL"]);
        assert_eq!(miami.zones, ["America/New_York"]);
        let panhandle = place("+1 850 555 0100");
        assert_eq!(panhandle.zones, ["America/Chicago", "America/New_York"]);
        assert_eq!(place("+1 416 555 0100").places, ["CA", "CA-ON"]);
        assert_eq!(
            place("+1 800 555 0100").places,
            ["US"],
            "toll-free: the country"
        );
        let paris = place("+33 6 12 34 56 78");
        assert_eq!(
            (paris.places, paris.zones),
            (vec!["FR".to_owned()], vec!["Europe/Paris".to_owned()])
        );
    }

    #[test]
    fn every_area_code_s_zone_is_in_the_tz_database() {
        for (npa, (places, zones)) in area_codes() {
            assert!(!places.is_empty() && !zones.is_empty(), "{npa}");
            for zone in zones {
                assert!(jiff::tz::db().get(zone).is_ok(), "{npa}: {zone}");
            }
        }
        assert!(area_codes().len() > 400);
    }

    #[test]
    fn an_override_replaces_a_place_s_rule_and_an_empty_one_lifts_it() {
        let florida = Place {
            places: vec!["US".into(), "US-FL".into()],
            zones: vec!["America/New_York".into()],
        };
        assert_eq!(florida.rules(&Overrides::new()).len(), 2);
        let overrides: Overrides = [
            ("US-FL".to_owned(), Override::parse("09:00-19:00").unwrap()),
            ("US".to_owned(), Override::parse("").unwrap()),
        ]
        .into();
        assert_eq!(florida.rules(&overrides), [every_day(at(9, 0), at(19, 0))]);
        assert!(Override::parse("20:00-08:00").is_err(), "over midnight");
        assert!(Override::parse("8-20").is_err());
    }

    const ZONES: [&str; 6] = [
        "America/New_York",
        "America/Chicago",
        "America/Los_Angeles",
        "America/St_Johns",
        "Europe/Paris",
        "Pacific/Honolulu",
    ];

    /// Whether `rule` lets a text go at `at` on `tz`, read from the local
    /// day and time alone.
    fn open(rule: &Rule, tz: &TimeZone, at: Timestamp) -> bool {
        let local = at.to_zoned_datetime(tz.clone());
        rule.hours_on(local.date())
            .is_some_and(|(from, to)| from <= local.time() && local.time() < to)
    }

    proptest::proptest! {
        /// Over every rule of the table, on clocks either side of the
        /// ocean, across three years: closed until exactly an open moment,
        /// with every quarter hour before it closed.
        #[test]
        fn each_rule_is_closed_until_the_moment_it_opens(
            rule in 0..RULES.len(),
            zone in 0..ZONES.len(),
            // 2026-01-01 to 2028-12-31, to the second.
            second in 1_767_225_600i64..1_861_919_999,
        ) {
            let (place, rule) = RULES[rule];
            let tz = jiff::tz::db().get(ZONES[zone]).unwrap();
            let at = Timestamp::from_second(second).unwrap();
            match rule.closed_until(&tz, at) {
                None => proptest::prop_assert!(open(&rule, &tz, at), "{place} at {at}"),
                Some(opens) => {
                    proptest::prop_assert!(opens > at && open(&rule, &tz, opens), "{place}: {at} → {opens}");
                    proptest::prop_assert!(rule.closed_until(&tz, opens).is_none());
                    let mut t = at;
                    while t < opens {
                        proptest::prop_assert!(!open(&rule, &tz, t), "{place}: open at {t}, before {opens}");
                        t = t.checked_add(jiff::SignedDuration::from_mins(15)).unwrap();
                    }
                }
            }
        }
    }
}
