use chrono::{DateTime, Duration, FixedOffset};

use super::*;
use crate::{AttemptNo, Event, EventData, EventId, RunId, ScanKind};

/// The prediction from the run's own events alone, nothing remembered.
fn predict(events: &[Event], open: &[&str], now: DateTime<FixedOffset>) -> Option<Eta> {
    super::predict(&Outlook::new(events, open), now)
}

const T0: &str = "2026-12-01T10:00:00+00:00";

fn at(secs: i64) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(T0).unwrap() + Duration::seconds(secs)
}

fn event(secs: i64, rule: Option<&str>, data: EventData) -> Event {
    Event {
        id: EventId::new(1).unwrap(),
        run_id: RunId::new(1).unwrap(),
        ts: at(secs).to_rfc3339(),
        kind: data.kind(),
        rule_id: rule.map(str::to_string),
        data,
    }
}

fn scan(secs: i64, took: f64) -> Event {
    event(secs, None, EventData::Scan { kind: ScanKind::Full, counts: Default::default(), score: None, secs: took, stalls: 0 })
}

fn fixed(secs: i64, rule: &str) -> Event {
    event(secs, Some(rule), EventData::Verdict { attempt: AttemptNo::new(1), verdict: Verdict::Fixed, reason: String::new() })
}

/// A first scan of 300 s, then `rules` settled one after the other, each taking its seconds.
fn run(rules: &[(&str, i64)]) -> (Vec<Event>, i64) {
    let mut t = 300;
    let mut events = vec![scan(t, 300.0)];
    for (rule, took) in rules {
        t += took;
        events.push(fixed(t, rule));
    }
    (events, t)
}

#[test]
fn no_prediction_before_the_first_scan_or_with_nothing_open() {
    let (events, t) = run(&[("sshd_a", 20), ("sshd_b", 20)]);
    assert_eq!(predict(&events[1..], &["sshd_c"], at(t)), None, "no first scan");
    assert!(predict(&events, &["sshd_c"], at(t)).is_some(), "two settled: the prior");
    assert_eq!(predict(&events, &[], at(t)), None, "nothing open");
}

fn cadence(secs: i64, one_rule: f64, with_set: f64, every: u32) -> Event {
    let timed = crate::RescanTimes { one_rule, with_set };
    event(secs, None, EventData::RegressionEvery { every, how: crate::Cadence::Measured, secs: Some(timed), final_scan_only: Vec::new() })
}

/// Before three rules settle, each open rule is given a prior from the cadence's timed rescans:
/// three rescans of one rule and its share of a regression check (3 x 5 + 40 / 10 = 19 s).
#[test]
fn before_three_rules_settle_each_is_given_the_cadences_prior() {
    let events = vec![scan(300, 300.0), cadence(340, 5.0, 40.0, 10)];
    let open: Vec<String> = (0..100).map(|i| format!("sshd_{i}")).collect();
    let open: Vec<&str> = open.iter().map(String::as_str).collect();
    let tail = 300 + 100;
    let eta = predict(&events, &open, at(340)).unwrap();
    assert_eq!(eta.secs, 100 * 19 + tail, "{eta:?}");
    assert!(eta.low < eta.secs && eta.secs < eta.high, "{eta:?}");
    // Without the cadence's timings: 4% of the first scan (12 s) a rule.
    assert_eq!(predict(&events[..1], &open, at(300)).unwrap().secs, 100 * 12 + tail);
}

/// aide's install under way for 700 s, past any rule's prior: an outlier in progress, given as
/// long again; the other rules keep their prior.
#[test]
fn a_fix_under_way_past_the_prior_is_given_as_long_again() {
    let events = vec![scan(300, 300.0), cadence(340, 5.0, 40.0, 10)];
    let open = ["package_aide_installed", "sshd_a", "sshd_b"];
    let tail = 300 + 100;
    let early = predict(&events, &open, at(340 + 10)).unwrap();
    assert_eq!(early.secs, 2 * 19 + 9 + tail, "10 s into a 19 s prior: {early:?}");
    let late = predict(&events, &open, at(340 + 700)).unwrap();
    assert_eq!(late.secs, 2 * 19 + 700 + tail, "{late:?}");
}

/// aide's 1500 s install among twenty 20 s fixes: the mean would give every open rule 90 s (45
/// min for 30); the median gives 20 s, and the long one widens the range by itself, once.
#[test]
fn a_long_fix_weighs_as_an_outlier() {
    let mut rules: Vec<(&str, i64)> = vec![("package_aide_installed", 1500)];
    let names: Vec<String> = (0..20).map(|i| format!("package_{i}_installed")).collect();
    rules.extend(names.iter().map(|n| (n.as_str(), 20)));
    let (events, t) = run(&rules);
    let open: Vec<String> = (0..30).map(|i| format!("package_open_{i}_installed")).collect();
    let open: Vec<&str> = open.iter().map(String::as_str).collect();
    let eta = predict(&events, &open, at(t)).unwrap();
    let tail = 300 + 100;
    assert_eq!(eta.secs, 30 * 20 + tail, "{eta:?}");
    assert!(eta.low <= eta.secs && eta.secs < eta.high, "{eta:?}");
    assert_eq!(eta.high, 30 * 20 + 1500 + tail * 3 / 2, "the 75th percentile, and one more fix as long as aide's: {eta:?}");
}

/// The README's run at 3649 s: aide's install (2100 s) and two short fixes settled, 128 rules
/// open. The 75th percentile of three is aide's, which gave each open rule 35 minutes at the top
/// of the range (94 h); the outlier now counts once.
#[test]
fn an_outlier_among_few_samples_counts_once_in_the_range() {
    let (events, t) = run(&[("package_aide_installed", 2100), ("package_b_installed", 40), ("sshd_c", 60)]);
    let open: Vec<String> = (0..128).map(|i| format!("sshd_open_{i}")).collect();
    let open: Vec<&str> = open.iter().map(String::as_str).collect();
    let eta = predict(&events, &open, at(t)).unwrap();
    let tail = 300 + 100;
    assert_eq!(eta.secs, 128 * 60 + tail, "the median: {eta:?}");
    assert_eq!(eta.high, 128 * 60 + 2100 + tail * 3 / 2, "the typical 75th percentile, and aide's once: {eta:?}");
    assert!(eta.low <= eta.secs, "{eta:?}");
}

#[test]
fn each_kind_of_fix_is_predicted_from_its_own() {
    let (events, t) = run(&[
        ("package_a_installed", 200),
        ("audit_rules_a", 10),
        ("package_b_installed", 220),
        ("audit_rules_b", 12),
        ("package_c_installed", 180),
        ("audit_rules_c", 11),
    ]);
    let package = predict(&events, &["package_d_installed"], at(t)).unwrap();
    let audit = predict(&events, &["audit_rules_d"], at(t)).unwrap();
    assert_eq!(package.secs - audit.secs, 200 - 11, "{package:?} {audit:?}");
}

#[test]
fn the_rule_under_way_and_a_reboot_done_count() {
    let (mut events, t) = run(&[("sshd_a", 30), ("sshd_b", 30), ("sshd_c", 30)]);
    let idle = predict(&events, &["sshd_d", "sshd_e"], at(t)).unwrap();
    let later = predict(&events, &["sshd_d", "sshd_e"], at(t + 20)).unwrap();
    assert_eq!(idle.secs - later.secs, 20, "20 s into the next rule: {idle:?} {later:?}");
    let longest = predict(&events, &["sshd_d", "sshd_e"], at(t + 30)).unwrap();
    assert_eq!(idle.secs - longest.secs, 30, "at most its median is taken off: {longest:?}");
    let much_later = predict(&events, &["sshd_d", "sshd_e"], at(t + 900)).unwrap();
    assert_eq!(much_later.secs - idle.secs, 900 - 30, "past the longest, as long again as it ran: {much_later:?}");
    let reboot = EventData::Reboot {
        why: String::new(),
        fixes: 3,
        power_off: crate::PowerOff::Clean,
        down_secs: 1.0,
        secs: 60.0,
        up: true,
        problem: None,
    };
    events.push(event(t + 1, None, reboot));
    let after = predict(&events, &["sshd_d", "sshd_e"], at(t + 1)).unwrap();
    assert_eq!(idle.secs - after.secs, 100 + 1, "no reboot proof left to run: {idle:?} {after:?}");
}

#[test]
fn spans_read_as_a_person_reads_them() {
    assert_eq!(span(45, Round::Nearest), "45 s");
    assert_eq!(span(12 * 60 + 10, Round::Nearest), "12 min");
    assert_eq!(span(3600 + 5 * 60, Round::Nearest), "1 h 05 min");
    assert_eq!(span(2 * 3600 - 20, Round::Nearest), "2 h 00 min", "not 1 h 00 min");
    assert_eq!(span(3600 - 20, Round::Nearest), "1 h 00 min", "not 60 min");
    assert_eq!(Eta { secs: 3000, low: 2400, high: 4800 }.human(), "50 min (40 min to 1 h 20 min)");
    // The range shown holds the range predicted: 9 min 50 s to 29 min 10 s is 9 to 30 min.
    assert_eq!(Eta { secs: 1000, low: 590, high: 1750 }.human(), "17 min (9 min to 30 min)");
}

/// The README's run of 2026-12-02, as it stood at 3544 s: a first scan of 559 s, then four
/// package installs settled (aide 2528 s, then 146, 172 and 47 s) and 127 rules open, none of them
/// a package. Every open rule was given the packages' median, 159 s: 22708 s left (26252 s in
/// all). Packages are like no other kind: with no other kind settled, each open rule is given the
/// prior (three 5 s rescans and a tenth of a 40 s check, 19 s), as before the first three.
#[test]
fn package_installs_first_do_not_set_every_other_rules_time() {
    let mut events = vec![scan(559, 559.0), cadence(620, 5.0, 40.0, 10)];
    let mut t = 620;
    for (rule, took) in [
        ("package_aide_installed", 2528),
        ("package_pam_pwquality_installed", 146),
        ("package_apparmor_installed", 172),
        ("package_pam_apparmor_installed", 47),
    ] {
        t += took;
        events.push(fixed(t, rule));
    }
    let open: Vec<String> = (0..127).map(|i| format!("audit_rules_{i}")).collect();
    let open: Vec<&str> = open.iter().map(String::as_str).collect();
    let tail = 559 + 186;
    let eta = predict(&events, &open, at(t)).unwrap();
    assert_eq!(eta.secs, 127 * 19 + tail, "{eta:?}");
    assert!(eta.low < eta.secs && eta.secs < eta.high, "{eta:?}");
    // An open package is still given the packages' own median (159 s, from its kind's samples).
    let mut with_package = open.clone();
    with_package.push("package_rsyslog-gnutls_installed");
    assert_eq!(predict(&events, &with_package, at(t)).unwrap().secs, 127 * 19 + 172 + tail, "the median of four is its upper middle");
}

fn attempt(secs: i64, rule: &str) -> Event {
    let data =
        EventData::Attempt { attempt: AttemptNo::FIRST, source: crate::FixSource::Stock, replayed: false, evidence_looked_ahead: false };
    event(secs, Some(rule), data)
}

fn remembered(times: &[(&str, f64)]) -> Remembered {
    let rows: Vec<RuleTime> =
        times.iter().map(|(r, s)| RuleTime { run_id: RunId::new(1).unwrap(), rule_id: r.to_string(), secs: *s }).collect();
    Remembered::of(&rows)
}

/// A run's rule times are the ETA's samples: from the first scan's end (or the cadence's
/// measurement) to each settlement; a rule settled twice has both.
#[test]
fn a_runs_rule_times_are_its_samples() {
    let (mut events, t) = run(&[("package_aide_installed", 900), ("sshd_a", 10)]);
    events.push(fixed(t + 5, "package_aide_installed"));
    let times = rule_times(RunId::new(7).unwrap(), &events);
    let got: Vec<(&str, f64)> = times.iter().map(|t| (t.rule_id.as_str(), t.secs)).collect();
    assert_eq!(got, [("package_aide_installed", 905.0), ("sshd_a", 10.0)]);
    assert!(times.iter().all(|t| t.run_id == RunId::new(7).unwrap()));
    assert!(rule_times(RunId::new(7).unwrap(), &events[1..]).is_empty(), "no first scan, no times");
}

/// Over several runs, each rule's median (the mean of the middle two for an even count), its
/// least and its most.
#[test]
fn a_skill_remembers_each_rules_spread_over_its_runs() {
    let rows: Vec<RuleTime> = [(1, "a", 10.0), (2, "a", 30.0), (3, "a", 20.0), (1, "b", 4.0), (2, "b", 8.0)]
        .into_iter()
        .map(|(run, rule, secs)| RuleTime { run_id: RunId::new(run).unwrap(), rule_id: rule.into(), secs })
        .collect();
    let m = Remembered::of(&rows);
    assert_eq!((m.len(), m.secs("a"), m.secs("b"), m.secs("c")), (2, Some(20.0), Some(6.0), None));
    assert_eq!(m.get("a"), Some(Spread { low: 10.0, mid: 20.0, high: 30.0 }));
    let once = Remembered::of(&rows[..1]);
    assert_eq!(once.get("a"), Some(Spread { low: 5.0, mid: 10.0, high: 20.0 }), "one run's time is a prior: half to twice it");
    assert!(Remembered::none().is_empty());
}

/// The skill's second run, 60 s into aide's install: alone, the run knows only its prior (12 s
/// a rule) and gives aide as long again as it has run; what the first run remembers gives aide
/// its 1000 s, each open rule its own time, and the 50 audit rules that applied there once
/// auditd was in (not applicable here yet) theirs.
#[test]
fn a_later_run_predicts_from_what_its_skill_remembers() {
    let sysctls: Vec<String> = (0..100).map(|i| format!("sysctl_{i}")).collect();
    let audits: Vec<String> = (0..50).map(|i| format!("audit_rules_{i}")).collect();
    let mut first: Vec<(&str, f64)> = vec![("package_aide_installed", 1000.0)];
    first.extend(sysctls.iter().map(|r| (r.as_str(), 8.0)));
    first.extend(audits.iter().map(|r| (r.as_str(), 20.0)));
    let memory = remembered(&first);
    let events = vec![scan(300, 300.0), cadence(340, 3.0, 30.0, 10), attempt(340, "package_aide_installed")];
    let mut open: Vec<&str> = vec!["package_aide_installed"];
    open.extend(sysctls.iter().map(String::as_str));
    let waiting: Vec<&str> = audits.iter().map(String::as_str).chain(["never_applies"]).collect();
    let now = at(340 + 60);
    let tail = 300 + 100;
    let alone = predict(&events, &open, now).unwrap();
    assert_eq!(alone.secs, 100 * 12 + 60 + tail, "the prior, and aide as long again: {alone:?}");
    let o = Outlook::new(&events, &open).remembering(&waiting, &memory);
    let eta = super::predict(&o, now).unwrap();
    assert_eq!(eta.secs, (1000 - 60) + 100 * 8 + 50 * 20 + tail, "{eta:?}");
    assert!(eta.low <= eta.secs && eta.secs <= eta.high, "{eta:?}");
}

/// Remembered times are taken at this run's pace, kind by kind: its audit rules took twice what
/// the skill remembers, so the open audit rules are given twice theirs; the sysctls, none of
/// which has settled, theirs as remembered.
#[test]
fn remembered_times_go_at_this_runs_pace_by_kind() {
    let memory = remembered(&[("audit_rules_a", 10.0), ("audit_rules_b", 10.0), ("audit_rules_c", 10.0), ("sysctl_a", 5.0)]);
    let (events, t) = run(&[("audit_rules_a", 20), ("audit_rules_b", 20)]);
    let open = ["audit_rules_c", "sysctl_a"];
    let eta = super::predict(&Outlook::new(&events, &open).remembering(&[], &memory), at(t)).unwrap();
    assert_eq!(eta.secs, 2 * 10 + 5 + 300 + 100, "{eta:?}");
}

/// A fix under way past its remembered time is evidence of the pace: aide, remembered at 1000 s,
/// has run 1500 s; the other packages are given 1.5 times theirs, the sysctl its own. Past its
/// remembered time, aide is an outlier in progress, given as long again as it has run.
#[test]
fn a_fix_under_way_past_its_remembered_time_sets_its_kinds_pace() {
    let memory = remembered(&[("package_aide_installed", 1000.0), ("package_b_installed", 100.0), ("sysctl_a", 5.0)]);
    let events = vec![scan(300, 300.0), attempt(300, "package_aide_installed")];
    let open = ["package_aide_installed", "package_b_installed", "sysctl_a"];
    let eta = super::predict(&Outlook::new(&events, &open).remembering(&[], &memory), at(300 + 1500)).unwrap();
    assert_eq!(eta.secs, 1500 + 150 + 5 + 300 + 100, "{eta:?}");
    let before = super::predict(&Outlook::new(&events, &open).remembering(&[], &memory), at(300 + 400)).unwrap();
    assert_eq!(before.secs, 600 + 100 + 5 + 300 + 100, "400 s into its remembered 1000 s: {before:?}");
}
