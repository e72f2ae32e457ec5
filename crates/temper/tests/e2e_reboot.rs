//! The reboot proof on the real VM: cold reboots through libvirt (ACPI shutdown, then a start),
//! with fixes that pass every live check and fail only at boot. The scripted LLM writes them;
//! the guest, sshd, oscap and the reboots are real.
mod support;

use std::time::Duration;

use support::*;
use temper_core::ports::{Guest, Hypervisor};
use temper_journal::RunId;
use temper_journal::Verdict;
use temper_journal::{EventKind, ScanResult};
use temper_mockllm::Scripted;

const MAP_FIX: &str = "set -e\nchmod 0600 /boot/System.map-*\n";
const MAP_REVERT: &str = "chmod 0644 /boot/System.map-*\n";
/// Passes the live rescan, and puts the old mode back at every boot (as a boot-time unit would).
const MAP_UNDONE_AT_BOOT: &str = "set -e\nchmod 0600 /boot/System.map-*\n\
    printf '[Unit]\\nDescription=e2e: undo System.map mode\\n[Service]\\nType=oneshot\\nExecStart=/bin/sh -c \"chmod 0644 /boot/System.map-*\"\\n[Install]\\nWantedBy=multi-user.target\\n' > /etc/systemd/system/temper-e2e-undo.service\n\
    systemctl enable temper-e2e-undo.service\n";
/// Leaves nginx (the mission app) running, but disabled: healthy until the next boot.
const MAP_DISABLES_NGINX: &str = "set -e\nchmod 0600 /boot/System.map-*\nsystemctl disable nginx 2>/dev/null\n";
/// An fstab entry for a device that does not exist, without `nofail`: boot stops in emergency mode.
const MAP_BREAKS_BOOT: &str = "set -e\nchmod 0600 /boot/System.map-*\nmkdir -p /mnt/temper-e2e\n\
    printf '/dev/vdz1 /mnt/temper-e2e ext4 defaults 0 2\\n' >> /etc/fstab\n";

/// What a failed proof teaches (the scripted Reflector says it back).
fn lesson(what: &str) -> Scripted {
    reflect(what, None, what)
}

async fn verdicts(w: &World, run: RunId, rule: &str) -> Vec<Option<Verdict>> {
    w.store().await.rule_attempts(run, rule).await.unwrap().iter().map(|a| a.verdict).collect()
}

/// A fix kept on every live check, but undone by a unit at boot: the proof's full scan finds the
/// rule failing (`not_persistent`); the next fix, without the unit, is kept and survives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_undone_at_boot_is_not_persistent_and_the_next_one_survives_the_reboot() {
    require_vm().await;
    let mut w = World::new();
    w.with_reboot_proof();
    let llm = mock(vec![
        select(SYSTEMMAP, "chmod 0600 System.map"),
        apply_fix(MAP_UNDONE_AT_BOOT, MAP_REVERT, "chmod 0600, and a unit"),
        lesson("a unit put the old mode back at boot; change the file only"),
        select(SYSTEMMAP, "chmod 0600, nothing at boot"),
        apply_fix(MAP_FIX, MAP_REVERT, "chmod 0600"),
    ])
    .await;
    let out = llm_run(&w, &llm, SYSTEMMAP, &[]).await;
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(summary["statuses"]["fixed"], 1, "{summary}");
    assert_eq!(summary["rebooted"], true, "{summary}");
    let run = w.store().await.latest_run().await.unwrap().unwrap().id;
    assert_eq!(verdicts(&w, run, SYSTEMMAP).await, [Some(Verdict::NotPersistent), Some(Verdict::Fixed)]);
    let (code, _) = sh("test -e /etc/systemd/system/temper-e2e-undo.service").await;
    assert_ne!(code, Some(0), "the blamed fix's unit is not in the final state");
    assert_eq!(rescan(&w, SYSTEMMAP).await, "pass", "independent: oscap agrees after the reboot");
    assert_eq!(llm.remaining(), 0);
    let md = report(&w, "md", "reboot-not-persistent.md").await;
    assert!(md.contains("survived a cold reboot"), "the report says so");
    exported_image_boots_with_the_runs_passing_rules(&w, run).await;
    w.cleanup().await;
}

/// `temper image export --keep-harness` of the proven state: the manifest's sha256 is the file's;
/// the image, booted as a throwaway domain on its own port, passes the same rules as the run's
/// final scan, scanned by the harness it kept (`e2e_handover` proves the default: no harness).
/// Compressed with zstd, which qemu here reads: about 45 s less than zlib's one thread
/// (`temper-target`'s own test compresses with each kind through qemu-img).
async fn exported_image_boots_with_the_runs_passing_rules(w: &World, run: RunId) {
    let image = w.dir.path().join("hardened.qcow2");
    let args =
        ["image", "export", &run.to_string(), "-o", image.to_str().unwrap(), "--keep-harness", "--no-boot-proof", "--compression", "zstd"];
    let out = w.run(&args).await;
    assert!(out.status.success(), "export: {}", String::from_utf8_lossy(&out.stderr));
    let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(w.dir.path().join("hardened.qcow2.json")).unwrap()).unwrap();
    let sum = std::process::Command::new("sha256sum").arg(&image).output().unwrap();
    let sum = String::from_utf8_lossy(&sum.stdout).split_whitespace().next().unwrap().to_string();
    assert_eq!(manifest["sha256"], sum, "{manifest}");
    assert_eq!(manifest["reboot_proven"], true);
    assert_eq!(manifest["compression"], "zstd");
    assert_eq!(manifest["run"], run.get());
    assert_eq!(manifest["handover"]["harness"], "kept", "{manifest}");
    for ext in ["ckl", "cklb", "html"] {
        let f = w.dir.path().join(format!("hardened.{ext}"));
        assert!(f.metadata().is_ok_and(|m| m.len() > 0), "{} written beside it", f.display());
        assert_eq!(manifest["reports"][ext], format!("hardened.{ext}"));
    }

    let (name, port) = ("temper-export-e2e", 2299u16);
    let up = std::process::Command::new("bash")
        .args([repo().join("vm/boot-image.sh").to_str().unwrap(), name, &port.to_string(), image.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(up.status.success(), "boot the export: {}", String::from_utf8_lossy(&up.stderr));
    let cfg = temper_target::SshConfig { port, ..temper_target::SshConfig::from_env().unwrap() };
    let g = temper_target::SshGuest::new(cfg).unwrap();
    g.reconnect(Duration::from_secs(120)).await.unwrap();
    let scan = temper_core::scan::Scanner::new("/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml", STANDARD).scan(&g, &[]).await;
    let _ = std::process::Command::new("bash").args([repo().join("vm/boot-image.sh").to_str().unwrap(), "--down", name]).status();
    let passing: std::collections::BTreeSet<String> = scan.unwrap().with(temper_scap::Outcome::Pass).into_iter().collect();
    let rules = w.store().await.rules(run).await.unwrap();
    let want: std::collections::BTreeSet<String> =
        rules.iter().filter(|r| r.final_result == Some(ScanResult::Pass)).map(|r| r.rule_id.clone()).collect();
    assert!(want.contains(SYSTEMMAP), "the fixed rule passed the run's final scan");
    assert_eq!(passing, want, "the exported image passes exactly the rules the run's final scan passed");
}

/// Two fixes: SUID's is good; System.map's disables nginx, so the guest comes back unhealthy.
/// Bisection (a revert to the baseline, SUID's fix replayed, a reboot) blames it. Its next fix
/// stops the boot (an fstab line without `nofail`): the guest never reaches SSH, temper goes back
/// to the checkpoint that booted and blames that fix too. The third is kept; an independent cold
/// reboot after the run reaches SSH and the health check passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG, out of CI's hour: `bash tests/vm-long.sh` runs it (the loop's side is in-process in CI)"]
async fn fixes_that_break_health_or_boot_after_a_reboot_are_blamed_and_the_run_ends_bootable() {
    require_vm().await;
    let mut w = World::new();
    w.with_reboot_proof();
    let llm = mock(vec![
        select(SUID, "persist fs.suid_dumpable"),
        apply_fix(SUID_FIX, SUID_REVERT, "fs.suid_dumpable = 0"),
        select(SYSTEMMAP, "chmod 0600 System.map"),
        apply_fix(MAP_DISABLES_NGINX, MAP_REVERT, "chmod 0600, nginx disabled"),
        lesson("nginx must stay enabled"),
        select(SYSTEMMAP, "chmod 0600, and a mount"),
        apply_fix(MAP_BREAKS_BOOT, MAP_REVERT, "chmod 0600, an fstab mount"),
        lesson("an fstab line without nofail for a missing device stops the boot"),
        decide("CONTINUE", "chmod 0600 only"),
        select(SYSTEMMAP, "chmod 0600 only"),
        apply_fix(MAP_FIX, MAP_REVERT, "chmod 0600"),
    ])
    .await;
    let rules = format!("{SUID},{SYSTEMMAP}");
    let out = llm_run(&w, &llm, &rules, &[]).await;
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(summary["statuses"]["fixed"], 2, "{summary}");
    assert_eq!(summary["rebooted"], true);
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap().id;
    assert_eq!(verdicts(&w, run, SUID).await, [Some(Verdict::Fixed)]);
    assert_eq!(
        verdicts(&w, run, SYSTEMMAP).await,
        [Some(Verdict::HealthBroken), Some(Verdict::BreaksBoot), Some(Verdict::Fixed)],
        "{summary}"
    );
    let events = store.events(run, None).await.unwrap();
    let reboots: Vec<serde_json::Value> =
        events.iter().filter(|e| e.kind == EventKind::Reboot).map(|e| serde_json::from_str(&e.json()).unwrap()).collect();
    for r in &reboots {
        println!("reboot: {r}");
    }
    assert!(reboots.iter().any(|r| r["why"] == "a bisection probe" && r["up"] == true), "a probe with SUID's fix alone came up");
    assert!(reboots.iter().any(|r| r["up"] == false && r["problem"].as_str().unwrap_or("").contains("no SSH")));
    assert_eq!(llm.remaining(), 0);

    // Independent: a cold reboot of the final state reaches SSH, healthy, both rules passing.
    let hv = hypervisor();
    hv.power_cycle(Duration::from_secs(60)).await.unwrap();
    guest().reconnect(Duration::from_secs(240)).await.expect("the final state boots to SSH");
    assert!(healthy().await, "healthy after an independent reboot");
    assert_eq!(rescan_all(&w, [SYSTEMMAP, SUID]).await, ["pass"; 2]);
    let (code, _) = sh("grep -q temper-e2e /etc/fstab").await;
    assert_ne!(code, Some(0), "the fstab line is not in the final state");
    w.cleanup().await;
}
