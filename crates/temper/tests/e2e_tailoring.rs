//! A tailoring file made by `autotailor`, on the real VM: it changes the rules offered, and a
//! refined value reaches the stock fix, the guest and oscap's verdict.
mod support;

use support::*;

const IDLE: &str = "xccdf_org.ssgproject.content_rule_sshd_set_idle_timeout";
/// The idle-timeout rule requires the keepalive rule (XCCDF `requires`), and its check passes
/// only with both settings in place.
const KEEPALIVE: &str = "xccdf_org.ssgproject.content_rule_sshd_set_keepalive";
const TAILORED: &str = "xccdf_org.ssgproject.content_profile_temper_night";

fn datastream() -> std::path::PathBuf {
    let vm = std::env::var("TEMPER_VM_DIR").unwrap_or_else(|_| "/var/cache/temper/vm".into());
    std::path::PathBuf::from(vm).join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml")
}

/// `autotailor` (Debian's openscap-utils) over `standard`: ClientAliveInterval 840 instead of
/// 300, and two package rules unselected.
fn tailoring(dir: &std::path::Path) -> std::path::PathBuf {
    let out = dir.join("night.xml");
    let ok = std::process::Command::new("autotailor")
        .args(["-p", "temper_night", "-v", "sshd_idle_timeout_value=840", "-u", "package_nis_removed", "-u", "package_telnetd_removed"])
        .arg("-o")
        .arg(&out)
        .arg(datastream())
        .arg("standard")
        .status()
        .expect("autotailor (openscap-utils): run bash vm/host-deps.sh");
    assert!(ok.success());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_autotailor_file_changes_the_rules_offered_and_its_value_reaches_the_fix_and_the_verdict() {
    require_vm().await;
    let w = World::new();
    let dir = tempfile::tempdir().unwrap();
    let t = tailoring(dir.path());
    let t_arg = t.to_str().unwrap();
    let out = w
        .run(&[
            "run",
            "--agent",
            "stock",
            "--profile",
            STANDARD,
            "--tailoring-file",
            t_arg,
            "--rules",
            &format!("{KEEPALIVE},{IDLE}"),
            "--quiet",
            "--json",
        ])
        .await;
    // The exit code speaks of the two rules in scope: 0 once both are fixed, 2 if one is left.
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let left = s["statuses"]["escalated"].as_u64().unwrap_or(0) + s["statuses"]["still_failing"].as_u64().unwrap_or(0);
    assert_eq!(out.status.code(), Some(if left == 0 { 0 } else { 2 }), "{s}: {}", String::from_utf8_lossy(&out.stderr));
    // A real run's log written to a file (a pipe here) carries no escape sequences.
    assert!(!out.stderr.is_empty() && !out.stderr.contains(&0x1b), "{}", String::from_utf8_lossy(&out.stderr));
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    assert_eq!(run.profile, TAILORED, "the run uses the tailored profile");
    // The rules offered: the first scan went through the tailoring.
    let rules = store.rules(run.id).await.unwrap();
    let plain = temper_scap::read_benchmark(datastream(), Some(STANDARD)).unwrap().selected_rules.len();
    assert_eq!(rules.len(), plain - 2, "two rules unselected by the tailoring");
    assert!(!rules.iter().any(|r| r.rule_id.ends_with("_package_nis_removed")));
    // The refined value: in the stock fix temper ran, in the guest, and in oscap's verdict.
    let rule = store.rule(run.id, IDLE).await.unwrap().unwrap();
    assert_eq!(rule.status.as_str(), "fixed", "{rule:?}");
    let attempts = store.rule_attempts(run.id, IDLE).await.unwrap();
    assert!(attempts[0].spec.fix_script.contains("sshd_idle_timeout_value='840'"), "{}", attempts[0].spec.fix_script);
    let (_, conf) = sh("grep -ri '^ClientAliveInterval' /etc/ssh/sshd_config /etc/ssh/sshd_config.d/ || true").await;
    assert!(conf.contains("840"), "sshd_config: {conf}");
    assert_eq!(rescan_with(&w, IDLE, &["--tailoring-file", t_arg, "--profile", STANDARD]).await, "pass", "840 passes the tailored check");
    assert_eq!(rescan_with(&w, IDLE, &["--profile", STANDARD]).await, "fail", "and fails the untailored one, which wants 300");
    // The reports and the checklist name the tailoring.
    let md = report(&w, "md", "tailored-run.md").await;
    assert!(md.contains("## Tailoring and waivers") && md.contains("night.xml"), "{md}");
    let ckl = report(&w, "ckl", "tailored-run.ckl").await;
    assert!(ckl.contains("tailoring night.xml (profile xccdf_org.ssgproject.content_profile_temper_night"), "TARGET_COMMENT");
    assert!(healthy().await);
    w.cleanup().await;
}
