//! The journal's write rate on both backends: attempt start (a transaction: number it, count it
//! on its rule), attempt finish (one UPDATE) and event (one INSERT, and its line appended to the
//! run's `events.jsonl` mirror). SQLite is a temp file (WAL, synchronous=FULL); PostgreSQL a
//! scratch database on the test server (`TEMPER_TEST_PG`, else `tests/pg/start.sh`), fsync on.
//! Prints a table of rates; asserts nothing.
//!
//! `cargo bench -p temper-store --bench store`. TEMPER_BENCH_N (default 2000) writes per
//! operation and mode; TEMPER_BENCH_TASKS (default 8) tasks in the concurrent mode, each on a
//! run of its own (as separate drivers would), sharing the store's pool. TEMPER_BENCH_BACKENDS
//! (default `sqlite,postgres`) picks the backends.
use std::time::{Duration, Instant};

use temper_journal::Verdict;
use temper_journal::prelude::*;
use temper_journal::{AttemptId, AttemptSpec, Evaluation, EventData, Findings, FixSource, NewRule, NewRun, RuleStatus, RunId, ScanResult};
use temper_store::Store;

const RULES: usize = 10;

struct BenchRow {
    backend: &'static str,
    op: &'static str,
    tasks: usize,
    n: usize,
    took: Duration,
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|&v| v > 0).unwrap_or(default)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let n = env_usize("TEMPER_BENCH_N", 2000);
    let tasks = env_usize("TEMPER_BENCH_TASKS", 8);
    let backends = std::env::var("TEMPER_BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    let dir = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    for backend in backends.split(',').map(str::trim).filter(|b| !b.is_empty()) {
        let (name, spec) = match backend {
            "sqlite" => ("sqlite", dir.path().join("bench.db").to_str().unwrap().to_string()),
            "postgres" => {
                let server = temper_store::testing::server_url();
                ("postgres", temper_store::testing::scratch_database(&server, "temper_store_bench").await.unwrap())
            }
            other => panic!("TEMPER_BENCH_BACKENDS: unknown backend `{other}` (sqlite, postgres)"),
        };
        let store = Store::open(&spec).await.unwrap().with_runs_dir(dir.path().join(format!("runs-{name}")));
        eprintln!("store bench: {} ({n} writes per operation, 1 task and {tasks} tasks)", store.describe());
        for t in [1, tasks] {
            for (op, took) in measure(&store, t, n).await {
                rows.push(BenchRow { backend: name, op, tasks: t, n, took });
            }
        }
    }

    println!();
    println!("{:<9} {:<15} {:>5} {:>6} {:>8} {:>9} {:>9}", "backend", "operation", "tasks", "n", "secs", "per sec", "mean µs");
    for r in &rows {
        let secs = r.took.as_secs_f64();
        println!(
            "{:<9} {:<15} {:>5} {:>6} {:>8.3} {:>9.0} {:>9.0}",
            r.backend,
            r.op,
            r.tasks,
            r.n,
            secs,
            r.n as f64 / secs,
            // Mean latency of one write as its task saw it.
            secs * 1e6 * r.tasks as f64 / r.n as f64
        );
    }
}

/// `n` writes of each operation, split over `tasks` tasks (each its own run): all the starts,
/// then all the finishes, then all the events, each phase timed from its first write to its last.
async fn measure(store: &Store, tasks: usize, n: usize) -> Vec<(&'static str, Duration)> {
    let mut runs = Vec::new();
    for _ in 0..tasks {
        let run = store.create_run(&new_run()).await.unwrap();
        for i in 0..RULES {
            store.add_rule(run, &new_rule(i)).await.unwrap();
        }
        runs.push(run);
    }
    // Task `t` writes `share(t)` of the `n`.
    let share = move |t: usize| n / tasks + usize::from(t < n % tasks);

    let started = Instant::now();
    let ids: Vec<Vec<AttemptId>> = fan_out(store, &runs, |s, run, t| async move {
        let mut ids = Vec::with_capacity(share(t));
        for k in 0..share(t) {
            ids.push(s.start_attempt(run, &new_attempt(k % RULES)).await.unwrap().0);
        }
        ids
    })
    .await;
    let start = started.elapsed();

    let started = Instant::now();
    let eval = Evaluation::new(Verdict::StillFailing, "bench").found(Findings {
        revert_ms: Some(12),
        apply_ms: Some(345),
        evaluate_ms: Some(678),
        ..Findings::default()
    });
    let ids = std::sync::Arc::new(ids);
    fan_out(store, &runs, |s, _, t| {
        let (ids, eval) = (ids.clone(), eval.clone());
        async move {
            for &id in &ids[t] {
                s.finish_attempt(id, &eval).await.unwrap();
            }
        }
    })
    .await;
    let finish = started.elapsed();

    let started = Instant::now();
    fan_out(store, &runs, |s, run, t| async move {
        for k in 0..share(t) {
            let rule = format!("r{}", k % RULES);
            let reason = format!("k {k}");
            s.event(run, Some(&rule), &EventData::Verdict { attempt: None, verdict: Verdict::StillFailing, reason }).await.unwrap();
        }
    })
    .await;
    let event = started.elapsed();

    vec![("attempt start", start), ("attempt finish", finish), ("event", event)]
}

/// Runs `f(store, run, task)` for each task at once and collects their results in task order.
async fn fan_out<T, F, Fut>(store: &Store, runs: &[RunId], f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(Store, RunId, usize) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    let handles: Vec<_> = runs.iter().enumerate().map(|(t, &run)| tokio::spawn(f(store.clone(), run, t))).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

fn new_run() -> NewRun {
    NewRun {
        skill: "bench".into(),
        profile: "p".into(),
        datastream: "ds.xml".into(),
        content_version: None,
        target: "bench".into(),
        agent: "stock".into(),
        options_json: "{}".into(),
        baseline: "baseline".into(),
    }
}

fn new_rule(i: usize) -> NewRule {
    NewRule {
        rule_id: format!("r{i}"),
        title: format!("Rule {i}"),
        severity: "medium".into(),
        initial_result: ScanResult::Fail,
        status: RuleStatus::Pending,
        reason: None,
    }
}

fn new_attempt(i: usize) -> AttemptSpec {
    AttemptSpec {
        rule_id: format!("r{i}"),
        plan: "plan".into(),
        source: FixSource::Stock,
        replayed: false,
        fix_script: "sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config".into(),
        revert_script: String::new(),
        description: "bench".into(),
        checkpoint: "baseline".into(),
        evidence_before: None,
    }
}
