//! Derived fixes on the real VM (issue 35). One rule per family the derived tier fixes, broken
//! in a snapshot of its own as ComplianceAsCode's scenarios break them; `temper run --agent
//! stock` fixes each with a fix derived from its check, kept on every check and the reboot
//! proof. With a health check that fails once a rule holds, each derived fix is reverted, and
//! the guest is left exactly as it was.
//!
//! ANSSI BP-028 high has no rule without a stock fix in the sysctl family but
//! `sysctl_kernel_modules_disabled`, which no revert can undo (the kernel never sets it back to
//! 0); nor one that is a package check alone. So: the package family through
//! `service_rsyslog_enabled` (rsyslog not installed, as at the baseline: installed, enabled and
//! started), and the sysctl family through `sysctl_kernel_kptr_restrict`, whose stock fix writes
//! only `/etc/sysctl.conf`. ComplianceAsCode's sysctl scenarios empty `/etc/sysctl.d` first,
//! Debian's `99-sysctl.conf` (the link systemd-sysctl reads `/etc/sysctl.conf` by) with it: the
//! stock fix holds live and is lost at boot, and the derived drop-in is what survives.
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use support::*;
use temper_core::ports::Hypervisor;
use temper_journal::RunId;
use temper_journal::Verdict;
use temper_journal::{Attempt, EventKind, FixSource, RevertMethod, RuleStatus, RunSummary, ScanResult};
use temper_scap::oval::Evidence;

const ANSSI: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";
/// File metadata: a directory of commands owned by nobody.
const FILE: &str = "dir_system_commands_root_owned";
/// Sysctl: the runtime value, and nothing in `/etc/sysctl.d`.
const SYSCTL: &str = "sysctl_kernel_kptr_restrict";
/// Key/value line: postfix installed as Debian installs it, listening on every interface.
const LINE: &str = "postfix_network_listening_disabled";
/// Package and systemd unit: rsyslog not installed.
const UNIT: &str = "service_rsyslog_enabled";
const RULES: [&str; 4] = [FILE, SYSCTL, LINE, UNIT];
/// Rules that pass at the baseline and in the broken snapshot: the regression set.
const PASSING: [&str; 4] =
    ["sysctl_fs_protected_symlinks", "file_owner_etc_passwd", "file_permissions_etc_shadow", "package_telnet_removed"];

/// The health check of the forced reverts: unhealthy as soon as any rule holds, one clause each.
const HEALTH: &str = "/usr/local/sbin/e2e-derived-health";
/// What it says of each rule, once that rule holds.
const UNHEALTHY: [(&str, &str); 4] = [
    (FILE, "UNHEALTHY: /usr/local/bin/tools is root's"),
    (SYSCTL, "UNHEALTHY: kernel.kptr_restrict is 2"),
    (LINE, "UNHEALTHY: postfix on loopback only"),
    (UNIT, "UNHEALTHY: rsyslog runs"),
];

const BREAK: &str = r#"set -e
mkdir -p /usr/local/bin/tools
chown nobody /usr/local/bin/tools
rm -rf /etc/sysctl.d/*
sysctl -q -w kernel.kptr_restrict=0
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postfix >/dev/null
postconf -e inet_interfaces=all
! dpkg -s rsyslog >/dev/null 2>&1
cat > /usr/local/sbin/e2e-derived-health <<'EOF'
#!/bin/sh
/usr/local/bin/mission-healthcheck | tail -n 1 | grep -qx HEALTHY || { echo "UNHEALTHY: the mission app"; exit 1; }
[ "$(stat -c %u /usr/local/bin/tools)" != 0 ] || { echo "UNHEALTHY: /usr/local/bin/tools is root's"; exit 1; }
[ "$(sysctl -n kernel.kptr_restrict)" != 2 ] || { echo "UNHEALTHY: kernel.kptr_restrict is 2"; exit 1; }
! grep -qx 'inet_interfaces = loopback-only' /etc/postfix/main.cf || { echo "UNHEALTHY: postfix on loopback only"; exit 1; }
! systemctl is-active -q rsyslog.service || { echo "UNHEALTHY: rsyslog runs"; exit 1; }
echo HEALTHY
EOF
chmod 0755 /usr/local/sbin/e2e-derived-health
"#;

/// What each rule's check looks at, as the guest has it: owner and mode, the runtime value and
/// the sysctl files, the file's bytes, the package and the unit.
const STATE: &str = r#"stat -c 'tools %u:%g %a' /usr/local/bin/tools
echo "kptr_restrict $(sysctl -n kernel.kptr_restrict)"
echo "sysctl.d [$(ls -A /etc/sysctl.d)] sysctl.conf $(sha256sum < /etc/sysctl.conf)"
echo "main.cf $(sha256sum < /etc/postfix/main.cf)"
echo "rsyslog $(dpkg-query -W -f='${db:Status-Status}' rsyslog 2>/dev/null || echo not-installed)"
echo "rsyslog.service enabled=[$(systemctl is-enabled rsyslog.service 2>/dev/null)] active=$(systemctl is-active rsyslog.service)"
"#;

/// ANSSI high cut to `RULES` and `PASSING`; the profile's values (kptr_restrict 2, postfix on
/// loopback-only) are the base profile's.
fn tailoring(dir: &std::path::Path) -> String {
    let keep: Vec<String> = RULES.iter().chain(PASSING.iter()).map(|r| full(r)).collect();
    cut_profile(dir, ANSSI, "derived", &keep)
}

/// The broken snapshot: made from the baseline once, reused by the second test, which deletes it.
async fn broken() -> String {
    broken_snapshot("derived", BREAK).await
}

/// Each of `RULES` then `PASSING`, as one independent `oscap xccdf eval` finds it.
async fn rescan(w: &World, t: &str) -> Vec<String> {
    let rules: Vec<String> = RULES.iter().chain(PASSING.iter()).map(|r| full(r)).collect();
    rescan_all_with(w, &rules, &["--profile", ANSSI, "--tailoring-file", t]).await
}

/// `RULES` with `first`, then `PASSING` passing.
fn expect(first: &str) -> Vec<&str> {
    [[first; 4], ["pass"; 4]].concat()
}

async fn state() -> String {
    let (code, out) = sh(STATE).await;
    assert_eq!(code, Some(0), "{out}");
    out
}

/// Each rule's failing tests, by id, as `temper scan run --engine oval --evidence` finds them.
async fn evidence(w: &World, t: &str) -> BTreeMap<String, Vec<String>> {
    let rules: Vec<String> = RULES.iter().map(|r| full(r)).collect();
    let mut args = vec!["scan", "run", "--engine", "oval", "--evidence", "--json", "--profile", ANSSI, "--tailoring-file", t];
    for r in &rules {
        args.extend(["--rule", r.as_str()]);
    }
    let out = w.run(&args).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<Evidence> = serde_json::from_value(v["evidence"].clone()).unwrap();
    found.iter().map(|e| (e.rule.clone(), e.tests.iter().map(|t| format!("{} {}", t.id, t.result)).collect())).collect()
}

/// `temper run --agent stock --engine oval` on the rules, from the broken snapshot.
async fn run(w: &World, t: &str) -> (RunId, Duration) {
    let start = Instant::now();
    let rules = RULES.join(",");
    let args =
        ["run", "--agent", "stock", "--engine", "oval", "--profile", ANSSI, "--tailoring-file", t, "--rules", &rules, "--quiet", "--json"];
    let out = w.run(&args).await;
    assert!(matches!(out.status.code(), Some(0 | 2)), "{}", String::from_utf8_lossy(&out.stderr));
    (w.store().await.latest_run().await.unwrap().unwrap().id, start.elapsed())
}

async fn attempts(w: &World, run: RunId) -> BTreeMap<&'static str, Vec<Attempt>> {
    let all = w.store().await.attempts(run).await.unwrap();
    RULES.iter().map(|r| (*r, all.iter().filter(|a| a.spec.rule_id == full(r)).cloned().collect())).collect()
}

fn sources(tries: &[Attempt]) -> Vec<(FixSource, Option<Verdict>)> {
    tries.iter().map(|a| (a.spec.source, a.verdict)).collect()
}

/// Each rule fixed by its derived fix, kept on every check and proven by a cold reboot; the
/// sysctl rule's stock fix first, lost at boot. oscap agrees, on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG (two cold reboots, apt in the guest), out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn a_derived_fix_of_each_family_is_kept_on_every_check_and_the_reboot_proof() {
    require_vm().await;
    let snap = broken().await;
    let mut w = World::new();
    let t = tailoring(w.dir.path());
    w.env.push(("TEMPER_BASELINE".into(), snap.clone()));
    w.with_reboot_proof();
    assert_eq!(rescan(&w, &t).await, expect("fail"), "each rule fails in the broken snapshot, the others pass");
    let (run, took) = run(&w, &t).await;
    println!("run {run}: {:.0}s", took.as_secs_f64());
    let store = w.store().await;
    let summary: RunSummary = serde_json::from_str(&store.run(run).await.unwrap().summary_json.unwrap()).unwrap();
    assert_eq!(summary.rebooted, Some(true), "the final state survived a cold reboot: {summary:?}");
    assert_eq!(summary.healthy, Some(true));

    let tries = attempts(&w, run).await;
    for (rule, t) in &tries {
        println!("{rule}: {:?}", sources(t));
        let a = t.last().unwrap_or_else(|| panic!("{rule}: no attempt"));
        assert_eq!((a.spec.source, a.verdict), (FixSource::Derived, Some(Verdict::Fixed)), "{rule}: {}", a.spec.fix_script);
        assert!(a.spec.fix_script.starts_with(temper_derive::HEADER), "{rule}: {}", a.spec.fix_script);
        // Every check: the rescan, the lockout guard, health, the regression set; still in force.
        assert_eq!(a.findings.rule_result, Some(ScanResult::Pass), "{rule}");
        assert_eq!((a.findings.access_ok, a.findings.health_ok), (Some(true), Some(true)), "{rule}");
        assert!(a.findings.regressions.is_empty(), "{rule}: {:?}", a.findings.regressions);
        assert!(a.in_force(), "{rule}: {:?}", a.kept);
        assert!(a.spec.evidence_before.is_some(), "{rule}: derived from the scanner's evidence");
        assert_eq!(store.rule(run, &full(rule)).await.unwrap().unwrap().status, RuleStatus::Fixed, "{rule}");
    }
    for rule in [FILE, LINE, UNIT] {
        assert_eq!(sources(&tries[rule]), [(FixSource::Derived, Some(Verdict::Fixed))], "{rule}: no stock fix in the content");
    }
    assert_eq!(
        sources(&tries[SYSCTL]),
        [(FixSource::Stock, Some(Verdict::NotPersistent)), (FixSource::Derived, Some(Verdict::Fixed))],
        "the stock fix (/etc/sysctl.conf alone) is lost at boot; the derived drop-in survives"
    );
    // The last proven boot is the state with every kept fix.
    let booted = store.events(run, None).await.unwrap().into_iter().rfind(|e| e.kind == EventKind::Booted);
    let booted: serde_json::Value = serde_json::from_str(&booted.expect("a booted checkpoint").json()).unwrap();
    let last = tries.values().flatten().map(|a| a.id).max().unwrap();
    assert_eq!(booted["through"], last.get(), "{booted}");

    // Independent: oscap's own XCCDF evaluation, in the state the run ended in.
    assert_eq!(rescan(&w, &t).await, expect("pass"));
    assert!(healthy().await);
    w.cleanup().await;
}

/// A health check that fails once any rule holds: each derived fix is reverted by its own
/// script, and each rule ends failing as before, with the guest as it was and healthy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG (apt in the guest), out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn each_derived_fix_forced_to_fail_is_reverted_to_the_state_found_before() {
    require_vm().await;
    let snap = broken().await;
    let mut w = World::new();
    let t = tailoring(w.dir.path());
    w.env.extend([("TEMPER_BASELINE", snap.as_str()), ("TEMPER_HEALTH_COMMAND", HEALTH)].map(|(k, v)| (k.to_string(), v.to_string())));
    let before = state().await;
    let found = evidence(&w, &t).await;
    assert_eq!(found.len(), RULES.len(), "each rule fails, with evidence: {found:?}");
    let (run, took) = run(&w, &t).await;
    println!("run {run}: {:.0}s", took.as_secs_f64());

    let tries = attempts(&w, run).await;
    for (rule, t) in &tries {
        println!("{rule}: {:?}", sources(t));
        let a = t.last().unwrap_or_else(|| panic!("{rule}: no attempt"));
        assert_eq!((a.spec.source, a.verdict), (FixSource::Derived, Some(Verdict::HealthBroken)), "{rule}: {}", a.spec.fix_script);
        // The fix did what the rule asks: the rule's own clause of the health check failed.
        let said = UNHEALTHY.iter().find(|(r, _)| r == rule).unwrap().1;
        assert_eq!(a.findings.health_ok, Some(false), "{rule}");
        assert!(a.findings.health_output.as_deref().unwrap_or("").contains(said), "{rule}: {:?}", a.findings.health_output);
        assert_eq!(a.revert_method, Some(RevertMethod::Script), "{rule}: its own revert script undid it, verified");
        let r = w.store().await.rule(run, &full(rule)).await.unwrap().unwrap();
        assert_eq!(r.status, RuleStatus::Escalated, "{rule}");
        assert_eq!(r.final_result, Some(ScanResult::Fail), "{rule}");
    }
    assert_eq!(sources(&tries[SYSCTL])[0], (FixSource::Stock, Some(Verdict::HealthBroken)), "the stock fix first");

    // As before: the same failing tests, the same owner, mode, values, bytes, package and unit.
    assert_eq!(evidence(&w, &t).await, found, "the same evidence");
    assert_eq!(state().await, before, "the guest as it was");
    assert_eq!(rescan(&w, &t).await, expect("fail"), "oscap, independent");
    assert!(healthy().await, "the mission app");
    assert!(temper_core::checks::access(&guest(), Duration::from_secs(60)).await.ok, "ssh and sudo -n true");
    w.cleanup().await;
    hypervisor().snapshot_delete(&snap).await.unwrap();
}
