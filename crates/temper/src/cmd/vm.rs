//! `temper vm build|up|down|status`: the test VM (the scripts under vm/ do the work).
use std::path::PathBuf;

use temper_core::ports::Hypervisor;
use temper_journal::target::Target;

use super::print_json;
use crate::cli::VmAction;
use crate::config::Config;
use crate::wiring;

/// The vm/ folder: `TEMPER_REPO`, else beside `skills_dir`, else the current directory.
fn vm_dir(config: &Config) -> PathBuf {
    if let Ok(r) = std::env::var("TEMPER_REPO") {
        return PathBuf::from(r).join("vm");
    }
    let beside = config.skills_dir.parent().map(|p| p.join("vm")).filter(|p| p.join("up.sh").is_file());
    beside.unwrap_or_else(|| PathBuf::from("vm"))
}

pub async fn run(config: &Config, action: VmAction, target: Option<&str>, json: bool) -> anyhow::Result<u8> {
    let target = config.target(target)?;
    let script = match action {
        VmAction::Build => "build-image.sh",
        VmAction::Up => "up.sh",
        VmAction::Down => "down.sh",
        VmAction::Status => return status(&target, json).await,
    };
    let path = vm_dir(config).join(script);
    anyhow::ensure!(path.is_file(), "{} not found: run temper from the repository root or set TEMPER_REPO", path.display());
    let st = tokio::process::Command::new("bash")
        .arg(&path)
        .env("TEMPER_DOMAIN", &target.domain)
        .env("TEMPER_SSH_PORT", target.ssh_port.to_string())
        .env("TEMPER_LIBVIRT_URI", &target.libvirt_uri)
        .status()
        .await?;
    Ok(st.code().map_or(1, |c| c as u8))
}

async fn status(target: &Target, json: bool) -> anyhow::Result<u8> {
    let hv = wiring::hypervisor(target);
    let running = hv.is_running().await;
    let snapshots = hv.snapshot_list().await.unwrap_or_default();
    let v = serde_json::json!({
        "target": target.name,
        "domain": target.domain,
        "uri": target.libvirt_uri,
        "running": running.as_ref().ok(),
        "error": running.as_ref().err().map(|e| e.to_string()),
        "snapshots": snapshots,
        "baseline": snapshots.iter().any(|s| s == &target.baseline),
        "ssh": format!("{}@{}:{}", target.ssh_user, target.ssh_host, target.ssh_port),
    });
    if json {
        print_json(&v)?;
    } else {
        println!(
            "{} ({}): {}",
            target.domain,
            target.libvirt_uri,
            match &running {
                Ok(true) => "running".to_string(),
                Ok(false) => "shut off".to_string(),
                Err(e) => format!("unavailable: {e}"),
            }
        );
        println!("snapshots: {}", if snapshots.is_empty() { "-".into() } else { snapshots.join(", ") });
    }
    Ok(if matches!(running, Ok(true)) { 0 } else { 1 })
}
