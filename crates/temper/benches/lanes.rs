//! Two targets with one lane, then with two: `temper fleet run --lanes 1|2`, each target the
//! stock agent on `standard` with three rules, from its baseline. Prints each configuration's
//! wall time, the ratio, and each lane's CPU share: its guest's qemu CPU time (libvirt's
//! `cpu.time`) over the wall time, and temper's own.
//!
//! Needs both guests: `bash vm/up.sh --count 2` (`TEMPER_DOMAIN2`, `TEMPER_SSH_PORT2` name
//! another second one).
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "support/guests.rs"]
mod guests;
#[path = "support/settings.rs"]
mod settings;

const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";
const RULES: &str = "sysctl_fs_suid_dumpable,sysctl_kernel_randomize_va_space,file_permissions_systemmap";

/// `temper fleet run --lanes N` over both targets; its wall time, its own CPU time, and each guest's.
async fn fleet(dir: &Path, lanes: u32, domains: &[String; 2]) -> (Duration, Duration, [Duration; 2]) {
    let had = guests::at_baseline(domains);
    let db = dir.join(format!("lanes{lanes}.db"));
    let before = domains.each_ref().map(|d| guests::cpu(d));
    let started = Instant::now();
    let lanes_arg = lanes.to_string();
    let args =
        ["fleet", "run", "--fleet", "bench", "--lanes", &lanes_arg, "--", "--agent", "stock", "--profile", STANDARD, "--rules", RULES];
    let out = guests::temper(dir, &db, &args).await;
    let wall = started.elapsed();
    let after = domains.each_ref().map(|d| guests::cpu(d));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().filter(|l| l.starts_with("bench\t")).count() == 2,
        "both lanes ran:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `--rules` leaves the profile's other rules out of scope: three fixed is all there is to do.
    assert_eq!(out.status.code(), Some(0), "each target fixed its three rules:\n{stdout}");
    let mine = self_cpu();
    // The runs' checkpoints go; each guest goes back to its baseline.
    guests::tidy(domains, &had);
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
    let dir = tempfile::tempdir().unwrap();
    let domains = guests::two_targets(dir.path());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("two targets (stock, standard, 3 rules each) on {cores} cores: one lane, then two");
    let mut walls = Vec::new();
    let mut temper_before = Duration::ZERO;
    for lanes in [1, 2] {
        let (wall, temper_cpu, guest_cpu) = fleet(dir.path(), lanes, &domains).await;
        let share = |d: Duration| 100.0 * d.as_secs_f64() / wall.as_secs_f64();
        let temper = temper_cpu - temper_before;
        temper_before = temper_cpu;
        println!(
            "--lanes {lanes}: wall {:>7.1} s   CPU share: lane a's guest {:>5.1}%, lane b's guest {:>5.1}%, temper {:>4.1}% (of one core)",
            wall.as_secs_f64(),
            share(guest_cpu[0]),
            share(guest_cpu[1]),
            share(temper)
        );
        walls.push(wall.as_secs_f64());
    }
    println!("{}", settings::line());
    println!("wall time, one lane over two: {:.2}x (the ceiling here is {cores}x: one TCG guest per core)", walls[0] / walls[1]);
}
