//! An exported plan reproduces its run with no temper involved, on the test VM: from the baseline
//! snapshot, `sudo bash replay.sh`; again from the baseline, `ansible-playbook -i inventory
//! playbook.yml`. When a step takes effect at boot the guest is then rebooted cold, as the plan's
//! README says to. After each way, an independent full scan and the health check: prints the
//! way's wall time, the plan's rules passing after it, those still failing, the rules failing
//! that passed at the baseline, and health. `ansible-lint playbook.yml` first.
//!
//! TEMPER_BENCH_PLAN=DIR (from `temper plan export`); TEMPER_DOMAIN and TEMPER_SSH_PORT name the
//! guest; TEMPER_BENCH_WAYS=bash or ansible runs one way (default both).
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use temper_core::checks;
use temper_core::ports::{Exec, Guest, Hypervisor};
use temper_core::scan::Scanner;
use temper_journal::plan::{Plan, at_boot};
use temper_scap::Outcome;
use temper_target::{LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};

#[path = "../tests/support/ansible.rs"]
mod ansible;

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";
const HEALTH: &str = "/usr/local/bin/mission-healthcheck";

struct Bench {
    hv: LibvirtHypervisor,
    guest: SshGuest,
    scanner: Scanner,
    plan: Plan,
    dir: std::path::PathBuf,
}

impl Bench {
    async fn at_baseline(&self) {
        self.hv.snapshot_revert("baseline").await.unwrap();
        self.guest.reconnect(Duration::from_secs(180)).await.unwrap();
    }

    async fn failing(&self) -> BTreeSet<String> {
        self.scanner.scan(&self.guest, &[]).await.unwrap().with(Outcome::Fail).into_iter().collect()
    }

    /// `sudo bash replay.sh`, the script copied to the guest as data.
    async fn bash(&self) -> Result<(), String> {
        let script = std::fs::read(self.dir.join("replay.sh")).unwrap();
        let put = self.guest.exec(Exec::new(["install", "-D", "-m", "0700", "/dev/stdin", "/root/temper-plan/replay.sh"]).stdin(script));
        let put = put.await.map_err(|e| e.to_string())?;
        if !put.success() {
            return Err(format!("copying replay.sh: {}", put.stderr_str()));
        }
        let out =
            self.guest.exec(Exec::new(["bash", "/root/temper-plan/replay.sh"]).timeout(Duration::from_secs(4 * 3600)).max_output(1 << 20));
        let out = out.await.map_err(|e| e.to_string())?;
        let said = out.stdout_str();
        println!(
            "  replay.sh (the script alone, no folder beside it): {}",
            said.lines().filter(|l| l.starts_with("== done") || l.contains("take effect at boot")).collect::<Vec<_>>().join("; ")
        );
        if out.success() { Ok(()) } else { Err(format!("replay.sh exited {:?}: {}", out.exit_code, out.stderr_str())) }
    }

    /// `ansible-playbook -i inventory playbook.yml` from the plan's folder.
    fn ansible(&self) -> Result<(), String> {
        let inv = std::env::temp_dir().join(format!("temper-plan-bench-{}.ini", std::process::id()));
        ansible::inventory(&inv, "target");
        let out = Command::new("ansible-playbook")
            .arg("-i")
            .arg(&inv)
            .arg("playbook.yml")
            .current_dir(&self.dir)
            .env("ANSIBLE_NOCOLOR", "1")
            .output();
        let _ = std::fs::remove_file(&inv);
        let out = out.map_err(|e| format!("ansible-playbook: {e}: run bash tests/plan/setup.sh"))?;
        let said = String::from_utf8_lossy(&out.stdout);
        println!(
            "  ansible (from the plan's folder; verify it first with `temper plan verify`): {}",
            said.lines().filter(|l| l.contains("ok=")).collect::<Vec<_>>().join("; ").trim()
        );
        if out.status.success() { Ok(()) } else { Err(format!("ansible-playbook failed:\n{said}")) }
    }

    /// One way, from the baseline: applied, rebooted when a step needs it, scanned, checked.
    async fn way(&self, name: &str, at_baseline: &BTreeSet<String>) {
        self.at_baseline().await;
        let t = Instant::now();
        let applied = if name == "bash" { self.bash().await } else { self.ansible() };
        let apply = t.elapsed().as_secs_f64();
        if let Err(e) = applied {
            println!("{name}: FAILED after {apply:.0} s: {e}");
            return;
        }
        let mut reboot = 0.0;
        if at_boot(&self.plan.steps).next().is_some() {
            let t = Instant::now();
            self.hv.power_cycle(Duration::from_secs(90)).await.unwrap();
            self.guest.reconnect(Duration::from_secs(600)).await.expect("the guest boots after the plan");
            reboot = t.elapsed().as_secs_f64();
        }
        let now = self.failing().await;
        let rules: BTreeSet<&str> = self.plan.steps.iter().map(|s| s.rule.as_str()).collect();
        let still: Vec<&str> = rules.iter().filter(|r| now.contains(**r)).map(|r| temper_scap::short_rule_id(r)).collect();
        let newly: Vec<&str> = now.difference(at_baseline).map(|r| temper_scap::short_rule_id(r)).collect();
        let healthy = checks::health(&self.guest, HEALTH).await.map(|h| h.ok).unwrap_or(false);
        println!(
            "{name}: applied in {apply:.1} s, reboot {reboot:.1} s; plan rules passing {}/{}; still failing {still:?}; newly failing {newly:?}; healthy {healthy}",
            rules.len() - still.len(),
            rules.len()
        );
    }
}

fn lint(dir: &Path) {
    let out = Command::new("ansible-lint").args(["--nocolor", "playbook.yml"]).current_dir(dir).output();
    match out {
        Ok(o) => {
            let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            let last = text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
            println!("ansible-lint playbook.yml: exit {:?}: {last}", o.status.code());
        }
        Err(e) => println!("ansible-lint: {e}: run bash tests/plan/setup.sh"),
    }
}

#[tokio::main]
async fn main() {
    let dir =
        std::path::PathBuf::from(std::env::var("TEMPER_BENCH_PLAN").expect("TEMPER_BENCH_PLAN=DIR, a plan from `temper plan export`"));
    let plan = Plan::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert!(plan.header.tailoring.is_none(), "this bench scans the plan's profile as the datastream has it, without a tailoring");
    let ways: Vec<String> =
        std::env::var("TEMPER_BENCH_WAYS").unwrap_or_else(|_| "bash,ansible".into()).split(',').map(String::from).collect();
    let scanner = Scanner::new(DS, plan.header.profile.clone());
    let hv = LibvirtHypervisor::new(LibvirtConfig::from_env());
    let guest = SshGuest::new(SshConfig::from_env().unwrap()).unwrap();
    let booting = at_boot(&plan.steps).count();
    println!(
        "plan of run {} ({}): {} steps, {booting} of them at boot, on {}",
        plan.header.source.run,
        plan.header.profile,
        plan.steps.len(),
        LibvirtConfig::from_env().domain
    );
    lint(&dir);
    let b = Bench { hv, guest, scanner, plan, dir };
    b.at_baseline().await;
    let t = Instant::now();
    let at_baseline = b.failing().await;
    println!("baseline: {} rules failing (full scan {:.1} s)", at_baseline.len(), t.elapsed().as_secs_f64());
    for w in &ways {
        b.way(w, &at_baseline).await;
    }
    b.at_baseline().await;
}
