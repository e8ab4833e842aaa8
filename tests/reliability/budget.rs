//! How long a run of randomised histories lasts: a count, or a time budget
//! with fresh seeds every run (proptest's default), and every failing seed
//! kept in a regressions file beside the suite and replayed first.
//!
//! `scripts/test.sh` gives the differential histories a budget in seconds
//! (so the suite keeps its time, docs/RELIABILITY.md "The suite's budget");
//! `scripts/deep.sh` runs the long, counted runs before a store change is
//! resolved.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::test_runner::{Config, FileFailurePersistence};

/// Prints a run's summary line and, where `RESTOCK_HISTORY_REPORT` names a
/// file, appends it there with the endpoint's index lag, so
/// `scripts/test.sh` can print what every run compared though the test
/// runner keeps a passing test's output to itself.
pub(super) fn report(line: &str) {
    println!("{line}");
    let Some(path) = std::env::var_os("RESTOCK_HISTORY_REPORT") else {
        return;
    };
    let lag = std::env::var("RESTOCK_INDEX_LAG_MS").unwrap_or_else(|_| "0".into());
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| writeln!(file, "{line} (index lag {lag} ms)"));
    if let Err(e) = written {
        panic!("the history report {}: {e}", path.to_string_lossy());
    }
}

/// The histories of one run: how many at most, until when, and what ran.
pub(super) struct Budget {
    cases: u32,
    deadline: Option<Instant>,
    failing: AtomicBool,
    ran: AtomicUsize,
    steps: AtomicUsize,
}

impl Budget {
    /// `count_var` histories (default `default`), or, when `seconds_var`
    /// is set, as many as fit in that many seconds (`count_var` then caps
    /// them, default 100,000).
    pub(super) fn from_env(count_var: &str, default: u32, seconds_var: &str) -> Self {
        let number = |var: &str| std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok());
        let seconds = number(seconds_var);
        let cap = number(count_var).map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        Self {
            cases: cap.unwrap_or(if seconds.is_some() { 100_000 } else { default }),
            deadline: seconds.map(|s| Instant::now() + Duration::from_secs(s)),
            failing: AtomicBool::new(false),
            ran: AtomicUsize::new(0),
            steps: AtomicUsize::new(0),
        }
    }

    /// This run's share of a count split over `parts` tests side by side
    /// (a time budget applies to each part whole).
    pub(super) fn split(&mut self, parts: u32, part: u32) {
        if self.deadline.is_none() {
            self.cases = self.cases / parts + u32::from(part < self.cases % parts);
        }
    }

    /// proptest's configuration: this many cases, failures persisted to
    /// `regressions` (a path under this crate) and replayed before new ones.
    pub(super) fn config(&self, regressions: &'static str, max_shrink_iters: u32) -> Config {
        Config {
            cases: self.cases,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
            max_shrink_iters,
            ..Config::default()
        }
    }

    /// Whether a case of `steps` steps is past the budget and should be
    /// skipped (otherwise it is counted). Never once a case has failed, so
    /// shrinking runs every candidate.
    pub(super) fn spent(&self, steps: usize) -> bool {
        let spent = !self.failing.load(Ordering::Relaxed)
            && self.deadline.is_some_and(|d| Instant::now() >= d);
        if !spent {
            self.ran.fetch_add(1, Ordering::Relaxed);
            self.steps.fetch_add(steps, Ordering::Relaxed);
        }
        spent
    }

    /// A case failed: from now on every case runs (proptest is shrinking).
    pub(super) fn failed(&self) {
        self.failing.store(true, Ordering::Relaxed);
    }

    /// How many histories ran.
    pub(super) fn ran(&self) -> usize {
        self.ran.load(Ordering::Relaxed)
    }

    /// How many steps those histories took.
    pub(super) fn steps(&self) -> usize {
        self.steps.load(Ordering::Relaxed)
    }

    /// Whether the run was bounded by its count (not a time budget).
    pub(super) fn counted(&self) -> bool {
        self.deadline.is_none()
    }

    /// How the run was bounded, for its summary line: by its time budget
    /// (with the cap) or by its count.
    pub(super) fn describe(&self) -> String {
        match self.deadline {
            Some(_) => format!("within its time budget (at most {})", self.cases),
            None => format!("of {} counted", self.cases),
        }
    }
}
