//! Targets from temper.toml: `temper target list`, `temper doctor --target|--all`, and a run
//! that keeps its target, so that `temper resume` drives the machine the run started on
//! whatever the config says by then. libvirt's `test:///default` driver is the hypervisor (the
//! real VM is never touched); the guests' SSH ports have nothing behind them.
mod support;

use serde_json::Value;
use support::*;
use temper_journal::RunStatus;
use temper_journal::target::Target;

/// A world whose config file is `temper.toml` in its folder, with a real ed25519 key.
fn world() -> World {
    let mut w = World::new();
    let config = w.dir.path().join("temper.toml");
    w.env.push(("TEMPER_CONFIG".into(), config.to_str().unwrap().into()));
    let key = w.dir.path().join("key");
    let st = std::process::Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(&key).status().unwrap();
    assert!(st.success(), "ssh-keygen");
    w
}

fn write_config(w: &World, text: &str) {
    let text = text.replace("KEY", w.dir.path().join("key").to_str().unwrap());
    std::fs::write(w.dir.path().join("temper.toml"), text).unwrap();
}

/// Target `a`: a domain the test driver does not have; `b`: its own `test` domain, no baseline.
const TWO: &str = r#"
ssh_port = 1
ssh_key = "KEY"

[[target]]
name = "a"
libvirt_uri = "test:///default"
domain = "absent-one"
profile = "xccdf_org.ssgproject.content_profile_standard"

[[target]]
name = "b"
libvirt_uri = "test:///default"
domain = "test"
baseline = "nosuch"
ssh_key = "/nonexistent/key"
"#;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_list_shows_each_table_over_the_flat_keys() {
    let w = world();
    write_config(&w, TWO);
    let out = w.run(&["target", "list", "--json"]).await;
    assert!(out.status.success());
    let list = json(&out);
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b"]);
    let (a, b) = (&list[0], &list[1]);
    assert_eq!((a["domain"].as_str(), a["ssh_port"].as_u64(), a["baseline"].as_str()), (Some("absent-one"), Some(1), Some("baseline")));
    assert_eq!((b["baseline"].as_str(), b["ssh_key"].as_str()), (Some("nosuch"), Some("/nonexistent/key")));
    assert_eq!(a["ssh_host"], "127.0.0.1", "a default fills in what no key sets");
    assert_eq!(a["skill"], "debian12-anssi", "TEMPER_SKILL, a flat key, fills in");
    assert!(list.as_array().unwrap().iter().all(|t| t["chosen_by_default"] == false), "two targets, none named default");
    let text = String::from_utf8(w.run(&["target", "list"]).await.stdout).unwrap();
    assert!(text.contains("test:///default#absent-one (temper@127.0.0.1:1)"), "{text}");
    let help = w.temper().args(["target", "list", "--help"]).output().unwrap();
    assert!(help.status.success() && String::from_utf8_lossy(&help.stdout).contains("Example"));

    let out = w.run(&["run", "--agent", "stock", "--quiet"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("pass --target NAME (one of a, b)"), "{}", stderr(&out));

    // The flat keys alone are one target, `default`.
    write_config(&w, "domain = \"flat\"\n");
    let list = json(&w.run(&["target", "list", "--json"]).await);
    assert_eq!((list[0]["name"].as_str(), list[0]["domain"].as_str()), (Some("default"), Some("flat")));
    assert_eq!(list[0]["chosen_by_default"], true);
    assert_eq!(list.as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_one_target_or_all() {
    let w = world();
    write_config(&w, TWO);
    let out = w.run(&["doctor", "--all", "--json"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = json(&out);
    assert_eq!(all["ok"], false);
    let check = |t: &Value, name: &str| t["checks"].as_array().unwrap().iter().find(|c| c["check"] == name).cloned().unwrap();
    let (a, b) = (&all["targets"][0], &all["targets"][1]);
    assert_eq!((a["target"].as_str(), b["target"].as_str()), (Some("a"), Some("b")));
    let a_virt = check(a, "libvirt reachable, domain exists");
    assert!(a_virt["ok"] == false && a_virt["detail"].as_str().unwrap().contains("absent-one"), "{a_virt}");
    let b_virt = check(b, "libvirt reachable, domain exists");
    assert!(b_virt["ok"] == true && b_virt["detail"].as_str().unwrap().contains("test on test:///default"), "{b_virt}");
    let b_base = check(b, "baseline snapshot");
    assert_eq!((b_base["ok"].as_bool(), b_base["detail"].as_str()), (Some(false), Some("no snapshot `nosuch`")));
    let b_ssh = check(b, "ssh");
    assert!(b_ssh["ok"] == false && b_ssh["detail"].as_str().unwrap().contains("/nonexistent/key"), "a bad key is a failed check: {b_ssh}");
    assert_eq!(check(a, "ssh")["ok"], false, "nothing listens on port 1");
    assert_eq!(check(a, "skill")["ok"], true);

    let one = json(&w.run(&["doctor", "--target", "b", "--json"]).await);
    assert_eq!(one["target"], "b");
    assert_eq!(one["checks"], b["checks"], "one target: the same checks");
    let out = w.run(&["doctor", "--target", "zzz"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no target `zzz`; the targets are: a, b"), "{}", stderr(&out));
    assert!(!w.run(&["doctor", "--target", "a", "--all"]).await.status.success(), "--target and --all conflict");
}

/// The run keeps target `a` as it was; the config then moves `a` to another domain, port and a
/// key that does not exist. `resume` still drives the first domain (its error names it) and
/// never reads the new key; a new run takes the new config.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_drives_the_stored_target_not_the_changed_config() {
    let w = world();
    write_config(&w, TWO);
    let out = w.run(&["run", "--target", "a", "--agent", "stock", "--quiet"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("domain `absent-one`"), "{}", stderr(&out));
    let store = w.store().await;
    let row = store.latest_run().await.unwrap().unwrap();
    assert_eq!(row.status, RunStatus::Interrupted);
    let stored = row.target_config.clone().expect("the run keeps its target");
    let key = w.dir.path().join("key");
    let want = Target {
        name: "a".into(),
        libvirt_uri: "test:///default".into(),
        domain: "absent-one".into(),
        ssh_port: 1,
        ssh_key: key.clone(),
        profile: Some(STANDARD.into()),
        ..Target::default()
    };
    assert_eq!(stored, want);
    assert_eq!(row.target, want.label());
    let status = json(&w.run(&["status", "--json"]).await);
    assert_eq!(status["target"], "a");

    write_config(
        &w,
        &TWO.replace("absent-one", "absent-two").replace("ssh_port = 1\nssh_key = \"KEY\"", "ssh_port = 2\nssh_key = \"/gone/key\""),
    );
    let moved = json(&w.run(&["target", "list", "--json"]).await);
    assert_eq!((moved[0]["domain"].as_str(), moved[0]["ssh_port"].as_u64()), (Some("absent-two"), Some(2)));

    let out = w.run(&["resume", &row.id.to_string(), "--quiet"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("(was interrupted in preflight) on target a (test:///default#absent-one (temper@127.0.0.1:1))"), "{err}");
    assert!(err.contains("domain `absent-one`") && !err.contains("absent-two") && !err.contains("/gone/key"), "{err}");
    let after = store.run(row.id).await.unwrap();
    assert_eq!(after.target_config, Some(want), "the stored target is unchanged");
    let events = store.events(row.id, None).await.unwrap();
    assert!(events.iter().any(|e| e.kind == temper_journal::EventKind::Resume), "it was resumed");

    let out = w.run(&["run", "--target", "a", "--agent", "stock", "--quiet"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("/gone/key"), "a new run takes the config as it is now: {}", stderr(&out));
}
