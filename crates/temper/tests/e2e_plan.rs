//! The exported plan reproduces the run on the real VM with no temper involved: a short stock run
//! on `standard`, `temper plan export`, then from the guest's baseline `sudo bash replay.sh`, and
//! again from the baseline `ansible-playbook -i inventory playbook.yml`. After each, an independent
//! `oscap xccdf eval` finds every rule the run fixed passing, and the guest is healthy.
mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::*;
use temper_core::ports::{Exec, Guest};
use temper_target::SshConfig;

const RULES: [&str; 4] =
    ["sysctl_fs_suid_dumpable", "sysctl_kernel_randomize_va_space", "file_permissions_systemmap", "sshd_disable_root_login"];

/// Puts the guest back at its baseline, as a fresh target would be.
async fn at_baseline(w: &World) {
    w.cleanup().await;
    assert!(healthy().await, "the guest is healthy at its baseline");
}

/// Runs `exec` as root in the guest; panics unless it exits 0. Returns stdout and stderr.
async fn root(exec: Exec) -> String {
    let g = guest();
    g.reconnect(Duration::from_secs(120)).await.unwrap();
    let argv = exec.argv.join(" ");
    let out = g.exec(exec).await.unwrap();
    let said = format!("{}\n{}", out.stdout_str(), out.stderr_str());
    assert_eq!(out.exit_code, Some(0), "`{argv}` in the guest:\n{said}");
    said
}

fn inventory(dir: &Path) -> std::path::PathBuf {
    let ssh = SshConfig::from_env().unwrap();
    let line = format!(
        "[guest]\ntemper-test ansible_host={} ansible_port={} ansible_user={} ansible_ssh_private_key_file={} \
         ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n",
        ssh.host,
        ssh.port,
        ssh.user,
        ssh.key_path.display()
    );
    let path = dir.join("inventory");
    std::fs::write(&path, line).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exported_plan_reproduces_the_run_with_bash_and_with_ansible() {
    require_vm().await;
    let t = Instant::now();
    let w = World::new();
    let out = w.run(&["run", "--agent", "stock", "--profile", STANDARD, "--rules", &RULES.join(","), "--quiet", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "every rule of the --rules run is fixed");
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    let fixed: Vec<String> =
        store.rules(run.id).await.unwrap().into_iter().filter(|r| r.status.as_str() == "fixed").map(|r| r.rule_id).collect();
    assert_eq!(fixed.len(), RULES.len(), "the stock fixes fixed {fixed:?}");
    let plan = w.dir.path().join("plan");
    let out = w.run(&["plan", "export", "latest", "-o", plan.to_str().unwrap()]).await;
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(plan.join("plan.json")).unwrap()).unwrap();
    assert_eq!(doc["steps"].as_array().unwrap().len(), fixed.len(), "one step per fixed rule: {doc}");
    eprintln!("e2e_plan: run and export {:.0} s", t.elapsed().as_secs_f64());

    // bash, from the baseline: the rules fail there, and pass after the replay.
    at_baseline(&w).await;
    assert!(rescan_all(&w, &fixed).await.iter().all(|r| r == "fail"), "the fixed rules fail at the baseline");
    let replayed = Instant::now();
    root(Exec::new(["mkdir", "-p", "/root/temper-plan"])).await;
    root(Exec::new(["tee", "/root/temper-plan/replay.sh"]).stdin(std::fs::read(plan.join("replay.sh")).unwrap())).await;
    let said = root(Exec::new(["bash", "/root/temper-plan/replay.sh"]).timeout(Duration::from_secs(900))).await;
    assert!(said.contains(&format!("== done: {} steps", fixed.len())), "{said}");
    eprintln!("e2e_plan: replay.sh {:.0} s", replayed.elapsed().as_secs_f64());
    assert_eq!(rescan_all(&w, &fixed).await, vec!["pass"; fixed.len()], "after replay.sh: {fixed:?}");
    assert!(healthy().await, "healthy after replay.sh");

    // Ansible, from the baseline again.
    at_baseline(&w).await;
    let played = Instant::now();
    let inv = inventory(w.dir.path());
    let out = Command::new("ansible-playbook")
        .arg("-i")
        .arg(&inv)
        .arg("playbook.yml")
        .current_dir(&plan)
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        .output()
        .expect("ansible-playbook: run `bash tests/plan/setup.sh` (tests/run.sh does)");
    let said = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "ansible-playbook:\n{said}");
    assert!(said.contains("failed=0"), "{said}");
    eprintln!("e2e_plan: ansible-playbook {:.0} s", played.elapsed().as_secs_f64());
    assert_eq!(rescan_all(&w, &fixed).await, vec!["pass"; fixed.len()], "after the playbook: {fixed:?}");
    assert!(healthy().await, "healthy after the playbook");
    w.cleanup().await;
}
