//! The scanner against a guest that answers its commands from a script (oscap deadlocks on
//! demand). `tests/scan_guests.rs` runs two scanners against real oscap processes.
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;

use super::watch::parse_times;
use super::*;
use crate::ports::{ExecOutput, PortResult};

const RESULT: &str = r#"<TestResult id="t"><rule-result idref="r"><result>pass</result></rule-result></TestResult>"#;
const PID: &str = "4242";

/// A guest whose first `hung` oscap runs deadlock: they never end, and their CPU time stays put.
struct Deadlocking {
    hung: u32,
    calls: Mutex<Vec<(Vec<String>, Vec<u8>)>>,
    oscap_runs: Mutex<u32>,
}

/// What a command runs: oscap behind the pid-file wrapper is `oscap`.
fn program(argv: &[String]) -> &str {
    match argv {
        [sh, c, script, _, _, prog, ..] if sh == "sh" && c == "-c" && script == WITH_PIDFILE => prog,
        _ => &argv[0],
    }
}

/// The oscap command line behind the wrapper, and the wrapper's pid file.
fn oscap_argv(argv: &[String]) -> Option<(&[String], &str)> {
    (program(argv) == "oscap" && argv[0] == "sh").then(|| (&argv[5..], argv[4].as_str()))
}

fn after<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    argv.iter().position(|a| a == flag).map(|i| argv[i + 1].as_str())
}

#[async_trait]
impl Guest for Deadlocking {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
        self.calls.lock().unwrap().push((exec.argv.clone(), exec.stdin.clone()));
        let ok = |stdout: &str| ExecOutput { exit_code: Some(0), stdout: stdout.as_bytes().to_vec(), ..Default::default() };
        match program(&exec.argv) {
            "oscap" => {
                let run = {
                    let mut n = self.oscap_runs.lock().unwrap();
                    *n += 1;
                    *n
                };
                if run <= self.hung {
                    std::future::pending::<()>().await;
                }
                Ok(ExecOutput { exit_code: Some(0), ..Default::default() })
            }
            "ps" => Ok(ok(" 12\n")),
            "cat" => Ok(ok(PID)),
            "sh" => Ok(ok(RESULT)),
            _ => Ok(ok("")),
        }
    }
    async fn reconnect(&self, _: Duration) -> PortResult<()> {
        Ok(())
    }
}

impl Deadlocking {
    fn argvs(&self) -> Vec<Vec<String>> {
        self.calls.lock().unwrap().iter().map(|c| c.0.clone()).collect()
    }
    fn count(&self, prog: &str) -> usize {
        self.argvs().iter().filter(|a| program(a) == prog).count()
    }
}

fn guest(hung: u32) -> Deadlocking {
    Deadlocking { hung, calls: Mutex::default(), oscap_runs: Mutex::default() }
}

#[tokio::test(start_paused = true)]
async fn a_deadlocked_oscap_is_killed_by_its_own_pid_and_the_scan_run_again() {
    let g = guest(1);
    let scan = Scanner::new("ds.xml", "p").scan(&g, &[]).await.unwrap();
    assert_eq!(scan.stalls, 1);
    assert_eq!(scan.outcome("r"), Some(Outcome::Pass), "the second run's results are read");
    let argvs = g.argvs();
    let runs: Vec<_> = argvs.iter().filter_map(|a| oscap_argv(a)).collect();
    assert_eq!(runs.len(), 2);
    let (first, second) = (runs[0], runs[1]);
    assert_ne!(first.1, second.1, "each run has its own pid file");
    assert_ne!(after(first.0, "--results"), after(second.0, "--results"), "and its own results file");
    let kills: Vec<_> = argvs.iter().filter(|a| a[0] == "pkill").collect();
    assert_eq!(kills.len(), 1);
    assert_eq!(kills[0], &["pkill", "-KILL", "-x", "oscap", "-F", first.1], "only the stalled run's process");
    let samples: Vec<_> = argvs.iter().filter(|a| a[0] == "ps").collect();
    assert!(samples.len() >= 8, "sampled for 120 s every 15 s: {argvs:?}");
    assert!(samples.iter().all(|a| a[1..] == ["-o", "times=", "-p", PID]), "its own PID only: {samples:?}");
    let removed = argvs.iter().find(|a| a[0] == "rm").expect("the killed run's files are removed");
    assert!(removed.contains(&first.1.to_string()) && removed.iter().any(|a| Some(a.as_str()) == after(first.0, "--results")));
    assert!(scan.took >= Duration::from_secs(150), "30 s before the first sample, then 120 s without progress");
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
async fn a_tailoring_goes_to_the_guest_as_data_before_each_scan() {
    let g = guest(0);
    let mut scanner = Scanner::new("ds.xml", "p_tailored");
    scanner.tailoring = Some(b"<Tailoring id='t'/>".to_vec());
    scanner.scan(&g, &[]).await.unwrap();
    scanner.scan(&g, &["r".into()]).await.unwrap();
    let calls = g.calls.lock().unwrap();
    let puts: Vec<_> = calls.iter().filter(|(argv, _)| argv[0] == "dd").collect();
    assert_eq!(puts.len(), 2, "written before every scan: {calls:?}");
    assert_eq!(puts[0].1, b"<Tailoring id='t'/>", "the document is stdin, not an argument");
    let runs: Vec<_> = calls.iter().filter_map(|(argv, _)| oscap_argv(argv)).collect();
    for (put, (oscap, _)) in puts.iter().zip(&runs) {
        let file = after(oscap, "--tailoring-file").expect("passed to oscap");
        assert_eq!(put.0, ["dd", &format!("of={file}"), "status=none"]);
    }
    assert_ne!(puts[0].0, puts[1].0, "each scan has its own tailoring copy");
    let reads: Vec<_> = calls.iter().filter(|(argv, _)| program(argv) == "sh").collect();
    for ((read, _), (oscap, _)) in reads.iter().zip(&runs) {
        let tailoring = after(oscap, "--tailoring-file").unwrap();
        assert!(read.iter().any(|a| a == tailoring), "removed with the results once read: {read:?}");
    }
}

/// Two scanners on one guest: no file name in common, and nothing selected by name.
#[tokio::test(start_paused = true)]
async fn two_scanners_share_no_file_and_select_no_process_by_name() {
    let g = guest(1);
    let (a, b) = (Scanner::new("ds.xml", "p").for_run(1), Scanner::new("ds.xml", "p").for_run(1));
    assert_ne!(a.tag, b.tag, "one run number in two databases");
    a.scan(&g, &[]).await.unwrap();
    b.scan(&g, &[]).await.unwrap();
    a.clone().scan(&g, &["r".into()]).await.unwrap();
    let argvs = g.argvs();
    let runs: Vec<_> = argvs.iter().filter_map(|a| oscap_argv(a)).collect();
    assert_eq!(runs.len(), 4, "a's stalled run, a's retry, b, a's clone");
    let mut paths: Vec<&str> = runs.iter().flat_map(|(argv, pid)| [*pid, after(argv, "--results").unwrap()]).collect();
    let n = paths.len();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), n, "no two runs share a file: {paths:?}");
    for (i, (argv, pid)) in runs.iter().enumerate() {
        let mine = if i == 2 { &b.tag } else { &a.tag };
        assert!(pid.contains(mine.as_str()) && after(argv, "--results").unwrap().contains(mine.as_str()), "{pid}");
    }
    for argv in &argvs {
        assert!(!argv.iter().any(|w| w == "-C"), "no `ps -C`: {argv:?}");
        assert!(argv[0] != "pkill" || argv.iter().any(|w| w == "-F"), "no pkill by name alone: {argv:?}");
    }
}

#[test]
fn times_are_read_from_ps_and_a_gone_process_has_none() {
    assert_eq!(parse_times(" 140\n"), Some(140));
    assert_eq!(parse_times(""), None);
}
