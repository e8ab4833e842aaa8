//! What stands between a deployment and its shoppers, each finding with its
//! fix: `restock doctor` prints it, and the dashboard shows the findings
//! that need a person as a banner. A finding is blocking when notices
//! cannot reach shoppers while it stands (no settings or items, a
//! platform's deliveries refused or never subscribed, a sender that cannot
//! send); a warning when restock works around it (no stock pull, the fixed
//! wording instead of the model's).
//!
//! [`store_checks`] needs only the store, so the local server's dashboard
//! runs it too; the AWS adapter adds the checks that need the cloud.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use restock_core::{CatalogueEntry, Settings};
use restock_store::Store;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// As it should be.
    Ok,
    /// restock works around it, at a cost the finding names.
    Warning,
    /// Notices cannot reach shoppers while it stands.
    Blocking,
}

/// One check's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// What was checked.
    pub check: String,
    /// What was found.
    pub found: String,
    /// What to do about it, when something is to be done.
    pub fix: Option<String>,
}

/// Every finding, in the order checked.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Report {
    /// The findings.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Adds a finding.
    pub fn add(
        &mut self,
        severity: Severity,
        check: &str,
        found: impl Into<String>,
        fix: Option<String>,
    ) {
        self.findings.push(Finding {
            severity,
            check: check.to_owned(),
            found: found.into(),
            fix,
        });
    }

    /// Adds a finding that is as it should be.
    pub fn ok(&mut self, check: &str, found: impl Into<String>) {
        self.add(Severity::Ok, check, found, None);
    }

    /// The finding of `check`, if it ran.
    pub fn finding(&self, check: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.check == check)
    }

    /// Whether something blocks notices.
    pub fn blocking(&self) -> bool {
        self.count(Severity::Blocking) > 0
    }

    /// How many findings are of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }

    /// The findings that need a person: blocking ones first.
    pub fn needing_attention(&self) -> Vec<&Finding> {
        let mut found: Vec<&Finding> = self
            .findings
            .iter()
            .filter(|f| f.severity != Severity::Ok)
            .collect();
        found.sort_by_key(|f| std::cmp::Reverse(f.severity));
        found
    }

    /// One line: all good, or how many block notices and how many warn.
    pub fn summary(&self) -> String {
        match (
            self.count(Severity::Blocking),
            self.count(Severity::Warning),
        ) {
            (0, 0) => "all good: notices can reach shoppers".to_owned(),
            (0, w) => format!("notices can reach shoppers; {w} warnings"),
            (b, w) => format!("{b} findings block notices; {w} warnings"),
        }
    }

    /// The report as a person reads it: a line a finding, its fix under it.
    pub fn describe(&self) -> String {
        let mut text = String::new();
        for f in &self.findings {
            let mark = match f.severity {
                Severity::Ok => "ok  ",
                Severity::Warning => "warn",
                Severity::Blocking => "FAIL",
            };
            text += &format!("{mark} {}: {}\n", f.check, f.found);
            if let Some(fix) = &f.fix {
                text += &format!("     fix: {fix}\n");
            }
        }
        text + &self.summary() + "\n"
    }
}

/// The checks the store alone answers: settings stored and valid, items in
/// the catalogue, and items without a platform id. Answers the settings and
/// the catalogue for the checks that follow, or `None` when the store
/// cannot be read (the report then says so). `table` names the table in
/// the fixes (`restock --table … settings put`), when there is one.
pub async fn store_checks(
    report: &mut Report,
    store: &dyn Store,
    table: Option<&str>,
) -> Option<(Option<Settings>, Vec<CatalogueEntry>)> {
    let settings = match store.settings().await {
        Ok(Some(settings)) => {
            report.ok("settings", "stored and valid");
            Some(settings)
        }
        Ok(None) => {
            let table = table.map_or(String::new(), |t| format!("--table {t} "));
            report.add(
                Severity::Blocking,
                "settings",
                "none stored: every function refuses to run",
                Some(format!(
                    "`restock {table}settings put settings.toml` (docs/SETTINGS.md)"
                )),
            );
            None
        }
        Err(e) => {
            report.add(
                Severity::Blocking,
                "table",
                format!("unreadable: {e}"),
                Some("check the operator's credentials and region".into()),
            );
            return None;
        }
    };
    let catalogue = store.catalogue().await.unwrap_or_default();
    let listed = catalogue.iter().filter(|e| e.ended.is_none()).count();
    if listed == 0 {
        report.add(
            Severity::Blocking,
            "catalogue",
            "no items: nobody can sign up",
            Some("`restock connect shopify` or `restock connect woocommerce` imports them; or `restock catalogue import FILE.csv`".into()),
        );
    } else {
        let ended = catalogue.len() - listed;
        let ended = if ended > 0 {
            format!(" ({ended} more ended: no longer listed)")
        } else {
            String::new()
        };
        report.ok("catalogue", format!("{listed} items{ended}"));
    }
    let unnamed = catalogue
        .iter()
        .filter(|e| e.ended.is_none() && e.ids.iter().next().is_none())
        .count();
    if unnamed > 0 {
        report.add(
            Severity::Warning,
            "catalogue ids",
            format!("{unnamed} items have no platform id: only the generic format (or WooCommerce, by SKU) can report their stock, and the stock pull cannot read them"),
            Some("`restock connect …` fills the ids for the items the platform lists".into()),
        );
    }
    Some((settings, catalogue))
}

/// Runs a deployment's checks for the dashboard's banner.
#[async_trait]
pub trait Health: Send + Sync {
    /// The findings now.
    async fn report(&self) -> Report;
}

/// [`store_checks`] alone: the local server's checks.
pub struct StoreHealth(pub std::sync::Arc<dyn Store>);

#[async_trait]
impl Health for StoreHealth {
    async fn report(&self) -> Report {
        let mut report = Report::default();
        store_checks(&mut report, self.0.as_ref(), None).await;
        report
    }
}

/// Another [`Health`]'s report, kept for `ttl` (a doctor run calls the
/// platforms and AWS: the dashboard must not on every page).
pub struct Cached<H> {
    inner: H,
    ttl: Duration,
    last: tokio::sync::Mutex<()>,
    kept: Mutex<Option<(Instant, Report)>>,
}

impl<H: Health> Cached<H> {
    /// `inner`'s report, run again once `ttl` has passed.
    pub fn new(inner: H, ttl: Duration) -> Self {
        Self {
            inner,
            ttl,
            last: tokio::sync::Mutex::new(()),
            kept: Mutex::new(None),
        }
    }

    fn fresh(&self) -> Option<Report> {
        let kept = self.kept.lock().expect("health lock");
        kept.as_ref()
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, r)| r.clone())
    }
}

#[async_trait]
impl<H: Health> Health for Cached<H> {
    async fn report(&self) -> Report {
        if let Some(report) = self.fresh() {
            return report;
        }
        // One run at a time: pages opened together wait for it.
        let _running = self.last.lock().await;
        if let Some(report) = self.fresh() {
            return report;
        }
        let report = self.inner.report().await;
        *self.kept.lock().expect("health lock") = Some((Instant::now(), report.clone()));
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counting(std::sync::atomic::AtomicUsize);

    #[async_trait]
    impl Health for Counting {
        async fn report(&self) -> Report {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut report = Report::default();
            report.add(Severity::Warning, "run", n.to_string(), None);
            report
        }
    }

    #[tokio::test]
    async fn a_cached_report_is_run_again_only_once_it_is_old() {
        let cached = Cached::new(
            Counting(std::sync::atomic::AtomicUsize::new(0)),
            Duration::from_millis(200),
        );
        assert_eq!(cached.report().await.findings[0].found, "0");
        assert_eq!(cached.report().await.findings[0].found, "0");
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(cached.report().await.findings[0].found, "1");
    }

    #[test]
    fn the_summary_counts_what_blocks_and_what_warns_and_blocking_comes_first() {
        let mut report = Report::default();
        assert_eq!(report.summary(), "all good: notices can reach shoppers");
        report.ok("a", "fine");
        report.add(Severity::Warning, "b", "meh", None);
        assert_eq!(report.summary(), "notices can reach shoppers; 1 warnings");
        report.add(Severity::Blocking, "c", "broken", Some("fix it".into()));
        assert!(report.blocking());
        assert_eq!(report.summary(), "1 findings block notices; 1 warnings");
        let attention: Vec<&str> = report
            .needing_attention()
            .iter()
            .map(|f| f.check.as_str())
            .collect();
        assert_eq!(attention, ["c", "b"]);
        assert!(
            report
                .describe()
                .contains("FAIL c: broken\n     fix: fix it\n")
        );
    }
}
