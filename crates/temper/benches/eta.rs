//! The ETA against real runs: `cargo bench -p temper --bench eta`. Each recorded ANSSI run's
//! database (`tests/data/runs/*.db.gz`, the journal of a whole `temper run --agent stock`, as the
//! README runs it) is read back as it stood at 10%, 25% and 50% of its wall time, and the end
//! `journal::predict_end` predicted then is printed beside the real end. The goal: at 25%, within
//! 30% of the run's real length; the bench prints each miss and exits 1 when there is one.
//!
//! A run recorded on a loaded machine (`*-loaded.db.gz`: other guests' benches and builds beside
//! it, their load starting after its first quarter) is judged by its range instead: a rate
//! measured before the load came cannot foresee it, but the range must still hold the real end.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, FixedOffset};
use temper_core::journal::prelude::*;
use temper_core::journal::{Event, EventData, Outlook, Rule, RuleStatus, ScanResult, predict_end};
use temper_core::verdict::Verdict;

const CUTS: [f64; 3] = [0.10, 0.25, 0.50];
/// The bound: at 25% of a run, the predicted end within 30% of its real length.
const BOUND_AT_25: f64 = 0.30;
/// The name's mark of a run recorded on a loaded machine.
const LOADED: &str = "-loaded.db.gz";

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

/// The rules the loop works on, each with the time it became known (the first scan, or the
/// check that found it applicable) and the time it was settled (fixed and kept, or escalated).
struct Worked {
    id: String,
    known: DateTime<FixedOffset>,
    settled: Option<DateTime<FixedOffset>>,
}

fn worked(rules: &[Rule], events: &[Event]) -> Vec<Worked> {
    let start = stamp(&events[0]);
    let in_scope =
        |r: &&Rule| matches!(r.status, RuleStatus::Fixed | RuleStatus::Escalated | RuleStatus::StillFailing | RuleStatus::Pending);
    rules
        .iter()
        .filter(in_scope)
        .map(|r| {
            let of = |e: &&Event| e.rule_id.as_deref() == Some(r.rule_id.as_str());
            let applicable = events.iter().filter(of).find(|e| matches!(e.data, EventData::RuleApplicable { .. })).map(stamp);
            let known = if r.initial_result == ScanResult::Fail { start } else { applicable.unwrap_or(start) };
            let settled = events
                .iter()
                .filter(of)
                .filter(|e| {
                    matches!(e.data, EventData::Escalate { .. } | EventData::Verdict { verdict: Verdict::Fixed | Verdict::NeedsReboot, .. })
                })
                .map(stamp)
                .next_back();
            Worked { id: r.rule_id.clone(), known, settled }
        })
        .collect()
}

async fn open(gz: &Path, dir: &Path) -> temper_store::Store {
    let db = dir.join(gz.file_name().unwrap().to_string_lossy().trim_end_matches(".gz"));
    let out = std::process::Command::new("gzip").arg("-dc").arg(gz).output().expect("gzip");
    assert!(out.status.success(), "{}: {}", gz.display(), String::from_utf8_lossy(&out.stderr));
    std::fs::write(&db, out.stdout).unwrap();
    temper_store::Store::open(db.to_str().unwrap()).await.unwrap()
}

#[tokio::main]
async fn main() {
    let files = recorded();
    assert!(!files.is_empty(), "no recorded runs under tests/data/runs");
    let dir = tempfile::tempdir().unwrap();
    let mut misses = Vec::new();
    for gz in &files {
        let store = open(gz, dir.path()).await;
        let run = store.latest_run().await.unwrap().expect("a run");
        let events = store.events(run.id, 0).await.unwrap();
        let rules = store.rules(run.id).await.unwrap();
        let (start, end) = (stamp(&events[0]), stamp(events.last().unwrap()));
        let length = (end - start).num_milliseconds() as f64 / 1000.0;
        let worked = worked(&rules, &events);
        let loaded = gz.to_string_lossy().ends_with(LOADED);
        println!(
            "{}: run {} took {:.0} s, {} rules worked{}",
            gz.file_name().unwrap().to_string_lossy(),
            run.id,
            length,
            worked.len(),
            if loaded { " (a loaded machine: at 25% its range must hold the real end)" } else { "" }
        );
        for cut in CUTS {
            let at = start + Duration::milliseconds((length * cut * 1000.0) as i64);
            let seen: Vec<Event> = events.iter().filter(|e| stamp(e) <= at).cloned().collect();
            let open: Vec<&str> =
                worked.iter().filter(|w| w.known <= at && w.settled.is_none_or(|s| s > at)).map(|w| w.id.as_str()).collect();
            let Some(eta) = predict_end(&Outlook::new(&seen, &open), at) else {
                println!("  at {:>3.0}%: no prediction ({} open)", cut * 100.0, open.len());
                if cut == 0.25 {
                    misses.push(format!("{}: no prediction at 25%", gz.display()));
                }
                continue;
            };
            let predicted = length * cut + eta.secs as f64;
            let error = (predicted - length) / length;
            let (low, high) = (length * cut + eta.low as f64, length * cut + eta.high as f64);
            println!(
                "  at {:>3.0}%: {} open, predicted end {:.0} s ({:.0} to {:.0} s), real {:.0} s, error {:+.1}%",
                cut * 100.0,
                open.len(),
                predicted,
                low,
                high,
                length,
                error * 100.0
            );
            match (cut == 0.25, loaded) {
                (true, false) if error.abs() > BOUND_AT_25 => misses.push(format!("{}: {:+.1}% at 25%", gz.display(), error * 100.0)),
                (true, true) if !(low..=high).contains(&length) => {
                    misses.push(format!("{}: its range {low:.0} to {high:.0} s at 25% misses the real end", gz.display()))
                }
                _ => {}
            }
        }
    }
    if !misses.is_empty() {
        println!("the ETA missed its goal at 25% ({:.0}%; a loaded run: its range): {misses:?}", BOUND_AT_25 * 100.0);
        std::process::exit(1);
    }
    println!("every recorded run within {:.0}% at 25% (a loaded one: its range holds the real end)", BOUND_AT_25 * 100.0);
}
