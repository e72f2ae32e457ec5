//! When a run will end, predicted from what it has measured so far: one place for `temper
//! status`, the progress line and the web view.
//!
//! From the events: the time each settled rule took (from the rule settled before it, or from
//! the end of the first scan), by kind of fix; each open rule is given its kind's median (while a
//! kind has fewer than [`MIN_SAMPLES`], that of the kinds like it: packages are like no other;
//! while there are none, the prior below), so that one long fix (aide's install, 20 minutes
//! under TCG) weighs as the outlier it is. The range runs from the 25th
//! percentile of each kind to its 75th plus one more fix as long as the longest seen. After the
//! rules: the final scan, taken to cost what the first did (up to 1.5 times), and the reboot
//! proof unless it ran.
//!
//! Before [`MIN_SAMPLES`] rules are settled (the first pick is often aide's install, a quarter
//! of the run), each rule is given a prior from what the run did measure: three rescans of one
//! rule (its own rescan; the guard, the health check and the checkpoint cost about as much again)
//! and its share of a regression check, both timed by the cadence's measurement; without it, a
//! share of the first scan. A fix under way longer than any rule so far is an outlier in
//! progress: it is given as long again as it has run.
use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use serde::Serialize;

use crate::Verdict;
use crate::{Event, EventData, Rule, RuleStatus, ScanKind};

/// Settled rules needed before the run's own times replace the prior.
const MIN_SAMPLES: usize = 3;
/// Without the cadence's timings, a rule's prior is this share of the first scan.
const SCAN_SHARE: f64 = 0.04;
/// A rule that took more than this many times the median is an outlier: it widens the range
/// once (one more fix as long as the longest), never for every open rule.
const OUTLIER: f64 = 10.0;

/// The predicted time left, in seconds: the central figure and its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Eta {
    pub secs: i64,
    pub low: i64,
    pub high: i64,
}

impl Eta {
    /// `1 h 05 min (50 min to 1 h 20 min)`. The range is widened to whole minutes, never
    /// narrowed: its low end rounded down, its high end up.
    pub fn human(&self) -> String {
        format!("{} ({} to {})", span(self.secs, Round::Nearest), span(self.low, Round::Down), span(self.high, Round::Up))
    }
}

/// How a span is rounded to whole minutes.
#[derive(Debug, Clone, Copy)]
enum Round {
    Nearest,
    Down,
    Up,
}

/// Seconds as a person reads them: `45 s`, `12 min`, `1 h 05 min`.
fn span(secs: i64, round: Round) -> String {
    let s = secs.max(0);
    if s < 60 {
        return format!("{s} s");
    }
    let mins = match round {
        Round::Nearest => (s + 30) / 60,
        Round::Down => s / 60,
        Round::Up => (s + 59) / 60,
    };
    match mins {
        0..60 => format!("{mins} min"),
        _ => format!("{} h {:02} min", mins / 60, mins % 60),
    }
}

/// The kinds of fix, read from a rule's id as the content names its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    /// A package installed or removed: the long ones (downloads, triggers, databases).
    Package,
    /// An audit rule written and loaded.
    Audit,
    /// A unit enabled, started, masked.
    Service,
    /// File ownership and permissions.
    File,
    Other,
}

impl Kind {
    fn of(rule_id: &str) -> Self {
        let short = rule_id.strip_prefix("xccdf_org.ssgproject.content_rule_").unwrap_or(rule_id);
        let starts = |p: &[&str]| p.iter().any(|p| short.starts_with(p));
        if starts(&["package_"]) {
            Self::Package
        } else if starts(&["audit_"]) {
            Self::Audit
        } else if starts(&["service_", "socket_", "timer_"]) {
            Self::Service
        } else if starts(&["file_", "dir_", "permissions_"]) {
            Self::File
        } else {
            Self::Other
        }
    }
}

/// The prediction at `now` for a run whose `events` (oldest first) are those up to `now`, and
/// whose rules in `open` are still to be worked on. `None` before the first scan ends, or when
/// nothing is open.
pub fn predict(events: &[Event], open: &[&str], now: DateTime<FixedOffset>) -> Option<Eta> {
    if open.is_empty() {
        return None;
    }
    let stamp = |e: &Event| DateTime::parse_from_rfc3339(&e.ts).ok();
    let (first_scan, work_from) = events.iter().find_map(|e| match &e.data {
        EventData::Scan { kind: ScanKind::Full, secs, .. } => Some((*secs, stamp(e)?)),
        _ => None,
    })?;
    let mut samples: Vec<(Kind, f64)> = Vec::new();
    let mut last = work_from;
    let mut rebooted = false;
    let mut cadence = None;
    for e in events {
        let Some(at) = stamp(e) else { continue };
        let settled = match &e.data {
            EventData::Escalate { .. } | EventData::Verdict { verdict: Verdict::Fixed | Verdict::NeedsReboot, .. } => e.rule_id.as_deref(),
            EventData::Reboot { .. } => {
                rebooted = true;
                None
            }
            EventData::RegressionEvery { every, secs: Some(t), .. } => {
                cadence = Some(3.0 * t.one_rule + t.with_set / f64::from((*every).max(1)));
                // The cadence's rescans are preflight, not a rule's time.
                last = last.max(at);
                None
            }
            _ => None,
        };
        if let Some(rule) = settled.filter(|_| at >= last) {
            samples.push((Kind::of(rule), (at - last).num_milliseconds() as f64 / 1000.0));
            last = at;
        }
    }
    // The rule under way has had its time since the last one settled.
    let current = ((now - last).num_milliseconds() as f64 / 1000.0).max(0.0);
    let reboot = if rebooted { 0.0 } else { (first_scan / 3.0).max(60.0) };
    let tail = first_scan + reboot;
    let secs = |x: f64| x.round() as i64;
    let prior = cadence.unwrap_or(first_scan * SCAN_SHARE);
    if samples.len() < MIN_SAMPLES {
        // The fix under way: what is left of a rule's prior, or as long again once past it.
        let left = if current < prior { prior - current } else { current };
        let rest = prior * (open.len() - 1) as f64;
        return Some(Eta {
            secs: secs(rest + left + tail),
            low: secs(0.5 * (rest + left) + tail),
            high: secs(2.0 * (rest + left) + tail * 1.5),
        });
    }
    let pooled: Vec<f64> = samples.iter().map(|s| s.1).collect();
    // A kind's quartiles, once per kind: its own samples; while it has few, those of the kinds
    // like it (packages are like no other: a run that starts with its package installs, 150 s
    // to 40 min each, must not give every sysctl as long); while there are none, the prior.
    let quartiles = |kind: &Kind| {
        let own: Vec<f64> = samples.iter().filter(|s| s.0 == *kind).map(|s| s.1).collect();
        let like: Vec<f64> = samples.iter().filter(|s| *kind == Kind::Package || s.0 != Kind::Package).map(|s| s.1).collect();
        let xs = if own.len() >= MIN_SAMPLES { own } else { like };
        if xs.is_empty() {
            return (0.5 * prior, prior, 2.0 * prior);
        }
        (quantile(&xs, 0.25), quantile(&xs, 0.5), quantile(&typical(&xs), 0.75))
    };
    let mut by_kind: BTreeMap<Kind, (f64, f64, f64)> = BTreeMap::new();
    let (mut low, mut mid, mut high) = (0.0, 0.0, 0.0);
    for rule in open {
        let (l, m, h) = *by_kind.entry(Kind::of(rule)).or_insert_with_key(quartiles);
        (low, mid, high) = (low + l, mid + m, high + h);
    }
    // One more long fix, as long as the longest so far.
    high += quantile(&pooled, 1.0);
    // The rule under way: at most a median's worth is taken off (it may be a long one); past
    // the longest so far, it is an outlier in progress, given as long again as it has run.
    let median = quantile(&pooled, 0.5);
    let under_way = if current > quantile(&pooled, 1.0) { median - current } else { current.min(median) };
    Some(Eta {
        secs: secs((mid - under_way).max(0.0) + tail),
        low: secs((low - under_way).max(0.0) + tail),
        high: secs((high - under_way).max(0.0) + tail * 1.5),
    })
}

/// The ids of `rules` still open (pending): what [`predict`] takes for a live run.
pub fn open_ids(rules: &[Rule]) -> Vec<&str> {
    rules.iter().filter(|r| r.status == RuleStatus::Pending).map(|r| r.rule_id.as_str()).collect()
}

/// `xs` without its outliers (more than [`OUTLIER`] times its median). With three samples, one
/// of them aide's 20-minute install, the 75th percentile is aide's: every open rule would be
/// given 20 minutes at the top of the range (94 h in a live run at 3649 s).
fn typical(xs: &[f64]) -> Vec<f64> {
    let median = quantile(xs, 0.5);
    xs.iter().copied().filter(|x| *x <= OUTLIER * median).collect()
}

/// The `q` quantile of `xs` (nearest rank over the sorted values); 0 for none.
fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

#[cfg(test)]
mod tests;
