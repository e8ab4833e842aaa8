//! `restock export`: every request as a CSV row, and per-day figures drawn
//! from the same rows. A page at a time (`Command::ExportPage`), so the
//! operator's machine and the local server hold one page, whatever the count.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::future::Future;
use std::io::Write;

use restock_core::{Millis, RequestState, Sku};
use restock_store::Request;

/// Requests per export page.
pub const PAGE: usize = 500;

/// The requests export's columns, in order.
pub const COLUMNS: [&str; 11] = [
    "item",
    "request",
    "state",
    "joined",
    "confirmed",
    "told",
    "held",
    "bought",
    "ended",
    "language",
    "contact",
];

/// The per-day export's columns, in order.
pub const DAY_COLUMNS: [&str; 7] = [
    "day",
    "item",
    "sign_ups",
    "confirmed",
    "told",
    "held",
    "bought",
];

/// The per-item export's columns, in order: what each item brought in,
/// through holds and assisted ([DESIGN §3](../../docs/DESIGN.md)).
pub const ITEM_COLUMNS: [&str; 9] = [
    "item",
    "waiting",
    "offered",
    "held",
    "bought",
    "lapsed",
    "revenue",
    "assisted_orders",
    "assisted_revenue",
];

/// The per-item export: `ITEM_COLUMNS` rows from `restock stats`'s answer
/// for scripts (`Command::Stats`), written as CSV to `sink`; the rows.
///
/// # Errors
/// A write that failed.
pub fn write_items<W: Write>(stats: &serde_json::Value, sink: W) -> csv::Result<u64> {
    let mut csv = csv::Writer::from_writer(std::io::BufWriter::new(sink));
    csv.write_record(ITEM_COLUMNS)?;
    let money = |v: &serde_json::Value| {
        let amounts: BTreeMap<String, i64> = serde_json::from_value(v.clone()).unwrap_or_default();
        if amounts.is_empty() {
            String::new()
        } else {
            restock_core::money::totals(&amounts)
        }
    };
    let mut rows = 0;
    for item in stats["skus"].as_array().into_iter().flatten() {
        let s = &item["stats"];
        let number = |name: &str| s[name].as_u64().unwrap_or(0).to_string();
        let row = vec![
            item["sku"].as_str().unwrap_or_default().to_owned(),
            number("waiting"),
            number("offered"),
            number("held"),
            number("bought"),
            number("lapsed"),
            money(&s["revenue"]),
            number("assisted"),
            money(&s["assisted_revenue"]),
        ];
        write_row(&mut csv, &row)?;
        rows += 1;
    }
    csv.flush()?;
    Ok(rows)
}

/// A time as the export writes it: RFC 3339, UTC, to the second.
fn when(ms: Option<Millis>) -> String {
    ms.and_then(|ms| {
        time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
            .ok()?
            .format(&time::format_description::well_known::Rfc3339)
            .ok()
    })
    .unwrap_or_default()
}

/// One request's row: `COLUMNS`. The contact masked (`d***@example.com`)
/// unless `with_contacts`.
pub fn row(r: &Request, with_contacts: bool) -> Vec<String> {
    let bought = match r.state {
        RequestState::Bought { .. } => r.moments.ended_ms,
        _ => None,
    };
    vec![
        r.sku.to_string(),
        r.id.to_string(),
        r.state.status().as_str().to_owned(),
        when(Some(r.key.joined_ms)),
        when(r.consent.as_ref().and_then(|c| c.confirmed_at)),
        when(r.moments.told_ms),
        when(r.moments.held_ms),
        when(bought),
        when(r.moments.ended_ms),
        r.language
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        if with_contacts {
            r.contact.address().to_owned()
        } else {
            r.contact.masked()
        },
    ]
}

/// A cell as the export writes it: one that a spreadsheet would run as a
/// formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage return:
/// OWASP's CSV-injection rule) gets a leading `'`, so a masked phone
/// (`+44*******123`) or an address like `=cmd@example.com` opens as text.
pub fn cell(value: &str) -> Cow<'_, str> {
    match value.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => Cow::Owned(format!("'{value}")),
        _ => Cow::Borrowed(value),
    }
}

fn write_row<W: Write>(csv: &mut csv::Writer<W>, row: &[String]) -> csv::Result<()> {
    csv.write_record(row.iter().map(|value| cell(value).into_owned()))
}

/// Whether `r` is one of `skus` (every item when empty).
pub fn wanted(r: &Request, skus: &[Sku]) -> bool {
    skus.is_empty() || skus.contains(&r.sku)
}

/// Per-day figures, added up from export rows: sign-ups, confirmations,
/// notices, holds and purchases per UTC day and item. Holds one entry per
/// day and item, however many rows go by.
#[derive(Debug, Default)]
pub struct Days(BTreeMap<(String, String), [u64; 5]>);

impl Days {
    /// Counts one requests-export row (`COLUMNS`).
    pub fn add(&mut self, row: &[String]) {
        let item = row.first().cloned().unwrap_or_default();
        // joined, confirmed, told, held, bought
        for (figure, column) in [3, 4, 5, 6, 7].into_iter().enumerate() {
            let Some(day) = row.get(column).and_then(|t| t.get(..10)) else {
                continue;
            };
            self.0.entry((day.to_owned(), item.clone())).or_default()[figure] += 1;
        }
    }

    /// The rows (`DAY_COLUMNS`), by day then item.
    pub fn rows(&self) -> impl Iterator<Item = Vec<String>> + '_ {
        self.0.iter().map(|((day, item), figures)| {
            let mut row = vec![day.clone(), item.clone()];
            row.extend(figures.iter().map(u64::to_string));
            row
        })
    }
}

/// What an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One row per request (`COLUMNS`).
    Requests,
    /// One row per day and item (`DAY_COLUMNS`).
    Days,
}

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError<E: std::error::Error + 'static> {
    /// A page could not be read.
    #[error(transparent)]
    Page(E),
    /// The CSV could not be written.
    #[error("cannot write the export: {0}")]
    Write(#[from] csv::Error),
}

/// Writes an export as CSV to `sink`, asking `page` for one page of rows
/// at a time (`Command::ExportPage`, through whichever path reaches the
/// store) and writing it before asking for the next: one page in memory,
/// whatever the count. `progress` hears the rows so far. The rows read.
///
/// # Errors
/// The first page that fails, or the sink refusing a write.
pub async fn write<W, F, Fut, E>(
    kind: Kind,
    sink: W,
    mut page: F,
    mut progress: impl FnMut(u64),
) -> Result<u64, ExportError<E>>
where
    W: Write,
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<super::Output, E>>,
    E: std::error::Error + 'static,
{
    let mut csv = csv::Writer::from_writer(std::io::BufWriter::new(sink));
    if kind == Kind::Requests {
        csv.write_record(COLUMNS)?;
    }
    let (mut days, mut rows, mut after) = (Days::default(), 0u64, None);
    loop {
        let answer = page(after.take()).await.map_err(ExportError::Page)?;
        for row in &answer.rows {
            match kind {
                Kind::Requests => write_row(&mut csv, row)?,
                Kind::Days => days.add(row),
            }
        }
        rows += answer.rows.len() as u64;
        progress(rows);
        match answer.json["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    if kind == Kind::Days {
        csv.write_record(DAY_COLUMNS)?;
        for row in days.rows() {
            write_row(&mut csv, &row)?;
        }
    }
    csv.flush().map_err(csv::Error::from)?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_items_export_shows_revenue_through_holds_and_assisted_apart() {
        let stats = serde_json::json!({ "skus": [
            { "sku": "CHAIR-WAL", "stats": { "waiting": 3, "offered": 1, "held": 0, "bought": 2, "lapsed": 1,
              "revenue": { "GBP": 498_000 }, "assisted": 1, "assisted_revenue": { "GBP": 249_000 } } },
            { "sku": "LAMP-BRASS", "stats": { "waiting": 0, "revenue": {}, "assisted": 0, "assisted_revenue": {} } },
        ]});
        let mut out = Vec::new();
        assert_eq!(write_items(&stats, &mut out).unwrap(), 2);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], ITEM_COLUMNS.join(","));
        assert_eq!(lines[1], "CHAIR-WAL,3,1,0,2,1,GBP 498.00,1,GBP 249.00");
        assert_eq!(lines[2], "LAMP-BRASS,0,0,0,0,0,,0,");
        assert_eq!(lines.len(), 3);
    }

    fn row_of(item: &str, times: [&str; 5]) -> Vec<String> {
        let mut row = vec![item.to_owned(), "id".into(), "bought".into()];
        row.extend(times.iter().map(|t| (*t).to_owned()));
        row.extend(["".into(), "de".into(), "d***@example.com".into()]);
        row
    }

    #[test]
    fn days_count_each_moment_on_its_own_day() {
        let mut days = Days::default();
        days.add(&row_of(
            "CHAIR",
            [
                "2026-12-01T09:00:00Z",
                "2026-12-01T09:05:00Z",
                "2026-12-03T10:00:00Z",
                "2026-12-03T10:01:00Z",
                "2026-12-03T10:09:00Z",
            ],
        ));
        days.add(&row_of("CHAIR", ["2026-12-01T11:00:00Z", "", "", "", ""]));
        days.add(&row_of("LAMP", ["2026-12-01T12:00:00Z", "", "", "", ""]));
        let rows: Vec<_> = days.rows().map(|r| r.join(",")).collect();
        assert_eq!(
            rows,
            [
                "2026-12-01,CHAIR,2,1,0,0,0",
                "2026-12-01,LAMP,1,0,0,0,0",
                "2026-12-03,CHAIR,0,0,1,1,1",
            ]
        );
    }

    #[test]
    fn cells_a_spreadsheet_would_run_open_as_text() {
        for formula in [
            "=HYPERLINK(\"http://x\")",
            "+44*******123",
            "-2+3",
            "@SUM(A1)",
            "\t=1",
            "\r=1",
        ] {
            assert_eq!(cell(formula), format!("'{formula}"), "{formula:?}");
        }
        for text in ["d***@example.com", "CHAIR-WAL", "2026-12-01", "", "'quoted"] {
            assert_eq!(cell(text), text);
        }
    }

    #[tokio::test]
    async fn an_export_writes_no_cell_a_spreadsheet_runs() {
        let with_contact = |contact: &str| {
            let mut row = vec![String::new(); COLUMNS.len()];
            row[0] = "CHAIR".into();
            row[COLUMNS.len() - 1] = contact.into();
            row
        };
        let rows = vec![
            with_contact("=cmd|' /C calc'!A0@example.com"),
            with_contact("+44*******123"),
        ];
        let mut out = Vec::new();
        let page = |_| {
            let rows = rows.clone();
            async move {
                Ok::<_, std::io::Error>(super::super::Output {
                    message: String::new(),
                    columns: Vec::new(),
                    rows,
                    json: serde_json::Value::Null,
                })
            }
        };
        write(Kind::Requests, &mut out, page, |_| ()).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let cells: Vec<&str> = text.lines().skip(1).flat_map(|l| l.split(',')).collect();
        assert!(
            cells
                .iter()
                .all(|c| !c.trim_start_matches('"').starts_with(['=', '+', '-', '@'])),
            "{text}"
        );
        assert!(text.contains("'+44*******123"), "{text}");
    }

    #[test]
    fn times_are_rfc3339_utc_and_absent_ones_empty() {
        assert_eq!(when(Some(1_796_374_800_999)), "2026-12-04T09:00:00Z");
        assert_eq!(when(None), "");
    }
}
