//! `temper doctor`: every prerequisite, and what to do about each failure.
use std::time::Duration;

use serde::Serialize;
use temper_core::ports::{Exec, Guest, Hypervisor};
use temper_core::scan::Scanner;
use temper_journal::target::Target;

use super::print_json;
use crate::config::Config;
use crate::wiring;

#[derive(Debug, Serialize)]
struct DoctorCheck {
    check: &'static str,
    ok: bool,
    detail: String,
    /// What to do when it fails.
    fix: &'static str,
}

fn check(check: &'static str, result: Result<String, String>, fix: &'static str) -> DoctorCheck {
    match result {
        Ok(detail) => DoctorCheck { check, ok: true, detail, fix: "" },
        Err(detail) => DoctorCheck { check, ok: false, detail, fix },
    }
}

/// One target's checks.
#[derive(Debug, Serialize)]
struct DoctorReport {
    target: String,
    ok: bool,
    checks: Vec<DoctorCheck>,
}

/// Checks one target (`--target`, else the only one or `default`), or every one (`--all`).
pub async fn run(config: &Config, target: Option<&str>, all: bool, json: bool) -> anyhow::Result<u8> {
    let targets = if all { config.targets()?.all().to_vec() } else { vec![config.target(target)?] };
    let mut reports = Vec::new();
    for t in &targets {
        let checks = target_checks(config, t).await;
        reports.push(DoctorReport { target: t.name.clone(), ok: checks.iter().all(|c| c.ok), checks });
    }
    // The LLM endpoint is the same for every target: checked once.
    let llm = match wiring::llm_config(config, None, None) {
        Some(llm) => {
            let probe = temper_agents::probe(&llm).await;
            let r = if probe.ok {
                Ok(format!("{} answers ({} mode, {} ms)", llm.base_url, probe.mode, probe.latency_ms))
            } else {
                Err(probe.error.unwrap_or_default())
            };
            Some(check("llm endpoint", r, "is the server up? `temper llm probe --llm URL` shows details"))
        }
        None => None,
    };
    let ok = reports.iter().all(|r| r.ok) && llm.as_ref().is_none_or(|c| c.ok);
    if json {
        let llm = llm.into_iter().collect::<Vec<_>>();
        if all {
            print_json(&serde_json::json!({"ok": ok, "targets": reports, "checks": llm}))?;
        } else {
            // One target: every check in one list, as before targets.
            let r = reports.remove(0);
            let checks: Vec<&DoctorCheck> = r.checks.iter().chain(&llm).collect();
            print_json(&serde_json::json!({"ok": ok, "target": r.target, "checks": checks}))?;
        }
    } else {
        for r in &reports {
            println!("target {}:", r.target);
            r.checks.iter().for_each(print_check);
        }
        llm.iter().for_each(print_check);
        println!("{}", if ok { "all green" } else { "some checks failed" });
    }
    Ok(if ok { 0 } else { 1 })
}

fn print_check(c: &DoctorCheck) {
    println!("[{}] {}: {}", if c.ok { " ok " } else { "FAIL" }, c.check, c.detail);
    if !c.ok {
        println!("       fix: {}", c.fix);
    }
}

/// Hypervisor, baseline, SSH, sudo, skill, content and oscap, for one target.
async fn target_checks(config: &Config, target: &Target) -> Vec<DoctorCheck> {
    let mut checks = Vec::new();
    let hv = wiring::hypervisor(target);
    let running = hv.is_running().await;
    checks.push(check(
        "libvirt reachable, domain exists",
        running
            .as_ref()
            .map(|r| format!("{} on {} {}", target.domain, target.libvirt_uri, if *r { "running" } else { "shut off" }))
            .map_err(|e| e.to_string()),
        "start libvirtd and define the domain: bash vm/up.sh",
    ));
    let baseline = match &running {
        Ok(_) => hv.snapshot_exists(&target.baseline).await.map_err(|e| e.to_string()).and_then(|b| {
            if b { Ok(format!("snapshot `{}` exists", target.baseline)) } else { Err(format!("no snapshot `{}`", target.baseline)) }
        }),
        Err(_) => Err("libvirt unreachable".into()),
    };
    checks.push(check("baseline snapshot", baseline, "bash vm/up.sh takes it (with memory) once the VM is ready"));

    if let Some(note) = wiring::hypervisor_trust(target) {
        checks.push(check(
            "hypervisor host key",
            Err(note),
            "ssh-keyscan the hypervisor host into root's known_hosts (after checking it), then drop no_verify=1",
        ));
    }
    let guest = wiring::guest(config, target);
    if let (Ok(g), Ok(true)) = (&guest, &running) {
        let recorded =
            g.check_host_key().await.map(|fp| format!("the guest offers the key recorded in {} ({fp})", config.known_hosts_file.display()));
        checks.push(check(
            "guest host key",
            recorded.map_err(|e| e.to_string()),
            "check the guest's key on its console (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), then: temper target trust NAME",
        ));
    }
    let ssh = match &guest {
        Ok(g) => g.exec(Exec::new(["id", "-un"]).as_user().timeout(Duration::from_secs(30))).await.map_err(|e| e.to_string()),
        Err(e) => Err(format!("{e:#}")),
    };
    let ssh_ok = matches!(&ssh, Ok(o) if o.success());
    checks.push(check(
        "ssh",
        ssh.and_then(|o| if o.success() { Ok(format!("logged in as {}", o.stdout_str().trim())) } else { Err(o.stderr_str()) }),
        "is the VM running and the key right? check ssh_host, ssh_port, ssh_user, ssh_key",
    ));
    let guest = guest.ok().filter(|_| ssh_ok);
    let sudo = match &guest {
        Some(g) => g
            .exec(Exec::new(["true"]))
            .await
            .map_err(|e| e.to_string())
            .and_then(|o| if o.success() { Ok("sudo -n true works".into()) } else { Err(o.stderr_str().trim().to_string()) }),
        None => Err("ssh does not work".into()),
    };
    checks.push(check("sudo -n true", sudo, "give the harness user NOPASSWD sudo in /etc/sudoers.d/"));

    let skill = wiring::skill(config, &target.skill);
    let skill_check = skill.as_ref().map(|s| format!("{} ({})", s.name(), s.dir.display())).map_err(|e| format!("{e:#}"));
    checks.push(check("skill", skill_check, "check the target's `skill` and `skills_dir` in temper.toml"));
    if let Ok(skill) = &skill {
        let profile = target.profile.clone().unwrap_or(skill.manifest.profile.clone());
        let ds = wiring::host_datastream(config, skill);
        let content = temper_scap::list_profiles(&ds).map_err(|e| format!("{}: {e}", ds.display())).and_then(|ps| {
            if ps.iter().any(|p| p.id == profile) {
                Ok(format!("{} has profile {profile}", ds.display()))
            } else {
                Err(format!("{} has no profile {profile}", ds.display()))
            }
        });
        checks.push(check(
            "datastream and profile (host)",
            content,
            "bash vm/fetch-ssg.sh fetches SSG 0.1.76; check content_dir and profile",
        ));
        let scanner = Scanner::new(wiring::guest_datastream(config, skill), profile);
        let oscap = match &guest {
            Some(g) => scanner.check(g).await.map_err(|e| e.to_string()),
            None => Err("ssh does not work".into()),
        };
        checks.push(check(
            "oscap and datastream (guest)",
            oscap,
            "install openscap-scanner and ssg content in the guest (vm/build-image.sh does)",
        ));
    }
    checks
}
