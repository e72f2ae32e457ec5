//! Both test guests through `virsh`, for the benches that drive `temper fleet run`: a config
//! naming them `a` and `b`, each from its baseline, and back to it after with the snapshots its
//! runs left deleted.
use std::path::Path;
use std::process::Output;
use std::time::Duration;

pub fn virsh(args: &[&str]) -> String {
    let out = std::process::Command::new("virsh").arg("-q").arg("-c").arg("qemu:///system").args(args).output().expect("virsh");
    assert!(out.status.success(), "virsh {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The domain's CPU time so far (all its vCPUs and qemu's threads).
#[allow(dead_code)]
pub fn cpu(domain: &str) -> Duration {
    let stats = virsh(&["domstats", "--cpu-total", domain]);
    let ns = stats.lines().find_map(|l| l.trim().strip_prefix("cpu.time=")).and_then(|v| v.parse().ok()).expect("cpu.time");
    Duration::from_nanos(ns)
}

/// Writes `dir/temper.toml` with targets `a` (temper-test) and `b` (TEMPER_DOMAIN2 and
/// TEMPER_SSH_PORT2, default temper-test2 on 2223); their domains.
pub fn two_targets(dir: &Path) -> [String; 2] {
    let domain2 = std::env::var("TEMPER_DOMAIN2").unwrap_or_else(|_| "temper-test2".into());
    let port2 = std::env::var("TEMPER_SSH_PORT2").unwrap_or_else(|_| "2223".into());
    let toml = format!("[[target]]\nname = \"a\"\n\n[[target]]\nname = \"b\"\ndomain = \"{domain2}\"\nssh_port = {port2}\n");
    std::fs::write(dir.join("temper.toml"), toml).unwrap();
    ["temper-test".to_string(), domain2]
}

/// Reverts each domain to its baseline; the snapshots each had, for [`tidy`].
pub fn at_baseline(domains: &[String]) -> Vec<String> {
    let had = domains.iter().map(|d| virsh(&["snapshot-list", d, "--name"])).collect();
    for d in domains {
        virsh(&["snapshot-revert", d, "baseline"]);
    }
    had
}

/// Deletes the snapshots the runs left (those not in `had`) and reverts each domain to its baseline.
pub fn tidy(domains: &[String], had: &[String]) {
    for (d, had) in domains.iter().zip(had) {
        for s in virsh(&["snapshot-list", d, "--name"]).lines().filter(|s| !s.trim().is_empty() && !had.lines().any(|h| h == *s)) {
            virsh(&["snapshot-delete", d, s.trim()]);
        }
        virsh(&["snapshot-revert", d, "baseline"]);
    }
}

/// `temper ARGS` with `dir`'s config, the database `db` and the repository's skills
/// (`debian12-anssi`).
pub async fn temper(dir: &Path, db: &Path, args: &[&str]) -> Output {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    tokio::process::Command::new(env!("CARGO_BIN_EXE_temper"))
        .args(args)
        .env("TEMPER_CONFIG", dir.join("temper.toml"))
        .env("TEMPER_DB", db)
        .env("TEMPER_SKILLS_DIR", repo.join("skills"))
        .env("TEMPER_SKILL", "debian12-anssi")
        .env("TEMPER_LOG", "warn")
        .output()
        .await
        .expect("temper")
}
