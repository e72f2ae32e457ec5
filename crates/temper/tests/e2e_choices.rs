//! Derived fixes that choose (issue 58), on the real VM, each rule broken in a snapshot of its
//! own as ComplianceAsCode's scenarios break it:
//! - a range: a command in `/usr/bin` whose group is a user's; the check asks for any group below
//!   1000, and the fix sets 0;
//! - a state to avoid with fields ANDed: a world-writable folder without its sticky bit; the
//!   sticky bit is tried first, and the world's write removed only when that is rejected;
//! - a setting another file contradicts: `kernel.kptr_restrict` set right in
//!   `/etc/sysctl.d/60-kptr.conf` and otherwise in `/etc/sysctl.conf`, with Debian's link to it
//!   gone (as the scenarios empty `/etc/sysctl.d`). The stock fix comments out the right file,
//!   holds live and is lost at boot; the derived fix comments out the wrong one and writes its
//!   drop-in, and it holds after the reboot proof's cold reboot.
mod support;

use std::collections::BTreeMap;

use support::*;
use temper_core::ports::Hypervisor;
use temper_journal::RunId;
use temper_journal::Verdict;
use temper_journal::{Attempt, FixSource, RunSummary, ScanResult};

const ANSSI: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";
const RANGE: &str = "file_groupownership_system_commands_dirs";
const STICKY: &str = "dir_perms_world_writable_sticky_bits";
const SYSCTL: &str = "sysctl_kernel_kptr_restrict";
/// Rules that pass at the baseline and in the broken snapshot: the regression set.
const PASSING: [&str; 3] = ["sysctl_fs_protected_symlinks", "file_owner_etc_passwd", "file_permissions_etc_shadow"];

const BREAK: &str = r#"set -e
install -m 0755 /bin/true /usr/bin/e2e-tool
chgrp 1000 /usr/bin/e2e-tool
mkdir -p /srv/share
chmod 0777 /srv/share
rm -rf /etc/sysctl.d/*
printf 'kernel.kptr_restrict = 2\n' > /etc/sysctl.d/60-kptr.conf
printf 'kernel.kptr_restrict = 0\n' >> /etc/sysctl.conf
sysctl -q -w kernel.kptr_restrict=2
cat > /usr/local/sbin/e2e-choices-health <<'EOF'
#!/bin/sh
/usr/local/bin/mission-healthcheck | tail -n 1 | grep -qx HEALTHY || { echo "UNHEALTHY: the mission app"; exit 1; }
[ ! -k /srv/share ] || { echo "UNHEALTHY: /srv/share is sticky, and its users remove each other's files"; exit 1; }
echo HEALTHY
EOF
chmod 0755 /usr/local/sbin/e2e-choices-health
"#;
/// The health check of the second test: the sticky bit on `/srv/share` breaks its users.
const HEALTH: &str = "/usr/local/sbin/e2e-choices-health";

fn tailoring(dir: &std::path::Path, rules: &[&str]) -> String {
    let keep: Vec<String> = rules.iter().chain(PASSING.iter()).map(|r| full(r)).collect();
    cut_profile(dir, ANSSI, "choices", &keep)
}

async fn run(w: &World, t: &str, rules: &[&str]) -> RunId {
    let rules = rules.iter().map(|r| full(r)).collect::<Vec<_>>().join(",");
    let args =
        ["run", "--agent", "stock", "--engine", "oval", "--profile", ANSSI, "--tailoring-file", t, "--rules", &rules, "--quiet", "--json"];
    let out = w.run(&args).await;
    assert!(matches!(out.status.code(), Some(0 | 2)), "{}", String::from_utf8_lossy(&out.stderr));
    w.store().await.latest_run().await.unwrap().unwrap().id
}

async fn attempts(w: &World, run: RunId, rules: &[&'static str]) -> BTreeMap<&'static str, Vec<Attempt>> {
    let all = w.store().await.attempts(run).await.unwrap();
    rules.iter().map(|r| (*r, all.iter().filter(|a| a.spec.rule_id == full(r)).cloned().collect())).collect()
}

fn sources(tries: &[Attempt]) -> Vec<(FixSource, Option<Verdict>)> {
    tries.iter().map(|a| (a.spec.source, a.verdict)).collect()
}

/// The change a derived fix makes: its lines after the checks and the records.
fn changes(a: &Attempt) -> Vec<&str> {
    a.spec.fix_script.lines().skip_while(|l| *l != "# 3. change.").skip(1).collect()
}

/// Each rule fixed by the fix derived for its class, kept on every check and the reboot proof:
/// the range by group 0, the state to avoid by its first candidate (the sticky bit), and the
/// contradicted setting after its stock fix was lost at boot. oscap agrees after the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG (a tree walk per rescan, a cold reboot), out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn each_class_is_fixed_by_its_derived_fix_and_holds_after_a_cold_reboot() {
    require_vm().await;
    let snap = broken_snapshot("choices", BREAK).await;
    let mut w = World::new();
    let rules = [RANGE, STICKY, SYSCTL];
    let t = tailoring(w.dir.path(), &rules);
    w.env.push(("TEMPER_BASELINE".into(), snap.clone()));
    w.with_reboot_proof();
    let all: Vec<String> = rules.iter().chain(PASSING.iter()).map(|r| full(r)).collect();
    let extra = ["--profile", ANSSI, "--tailoring-file", t.as_str()];
    assert_eq!(rescan_all_with(&w, &all, &extra).await, [["fail"; 3], ["pass"; 3]].concat(), "broken as the scenarios break them");
    let run = run(&w, &t, &rules).await;
    let store = w.store().await;
    let summary: RunSummary = serde_json::from_str(&store.run(run).await.unwrap().summary_json.unwrap()).unwrap();
    assert_eq!(summary.rebooted, Some(true), "the final state survived a cold reboot: {summary:?}");
    assert_eq!(summary.healthy, Some(true));

    let tries = attempts(&w, run, &rules).await;
    for (rule, t) in &tries {
        println!("{rule}: {:?}", sources(t));
        let a = t.last().unwrap_or_else(|| panic!("{rule}: no attempt"));
        assert_eq!((a.spec.source, a.verdict), (FixSource::Derived, Some(Verdict::Fixed)), "{rule}: {}", a.spec.fix_script);
        assert_eq!(a.findings.rule_result, Some(ScanResult::Pass), "{rule}");
        assert_eq!((a.findings.access_ok, a.findings.health_ok), (Some(true), Some(true)), "{rule}");
        assert!(a.in_force(), "{rule}: {:?}", a.kept);
    }
    let range = tries[RANGE].last().unwrap();
    // Debian 12's merged /usr: the check found the command as /usr/bin/e2e-tool and as
    // /bin/e2e-tool; the fix changes it by its own name and leaves the other name to it.
    assert!(range.spec.fix_script.contains("if temper_alias '/bin/e2e-tool' '/usr/bin/e2e-tool'; then"), "{}", range.spec.fix_script);
    let change = changes(range).join("\n");
    assert!(change.contains("chown -h 0:0 -- '/usr/bin/e2e-tool'") && change.contains("chmod 0755 -- '/usr/bin/e2e-tool'"), "{change}");
    assert!(
        range.spec.description.contains("group 0, the id the content's own fixes set: it meets `less than 1000`"),
        "{}",
        range.spec.description
    );
    assert_eq!(sources(&tries[STICKY]), [(FixSource::Derived, Some(Verdict::Fixed))], "the first candidate is kept");
    assert_eq!(changes(&tries[STICKY][0]), ["chmod 1777 -- '/srv/share'"], "the sticky bit, the least disruptive change");
    assert_eq!(
        sources(&tries[SYSCTL]),
        [(FixSource::Stock, Some(Verdict::NotPersistent)), (FixSource::Derived, Some(Verdict::Fixed))],
        "the stock fix holds live and is lost at boot; the derived fix overrides the other file"
    );
    let sysctl = tries[SYSCTL].last().unwrap();
    assert!(sysctl.spec.description.contains("its other value commented out in /etc/sysctl.conf"), "{}", sysctl.spec.description);

    // After the run, on the guest as the reboot proof left it: oscap, and the files themselves.
    assert_eq!(rescan_all_with(&w, &all, &extra).await, ["pass"; 6], "oscap, independent, after the cold reboot");
    let (code, out) = sh("stat -c '%u %g %a' /usr/bin/e2e-tool").await;
    assert_eq!((code, out.trim()), (Some(0), "0 0 755"), "the range met by group 0");
    let (code, out) = sh("sysctl -n kernel.kptr_restrict; grep -h kptr /etc/sysctl.conf /etc/sysctl.d/*.conf").await;
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("2\n") && out.contains("# kernel.kptr_restrict = 0"), "{out}");
    w.cleanup().await;
    hypervisor().snapshot_delete(&snap).await.unwrap();
}

/// The state to avoid again, with a health check that fails while `/srv/share` has its sticky
/// bit: the first candidate is rejected by the health check and reverted, and the second (the
/// world's write removed) is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG (a tree walk per rescan), out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn a_rejected_first_candidate_is_reverted_and_the_second_is_kept() {
    require_vm().await;
    let snap = broken_snapshot("choices", BREAK).await;
    let mut w = World::new();
    let t = tailoring(w.dir.path(), &[STICKY]);
    w.env.extend([("TEMPER_BASELINE", snap.as_str()), ("TEMPER_HEALTH_COMMAND", HEALTH)].map(|(k, v)| (k.to_string(), v.to_string())));
    let run = run(&w, &t, &[STICKY]).await;
    let tries = attempts(&w, run, &[STICKY]).await.remove(STICKY).unwrap();
    println!("{STICKY}: {:?}", sources(&tries));
    assert_eq!(
        sources(&tries),
        [(FixSource::Derived, Some(Verdict::HealthBroken)), (FixSource::Derived, Some(Verdict::Fixed))],
        "the first candidate rejected, the second kept"
    );
    assert_eq!(changes(&tries[0]), ["chmod 1777 -- '/srv/share'"]);
    assert!(
        tries[0].findings.health_output.as_deref().unwrap_or("").contains("UNHEALTHY: /srv/share is sticky"),
        "{:?}",
        tries[0].findings
    );
    assert_eq!(changes(&tries[1]), ["chmod 0775 -- '/srv/share'"]);
    assert!(tries[1].in_force());
    let (code, out) = sh("stat -c '%u %g %a' /srv/share").await;
    assert_eq!((code, out.trim()), (Some(0), "0 0 775"), "the world's write removed, no sticky bit");
    w.cleanup().await;
}
