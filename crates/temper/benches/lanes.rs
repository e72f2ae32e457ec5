//! Two targets with one lane, then with two: `temper fleet run --lanes 1|2`, each target the
//! stock agent on `standard` with three rules, from its baseline. Prints each configuration's
//! wall time, the ratio, and each lane's CPU share: its guest's qemu CPU time (libvirt's
//! `cpu.time`) over the wall time, and temper's own.
//!
//! Needs both guests: `bash vm/up.sh --count 2` (`TEMPER_DOMAIN2`, `TEMPER_SSH_PORT2` name
//! another second one).
use std::path::Path;
use std::time::{Duration, Instant};

const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";
const RULES: &str = "sysctl_fs_suid_dumpable,sysctl_kernel_randomize_va_space,file_permissions_systemmap";

fn virsh(args: &[&str]) -> String {
    let out = std::process::Command::new("virsh").arg("-q").arg("-c").arg("qemu:///system").args(args).output().expect("virsh");
    assert!(out.status.success(), "virsh {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The domain's CPU time so far (all its vCPUs and qemu's threads).
fn cpu(domain: &str) -> Duration {
    let stats = virsh(&["domstats", "--cpu-total", domain]);
    let ns = stats.lines().find_map(|l| l.trim().strip_prefix("cpu.time=")).and_then(|v| v.parse().ok()).expect("cpu.time");
    Duration::from_nanos(ns)
}

/// `temper fleet run --lanes N` over both targets; its wall time, its own CPU time, and each guest's.
async fn fleet(dir: &Path, lanes: u32, domains: &[String; 2]) -> (Duration, Duration, [Duration; 2]) {
    let snapshots = domains.each_ref().map(|d| virsh(&["snapshot-list", d, "--name"]));
    for d in domains {
        virsh(&["snapshot-revert", d, "baseline"]);
    }
    let db = dir.join(format!("lanes{lanes}.db"));
    let before = domains.each_ref().map(|d| cpu(d));
    let started = Instant::now();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lanes_arg = lanes.to_string();
    let args =
        ["fleet", "run", "--fleet", "bench", "--lanes", &lanes_arg, "--", "--agent", "stock", "--profile", STANDARD, "--rules", RULES];
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_temper"))
        .args(args)
        .env("TEMPER_CONFIG", dir.join("temper.toml"))
        .env("TEMPER_DB", &db)
        .env("TEMPER_SKILLS_DIR", repo.join("skills"))
        .env("TEMPER_SKILL", "debian12-anssi")
        .env("TEMPER_LOG", "warn")
        .output()
        .await
        .expect("temper");
    let wall = started.elapsed();
    let after = domains.each_ref().map(|d| cpu(d));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().filter(|l| l.starts_with("bench\t")).count() == 2,
        "both lanes ran:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "each target fixed its three rules, the profile's others remain:\n{stdout}");
    let mine = self_cpu();
    // The runs' checkpoints go; each guest goes back to its baseline.
    for (d, had) in domains.iter().zip(&snapshots) {
        for s in virsh(&["snapshot-list", d, "--name"]).lines().filter(|s| !s.trim().is_empty() && !had.lines().any(|h| h == *s)) {
            virsh(&["snapshot-delete", d, s.trim()]);
        }
        virsh(&["snapshot-revert", d, "baseline"]);
    }
    (wall, mine, [after[0] - before[0], after[1] - before[1]])
}

/// This process's children's CPU time so far (temper's, once it has exited).
fn self_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split_whitespace().collect();
    // cutime and cstime: fields 16 and 17 of stat, 14 and 15 after the command name.
    let ticks: u64 = fields[13].parse::<u64>().unwrap() + fields[14].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

#[tokio::main]
async fn main() {
    let domain2 = std::env::var("TEMPER_DOMAIN2").unwrap_or_else(|_| "temper-test2".into());
    let port2 = std::env::var("TEMPER_SSH_PORT2").unwrap_or_else(|_| "2223".into());
    let domains = ["temper-test".to_string(), domain2.clone()];
    let dir = tempfile::tempdir().unwrap();
    let toml = format!("[[target]]\nname = \"a\"\n\n[[target]]\nname = \"b\"\ndomain = \"{domain2}\"\nssh_port = {port2}\n");
    std::fs::write(dir.path().join("temper.toml"), toml).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("two targets (stock, standard, 3 rules each) on {cores} cores: one lane, then two");
    let mut walls = Vec::new();
    let mut temper_before = Duration::ZERO;
    for lanes in [1, 2] {
        let (wall, temper_cpu, guests) = fleet(dir.path(), lanes, &domains).await;
        let share = |d: Duration| 100.0 * d.as_secs_f64() / wall.as_secs_f64();
        let temper = temper_cpu - temper_before;
        temper_before = temper_cpu;
        println!(
            "--lanes {lanes}: wall {:>7.1} s   CPU share: lane a's guest {:>5.1}%, lane b's guest {:>5.1}%, temper {:>4.1}% (of one core)",
            wall.as_secs_f64(),
            share(guests[0]),
            share(guests[1]),
            share(temper)
        );
        walls.push(wall.as_secs_f64());
    }
    println!("wall time, one lane over two: {:.2}x (the ceiling here is {cores}x: one TCG guest per core)", walls[0] / walls[1]);
}
