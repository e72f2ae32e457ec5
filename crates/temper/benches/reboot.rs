//! What one reboot proof costs on the test VM: the clean shutdown through libvirt (ACPI), the
//! boot to SSH, the guard (sudo and the health check), and the full scan after it. Each of
//! RUNS (default 3) cycles starts from the baseline snapshot; prints each, then the medians.
//!
//! Needs the test VM: `bash vm/up.sh` (`TEMPER_DOMAIN`, `TEMPER_SSH_PORT` name another guest).
use std::time::{Duration, Instant};

use temper_core::checks;
use temper_core::ports::{Guest, Hypervisor};
use temper_core::scan::Scanner;
use temper_target::{LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";
const HEALTH: &str = "/usr/local/bin/mission-healthcheck";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::var("RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "xccdf_org.ssgproject.content_profile_anssi_bp28_high".into());
    let hv = LibvirtHypervisor::new(LibvirtConfig::from_env());
    let guest = SshGuest::new(SshConfig::from_env().unwrap()).unwrap();
    let scanner = Scanner::new(DS, &profile);
    let (mut down, mut boot, mut guard, mut scan) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    println!("reboot proof on {}, profile {profile}, {runs} cycles", LibvirtConfig::from_env().domain);
    for i in 1..=runs {
        hv.snapshot_revert("baseline").await.unwrap();
        guest.reconnect(Duration::from_secs(120)).await.unwrap();
        let t = Instant::now();
        let off = hv.power_cycle(Duration::from_secs(90)).await.unwrap();
        let d = t.elapsed().as_secs_f64();
        let t = Instant::now();
        guest.reconnect(Duration::from_secs(300)).await.expect("the baseline boots");
        let b = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let health = checks::access_then_health(&guest, Duration::from_secs(30), HEALTH).await.ok().is_some_and(|h| h.ok);
        let g = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let s = scanner.scan(&guest, &[]).await.unwrap();
        let sc = t.elapsed().as_secs_f64();
        println!(
            "cycle {i}: shutdown ({off}) {d:.1} s, boot to SSH {b:.1} s, guard {g:.1} s (healthy: {health}), full scan {sc:.1} s ({} rules), total {:.1} s",
            s.results.rule_results.len(),
            d + b + g + sc
        );
        down.push(d);
        boot.push(b);
        guard.push(g);
        scan.push(sc);
    }
    let (d, b, g, s) = (median(down), median(boot), median(guard), median(scan));
    println!(
        "median: shutdown {d:.1} s, boot to SSH {b:.1} s, guard {g:.1} s, full scan {s:.1} s; the reboot alone {:.1} s, the proof {:.1} s",
        d + b + g,
        d + b + g + s
    );
    hv.snapshot_revert("baseline").await.unwrap();
}
