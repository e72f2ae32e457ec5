use std::collections::BTreeMap;

use temper_journal::Verdict;
use temper_journal::{AttemptNo, Blamed, Event, EventData, ScanKind};

use super::*;
use crate::run::ProgressChart;
use temper_journal::RunId;

fn event(id: i64, secs: i64, rule: Option<&str>, data: EventData) -> Event {
    let ts = chrono::DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap().to_rfc3339();
    Event {
        id: temper_journal::EventId::new(id).unwrap(),
        run_id: RunId::new(1).unwrap(),
        ts,
        kind: data.kind(),
        rule_id: rule.map(str::to_string),
        data,
    }
}

fn scan(kind: ScanKind, score: f64) -> EventData {
    EventData::Scan { kind, counts: BTreeMap::new(), score: Some(score), secs: 1.0, stalls: 0 }
}

fn fixed() -> EventData {
    EventData::Verdict { attempt: Some(AttemptNo::FIRST), verdict: Verdict::Fixed, reason: "the rule passes".into() }
}

fn run() -> Vec<Event> {
    let blamed = Blamed { attempt: AttemptNo::FIRST, verdict: Verdict::NotPersistent, reason: "after a reboot".into(), fix: String::new() };
    vec![
        event(1, 0, None, scan(ScanKind::Full, 61.25)),
        event(2, 60, Some("rule_a"), fixed()),
        event(3, 90, Some("rule_a"), fixed()),
        event(4, 120, Some("rule_b"), fixed()),
        event(5, 150, Some("rule_b"), EventData::RebootBlamed(blamed)),
        event(6, 180, None, scan(ScanKind::Final, 68.5)),
    ]
}

#[test]
fn points_follow_the_events() {
    let p = ProgressChart::of(&run());
    let fixed: Vec<(f64, &str, usize, bool)> = p.fixed.iter().map(|f| (f.secs, f.rule_id.as_str(), f.fixed, f.gained)).collect();
    // A second `fixed` for rule_a counts once; the reboot proof takes rule_b's fix away.
    assert_eq!(fixed, [(60.0, "rule_a", 1, true), (120.0, "rule_b", 2, true), (150.0, "rule_b", 1, false)]);
    let scores: Vec<(f64, f64)> = p.scores.iter().map(|s| (s.secs, s.score)).collect();
    assert_eq!(scores, [(0.0, 61.25), (180.0, 68.5)]);
}

#[test]
fn the_svg_has_axes_points_and_titles() {
    let s = svg(&ProgressChart::of(&run()));
    assert!(s.starts_with("<svg ") && s.ends_with("</svg>"), "{s}");
    assert_eq!(s.matches("class=\"fixed-point\"").count(), 3);
    assert_eq!(s.matches("class=\"score-point\"").count(), 2);
    // Time runs 0 to 180 s over 536 px from x = 48; two fixed rules reach the top (y = 28).
    assert!(s.contains("cx=\"226.7\" cy=\"124.0\""), "rule_a's point: {s}");
    assert!(s.contains("data-fixed=\"2\" cx=\"405.3\" cy=\"28.0\""), "rule_b's point: {s}");
    assert!(s.contains("data-score=\"68.50\" cx=\"584.0\""), "the final score at the end: {s}");
    for tick in ["0 ms", "1 min 30 s", "3 min 00 s", ">0<", ">2<", "0%", "100%"] {
        assert!(s.contains(tick), "tick {tick}: {s}");
    }
    assert!(s.contains("<title id=\"chart-title\">Progress: 1 rules fixed; score 61.25% → 68.50%</title>"));
    assert!(s.contains("rule_b lost its fix at 2 min 30 s: 1 fixed so far"));
    assert!(!s.contains("style="), "no inline style (CSP)");
}

#[test]
fn a_run_without_events_says_so() {
    let p = ProgressChart::of(&[]);
    assert!(p.is_empty());
    let s = svg(&p);
    assert!(s.contains("No progress yet"));
    assert!(!s.contains("<svg"));
    // Events that neither fix nor score draw nothing either.
    let other = [event(1, 0, None, EventData::Error { error: "boom".into() })];
    assert!(svg(&ProgressChart::of(&other)).contains("No progress yet"));
}

#[test]
fn text_from_the_journal_is_escaped() {
    let evil = "<script>alert(1)</script><img src=x onerror=\"a()\"> & 'q'\u{1}\u{1b}[31m";
    let events = [event(1, 0, None, scan(ScanKind::Full, 50.0)), event(2, 5, Some(evil), fixed())];
    let s = svg(&ProgressChart::of(&events));
    assert!(!s.contains("<script") && !s.contains("<img"), "{s}");
    assert!(
        s.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;a()&quot;&gt; &amp; &#x27;q&#x27;\\x01\\x1b[31m"),
        "{s}"
    );
    assert!(!s.chars().any(|c| c.is_control() && c != '\n'), "no control characters");
    // Only the chart's own elements.
    let tags: Vec<&str> = s.split('<').skip(1).map(|t| t.split([' ', '>', '/']).next().unwrap_or("")).filter(|t| !t.is_empty()).collect();
    assert!(tags.iter().all(|t| ["svg", "title", "g", "line", "text", "rect", "polyline", "circle"].contains(t)), "{tags:?}");
}

/// A run still going on, 27 minutes in, whose last point is at 3 minutes: the axis runs to 27
/// minutes, and the points sit where their times put them on it. A run's last event, not its
/// last point, ends the axis of one that is over.
#[test]
fn the_time_axis_runs_to_now() {
    let mut events = run();
    events.push(event(7, 300, None, EventData::Error { error: "a later event".into() }));
    let over = ProgressChart::of(&events);
    assert_eq!(over.until, 300.0, "the last event");
    let start = chrono::DateTime::parse_from_rfc3339(&events[0].ts).unwrap();
    let live = ProgressChart::of(&events).to_now(&events, start + chrono::Duration::minutes(27));
    assert_eq!(live.until, 1620.0);
    let s = svg(&live);
    assert!(s.contains(">27 min 00 s<"), "the last tick is now: {s}");
    // 180 s of 1620 s over 536 px from x = 48.
    assert!(s.contains("data-score=\"68.50\" cx=\"107.6\""), "{s}");
}
