//! The loop's bookkeeping at each phase change (`Books::enter`, about 500 in a README run),
//! part by part, on both backends, with a recorded README run's journal as it stands at its end
//! (`crates/temper/tests/data/runs/`, the newest; its rules and events copied into a scratch
//! store): the run's phase written, its rules read (the tally), and the ETA: every event read
//! and parsed again at each phase (as before issue 73), or only those since the last phase, with
//! the skill's memory read once. The ETA is asked for every rule the run worked on, as if all
//! were still open (at its end none is, and nothing is predicted). Prints the median of
//! `TEMPER_BENCH_N` (100) of each; asserts nothing.
//!
//! `cargo bench -p temper-store --bench phase`; `TEMPER_BENCH_BACKENDS` (`sqlite,postgres`);
//! PostgreSQL as the store bench finds it (`TEMPER_TEST_PG`, else `tests/pg/start.sh`).
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use temper_journal::prelude::*;
use temper_journal::{Event, NewRule, NewRun, Outlook, Phase, Remembered, RuleStatus, RunId, ScanResult, Tally, predict_end, rule_times};
use temper_store::Store;

fn newest_journal() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../temper/tests/data/runs");
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".db.gz")).collect();
    v.sort();
    v.pop().expect("a recorded journal")
}

/// Run 1 of the recorded journal, copied into `store`: its row, rules and events.
async fn copy(from: &Store, store: &Store) -> (RunId, Vec<Event>) {
    let row = from.run(RunId::new(1).unwrap()).await.unwrap();
    let new = NewRun {
        skill: row.skill.clone(),
        profile: row.profile.clone(),
        datastream: row.datastream.clone(),
        content_version: row.content_version.clone(),
        target: row.target.clone(),
        agent: row.agent.clone(),
        options_json: row.options_json.clone(),
        baseline: row.baseline.clone(),
    };
    let run = store.create_run(&new).await.unwrap();
    for r in from.rules(row.id).await.unwrap() {
        let rule = NewRule {
            rule_id: r.rule_id,
            title: r.title,
            severity: r.severity,
            initial_result: r.initial_result,
            status: r.status,
            reason: r.reason,
        };
        store.add_rule(run, &rule).await.unwrap();
    }
    let events = from.events(row.id, None).await.unwrap();
    for e in &events {
        store.event(run, e.rule_id.as_deref(), &e.data).await.unwrap();
    }
    (run, events)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

async fn time<F: std::future::Future>(n: usize, mut f: impl FnMut() -> F) -> Duration {
    let mut xs = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f().await;
        xs.push(t.elapsed());
    }
    median(xs)
}

#[tokio::main]
async fn main() {
    let n = std::env::var("TEMPER_BENCH_N").ok().and_then(|v| v.parse().ok()).filter(|&v: &usize| v > 0).unwrap_or(100);
    let backends = std::env::var("TEMPER_BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    let dir = tempfile::tempdir().unwrap();
    let gz = newest_journal();
    let db = dir.path().join("recorded.db");
    let out = std::process::Command::new("gzip").arg("-dc").arg(&gz).output().expect("gzip");
    std::fs::write(&db, out.stdout).unwrap();
    let from = Store::open(db.to_str().unwrap()).await.unwrap();
    println!("{}: run 1 as it stands at its end; the median of {n} of each", gz.file_name().unwrap().to_string_lossy());
    println!("{:<9} {:<52} {:>9}", "backend", "step", "ms");
    for backend in backends.split(',').map(str::trim).filter(|b| !b.is_empty()) {
        let spec = match backend {
            "sqlite" => dir.path().join("bench.db").to_str().unwrap().to_string(),
            "postgres" => {
                let server = temper_store::testing::server_url();
                temper_store::testing::scratch_database(&server, "temper_phase_bench").await.unwrap()
            }
            other => panic!("TEMPER_BENCH_BACKENDS: unknown backend `{other}` (sqlite, postgres)"),
        };
        let store = Store::open(&spec).await.unwrap().with_runs_dir(dir.path().join(format!("runs-{backend}")));
        let (run, recorded) = copy(&from, &store).await;
        store.remember_times(run, &rule_times(run, &recorded)).await.unwrap();
        let skill = store.run(run).await.unwrap().skill;
        let rules = store.rules(run).await.unwrap();
        let events = store.events(run, None).await.unwrap();
        let last = events.last().map(|e| e.id);
        let now = chrono::Utc::now().fixed_offset();
        let memory = Remembered::of(&store.recalled_times(&skill).await.unwrap());
        let worked = |s: RuleStatus| matches!(s, RuleStatus::Fixed | RuleStatus::Escalated | RuleStatus::StillFailing);
        let open: Vec<&str> = rules.iter().filter(|r| worked(r.status)).map(|r| r.rule_id.as_str()).collect();
        let not_applicable: Vec<&str> =
            rules.iter().filter(|r| r.initial_result == ScanResult::NotApplicable).map(|r| r.rule_id.as_str()).collect();
        let rows = [
            ("the phase written (set_phase)", time(n, || async { store.set_phase(run, Phase::Pick, None).await.unwrap() }).await),
            (
                "the rules read, the tally",
                time(n, || async {
                    let rules = store.rules(run).await.unwrap();
                    std::hint::black_box(Tally::of(&rules));
                })
                .await,
            ),
            (
                "the ETA, every event read again (before)",
                time(n, || async {
                    let events = store.events(run, None).await.unwrap();
                    std::hint::black_box(predict_end(&Outlook::new(&events, &open), now));
                })
                .await,
            ),
            (
                "the ETA, the events since the last phase read (after)",
                time(n, || async {
                    let new = store.events(run, last).await.unwrap();
                    let mut all = events.clone();
                    all.extend(new);
                    std::hint::black_box(predict_end(&Outlook::new(&all, &open).remembering(&not_applicable, &memory), now));
                })
                .await,
            ),
            (
                "  of which the prediction alone, with memory",
                time(n, || async {
                    std::hint::black_box(predict_end(&Outlook::new(&events, &open).remembering(&not_applicable, &memory), now));
                })
                .await,
            ),
            (
                "the skill's memory read (once a run)",
                time(n, || async { std::hint::black_box(store.recalled_times(&skill).await.unwrap()) }).await,
            ),
        ];
        for (step, took) in rows {
            println!("{backend:<9} {step:<52} {:>9.2}", took.as_secs_f64() * 1000.0);
        }
        println!("{backend:<9} ({} rules, {} events, {} asked for, {} remembered)", rules.len(), events.len(), open.len(), memory.len());
    }
}
