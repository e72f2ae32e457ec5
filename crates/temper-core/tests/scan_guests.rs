//! Two scanners in one guest, with real oscap processes: this machine is the guest (its
//! `oscap` and SSG's Debian 12 datastream, as `vm/fetch-ssg.sh` unpacks it). One scan stalls
//! and is killed while the other, stopped all that time, is neither killed nor disturbed, and
//! neither leaves a file behind. And a scan whose first oscap spins in user space (a stand-in
//! first on PATH, a shell's busy loop under oscap's name) is killed and scanned again by the
//! real one.
mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Here, datastream};
use temper_core::scan::{ScanFiles, Scanner};

const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";
const SUID: &str = "xccdf_org.ssgproject.content_rule_sysctl_fs_suid_dumpable";

/// A process's state letter (`T` stopped, `Z` a zombie), `None` once it is gone.
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next())
}

fn is_oscap(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "oscap")
}

fn signal(sig: &str, pid: u32) {
    let st = std::process::Command::new("kill").args([sig, &pid.to_string()]).status().unwrap();
    assert!(st.success(), "kill {sig} {pid}");
}

/// Processes this test stopped: killed if the test fails half-way, so none is left behind.
struct Stopped(Mutex<Vec<u32>>);

impl Drop for Stopped {
    fn drop(&mut self) {
        for pid in self.0.lock().unwrap().iter().copied().filter(|p| is_oscap(*p)) {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

/// Waits for the `n`-th oscap run of `scanner` to be a running oscap, and returns its pid.
async fn running_oscap(scanner: &Scanner, n: u32) -> u32 {
    let file = ScanFiles::new(&scanner.dir, &scanner.tag, n).pid;
    for _ in 0..1200 {
        if let Some(pid) = std::fs::read_to_string(&file).ok().and_then(|p| p.trim().parse().ok())
            && is_oscap(pid)
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{file} never named a running oscap");
}

/// Waits for the `n`-th oscap run of `scanner` to be oscap, then stops it (SIGSTOP): from then
/// on it makes no progress, as a deadlocked oscap makes none.
async fn stop_run(scanner: &Scanner, n: u32, stopped: &Stopped) -> u32 {
    let pid = running_oscap(scanner, n).await;
    signal("-STOP", pid);
    stopped.0.lock().unwrap().push(pid);
    pid
}

fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_scan_is_killed_alone_and_two_scans_share_no_file() {
    let (ds, dir) = (datastream(), tempfile::tempdir().unwrap());
    let guest = Arc::new(Here::default());
    let stopped = Stopped(Mutex::default());
    let (mut a, mut b) = (Scanner::new(&ds, STANDARD), Scanner::new(&ds, STANDARD));
    (a.dir, b.dir) = (dir.path().to_str().unwrap().into(), dir.path().to_str().unwrap().into());
    (a.watch_every, a.stall_after) = (Duration::from_millis(250), Duration::from_secs(5));
    assert_ne!(a.tag, b.tag);

    // B scans the whole profile; its oscap is held stopped until A is done.
    let b_scan = tokio::spawn({
        let (b, g) = (b.clone(), guest.clone());
        async move { b.scan(g.as_ref(), &[]).await }
    });
    let b_pid = stop_run(&b, 1, &stopped).await;
    // A's first oscap stalls (stopped); its watchdog kills it and A scans again.
    let a_scan = tokio::spawn({
        let (a, g) = (a.clone(), guest.clone());
        async move { a.scan(g.as_ref(), &[SUID.to_string()]).await }
    });
    let a_pid = stop_run(&a, 1, &stopped).await;
    let a_scan = tokio::time::timeout(Duration::from_secs(180), a_scan).await.expect("A finishes").unwrap().unwrap();
    assert!(a_scan.stalls >= 1, "A's stopped oscap was taken for stalled");
    assert!(a_scan.outcome(SUID).is_some(), "A's retry read its own results");
    assert!(matches!(state(a_pid), None | Some('Z')), "A's stalled oscap was killed");
    assert_eq!(state(b_pid), Some('T'), "B's oscap, stalled as long, was not touched");

    signal("-CONT", b_pid);
    let b_scan = tokio::time::timeout(Duration::from_secs(180), b_scan).await.expect("B finishes").unwrap().unwrap();
    assert_eq!(b_scan.stalls, 0);
    assert!(b_scan.results.rule_results.len() > 40, "B read the whole profile's results: {}", b_scan.results.rule_results.len());
    assert!(b_scan.outcome(SUID).is_some());

    // Every oscap run had files of its own, named for its scanner, and none is left.
    let log = guest.log.lock().unwrap().clone();
    let runs = guest.trips.lock().unwrap().clone();
    assert_eq!(runs.len(), 2 + a_scan.stalls as usize, "{runs:?}");
    let mut files: Vec<String> = Vec::new();
    for t in &runs {
        let tag = if t.args.contains(&SUID.to_string()) { &a.tag } else { &b.tag };
        assert!(t.pid.contains(tag.as_str()) && t.results.contains(tag.as_str()), "{t:?}");
        files.extend([t.pid.clone(), t.results.clone()]);
    }
    let n = files.len();
    files.sort();
    files.dedup();
    assert_eq!(files.len(), n, "no two runs share a file");
    let a_first = runs.iter().find(|t| t.args.contains(&SUID.to_string())).unwrap();
    let kills: Vec<&Vec<String>> = log.iter().filter(|a| a[0] == "pkill").collect();
    assert_eq!(kills.len(), a_scan.stalls as usize, "{kills:?}");
    assert!(kills[0].contains(&a_first.pid), "the kill names A's stalled run's pid file: {kills:?}");
    assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new(), "every scan file was removed");
}

/// The watchdog's spin rule on this machine's kernel: the first run is a real process spinning
/// in user space under oscap's name; it is killed by its pid file once its system time has
/// stood still for `spin_after` while its user time grew, and the second run, the real oscap,
/// reads the rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oscap_spinning_in_user_space_is_killed_and_the_scan_run_again() {
    let (ds, dir, bin) = (datastream(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let real = String::from_utf8(std::process::Command::new("sh").args(["-c", "command -v oscap"]).output().unwrap().stdout).unwrap();
    let marker = dir.path().join("spun");
    let stand_in = format!(
        "#!/bin/bash\nif [ ! -e {m} ]; then : > {m}; while :; do :; done; fi\nexec {real} \"$@\"\n",
        m = marker.display(),
        real = real.trim()
    );
    std::fs::write(bin.path().join("oscap"), stand_in).unwrap();
    assert!(std::process::Command::new("chmod").arg("+x").arg(bin.path().join("oscap")).status().unwrap().success());
    let guest = Here { path_first: Some(bin.path().to_path_buf()), ..Here::default() };
    let mut scanner = Scanner::new(&ds, STANDARD);
    scanner.dir = dir.path().to_str().unwrap().into();
    (scanner.watch_every, scanner.spin_after) = (Duration::from_millis(250), Duration::from_secs(3));
    let stopped = Stopped(Mutex::default());
    let first = ScanFiles::new(&scanner.dir, &scanner.tag, 1).pid;
    let scan = tokio::spawn({
        let s = scanner.clone();
        async move { (s.scan(&guest, &[SUID.to_string()]).await, guest.log.into_inner().unwrap()) }
    });
    // The spinning run's pid (a shell under oscap's name), kept to be killed should the test
    // fail half-way.
    let spun = running_oscap(&scanner, 1).await;
    stopped.0.lock().unwrap().push(spun);
    let (scan, log) = tokio::time::timeout(Duration::from_secs(180), scan).await.expect("the scan ends").unwrap();
    let scan = scan.unwrap();
    assert_eq!(scan.stalls, 1, "the spinning run was taken for a stall");
    assert!(scan.took >= Duration::from_secs(3), "not before 3 s in user space: {:?}", scan.took);
    assert!(scan.outcome(SUID).is_some(), "the real oscap's run read the rule");
    assert!(matches!(state(spun), None | Some('Z')), "the spinning run was killed");
    let kills: Vec<&Vec<String>> = log.iter().filter(|a| a[0] == "pkill").collect();
    assert_eq!(kills.len(), 1, "{kills:?}");
    assert!(kills[0].contains(&first), "by its own pid file: {kills:?}");
    assert!(log.iter().any(|a| a[0] == "cat" && a.contains(&format!("/proc/{spun}/stat"))), "its CPU time was read: {log:?}");
    assert_eq!(leftovers(dir.path()), vec![marker], "every scan file was removed");
}
