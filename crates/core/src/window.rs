//! Durations written the way an operator writes them: `90s`, `15m`, `2h`, `90d`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use time::Duration;

/// A positive duration in whole seconds, written with one unit suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Window(u64);

/// Why a duration was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("write a duration as a whole number and a unit: 90s, 15m, 2h or 90d")]
pub struct WindowError;

impl Window {
    /// A window of `seconds` (must be positive).
    pub const fn from_secs(seconds: u64) -> Self {
        Self(seconds)
    }

    /// A window of `minutes`.
    pub const fn from_mins(minutes: u64) -> Self {
        Self(minutes * 60)
    }

    /// The length in seconds.
    pub fn as_secs(self) -> u64 {
        self.0
    }

    /// The length in milliseconds.
    pub fn as_millis(self) -> crate::Millis {
        self.0 as i64 * 1000
    }

    /// The time left from `now_ms` until `until_ms`, as a notice may state
    /// it: whole minutes once a minute or more is left, else whole seconds,
    /// always rounded down so a notice never promises more than is left.
    /// `None` once nothing is left.
    pub fn remaining(now_ms: crate::Millis, until_ms: crate::Millis) -> Option<Self> {
        let secs = u64::try_from((until_ms - now_ms) / 1000).ok()?;
        match secs {
            0 => None,
            s if s >= 60 => Some(Self(s - s % 60)),
            s => Some(Self(s)),
        }
    }

    /// As a `time::Duration`.
    pub fn duration(self) -> Duration {
        Duration::seconds(self.0 as i64)
    }

    /// How a notice says it: "15 minutes", "2 hours", "1 day".
    pub fn in_words(self) -> String {
        let (n, unit) = match self.0 {
            s if s % 86_400 == 0 => (s / 86_400, "day"),
            s if s % 3_600 == 0 => (s / 3_600, "hour"),
            s if s % 60 == 0 => (s / 60, "minute"),
            s => (s, "second"),
        };
        if n == 1 {
            format!("1 {unit}")
        } else {
            format!("{n} {unit}s")
        }
    }
}

impl FromStr for Window {
    type Err = WindowError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let unit_at = s.len().checked_sub(1).ok_or(WindowError)?;
        let (digits, unit) = s.split_at(unit_at);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(WindowError);
        }
        let n: u64 = digits.parse().map_err(|_| WindowError)?;
        let scale = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3_600,
            "d" => 86_400,
            _ => return Err(WindowError),
        };
        match n.checked_mul(scale) {
            // Ten years is more than any window needs and keeps millisecond sums in range.
            Some(secs) if secs > 0 && secs <= 10 * 365 * 86_400 => Ok(Self(secs)),
            _ => Err(WindowError),
        }
    }
}

impl TryFrom<String> for Window {
    type Error = WindowError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<Window> for String {
    fn from(value: Window) -> Self {
        value.to_string()
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            s if s % 86_400 == 0 => write!(f, "{}d", s / 86_400),
            s if s % 3_600 == 0 => write!(f, "{}h", s / 3_600),
            s if s % 60 == 0 => write!(f, "{}m", s / 60),
            s => write!(f, "{s}s"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_window_is_written_in_its_largest_whole_unit() {
        let shown = |s: &str| s.parse::<Window>().unwrap().to_string();
        assert_eq!(shown("24h"), "1d");
        assert_eq!(shown("120m"), "2h");
        assert_eq!(shown("900s"), "15m");
        assert_eq!(shown("90s"), "90s");
        assert!("+5m".parse::<Window>().is_err(), "digits only");
        assert_eq!(Window::from_mins(15).duration(), Duration::minutes(15));
    }

    #[test]
    fn the_time_left_is_rounded_down_and_ends() {
        let at = 1_000_000;
        assert_eq!(
            Window::remaining(at, at + 15 * 60_000),
            Some(Window::from_mins(15))
        );
        assert_eq!(
            Window::remaining(at, at + 14 * 60_000 + 59_999),
            Some(Window::from_mins(14))
        );
        assert_eq!(
            Window::remaining(at, at + 59_999),
            Some(Window::from_secs(59))
        );
        assert_eq!(Window::remaining(at, at + 999), None);
        assert_eq!(Window::remaining(at, at), None);
        assert_eq!(Window::remaining(at, at - 1), None);
        assert_eq!(
            Window::remaining(at, at + 10 * 60_000 + 30_000)
                .unwrap()
                .in_words(),
            "10 minutes"
        );
    }

    #[test]
    fn operator_spellings_parse() {
        assert_eq!("90s".parse::<Window>().unwrap().as_secs(), 90);
        assert_eq!("15m".parse::<Window>().unwrap().as_secs(), 900);
        assert_eq!("2h".parse::<Window>().unwrap().as_secs(), 7_200);
        assert_eq!("90d".parse::<Window>().unwrap().as_secs(), 90 * 86_400);
        for bad in [
            "",
            "m",
            "15",
            "0m",
            "-5m",
            "1.5h",
            "15 m",
            "15M",
            "1w",
            "99999999999999999999d",
        ] {
            assert_eq!(bad.parse::<Window>(), Err(WindowError), "{bad:?}");
        }
    }

    #[test]
    fn windows_read_as_words() {
        assert_eq!(Window::from_mins(15).in_words(), "15 minutes");
        assert_eq!(Window::from_secs(3_600).in_words(), "1 hour");
        assert_eq!(Window::from_secs(90).in_words(), "90 seconds");
    }

    proptest! {
        #[test]
        fn display_parses_back(secs in 1u64..10 * 365 * 86_400) {
            let w = Window::from_secs(secs);
            prop_assert_eq!(w.to_string().parse::<Window>().unwrap(), w);
        }
    }
}
