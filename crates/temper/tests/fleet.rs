//! `temper fleet enqueue|list` and `temper worker` against the test PostgreSQL server, without
//! the VM: the targets are on libvirt's `test:///default` driver, where a run cannot get far.
//! Enqueue checks everything before it writes; a worker takes each item once, records its run
//! on it, and leaves an unfinished run to be resumed; SQLite refuses the queue clearly.
mod support;

use serde_json::{Value, json};
use support::*;
use temper_journal::RunId;

const TWO: &str = r#"
ssh_port = 1
ssh_key = "KEY"

[[target]]
name = "a"
libvirt_uri = "test:///default"
domain = "absent-a"

[[target]]
name = "b"
libvirt_uri = "test:///default"
domain = "absent-b"
"#;

async fn world(pg: bool) -> World {
    let mut w = if pg { World::postgres().await } else { World::new() };
    let config = w.dir.path().join("temper.toml");
    let key = w.dir.path().join("key");
    let st = std::process::Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(&key).status().unwrap();
    assert!(st.success(), "ssh-keygen");
    std::fs::write(&config, TWO.replace("KEY", key.to_str().unwrap())).unwrap();
    w.env.push(("TEMPER_CONFIG".into(), config.to_str().unwrap().into()));
    w
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

async fn queue(w: &World) -> Vec<Value> {
    let out = w.run(&["fleet", "list", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_checks_every_target_and_the_run_arguments_before_writing() {
    let w = world(true).await;
    for (args, says) in [
        (vec!["--targets", "a,nosuch", "--", "--agent", "stock"], "nosuch"),
        (vec!["--targets", "a", "--", "--target", "b"], "--targets"),
        (vec!["--targets", "a", "--", "--no-such-flag"], "--no-such-flag"),
    ] {
        let mut all = vec!["fleet", "enqueue", "--fleet", "night"];
        all.extend(args);
        let out = w.run(&all).await;
        assert_eq!(out.status.code(), Some(1), "{all:?}");
        assert!(stderr(&out).contains(says), "{all:?}: {}", stderr(&out));
    }
    assert!(queue(&w).await.is_empty(), "nothing was enqueued");
    let out = w.run(&["fleet", "enqueue", "--fleet", "night", "--targets", "a,b", "--", "--agent", "stock", "--max-attempts", "1"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let q = queue(&w).await;
    assert_eq!(q.len(), 2);
    assert_eq!(q.iter().map(|i| i["target"]["name"].as_str().unwrap()).collect::<Vec<_>>(), ["a", "b"]);
    assert!(q.iter().all(|i| i["state"] == "queued" && i["fleet"] == "night" && i["args"][3] == "1"), "{q:?}");
    assert_eq!(q[1]["target"]["domain"], "absent-b", "the target is stored whole");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_takes_each_item_once_and_leaves_unfinished_runs_to_resume() {
    let w = world(true).await;
    let out = w.run(&["fleet", "enqueue", "--targets", "a,b", "--", "--agent", "stock"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // Neither domain exists: each run stops in preflight, and the worker goes on to the next.
    let out = w.run(&["worker", "--once", "--name", "w1"]).await;
    assert_eq!(out.status.code(), Some(1), "the worst run's exit code");
    let q = queue(&w).await;
    let runs: Vec<RunId> = q.iter().map(|i| RunId::new(i["run_id"].as_i64().expect("a run was started and recorded")).unwrap()).collect();
    assert_ne!(runs[0], runs[1]);
    assert!(q.iter().all(|i| i["state"] == "claimed" && i["worker"] == "w1" && i["tries"] == 1), "{q:?}");
    let store = w.store().await;
    for (i, r) in q.iter().zip(&runs) {
        let run = temper_journal::prelude::ReadRuns::run(&store, *r).await.unwrap();
        assert_eq!(run.target_config.unwrap().name, i["target"]["name"].as_str().unwrap(), "each run on its item's target");
    }
    // Held for a minute after an unfinished run: a second worker finds nothing to take yet.
    let out = w.run(&["worker", "--once", "--name", "w2"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(queue(&w).await.iter().all(|i| i["worker"] == "w1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_refuses_the_queue() {
    let w = world(false).await;
    for args in [vec!["worker", "--once"], vec!["fleet", "enqueue", "--targets", "a"], vec!["fleet", "list"]] {
        let out = w.run(&args).await;
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains("needs PostgreSQL"), "{args:?}: {}", stderr(&out));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lanes_run_every_target_in_one_process_and_group_the_runs() {
    let w = world(false).await;
    let out = w.run(&["fleet", "run", "--fleet", "lab", "--lanes", "2", "--", "--agent", "stock"]).await;
    assert_eq!(out.status.code(), Some(1), "the worst lane's exit code: both runs stop in preflight");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("lab\ta\texit 1") && stdout.contains("lab\tb\texit 1"), "{stdout}");
    let store = w.store().await;
    let runs = temper_journal::prelude::ReadRuns::list_runs(&store, 10).await.unwrap();
    let mut targets: Vec<String> = runs
        .iter()
        .filter(|r| serde_json::from_str::<Value>(&r.options_json).unwrap()["fleet"] == "lab")
        .map(|r| r.target_config.as_ref().unwrap().name.clone())
        .collect();
    targets.sort();
    assert_eq!(targets, ["a", "b"], "one run per target, each marked with the fleet");
    let out = w.run(&["fleet", "run", "--targets", "a", "--", "--target", "b"]).await;
    assert!(out.status.code() == Some(1) && stderr(&out).contains("--targets"), "{}", stderr(&out));
}

/// `--plan-from a`: `a` runs alone first; its run stops in preflight, so it proves nothing and
/// `b` gets no plan: it runs the full loop, and its stored options say why (typed), as the log
/// does. Misuse is refused before anything runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_from_runs_the_first_target_alone_and_hands_on_no_unproven_plan() {
    let w = world(false).await;
    for (args, says) in [
        (vec!["--plan-from", "nosuch", "--"], "--plan-from nosuch: not one of the fleet's targets"),
        (vec!["--plan-from", "a", "--", "--plan", "/tmp/p"], "`--plan-from` and `--plan`"),
    ] {
        let mut all = vec!["fleet", "run", "--fleet", "lab"];
        all.extend(args);
        let out = w.run(&all).await;
        assert!(out.status.code() == Some(1) && stderr(&out).contains(says), "{all:?}: {}", stderr(&out));
    }
    let store = w.store().await;
    assert!(temper_journal::prelude::ReadRuns::list_runs(&store, 10).await.unwrap().is_empty(), "nothing ran");

    let out = w.run(&["fleet", "run", "--fleet", "lab", "--lanes", "2", "--plan-from", "a", "--", "--agent", "stock"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let log = stderr(&out);
    assert!(log.contains("fleet lab: target a runs the full loop first; the others wait for its plan"), "{log}");
    let runs = temper_journal::prelude::ReadRuns::list_runs(&store, 10).await.unwrap();
    let of = |name: &str| runs.iter().find(|r| r.target_config.as_ref().unwrap().name == name).unwrap().clone();
    let (a, b) = (of("a"), of("b"));
    assert!(a.id < b.id, "a's run first");
    // a's run stopped unfinished (no end time): its last heartbeat is before b's start.
    let a_last = a.ended_at.as_deref().or(a.heartbeat_at.as_deref()).expect("a's run was driven");
    assert!(a_last <= b.started_at.as_str(), "b started once a had stopped: {a_last} > {}", b.started_at);
    assert!(
        log.contains(&format!("fleet lab: target a (run {}): its plan is not handed on, its run did not finish", a.id))
            && log.contains("the other targets run the full loop"),
        "{log}"
    );
    let options = |r: &temper_journal::Run| serde_json::from_str::<Value>(&r.options_json).unwrap();
    let told = &options(&b)["plan_from"];
    assert_eq!((&told["kind"], &told["target"], &told["run"]), (&json!("withheld"), &json!("a"), &json!(a.id)), "{told}");
    assert_eq!(told["why"]["kind"], "unfinished", "{told}");
    assert_eq!(options(&b)["plan"], Value::Null, "b applies no plan");
    assert_eq!(options(&a)["plan_from"], Value::Null, "a ran the full loop");
}

/// `temper fleet enqueue ... -- --plan DIR` keeps `--plan DIR` as a run argument, and the worker's
/// run reads that plan (here a folder with none: refused before any run exists).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_passes_a_plan_through_to_the_run() {
    let w = world(true).await;
    let plan = w.dir.path().join("no-plan-here");
    let plan = plan.to_str().unwrap();
    let out = w.run(&["fleet", "enqueue", "--fleet", "night", "--targets", "a", "--", "--agent", "stock", "--plan", plan]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let q = queue(&w).await;
    assert_eq!(q[0]["args"], json!(["--agent", "stock", "--plan", plan]));
    let out = w.run(&["worker", "--once", "--name", "w1"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("the plan in {plan}")), "the run read --plan: {}", stderr(&out));
    assert_eq!(queue(&w).await[0]["run_id"], Value::Null, "refused before the run exists");
}
