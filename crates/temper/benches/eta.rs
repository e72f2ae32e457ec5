//! The ETA against real runs: `cargo bench -p temper --bench eta --profile dev`, and in
//! `tests/run.sh` (it reads recorded journals; no VM). Every run in every recorded database
//! (`tests/data/runs/*.db.gz`: the store of a whole `temper run`, as the README runs it; a store
//! may hold several runs, a skill's first and second) is read back as it stood at 10%, 25% and
//! 50% of its wall time, and the end `journal::predict_end` predicted then is printed beside the
//! real end.
//!
//! One rule for every run, whatever the machine did beside it: the run is predicted with what
//! its skill remembers from the recorded runs before it, as a store holding them all would
//! recall it (each run's rule times, `journal::rule_times`, the newest `RECALL_RUNS` runs of the
//! skill that started before it; none for the first). The goals: at 10%, within 40% of the run's
//! real length; at 25%, within 30%. Each miss is printed, and the bench exits 1 when there is
//! one. Printed beside, not judged: the run predicted alone (nothing remembered, as a skill's
//! first run), and, for a store holding several runs, from its own earlier runs only (what that
//! store did remember).

use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, FixedOffset};
use temper_journal::Verdict;
use temper_journal::prelude::*;
use temper_journal::{Event, EventData, Outlook, RECALL_RUNS, Remembered, Rule, RuleStatus, RuleTime, ScanResult, predict_end, rule_times};

/// Each cut, and the bound the predicted end must keep to there (`None`: printed, not judged).
const CUTS: [(f64, Option<f64>); 3] = [(0.10, Some(0.40)), (0.25, Some(0.30)), (0.50, None)];

fn recorded() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/runs");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".db.gz"))
        .collect();
    v.sort();
    v
}

fn stamp(e: &Event) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(&e.ts).unwrap()
}

/// A rule the loop worked on: when it became known to the loop (the first scan found it
/// failing, or a check found it applicable) and when it was settled (fixed and kept, or
/// escalated).
struct Worked {
    id: String,
    known: DateTime<FixedOffset>,
    settled: Option<DateTime<FixedOffset>>,
}

/// When the first check found `rule` applicable, if one did.
fn applies(rule: &str, events: &[Event]) -> Option<DateTime<FixedOffset>> {
    events.iter().filter(|e| e.rule_id.as_deref() == Some(rule)).find(|e| matches!(e.data, EventData::RuleApplicable { .. })).map(stamp)
}

fn worked(rules: &[Rule], events: &[Event]) -> Vec<Worked> {
    let start = stamp(&events[0]);
    let in_scope =
        |r: &&Rule| matches!(r.status, RuleStatus::Fixed | RuleStatus::Escalated | RuleStatus::StillFailing | RuleStatus::Pending);
    rules
        .iter()
        .filter(in_scope)
        .map(|r| {
            let known = if r.initial_result == ScanResult::Fail { start } else { applies(&r.rule_id, events).unwrap_or(start) };
            let settled = events
                .iter()
                .filter(|e| e.rule_id.as_deref() == Some(r.rule_id.as_str()))
                .filter(|e| {
                    matches!(e.data, EventData::Escalate { .. } | EventData::Verdict { verdict: Verdict::Fixed | Verdict::NeedsReboot, .. })
                })
                .map(stamp)
                .next_back();
            Worked { id: r.rule_id.clone(), known, settled }
        })
        .collect()
}

/// One recorded run, read back.
struct Recorded {
    file: String,
    skill: String,
    run: temper_journal::RunId,
    events: Vec<Event>,
    worked: Vec<Worked>,
    times: Vec<RuleTime>,
    start: DateTime<FixedOffset>,
    length: f64,
    /// When each rule the first scan found not applicable became applicable, if it did.
    applies: Vec<(String, Option<DateTime<FixedOffset>>)>,
}

async fn open(gz: &Path, dir: &Path) -> temper_store::Store {
    let db = dir.join(gz.file_name().unwrap().to_string_lossy().trim_end_matches(".gz"));
    let out = std::process::Command::new("gzip").arg("-dc").arg(gz).output().expect("gzip");
    assert!(out.status.success(), "{}: {}", gz.display(), String::from_utf8_lossy(&out.stderr));
    std::fs::write(&db, out.stdout).unwrap();
    temper_store::Store::open(db.to_str().unwrap()).await.unwrap()
}

async fn read(files: &[PathBuf]) -> Vec<Recorded> {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for gz in files {
        let store = open(gz, dir.path()).await;
        let file = gz.file_name().unwrap().to_string_lossy().into_owned();
        let mut rows = store.list_runs(i64::MAX).await.unwrap();
        rows.sort_by_key(|r| r.id);
        for row in rows {
            let events = store.events(row.id, None).await.unwrap();
            if !events.iter().any(|e| matches!(e.data, EventData::Finish(_))) {
                println!("{file}: run {} did not finish: not judged", row.id);
                continue;
            }
            let rules = store.rules(row.id).await.unwrap();
            let (start, end) = (stamp(&events[0]), stamp(events.last().unwrap()));
            let applies = rules
                .iter()
                .filter(|r| r.initial_result == ScanResult::NotApplicable)
                .map(|r| (r.rule_id.clone(), applies(&r.rule_id, &events)))
                .collect();
            runs.push(Recorded {
                file: file.clone(),
                skill: row.skill.clone(),
                run: row.id,
                times: rule_times(row.id, &events),
                length: (end - start).num_milliseconds() as f64 / 1000.0,
                start,
                worked: worked(&rules, &events),
                events,
                applies,
            });
        }
    }
    runs.sort_by_key(|r| r.start);
    runs
}

/// What a store would recall for `runs[i]`: the rule times of the newest [`RECALL_RUNS`] runs of
/// its skill that started before it, among those `among` admits.
fn memory(runs: &[Recorded], i: usize, among: impl Fn(&Recorded) -> bool) -> (Remembered, usize) {
    let before: Vec<&Recorded> = runs[..i].iter().filter(|r| r.skill == runs[i].skill && among(r)).collect();
    let recalled = &before[before.len().saturating_sub(RECALL_RUNS as usize)..];
    let times: Vec<RuleTime> = recalled.iter().flat_map(|r| r.times.iter().cloned()).collect();
    (Remembered::of(&times), recalled.len())
}

/// The predicted end at `cut` of the run's length, with its range; `None`: no prediction.
fn predicted(r: &Recorded, cut: f64, memory: &Remembered) -> Option<(f64, f64, f64, usize)> {
    let at = r.start + Duration::milliseconds((r.length * cut * 1000.0) as i64);
    let seen: Vec<Event> = r.events.iter().filter(|e| stamp(e) <= at).cloned().collect();
    let open: Vec<&str> = r.worked.iter().filter(|w| w.known <= at && w.settled.is_none_or(|s| s > at)).map(|w| w.id.as_str()).collect();
    let not_applicable: Vec<&str> =
        r.applies.iter().filter(|(_, applies)| applies.is_none_or(|a| a > at)).map(|(id, _)| id.as_str()).collect();
    let eta = predict_end(&Outlook::new(&seen, &open).remembering(&not_applicable, memory), at)?;
    let done = r.length * cut;
    Some((done + eta.secs as f64, done + eta.low as f64, done + eta.high as f64, open.len()))
}

#[tokio::main]
async fn main() {
    let files = recorded();
    assert!(!files.is_empty(), "no recorded runs under tests/data/runs");
    let runs = read(&files).await;
    let mut misses = Vec::new();
    let mut judged = 0;
    for (i, r) in runs.iter().enumerate() {
        let (recalled, n) = memory(&runs, i, |_| true);
        let (own, own_n) = memory(&runs, i, |o| o.file == r.file);
        println!(
            "{} run {} ({}): took {:.0} s; remembered: {} rules from {} earlier recorded run(s) of its skill{}",
            r.file,
            r.run,
            r.skill,
            r.length,
            recalled.len(),
            n,
            if own_n > 0 { format!(", {own_n} of them in its own store") } else { String::new() }
        );
        for (cut, bound) in CUTS {
            let error = |end: f64| (end - r.length) / r.length * 100.0;
            let alone = predicted(r, cut, Remembered::none()).map_or("no prediction".into(), |p| format!("{:+.1}%", error(p.0)));
            let own_store = match own_n {
                0 => String::new(),
                _ => predicted(r, cut, &own)
                    .map_or(", its store's memory: none".into(), |p| format!(", its store's memory {:+.1}%", error(p.0))),
            };
            let Some((end, low, high, open)) = predicted(r, cut, &recalled) else {
                println!("  at {:>3.0}%: no prediction (alone {alone}{own_store})", cut * 100.0);
                if bound.is_some() {
                    misses.push(format!("{} run {}: no prediction at {:.0}%", r.file, r.run, cut * 100.0));
                }
                continue;
            };
            println!(
                "  at {:>3.0}%: {open} open, predicted end {end:.0} s ({low:.0} to {high:.0} s), real {:.0} s, error {:+.1}% (alone {alone}{own_store})",
                cut * 100.0,
                r.length,
                error(end),
            );
            if let Some(b) = bound
                && (error(end) / 100.0).abs() > b
            {
                misses.push(format!(
                    "{} run {}: {:+.1}% at {:.0}% (goal: within {:.0}%)",
                    r.file,
                    r.run,
                    error(end),
                    cut * 100.0,
                    b * 100.0
                ));
            }
        }
        judged += 1;
    }
    if !misses.is_empty() {
        println!("the ETA missed its goal on {} of {judged} recorded runs' cuts:", misses.len());
        for m in &misses {
            println!("  {m}");
        }
        std::process::exit(1);
    }
    println!("all {judged} recorded runs within 40% at 10% and within 30% at 25%");
}
