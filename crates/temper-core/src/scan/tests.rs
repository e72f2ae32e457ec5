//! The scanner against a guest that answers its commands from a script (oscap deadlocks on
//! demand). `tests/scan_guests.rs` runs two scanners against real oscap processes.
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;

use super::watch::{Times, all_parked, parse_stat};
use super::*;
use crate::ports::{ExecOutput, PortResult};
use temper_journal::RunId;

const RESULT: &str = r#"<TestResult id="t"><rule-result idref="r"><result>pass</result></rule-result></TestResult>"#;
const PID: &str = "4242";

/// A guest whose first `hung` oscap runs never end; their CPU time does as `cpu` says (stays
/// put: a deadlock). The `dropped` runs after those lose the SSH session, and the `crashed`
/// runs after those die of SIGSEGV. `threads` is what `ps -L` lists of a hung run's threads
/// (`None`: not read).
#[derive(Default)]
struct Deadlocking {
    hung: u32,
    cpu: Cpu,
    threads: Option<&'static str>,
    dropped: u32,
    crashed: u32,
    reconnects: Mutex<u32>,
    calls: Mutex<Vec<(Vec<String>, Vec<u8>)>>,
    oscap_runs: Mutex<u32>,
    /// How many times its CPU time has been read.
    samples: Mutex<u64>,
}

/// How a hung run's CPU time goes, read after read.
#[derive(Default, Clone, Copy)]
enum Cpu {
    /// It stays put: a deadlock.
    #[default]
    Still,
    /// User time grows, system time stays put: a probe spinning in user space.
    Spinning,
    /// Both grow: a long scan at work.
    Busy,
}

impl Deadlocking {
    /// Its `/proc/PID/stat` line, with a command name that holds a space and a parenthesis.
    fn stat(&self) -> String {
        let n = {
            let mut n = self.samples.lock().unwrap();
            *n += 1;
            *n
        };
        let (user, system) = match self.cpu {
            Cpu::Still => (12, 3),
            Cpu::Spinning => (12 + 1500 * n, 3),
            Cpu::Busy => (12 + 1400 * n, 3 + 100 * n),
        };
        format!("{PID} (osc ap) R 1 {PID} {PID} 0 -1 4194560 905 0 0 0 {user} {system} 0 0 20 0 3 0 1 2 3\n")
    }
}

/// The oscap run a call is, if it is one.
fn trip(call: &(Vec<String>, Vec<u8>)) -> Option<Trip> {
    Trip::parse(&call.0, &call.1)
}

fn after<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    argv.iter().position(|a| a == flag).map(|i| argv[i + 1].as_str())
}

#[async_trait]
impl Guest for Deadlocking {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
        self.calls.lock().unwrap().push((exec.argv.clone(), exec.stdin.clone()));
        let ok = |stdout: &str| ExecOutput { exit_code: Some(0), stdout: stdout.as_bytes().to_vec(), ..Default::default() };
        if Trip::parse(&exec.argv, &exec.stdin).is_some() {
            let run = {
                let mut n = self.oscap_runs.lock().unwrap();
                *n += 1;
                *n
            };
            if run <= self.hung {
                std::future::pending::<()>().await;
            }
            if run <= self.hung + self.dropped {
                return Err(PortError::Dropped("session closed while the command ran".into()));
            }
            if run <= self.hung + self.dropped + self.crashed {
                let segv = "temper: line 11:  1054 Segmentation fault      \"$@\" 1>&2";
                return Ok(ExecOutput { exit_code: Some(139), stderr: segv.as_bytes().to_vec(), ..Default::default() });
            }
            return Ok(ok(RESULT));
        }
        Ok(match exec.argv[0].as_str() {
            "ps" if exec.argv[1] == "-L" => match self.threads {
                Some(t) if exec.sudo => ok(t),
                _ => ExecOutput { exit_code: Some(1), stderr: b"sudo: a password is required".to_vec(), ..Default::default() },
            },
            "cat" if exec.argv[2].starts_with("/proc/") => ok(&self.stat()),
            "cat" => ok(PID),
            _ => ok(""),
        })
    }
    async fn reconnect(&self, _: Duration) -> PortResult<()> {
        *self.reconnects.lock().unwrap() += 1;
        Ok(())
    }
}

impl Deadlocking {
    fn argvs(&self) -> Vec<Vec<String>> {
        self.calls.lock().unwrap().iter().map(|c| c.0.clone()).collect()
    }
    fn trips(&self) -> Vec<Trip> {
        self.calls.lock().unwrap().iter().filter_map(trip).collect()
    }
    fn count(&self, prog: &str) -> usize {
        self.argvs().iter().filter(|a| a[0] == prog).count()
    }
}

fn guest(hung: u32) -> Deadlocking {
    Deadlocking { hung, ..Default::default() }
}

#[tokio::test(start_paused = true)]
async fn a_deadlocked_oscap_is_killed_by_its_own_pid_and_the_scan_run_again() {
    let g = guest(1);
    let scan = Scanner::new("ds.xml", "p").scan(&g, &[]).await.unwrap();
    assert_eq!(scan.stalls, 1);
    assert_eq!(scan.outcome("r"), Some(Outcome::Pass), "the second run's results are read");
    let runs = g.trips();
    assert_eq!(runs.len(), 2);
    let (first, second) = (&runs[0], &runs[1]);
    assert_ne!(first.pid, second.pid, "each run has its own pid file");
    assert_ne!(first.results, second.results, "and its own results file");
    assert_eq!(after(&first.args, "--results"), Some(first.results.as_str()), "the file oscap writes is the one read");
    let argvs = g.argvs();
    let kills: Vec<_> = argvs.iter().filter(|a| a[0] == "pkill").collect();
    assert_eq!(kills.len(), 1);
    assert_eq!(kills[0], &["pkill", "-KILL", "-x", "oscap", "-F", &first.pid], "only the stalled run's process");
    let threads: Vec<_> = argvs.iter().filter(|a| a[0] == "ps").collect();
    let samples: Vec<_> = argvs.iter().filter(|a| a[0] == "cat" && a[2].starts_with("/proc/")).collect();
    assert!(samples.len() >= 8, "sampled for 120 s every 15 s: {argvs:?}");
    assert!(samples.iter().all(|a| a[1..] == ["--", &format!("/proc/{PID}/stat")]), "its own PID only: {samples:?}");
    assert!(threads.iter().all(|a| a.last().map(String::as_str) == Some(PID)), "its own threads only: {threads:?}");
    let removed = argvs.iter().find(|a| a[0] == "rm").expect("the killed run's files are removed");
    assert!(removed.contains(&first.pid) && removed.contains(&first.results));
    assert!(scan.took >= Duration::from_secs(150), "30 s before the first sample, then 120 s without progress");
    let execs = runs.len() + kills.len() + samples.len() + threads.len() + 2;
    assert_eq!(argvs.len(), execs, "one exec a run, plus the killed run's pid read and rm");
}

/// A deadlock's own picture, every thread parked on a futex, is killed after 30 s without
/// progress, not 120; a run whose CPU time stands still while one thread waits on a pipe (a
/// probe reading a child's output) is given the whole 120 s.
#[tokio::test(start_paused = true)]
async fn an_oscap_with_every_thread_parked_on_a_futex_is_killed_sooner() {
    let parked = "Ssl  futex_wait_queue\nSl   futex_wait_queue\nSl   futex_wait_queue_me\n";
    let g = Deadlocking { threads: Some(parked), ..guest(1) };
    let scan = Scanner::new("ds.xml", "p").scan(&g, &[]).await.unwrap();
    assert_eq!((scan.stalls, scan.outcome("r")), (1, Some(Outcome::Pass)));
    assert!(scan.took >= Duration::from_secs(60), "30 s before the first sample, then 30 s without progress: {:?}", scan.took);
    assert!(scan.took < Duration::from_secs(90), "not the 120 s of a stall whose threads are not all parked: {:?}", scan.took);
    let threads: Vec<_> = g.argvs().into_iter().filter(|a| a[0] == "ps" && a[1] == "-L").collect();
    assert_eq!(threads, vec![["ps", "-L", "-o", "stat=,wchan:32=", "-p", PID]], "read once, when the CPU time had stood still 30 s");

    let waiting = "Ssl  futex_wait_queue\nSl   pipe_read\n";
    let g = Deadlocking { threads: Some(waiting), ..guest(1) };
    let scan = Scanner::new("ds.xml", "p").scan(&g, &[]).await.unwrap();
    assert_eq!(scan.stalls, 1);
    assert!(scan.took >= Duration::from_secs(150), "a thread waits on a pipe: the whole 120 s: {:?}", scan.took);
}

#[tokio::test(start_paused = true)]
async fn a_scan_that_always_deadlocks_is_an_error_not_a_hang() {
    let g = guest(u32::MAX);
    let e = Scanner::new("ds.xml", "p").scan(&g, &[]).await.unwrap_err();
    assert!(matches!(e, ScanError::Stalled(SCAN_TRIES)), "{e}");
    assert_eq!(*g.oscap_runs.lock().unwrap(), SCAN_TRIES);
    assert_eq!(g.count("pkill"), SCAN_TRIES as usize);
}

#[tokio::test(start_paused = true)]
async fn a_tailoring_goes_to_the_guest_as_data_with_each_scan() {
    let g = guest(0);
    let mut scanner = Scanner::new("ds.xml", "p_tailored");
    scanner.tailoring = Some(b"<Tailoring id='t'/>".to_vec());
    scanner.scan(&g, &[]).await.unwrap();
    scanner.scan(&g, &["r".into()]).await.unwrap();
    let runs = g.trips();
    assert_eq!(runs.len(), 2);
    assert_eq!(g.argvs().len(), 2, "one exec a scan: {:?}", g.argvs());
    for t in &runs {
        let [(path, bytes)] = &t.inputs[..] else { panic!("one input: {t:?}") };
        assert_eq!(bytes, b"<Tailoring id='t'/>", "the document is stdin, not an argument");
        assert_eq!(after(&t.args, "--tailoring-file"), Some(path.as_str()), "passed to oscap");
    }
    assert_ne!(runs[0].inputs[0].0, runs[1].inputs[0].0, "each scan has its own tailoring copy");
}

/// Two scanners on one guest: no file name in common, and nothing selected by name.
#[tokio::test(start_paused = true)]
async fn two_scanners_share_no_file_and_select_no_process_by_name() {
    let g = guest(1);
    let (a, b) = (Scanner::new("ds.xml", "p").for_run(RunId::new(1).unwrap()), Scanner::new("ds.xml", "p").for_run(RunId::new(1).unwrap()));
    assert_ne!(a.tag, b.tag, "one run number in two databases");
    a.scan(&g, &[]).await.unwrap();
    b.scan(&g, &[]).await.unwrap();
    a.clone().scan(&g, &["r".into()]).await.unwrap();
    let runs = g.trips();
    assert_eq!(runs.len(), 4, "a's stalled run, a's retry, b, a's clone");
    let mut paths: Vec<&str> = runs.iter().flat_map(|t| [t.pid.as_str(), t.results.as_str()]).collect();
    let n = paths.len();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), n, "no two runs share a file: {paths:?}");
    for (i, t) in runs.iter().enumerate() {
        let mine = if i == 2 { &b.tag } else { &a.tag };
        assert!(t.pid.contains(mine.as_str()) && t.results.contains(mine.as_str()), "{t:?}");
    }
    for argv in &g.argvs() {
        assert!(!argv.iter().any(|w| w == "-C"), "no `ps -C`: {argv:?}");
        assert!(argv[0] != "pkill" || argv.iter().any(|w| w == "-F"), "no pkill by name alone: {argv:?}");
    }
}

/// A dropped session mid-scan: reconnect, kill the cut-off run by its pid file, remove its
/// files, scan again with new ones. Drops on every try are an error, not a hang.
#[tokio::test(start_paused = true)]
async fn a_scan_cut_off_by_a_dropped_session_is_run_again_after_a_reconnect() {
    let g = Deadlocking { dropped: 1, ..guest(0) };
    let scan = Scanner::new("ds.xml", "p").scan(&g, &["r".into()]).await.unwrap();
    assert_eq!((scan.outcome("r"), scan.stalls), (Some(Outcome::Pass), 0));
    assert_eq!(*g.reconnects.lock().unwrap(), 1);
    let runs = g.trips();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0].results, runs[1].results, "the retry has files of its own");
    let argvs = g.argvs();
    assert!(argvs.iter().any(|a| a[0] == "pkill" && a.contains(&runs[0].pid)), "the cut-off oscap is killed: {argvs:?}");
    assert!(argvs.iter().any(|a| a[0] == "rm" && a.contains(&runs[0].results)), "and its files removed");

    let g = Deadlocking { dropped: SCAN_TRIES, ..guest(0) };
    let e = Scanner::new("ds.xml", "p").scan(&g, &["r".into()]).await.unwrap_err();
    assert!(matches!(e, ScanError::Port(PortError::Dropped(_))), "{e}");
    assert_eq!((*g.oscap_runs.lock().unwrap(), *g.reconnects.lock().unwrap()), (SCAN_TRIES, SCAN_TRIES - 1));
}

/// oscap dying of SIGSEGV is run again with files of its own; crashes on every try are the
/// crash's error, with its exit status.
#[tokio::test(start_paused = true)]
async fn a_crashed_oscap_is_run_again() {
    let g = Deadlocking { crashed: 1, ..guest(0) };
    let scan = Scanner::new("ds.xml", "p").scan(&g, &["r".into()]).await.unwrap();
    assert_eq!(scan.outcome("r"), Some(Outcome::Pass));
    let runs = g.trips();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0].results, runs[1].results, "the retry has files of its own");
    assert!(g.argvs().iter().any(|a| a[0] == "rm" && a.contains(&runs[0].results)), "the crashed run's files are removed");

    let g = Deadlocking { crashed: SCAN_TRIES, ..guest(0) };
    let e = Scanner::new("ds.xml", "p").scan(&g, &["r".into()]).await.unwrap_err();
    assert!(matches!(e, ScanError::Failed { code: Some(139), .. }), "{e}");
    assert_eq!(*g.oscap_runs.lock().unwrap(), SCAN_TRIES);
}

/// `all_parked` over what this machine's own `ps` and kernel print: a process whose every thread
/// waits on a futex (Python threads joined and waiting on an event), one asleep in
/// `nanosleep`, and one running.
#[test]
fn every_thread_parked_is_read_from_the_kernel_s_own_wait_channels() {
    use std::process::{Command, Stdio};
    let spawn = |args: &[&str]| Command::new(args[0]).args(&args[1..]).stdout(Stdio::null()).spawn().unwrap();
    let parked = "import threading\nt = threading.Thread(target=threading.Event().wait)\nt.start()\nt.join()";
    let mut kids = [spawn(&["python3", "-c", parked]), spawn(&["sleep", "60"]), spawn(&["sh", "-c", "while :; do :; done"])];
    let read = |pid: u32| {
        let out = Command::new("ps").args(["-L", "-o", "stat=,wchan:32=", "-p", &pid.to_string()]).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // On a loaded host python takes a while to start its thread: wait for it (10 s at most).
    let started = std::time::Instant::now();
    while read(kids[0].id()).lines().count() < 2 && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let seen: Vec<String> = kids.iter().map(|k| read(k.id())).collect();
    for k in &mut kids {
        k.kill().unwrap();
        k.wait().unwrap();
    }
    assert_eq!(all_parked(&seen[0]), Some(true), "python's threads: {:?}", seen[0]);
    assert_eq!(seen[0].lines().count(), 2, "two threads: {:?}", seen[0]);
    assert_eq!(all_parked(&seen[1]), Some(false), "sleep: {:?}", seen[1]);
    assert_eq!(all_parked(&seen[2]), Some(false), "a busy loop: {:?}", seen[2]);
    assert_eq!(all_parked(""), None, "a gone process");
}

/// A probe spinning in user space (CPU time growing, system time not) is killed after 300 s so,
/// and the scan run again; a long scan whose system time grows too is never taken for one.
#[tokio::test(start_paused = true)]
async fn an_oscap_spinning_in_user_space_is_killed_and_a_busy_one_is_not() {
    let g = Deadlocking { cpu: Cpu::Spinning, ..guest(1) };
    let scanner = Scanner::new("ds.xml", "p");
    let scan = tokio::time::timeout(Duration::from_secs(1200), scanner.scan(&g, &[])).await.expect("a spin is not waited out").unwrap();
    assert_eq!((scan.stalls, scan.outcome("r")), (1, Some(Outcome::Pass)));
    assert!(scan.took >= Duration::from_secs(330), "30 s before the first sample, then 300 s in user space: {:?}", scan.took);
    assert!(scan.took < Duration::from_secs(360), "killed once it is seen: {:?}", scan.took);
    let kills: Vec<_> = g.argvs().into_iter().filter(|a| a[0] == "pkill").collect();
    assert_eq!(kills, vec![["pkill", "-KILL", "-x", "oscap", "-F", &g.trips()[0].pid]], "the spinning run, by its pid file");

    let g = Deadlocking { cpu: Cpu::Busy, ..guest(1) };
    let scanner = Scanner::new("ds.xml", "p");
    let waited = tokio::time::timeout(Duration::from_secs(3600), scanner.scan(&g, &[])).await;
    assert!(waited.is_err(), "a busy scan is left to work for an hour");
    assert!(*g.samples.lock().unwrap() >= 200, "and watched all the while: {}", g.samples.lock().unwrap());
    assert_eq!(g.count("pkill"), 0, "never killed");
}

/// `parse_stat` over this machine's own kernel: a shell spinning in user space gains user time
/// and no system time; the fields are read after a command name with spaces and parentheses.
#[test]
fn times_are_read_from_proc_stat_and_a_gone_process_has_none() {
    use std::process::{Command, Stdio};
    let mut spin = Command::new("sh").args(["-c", "while :; do :; done"]).stdout(Stdio::null()).spawn().unwrap();
    let read = || parse_stat(&std::fs::read_to_string(format!("/proc/{}/stat", spin.id())).unwrap());
    let first = read().expect("a live process's stat");
    std::thread::sleep(Duration::from_millis(1500));
    let second = read().expect("a live process's stat");
    spin.kill().unwrap();
    spin.wait().unwrap();
    assert!(second.user > first.user, "a busy loop gains user time: {first:?} then {second:?}");
    assert!(second.system - first.system <= 1, "and no system time to speak of: {first:?} then {second:?}");
    let odd = "77 (a) b (c) S 1 77 77 0 -1 4194560 905 0 0 0 140 7 0 0 20 0 1 0 1 2 3\n";
    assert_eq!(parse_stat(odd), Some(Times { user: 140, system: 7 }));
    assert_eq!(parse_stat(""), None, "a gone process");
    assert_eq!(parse_stat("77 (a) S 1"), None, "a short line");
}
