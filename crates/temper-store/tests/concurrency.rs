//! Two OS processes write one PostgreSQL database at once, as two temper drivers on two hosts
//! would. The test re-executes its own binary twice (`TEMPER_CONC_ROLE=a|b`, this test alone);
//! each child creates runs and writes attempts and events for them from several tasks, and both
//! number attempts on one shared rule. Then the parent checks, in the database, that nothing was
//! lost, that no id collided, that attempt numbers run 1..n per rule, and that every event sits
//! in its run. Meanwhile the children contend for one run's lease: the holder's run is refused
//! to the other until it is released, then granted.
mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

const TEST: &str = "two_processes_write_one_postgres_database";
/// Per child: runs (one task each), rules per run, attempts per rule, and attempts on the shared rule.
const RUNS: usize = 4;
const RULES: usize = 5;
const ATTEMPTS: usize = 20;
const SHARED: usize = 100;
/// Events per attempt: one when it starts, one with its verdict.
const EVENTS: usize = 2;
const ROLES: [&str; 2] = ["a", "b"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_write_one_postgres_database() {
    if let Ok(role) = std::env::var("TEMPER_CONC_ROLE") {
        return child(&role).await;
    }
    let started = Instant::now();
    let url = temper_store::testing::scratch_database(&temper_store::testing::server_url(), "temper_store_conc").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Migrated here, once, before the children open it.
    let store = Store::open(&url).await.unwrap().with_runs_dir(dir.path().join("runs"));
    let shared = store.create_run(&NewRun { agent: "shared".into(), ..new_run() }).await.unwrap();
    store.add_rule(shared, &rule("shared", RuleStatus::Pending)).await.unwrap();
    let contested = store.create_run(&NewRun { agent: "contested".into(), ..new_run() }).await.unwrap();
    eprintln!("{TEST}: postgres ({}), shared run {shared}, contested run {contested}", store.describe());

    let exe = std::env::current_exe().unwrap();
    let spawn = |role: &str| {
        Command::new(&exe)
            .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env("TEMPER_CONC_ROLE", role)
            .env("TEMPER_CONC_URL", &url)
            .env("TEMPER_CONC_DIR", dir.path())
            .env("TEMPER_CONC_SHARED", shared.to_string())
            .env("TEMPER_CONC_CONTESTED", contested.to_string())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = ROLES.iter().map(|r| spawn(r)).collect();
    let mut results: BTreeMap<String, Value> = BTreeMap::new();
    for (role, child) in ROLES.iter().zip(children) {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child {role} failed ({}):\n{stdout}\n{stderr}", out.status);
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r))
            .unwrap_or_else(|| panic!("child {role}: no RESULT:\n{stdout}"));
        results.insert(role.to_string(), serde_json::from_str(line).unwrap());
    }
    let written = started.elapsed();

    // Nothing lost, each run's rows exactly as its process wrote them.
    let mut attempt_run: HashMap<AttemptId, RunId> = HashMap::new();
    let mut returned_ids: Vec<AttemptId> = Vec::new();
    let (mut total_attempts, mut total_events) = (0usize, 0usize);
    let mut event_ids: Vec<i64> = Vec::new();
    for (role, r) in &results {
        let runs = r["runs"].as_array().unwrap();
        assert_eq!(runs.len(), RUNS, "child {role}");
        for run_r in runs {
            let run = RunId::new(run_r["run"].as_i64().unwrap()).unwrap();
            assert_eq!(store.run(run).await.unwrap().agent, format!("conc-{role}"), "run {run} is child {role}'s");
            let mine: BTreeMap<AttemptId, (String, i64)> = run_r["attempts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| (AttemptId::new(a[0].as_i64().unwrap()).unwrap(), (a[1].as_str().unwrap().to_string(), a[2].as_i64().unwrap())))
                .collect();
            let rows = store.attempts(run).await.unwrap();
            assert_eq!(rows.len(), RULES * ATTEMPTS, "child {role} run {run}: attempts");
            for a in &rows {
                assert_eq!(
                    mine.get(&a.id),
                    Some(&(a.spec.rule_id.clone(), a.n.get())),
                    "run {run}: attempt {} as returned to child {role}",
                    a.id
                );
                assert_eq!((a.state, a.verdict), (AttemptState::Done, Some(Verdict::StillFailing)), "attempt {} finished", a.id);
                attempt_run.insert(a.id, run);
            }
            returned_ids.extend(mine.keys());
            for i in 0..RULES {
                let rule_id = format!("r{i}");
                let ns: Vec<i64> = store.rule_attempts(run, &rule_id).await.unwrap().iter().map(|a| a.n.get()).collect();
                assert_eq!(ns, (1..=ATTEMPTS as i64).collect::<Vec<_>>(), "run {run} rule {rule_id}: numbered 1..n");
                assert_eq!(
                    store.rule(run, &rule_id).await.unwrap().unwrap().attempts,
                    ATTEMPTS as i64,
                    "run {run} rule {rule_id}: counted"
                );
            }
            let events = store.events(run, None).await.unwrap();
            assert_eq!(events.len(), RULES * ATTEMPTS * EVENTS, "child {role} run {run}: events");
            assert_eq!(run_r["events"].as_u64(), Some(events.len() as u64));
            for e in &events {
                let data = tag(e);
                assert_eq!(
                    (e.run_id, data["run"].as_i64(), data["child"].as_str()),
                    (run, Some(run.get()), Some(role.as_str())),
                    "event {}",
                    e.id
                );
                let attempt = AttemptId::new(data["attempt"].as_i64().unwrap()).unwrap();
                assert_eq!(attempt_run.get(&attempt), Some(&run), "event {}: its attempt {attempt} is in its run", e.id);
            }
            event_ids.extend(events.iter().map(|e| e.id.get()));
            total_attempts += rows.len();
            total_events += events.len();
        }
    }

    // The shared rule: both processes numbered attempts on it; together they run 1..2n.
    let rows = store.attempts(shared).await.unwrap();
    assert_eq!(rows.len(), ROLES.len() * SHARED, "shared run: attempts");
    let mut ns: Vec<i64> = rows.iter().map(|a| a.n.get()).collect();
    ns.sort_unstable();
    assert_eq!(ns, (1..=(ROLES.len() * SHARED) as i64).collect::<Vec<_>>(), "shared rule: numbered 1..n across processes");
    assert_eq!(store.rule(shared, "shared").await.unwrap().unwrap().attempts, (ROLES.len() * SHARED) as i64);
    let in_db: BTreeMap<AttemptId, i64> = rows.iter().map(|a| (a.id, a.n.get())).collect();
    for (role, r) in &results {
        for a in r["shared"].as_array().unwrap() {
            let (id, n) = (AttemptId::new(a[0].as_i64().unwrap()).unwrap(), a[1].as_i64().unwrap());
            assert_eq!(in_db.get(&id), Some(&n), "shared attempt {id} as returned to child {role}");
            attempt_run.insert(id, shared);
            returned_ids.push(id);
        }
    }
    let events = store.events(shared, None).await.unwrap();
    assert_eq!(events.len(), ROLES.len() * SHARED, "shared run: events");
    for role in ROLES {
        let theirs = events.iter().filter(|e| tag(e)["child"] == role).count();
        assert_eq!(theirs, SHARED, "shared run: child {role}'s events");
    }
    for e in &events {
        let attempt = AttemptId::new(tag(e)["attempt"].as_i64().unwrap()).unwrap();
        assert_eq!(attempt_run.get(&attempt), Some(&shared), "event {}: its attempt {attempt} is in the shared run", e.id);
    }
    event_ids.extend(events.iter().map(|e| e.id.get()));
    total_attempts += rows.len();
    total_events += events.len();

    // No id collides.
    let distinct: BTreeSet<AttemptId> = returned_ids.iter().copied().collect();
    assert_eq!(distinct.len(), returned_ids.len(), "attempt ids returned to the two processes are all distinct");
    assert_eq!(returned_ids.len(), total_attempts);
    let distinct: BTreeSet<i64> = event_ids.iter().copied().collect();
    assert_eq!(distinct.len(), event_ids.len(), "event ids are all distinct");

    // The lease: a held, b refused (by name and by claim_run), then b granted after a's release.
    let (a, b) = (&results["a"]["lease"], &results["b"]["lease"]);
    assert_eq!(a["taken"], true, "a took the contested run: {a}");
    assert_eq!(b["refused_by"], a["driver"], "b was refused while a held it: {b}");
    assert_eq!(b["claim_refused"], true, "claim_run refused b while a's lease was live: {b}");
    assert_eq!(b["taken_after_release"], true, "b took it once a released it: {b}");
    let row = store.run(contested).await.unwrap();
    assert_eq!((row.driver, row.lease_until), (None, None), "b released it in turn");
    let taken: Vec<Value> = store
        .events(contested, None)
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind == EventKind::LeaseTaken)
        .map(|e| serde_json::from_str::<Value>(&e.json()).unwrap()["driver"].clone())
        .collect();
    assert_eq!(taken, [a["driver"].clone(), b["driver"].clone()], "the contested run's lease went to a, then to b");
    total_events += taken.len();

    let (attempts_db, events_db, runs_db) = (count(&store, "attempts").await, count(&store, "events").await, count(&store, "runs").await);
    assert_eq!((attempts_db, events_db), (total_attempts, total_events), "the tables hold exactly what was written");
    eprintln!(
        "{TEST}: 2 processes wrote {runs_db} runs, {attempts_db} attempts (each started and finished), {events_db} events \
         in {:.2}s; checked in {:.2}s",
        written.as_secs_f64(),
        (started.elapsed() - written).as_secs_f64()
    );
    for (role, r) in &results {
        eprintln!("{TEST}: child {role}: {} ms writing, {} attempts, {} events", r["ms"], r["attempts"], r["events"]);
    }
}

async fn count(store: &Store, table: &str) -> usize {
    // raw_rows counts rows: one per id.
    store.raw_rows(&format!("SELECT id FROM {table}")).await.unwrap()
}

/// One child process: its runs from several tasks, its share of the shared rule, and its part
/// in the lease contest. Prints `RESULT {json}`.
async fn child(role: &str) {
    let env = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} unset"));
    let dir = PathBuf::from(env("TEMPER_CONC_DIR"));
    let (shared, contested): (RunId, RunId) = (env("TEMPER_CONC_SHARED").parse().unwrap(), env("TEMPER_CONC_CONTESTED").parse().unwrap());
    let store = Store::open(env("TEMPER_CONC_URL")).await.unwrap().with_runs_dir(dir.join(format!("runs-{role}")));
    let journal: Arc<dyn Journal> = Arc::new(store.clone());
    let clock = Arc::new(temper_core::ports::Clock::default());
    let started = Instant::now();

    // a takes the contested run before anything else; b tries it once a holds it.
    let mut lease = json!({});
    let held = if role == "a" {
        let l = Lease::take(journal.clone(), contested, clock.clone()).await.unwrap();
        lease["taken"] = true.into();
        lease["driver"] = l.driver.clone().into();
        signal(&dir, "a_holds", &l.driver);
        Some(l)
    } else {
        let holder = wait_for(&dir, "a_holds").await;
        match Lease::take(journal.clone(), contested, clock.clone()).await {
            Err(LeaseError::Held { driver, .. }) => lease["refused_by"] = driver.into(),
            Err(e) => panic!("b: taking the held run: {e}"),
            Ok(_) => panic!("b took run {contested} while a ({holder}) held it"),
        }
        let now = now_ms();
        lease["claim_refused"] = (!store.claim_run(contested, "b-by-hand", None, now, now + 30_000).await.unwrap()).into();
        signal(&dir, "b_refused", "");
        None
    };

    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..RUNS {
        let s = store.clone();
        let role = role.to_string();
        tasks.spawn(async move {
            let run = s.create_run(&NewRun { agent: format!("conc-{role}"), ..new_run() }).await.unwrap();
            for i in 0..RULES {
                s.add_rule(run, &rule(&format!("r{i}"), RuleStatus::Pending)).await.unwrap();
            }
            let mut attempts = Vec::new();
            for k in 0..ATTEMPTS * RULES {
                // Rules interleaved, as a loop that comes back to a rule.
                let rule_id = format!("r{}", (k + t) % RULES);
                let (id, n) = s.start_attempt(run, &attempt(&rule_id)).await.unwrap();
                let data = json!({"child": role, "run": run, "attempt": id, "n": n});
                s.event(run, Some(&rule_id), &tagged(&data)).await.unwrap();
                s.finish_attempt(id, &Evaluation::new(Verdict::StillFailing, "x")).await.unwrap();
                s.event(run, Some(&rule_id), &tagged(&data)).await.unwrap();
                attempts.push(json!([id, rule_id, n]));
            }
            let events = attempts.len() * EVENTS;
            json!({"run": run, "attempts": attempts, "events": events})
        });
    }
    let shared_task = {
        let s = store.clone();
        let role = role.to_string();
        tokio::spawn(async move {
            let mut out = Vec::new();
            for _ in 0..SHARED {
                let (id, n) = s.start_attempt(shared, &attempt("shared")).await.unwrap();
                s.event(shared, Some("shared"), &tagged(&json!({"child": role, "run": shared, "attempt": id}))).await.unwrap();
                s.finish_attempt(id, &Evaluation::new(Verdict::StillFailing, "x")).await.unwrap();
                out.push(json!([id, n]));
            }
            out
        })
    };
    let mut runs = Vec::new();
    while let Some(r) = tasks.join_next().await {
        runs.push(r.unwrap());
    }
    let shared_out = shared_task.await.unwrap();
    let ms = started.elapsed().as_millis() as u64;

    if let Some(l) = held {
        wait_for(&dir, "b_refused").await;
        assert!(store.run(contested).await.unwrap().driver.as_deref() == Some(l.driver.as_str()), "a still holds it");
        l.release().await.unwrap();
        signal(&dir, "a_released", "");
    } else {
        wait_for(&dir, "a_released").await;
        let l = Lease::take(journal.clone(), contested, clock.clone()).await.unwrap();
        assert_eq!(store.run(contested).await.unwrap().driver.as_deref(), Some(l.driver.as_str()));
        lease["taken_after_release"] = true.into();
        lease["driver"] = l.driver.clone().into();
        l.release().await.unwrap();
    }

    let attempts = runs.iter().map(|r| r["attempts"].as_array().unwrap().len()).sum::<usize>() + shared_out.len();
    let events = runs.iter().map(|r| r["events"].as_u64().unwrap() as usize).sum::<usize>() + shared_out.len();
    let result =
        json!({"role": role, "runs": runs, "shared": shared_out, "lease": lease, "ms": ms, "attempts": attempts, "events": events});
    // On a line of its own: libtest has printed `test … ` without its newline.
    println!("\nRESULT {result}");
}

/// Tells the other process something happened: a file named `name` holding `text`.
fn signal(dir: &Path, name: &str, text: &str) {
    let tmp = dir.join(format!("{name}.tmp"));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(tmp, dir.join(name)).unwrap();
}

/// Waits (up to 30 s) for the other process's signal `name` and returns its text.
async fn wait_for(dir: &Path, name: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
            return text;
        }
        assert!(Instant::now() < deadline, "no `{name}` from the other process within 30 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Lanes in one process, or two processes started together, open a new SQLite file at once:
/// one migrates it, the other waits (before, the second failed: "table runs already exists").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_sqlite_file_opened_at_once_is_migrated_once() {
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db").to_str().unwrap().to_string();
        let (a, b, c) = tokio::join!(Store::open(&path), Store::open(&path), Store::open(&path));
        for s in [a, b, c] {
            s.expect("every open succeeds").create_run(&new_run()).await.unwrap();
        }
    }
}

/// An event that carries which child wrote it, for which run and attempt (as its text).
fn tagged(tag: &Value) -> EventData {
    EventData::Error { error: tag.to_string() }
}

/// The tag an event of [`tagged`] carries.
fn tag(e: &Event) -> Value {
    match &e.data {
        EventData::Error { error } => serde_json::from_str(error).unwrap(),
        other => panic!("event {}: not a tagged event: {other:?}", e.id),
    }
}
