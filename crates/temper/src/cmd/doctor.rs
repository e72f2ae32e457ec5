//! `temper doctor`: every prerequisite, and what to do about each failure.
use std::time::Duration;

use serde::Serialize;
use temper_core::ports::{Exec, Guest, Hypervisor};
use temper_core::scan::Scanner;

use super::print_json;
use crate::config::Config;
use crate::wiring;

#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    ok: bool,
    detail: String,
    /// What to do when it fails.
    fix: &'static str,
}

fn check(check: &'static str, result: Result<String, String>, fix: &'static str) -> Check {
    match result {
        Ok(detail) => Check { check, ok: true, detail, fix: "" },
        Err(detail) => Check { check, ok: false, detail, fix },
    }
}

pub async fn run(config: &Config, json: bool) -> anyhow::Result<u8> {
    let mut checks = Vec::new();
    let hv = wiring::hypervisor(config);
    let running = hv.is_running().await;
    checks.push(check(
        "libvirt reachable, domain exists",
        running.as_ref().map(|r| format!("{} {}", config.domain, if *r { "running" } else { "shut off" })).map_err(|e| e.to_string()),
        "start libvirtd and define the domain: bash vm/up.sh",
    ));
    let baseline = match &running {
        Ok(_) => hv.snapshot_exists(&config.baseline).await.map_err(|e| e.to_string()).and_then(|b| {
            if b { Ok(format!("snapshot `{}` exists", config.baseline)) } else { Err(format!("no snapshot `{}`", config.baseline)) }
        }),
        Err(_) => Err("libvirt unreachable".into()),
    };
    checks.push(check("baseline snapshot", baseline, "bash vm/up.sh takes it (with memory) once the VM is ready"));

    let guest = wiring::guest(config)?;
    let ssh = guest.exec(Exec::new(["id", "-un"]).as_user().timeout(Duration::from_secs(30))).await;
    let ssh_ok = matches!(&ssh, Ok(o) if o.success());
    checks.push(check(
        "ssh",
        ssh.map_err(|e| e.to_string())
            .and_then(|o| if o.success() { Ok(format!("logged in as {}", o.stdout_str().trim())) } else { Err(o.stderr_str()) }),
        "is the VM running and the key right? check ssh_host, ssh_port, ssh_user, ssh_key",
    ));
    let sudo = if ssh_ok {
        guest
            .exec(Exec::new(["true"]))
            .await
            .map_err(|e| e.to_string())
            .and_then(|o| if o.success() { Ok("sudo -n true works".into()) } else { Err(o.stderr_str().trim().to_string()) })
    } else {
        Err("ssh does not work".into())
    };
    checks.push(check("sudo -n true", sudo, "give the harness user NOPASSWD sudo in /etc/sudoers.d/"));

    let skill = wiring::skill(config);
    let skill_check = skill.as_ref().map(|s| format!("{} ({})", s.name(), s.dir.display())).map_err(|e| format!("{e:#}"));
    checks.push(check("skill", skill_check, "check `skill` and `skills_dir` in temper.toml"));
    if let Ok(skill) = &skill {
        let profile = config.profile.clone().unwrap_or(skill.manifest.profile.clone());
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
        let oscap = if ssh_ok { scanner.check(&guest).await.map_err(|e| e.to_string()) } else { Err("ssh does not work".into()) };
        checks.push(check(
            "oscap and datastream (guest)",
            oscap,
            "install openscap-scanner and ssg content in the guest (vm/build-image.sh does)",
        ));
    }
    if let Some(llm) = wiring::llm_config(config, None, None) {
        let probe = temper_agents::probe(&llm).await;
        let r = if probe.ok {
            Ok(format!("{} answers ({} mode, {} ms)", llm.base_url, probe.mode, probe.latency_ms))
        } else {
            Err(probe.error.unwrap_or_default())
        };
        checks.push(check("llm endpoint", r, "is the server up? `temper llm probe --llm URL` shows details"));
    }

    let ok = checks.iter().all(|c| c.ok);
    if json {
        print_json(&serde_json::json!({"ok": ok, "checks": checks}))?;
    } else {
        for c in &checks {
            println!("[{}] {}: {}", if c.ok { " ok " } else { "FAIL" }, c.check, c.detail);
            if !c.ok {
                println!("       fix: {}", c.fix);
            }
        }
        println!("{}", if ok { "all green" } else { "some checks failed" });
    }
    Ok(if ok { 0 } else { 1 })
}
