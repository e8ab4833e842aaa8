//! What a shopper paid, for the team's revenue figures: an amount in an
//! ISO 4217 currency, kept exactly in thousandths of its unit (enough for
//! currencies with 0, 2 or 3 decimals). Never used to decide anything.

use std::collections::BTreeMap;

use serde::Serialize;

/// An amount in one currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Money {
    /// The ISO 4217 code, upper case (`EUR`).
    pub currency: String,
    /// The amount in thousandths of the currency's unit.
    pub milli: i64,
}

impl Money {
    /// `amount` (a decimal such as `"199.00"` or a JSON number) in
    /// `currency`; `None` for a currency that is not three letters, or an
    /// amount that is negative, has more than three decimals or is too big.
    pub fn parse(currency: &str, amount: &str) -> Option<Self> {
        let currency = currency.trim();
        if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_alphabetic()) {
            return None;
        }
        let amount = amount.trim();
        let (whole, fraction) = amount.split_once('.').unwrap_or((amount, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty()
            || whole.len() > 12
            || fraction.len() > 3
            || !digits(whole)
            || !digits(fraction)
        {
            return None;
        }
        let fraction: i64 = format!("{fraction:0<3}").parse().ok()?;
        Some(Self {
            currency: currency.to_ascii_uppercase(),
            milli: whole.parse::<i64>().ok()? * 1000 + fraction,
        })
    }
}

/// Totals per currency (thousandths), as "EUR 1,234.50 · USD 99.00"; `-`
/// when there are none.
pub fn totals(by_currency: &BTreeMap<String, i64>) -> String {
    let shown: Vec<String> = by_currency
        .iter()
        .filter(|(_, milli)| **milli != 0)
        .map(|(currency, milli)| {
            let cents = (milli + 5) / 10;
            let whole = (cents / 100).to_string();
            let mut grouped = String::new();
            for (i, c) in whole.chars().enumerate() {
                if i > 0 && (whole.len() - i) % 3 == 0 {
                    grouped.push(',');
                }
                grouped.push(c);
            }
            format!("{currency} {grouped}.{:02}", cents % 100)
        })
        .collect();
    if shown.is_empty() {
        "-".into()
    } else {
        shown.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_kept_exactly_in_thousandths() {
        let m = |c, a| Money::parse(c, a).map(|m| (m.currency, m.milli));
        assert_eq!(m("EUR", "199.00"), Some(("EUR".into(), 199_000)));
        assert_eq!(m("usd", "19.9"), Some(("USD".into(), 19_900)));
        assert_eq!(m("JPY", "4500"), Some(("JPY".into(), 4_500_000)));
        assert_eq!(m("KWD", "1.125"), Some(("KWD".into(), 1_125)));
        for (c, a) in [
            ("EUR", "-1"),
            ("EUR", "1.2345"),
            ("EURO", "1"),
            ("E1R", "1"),
            ("EUR", ""),
            ("EUR", "1e3"),
            ("EUR", "9999999999999"),
        ] {
            assert_eq!(Money::parse(c, a), None, "{c} {a}");
        }
    }

    #[test]
    fn totals_read_per_currency_with_cents() {
        let totals_of = |pairs: &[(&str, i64)]| {
            totals(&pairs.iter().map(|(c, m)| ((*c).to_owned(), *m)).collect())
        };
        assert_eq!(
            totals_of(&[("EUR", 1_234_500), ("USD", 99_000)]),
            "EUR 1,234.50 · USD 99.00"
        );
        assert_eq!(totals_of(&[("JPY", 4_500_000)]), "JPY 4,500.00");
        assert_eq!(totals_of(&[]), "-");
    }
}
