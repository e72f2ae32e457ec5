//! Where "the rest" of recorded runs' time went: `cargo bench -p temper-store --bench rest`.
//! For each run in the recorded databases (`crates/temper/tests/data/runs/*.db.gz`, or the
//! databases given as arguments, gzipped or not), the time split as the report gives it
//! (`journal::TimeSplit`: the rest in its named parts, from the run's `spent` events and turns;
//! a run recorded before those events names none), then the rest read from the gaps between
//! its events: each gap between two events, less the parts timed inside it (a scan's, a
//! check's, a fix's script and evaluation, a revert's), summed by the pair of events that bound
//! it, largest first. The gaps name what the loop does between its events in the code's order
//! (a verdict to `kept_pending`: the kept fix's snapshot and its record). Asserts nothing.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::DateTime;
use temper_journal::prelude::*;
use temper_journal::{Attempt, Event, EventData, RunSummary, TimeSplit};
use temper_store::Store;

fn journals() -> Vec<PathBuf> {
    let given: Vec<PathBuf> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).map(PathBuf::from).collect();
    if !given.is_empty() {
        return given;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../temper/tests/data/runs");
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".db.gz")).collect();
    v.sort();
    v
}

async fn open(path: &Path, dir: &Path) -> Store {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let db = if name.ends_with(".gz") {
        let db = dir.join(name.trim_end_matches(".gz"));
        let out = std::process::Command::new("gzip").arg("-dc").arg(path).output().expect("gzip");
        assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
        std::fs::write(&db, out.stdout).unwrap();
        db
    } else {
        path.to_path_buf()
    };
    Store::open(db.to_str().unwrap()).await.unwrap()
}

/// The seconds timed inside the gap that ends at `e`: the part its event (or its attempt) records.
fn timed(e: &Event, attempts: &[Attempt]) -> f64 {
    let ms = |a: &Attempt| (a.findings.apply_ms.unwrap_or(0) + a.findings.evaluate_ms.unwrap_or(0)) as f64 / 1000.0;
    match &e.data {
        EventData::Scan { secs, .. } | EventData::RegressionCheck { secs, .. } | EventData::Reboot { secs, .. } => *secs,
        EventData::PlanBatch(b) => b.secs,
        EventData::RegressionEvery { secs: Some(t), .. } => t.one_rule + t.with_set,
        EventData::Revert { ms, .. } => *ms as f64 / 1000.0,
        EventData::Verdict { attempt: Some(n), .. } => {
            attempts.iter().find(|a| Some(a.spec.rule_id.as_str()) == e.rule_id.as_deref() && a.n == *n).map_or(0.0, ms)
        }
        _ => 0.0,
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    for path in journals() {
        let store = open(&path, dir.path()).await;
        for run in store.list_runs(i64::MAX).await.unwrap().into_iter().rev() {
            let Some(summary) = run.summary_json.as_deref().and_then(|s| serde_json::from_str::<RunSummary>(s).ok()) else {
                println!("{} run {}: not finished", path.display(), run.id);
                continue;
            };
            let events = store.events(run.id, None).await.unwrap();
            let attempts = store.attempts(run.id).await.unwrap();
            let turns = store.turns(run.id).await.unwrap();
            let t = TimeSplit::of(&events, &attempts, &turns, summary.wall_secs);
            let file = path.file_name().unwrap().to_string_lossy();
            println!(
                "{file} run {}: wall {:.1} s, the rest {:.1} s ({:.1}%)",
                run.id,
                t.wall_secs,
                t.rest_secs,
                100.0 * t.rest_secs / t.wall_secs
            );
            for p in &t.rest {
                println!("  {:<40} {:>5} {:>8.1} s", p.part.says(), p.count, p.secs);
            }
            println!("  {:<40} {:>5} {:>8.1} s", "unnamed", "", t.unnamed_secs);
            let stamp = |e: &Event| DateTime::parse_from_rfc3339(&e.ts).unwrap();
            let mut gaps: BTreeMap<(String, String), (usize, f64)> = BTreeMap::new();
            let start = DateTime::parse_from_rfc3339(&run.started_at).unwrap();
            let mut prev = ("start".to_string(), start);
            for e in &events {
                let gap = (stamp(e) - prev.1).num_milliseconds() as f64 / 1000.0 - timed(e, &attempts);
                let g = gaps.entry((prev.0.clone(), e.kind.to_string())).or_default();
                (g.0, g.1) = (g.0 + 1, g.1 + gap);
                prev = (e.kind.to_string(), stamp(e));
            }
            let mut gaps: Vec<_> = gaps.into_iter().collect();
            gaps.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
            let total: f64 = gaps.iter().map(|g| g.1.1).sum();
            println!("  from the gaps between its events, less the parts timed inside them ({total:.1} s in all):");
            for ((from, to), (n, secs)) in gaps.iter().filter(|g| g.1.1.abs() >= 1.0) {
                println!("    {from:>18} -> {to:<18} {n:>5} {secs:>8.1} s {:>6.2} s each", secs / *n as f64);
            }
        }
    }
}
