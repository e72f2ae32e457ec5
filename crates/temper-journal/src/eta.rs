//! When a run will end, predicted from what it has measured so far and from what the earlier runs
//! of its skill remember: one place for `temper status`, the progress line and the web view.
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
//!
//! **What the skill remembers** (`memory.rs`): each finished run leaves each rule's time, as
//! measured above, for its skill. A later run gives each open rule it remembers that time (the
//! median over the runs remembered; its range, their least to their most), at this run's pace:
//! this run's time over the remembered time of the rules of the same kind settled so far (a
//! fix under way past its remembered time counts with what it has taken), 1 before any settles.
//! And the rules not applicable so far that the earlier runs worked on are counted too: other
//! fixes made them apply there (installing auditd makes the 48 `audit_rules_*` rules apply), and
//! will here. A rule nothing remembers is given what the run's own times give it.
use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use serde::Serialize;

use crate::Verdict;
use crate::{Event, EventData, Rule, RuleStatus, ScanKind};

mod memory;

use memory::Spread;
pub use memory::{RECALL_RUNS, Remembered, RuleTime, rule_times};

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
enum FixKind {
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

impl FixKind {
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

/// What a prediction reads: the run's events up to the moment predicted from (oldest first), its
/// open rules, its rules not applicable so far, and what its skill remembers.
#[derive(Debug, Clone, Copy)]
pub struct Outlook<'a> {
    pub events: &'a [Event],
    /// The rules still to be worked on (pending), the one under way among them.
    pub open: &'a [&'a str],
    /// The rules not applicable so far: other fixes may make them apply, as in earlier runs.
    pub not_applicable: &'a [&'a str],
    pub memory: &'a Remembered,
}

impl<'a> Outlook<'a> {
    /// A run's `open` rules, with nothing else known: no memory, nothing waiting to apply.
    pub fn new(events: &'a [Event], open: &'a [&'a str]) -> Self {
        Self { events, open, not_applicable: &[], memory: Remembered::none() }
    }
    /// The same, with the rules not applicable so far and what the skill remembers.
    pub fn remembering(self, not_applicable: &'a [&'a str], memory: &'a Remembered) -> Self {
        Self { not_applicable, memory, ..self }
    }
}

/// The ids of a live run's open rules (pending) and of its rules not applicable so far, as an
/// [`Outlook`] takes them.
pub fn open_and_not_applicable(rules: &[Rule]) -> (Vec<&str>, Vec<&str>) {
    let ids = |s: RuleStatus| rules.iter().filter(move |r| r.status == s).map(|r| r.rule_id.as_str());
    (ids(RuleStatus::Pending).collect(), ids(RuleStatus::NotApplicable).collect())
}

/// The ids of `rules` still open (pending).
pub fn open_ids(rules: &[Rule]) -> Vec<&str> {
    open_and_not_applicable(rules).0
}

/// The prediction at `now` for a run as `o` has it. `None` before the first scan ends, or when
/// nothing is open.
pub fn predict(o: &Outlook, now: DateTime<FixedOffset>) -> Option<Eta> {
    if o.open.is_empty() {
        return None;
    }
    let m = Measured::of(o.events)?;
    let current = ((now - m.last).num_milliseconds() as f64 / 1000.0).max(0.0);
    let reboot = if m.rebooted { 0.0 } else { (m.first_scan / 3.0).max(60.0) };
    let tail = m.first_scan + reboot;
    let remembered = o.open.iter().chain(o.not_applicable).any(|r| o.memory.get(r).is_some());
    let (low, mid, high) = if remembered { m.remembered(o, current) } else { m.alone(o.open, current) };
    let secs = |work: f64, tail: f64| (work.max(0.0) + tail).round() as i64;
    Some(Eta { secs: secs(mid, tail), low: secs(low, tail), high: secs(high, tail * 1.5) })
}

/// One settled rule's time.
#[derive(Debug, Clone)]
struct Sample {
    rule: String,
    kind: FixKind,
    secs: f64,
}

/// What a run's events measured.
struct Measured {
    first_scan: f64,
    /// Each rule settled, in order, with its time.
    samples: Vec<Sample>,
    /// When the last rule settled (or the loop's work began).
    last: DateTime<FixedOffset>,
    /// A rule's time before [`MIN_SAMPLES`] have settled.
    prior: f64,
    rebooted: bool,
    /// The rule picked since the last one settled, if any: the one under way.
    under_way: Option<String>,
}

impl Measured {
    /// `None` before the first scan ends.
    fn of(events: &[Event]) -> Option<Self> {
        let stamp = |e: &Event| DateTime::parse_from_rfc3339(&e.ts).ok();
        let (first_scan, work_from) = events.iter().find_map(|e| match &e.data {
            EventData::Scan { kind: ScanKind::Full, secs, .. } => Some((*secs, stamp(e)?)),
            _ => None,
        })?;
        let mut m =
            Measured { first_scan, samples: Vec::new(), last: work_from, prior: first_scan * SCAN_SHARE, rebooted: false, under_way: None };
        for e in events {
            let Some(at) = stamp(e) else { continue };
            let settled = match &e.data {
                EventData::Escalate { .. } | EventData::Verdict { verdict: Verdict::Fixed | Verdict::NeedsReboot, .. } => {
                    e.rule_id.as_deref()
                }
                EventData::Pick(_) | EventData::Attempt { .. } => {
                    m.under_way = e.rule_id.clone();
                    None
                }
                EventData::Reboot { .. } => {
                    m.rebooted = true;
                    None
                }
                EventData::RegressionEvery { every, secs: Some(t), .. } => {
                    m.prior = 3.0 * t.one_rule + t.with_set / f64::from((*every).max(1));
                    // The cadence's rescans are preflight, not a rule's time.
                    m.last = m.last.max(at);
                    None
                }
                _ => None,
            };
            if let Some(rule) = settled.filter(|_| at >= m.last) {
                let secs = (at - m.last).num_milliseconds() as f64 / 1000.0;
                m.samples.push(Sample { rule: rule.to_string(), kind: FixKind::of(rule), secs });
                m.last = at;
                if m.under_way.as_deref() == Some(rule) {
                    m.under_way = None;
                }
            }
        }
        Some(m)
    }

    /// Low, middle and high of the work left on `open` from the run's own times alone.
    fn alone(&self, open: &[&str], current: f64) -> (f64, f64, f64) {
        let prior = self.prior;
        if self.samples.len() < MIN_SAMPLES {
            // The fix under way: what is left of a rule's prior, or as long again once past it.
            let left = if current < prior { prior - current } else { current };
            let rest = prior * (open.len() - 1) as f64;
            return (0.5 * (rest + left), rest + left, 2.0 * (rest + left));
        }
        let mut by_kind: BTreeMap<FixKind, Spread> = BTreeMap::new();
        let (mut low, mut mid, mut high) = (0.0, 0.0, 0.0);
        for rule in open {
            let s = *by_kind.entry(FixKind::of(rule)).or_insert_with_key(|k| self.quartiles(*k));
            (low, mid, high) = (low + s.low, mid + s.mid, high + s.high);
        }
        // One more long fix, as long as the longest so far.
        let longest = self.longest();
        high += longest;
        // The rule under way: at most a median's worth is taken off (it may be a long one); past
        // the longest so far, it is an outlier in progress, given as long again as it has run.
        let median = quantile(&self.pooled(), 0.5);
        let under_way = if current > longest { median - current } else { current.min(median) };
        (low - under_way, mid - under_way, high - under_way)
    }

    /// A kind's quartiles: its own samples; while it has few, those of the kinds like it
    /// (packages are like no other: a run that starts with its package installs, 150 s to 40 min
    /// each, must not give every sysctl as long); while there are none, the prior.
    fn quartiles(&self, kind: FixKind) -> Spread {
        let own: Vec<f64> = self.samples.iter().filter(|s| s.kind == kind).map(|s| s.secs).collect();
        let like: Vec<f64> =
            self.samples.iter().filter(|s| kind == FixKind::Package || s.kind != FixKind::Package).map(|s| s.secs).collect();
        let xs = if own.len() >= MIN_SAMPLES { own } else { like };
        if xs.is_empty() {
            return Spread { low: 0.5 * self.prior, mid: self.prior, high: 2.0 * self.prior };
        }
        Spread { low: quantile(&xs, 0.25), mid: quantile(&xs, 0.5), high: quantile(&typical(&xs), 0.75) }
    }

    /// Low, middle and high of the work left, the rules the skill remembers given their
    /// remembered times at this run's pace, the others what the run's own times give them.
    fn remembered(&self, o: &Outlook, current: f64) -> (f64, f64, f64) {
        let under_way = self.under_way.as_deref().filter(|r| o.open.contains(r));
        let estimate = |rule: &str, pace: &Pace| match o.memory.get(rule) {
            Some(s) => s.times(pace.of(FixKind::of(rule))),
            None if self.samples.len() < MIN_SAMPLES => Spread { low: 0.5 * self.prior, mid: self.prior, high: 2.0 * self.prior },
            None => self.quartiles(FixKind::of(rule)),
        };
        let settled = Pace::measured(self, o.memory, None);
        let pace = Pace::measured(self, o.memory, under_way.map(|r| (r, current)));
        let waiting = o.open.iter().filter(|r| Some(**r) != under_way);
        // Rules not applicable so far count only as earlier runs worked on them.
        let applying = o.not_applicable.iter().filter(|r| o.memory.get(r).is_some());
        let (mut low, mut mid, mut high) = (0.0, 0.0, 0.0);
        for s in waiting.chain(applying).map(|r| estimate(r, &pace)) {
            (low, mid, high) = (low + s.low, mid + s.mid, high + s.high);
        }
        // One more long fix, as long as the longest so far.
        high += self.longest();
        // The rule under way: what is left of its time at the pace of the rules settled before
        // it; past that, an outlier in progress, given as long again as it has run.
        let s = under_way.map_or(Spread { low: 0.0, mid: 0.0, high: 0.0 }, |r| estimate(r, &settled));
        let left = |x: f64| if current < s.mid { (x - current).max(0.0) } else { current };
        (low + left(s.low), mid + left(s.mid), high + left(s.high))
    }

    fn pooled(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.secs).collect()
    }

    fn longest(&self) -> f64 {
        quantile(&self.pooled(), 1.0)
    }
}

/// This run's pace against what the skill remembers, by kind: its time over the remembered time
/// of the rules of the kind settled so far (and of the rule under way, once past its remembered
/// time); 1 for a kind none of whose rules has settled. By kind, since a run's package installs
/// (downloads) may go slower or faster than its other fixes (the processor).
struct Pace(BTreeMap<FixKind, f64>);

impl Pace {
    /// From the rules settled, and `under_way` (a rule and the time it has run so far) when given.
    fn measured(m: &Measured, memory: &Remembered, under_way: Option<(&str, f64)>) -> Self {
        let mut sums: BTreeMap<FixKind, (f64, f64)> = BTreeMap::new();
        let remembered = m.samples.iter().filter_map(|s| Some((s.kind, s.secs, memory.get(&s.rule)?.mid)));
        let overrun = under_way.and_then(|(r, current)| Some((FixKind::of(r), current, memory.get(r)?.mid))).filter(|(_, c, t)| c > t);
        for (kind, took, then) in remembered.chain(overrun) {
            let e = sums.entry(kind).or_default();
            (e.0, e.1) = (e.0 + took, e.1 + then);
        }
        Self(sums.into_iter().filter(|(_, (_, then))| *then > 0.0).map(|(k, (now, then))| (k, now / then)).collect())
    }

    fn of(&self, kind: FixKind) -> f64 {
        self.0.get(&kind).copied().unwrap_or(1.0)
    }
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
