use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::*;
use crate::ports::{Exec, ExecOutput, Guest, PortError, PortResult};

/// What the scripted fix does while it runs.
#[derive(Clone, Copy, PartialEq)]
enum ProbeDoing {
    /// Uses CPU all along (an install that unpacks, configures, builds a database).
    Working,
    /// Sleeps: no CPU, nothing written.
    Sleeping,
    /// Prints a line a minute and uses a tick now and then, waiting on dpkg's lock that
    /// another process holds.
    WaitingOnDpkg,
}

/// A guest with one script that runs `takes` while `doing`, on the paused clock.
struct Fake {
    doing: ProbeDoing,
    takes: Duration,
    started: Mutex<Option<Instant>>,
    killed: Mutex<bool>,
    samples: Mutex<u32>,
}

impl Fake {
    fn new(doing: ProbeDoing, takes: Duration) -> Self {
        Self { doing, takes, started: Mutex::new(None), killed: Mutex::new(false), samples: Mutex::new(0) }
    }
}

#[async_trait]
impl Guest for Fake {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
        if launched(&exec.argv).is_some() {
            *self.started.lock().unwrap() = Some(Instant::now());
            let end = self.takes.min(exec.timeout);
            tokio::time::sleep(end).await;
            if end == exec.timeout {
                return Err(PortError::Timeout(exec.timeout));
            }
            return Ok(ExecOutput { exit_code: Some(0), stdout: b"done\n".to_vec(), ..Default::default() });
        }
        let (_, root, mode) = probed(&exec.argv, &exec.stdin).expect("only the launcher and the probe");
        if mode == ProbeMode::Kill {
            assert_eq!(root, Some(4242), "killed by the PID the samples found");
            *self.killed.lock().unwrap() = true;
            return Ok(ExecOutput { exit_code: Some(0), stdout: b"root 4242\nkilled\n".to_vec(), ..Default::default() });
        }
        *self.samples.lock().unwrap() += 1;
        let Some(t0) = *self.started.lock().unwrap() else { return Ok(ExecOutput { exit_code: Some(0), ..Default::default() }) };
        let secs = t0.elapsed().as_secs();
        let out = match self.doing {
            ProbeDoing::Working => format!("root 4242\ntree 3 {} {}\n", secs * 90, secs * 1000),
            ProbeDoing::Sleeping => "root 4242\ntree 2 3 120\n".to_string(),
            ProbeDoing::WaitingOnDpkg => {
                format!("root 4242\ntree 2 {} {}\nlock /var/lib/dpkg/lock-frontend 77 apt-get\n", secs / 60, secs / 60 * 80)
            }
        };
        Ok(ExecOutput { exit_code: Some(0), stdout: out.into_bytes(), ..Default::default() })
    }
    async fn reconnect(&self, _within: Duration) -> PortResult<()> {
        Ok(())
    }
}

const OLD_LIMIT: Duration = Duration::from_secs(600);

#[tokio::test(start_paused = true)]
async fn a_fix_that_keeps_working_past_the_old_limit_is_not_stopped() {
    let g = Fake::new(ProbeDoing::Working, Duration::from_secs(1500));
    let t0 = Instant::now();
    let out = run(&g, "apt-get install -y aide", 1024, Watch::default()).await.expect("it finishes");
    assert_eq!(out.stdout, b"done\n");
    assert!(t0.elapsed() >= OLD_LIMIT * 2, "{:?}", t0.elapsed());
    assert!(!*g.killed.lock().unwrap());
    assert!(*g.samples.lock().unwrap() > 90, "watched all along: {}", g.samples.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_fix_that_sleeps_with_no_cpu_is_stopped_as_stalled() {
    let g = Fake::new(ProbeDoing::Sleeping, Duration::from_secs(86_400));
    let t0 = Instant::now();
    let err = run(&g, "sleep infinity", 1024, Watch::default()).await.unwrap_err();
    let ScriptError::Stopped(stop @ Stop::Stalled { lock: None, .. }) = &err else { panic!("{err}") };
    let took = t0.elapsed();
    assert!(took >= Duration::from_secs(300) && took <= Duration::from_secs(340), "{took:?}");
    assert!(*g.killed.lock().unwrap(), "its processes were killed");
    let said = stop.to_string();
    assert!(said.contains("no CPU") && said.contains(STALL_KEY), "{said}");
}

#[tokio::test(start_paused = true)]
async fn a_fix_that_waits_on_a_dpkg_lock_is_stopped_as_stalled() {
    let g = Fake::new(ProbeDoing::WaitingOnDpkg, Duration::from_secs(86_400));
    let err = run(&g, "apt-get install -y aide", 1024, Watch::default()).await.unwrap_err();
    let ScriptError::Stopped(stop @ Stop::Stalled { lock: Some(l), .. }) = &err else { panic!("{err}") };
    assert_eq!((l.lock.as_str(), l.holder, l.name.as_str()), ("/var/lib/dpkg/lock-frontend", 77, "apt-get"));
    let said = stop.to_string();
    assert!(said.contains("/var/lib/dpkg/lock-frontend") && said.contains("apt-get") && said.contains(STALL_KEY), "{said}");
    assert!(*g.killed.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_fix_still_working_at_the_hard_cap_is_stopped_there_saying_so() {
    let g = Fake::new(ProbeDoing::Working, Duration::from_secs(86_400));
    let watch = Watch { cap: Duration::from_secs(3600), ..Watch::default() };
    let err = run(&g, "make world", 1024, watch).await.unwrap_err();
    let ScriptError::Stopped(stop @ Stop::Cap(cap)) = &err else { panic!("{err}") };
    assert_eq!(*cap, Duration::from_secs(3600));
    assert!(stop.to_string().contains(CAP_KEY), "{stop}");
}

#[test]
fn the_probes_output_is_read_as_untrusted() {
    let ok = ProcSample::parse("root 12\ntree 3 40 999\nlock /var/lib/dpkg/lock 8 unattended-upgr\n").unwrap();
    assert_eq!((ok.root, ok.procs, ok.ticks, ok.written), (12, 3, 40, 999));
    assert_eq!(ok.lock.unwrap().name, "unattended-upgr");
    assert_eq!(ProcSample::parse("gone\n"), None);
    assert_eq!(ProcSample::parse("root 12\ntree 3 x 9\n"), None, "numbers only");
    assert_eq!(ProcSample::parse("root 12\ntree 3 4\n"), None, "three counts");
    for lock in ["lock /etc/shadow 8 x", "lock /var/lib/dpkg/lock 8 $(reboot)", "lock inode: 8 x", "lock /var/lib/dpkg/lock x y"] {
        let s = ProcSample::parse(&format!("root 1\ntree 1 1 1\n{lock}\n")).unwrap();
        assert_eq!(s.lock, None, "{lock}");
    }
    let blocking = ProcSample::parse("root 1\ntree 1 1 1\nlock inode:4711 0 ?\n").unwrap();
    assert_eq!(blocking.lock.unwrap().lock, "inode:4711");
}

#[test]
fn the_launcher_and_the_probe_are_argv_and_data() {
    let e = probe("ab12", Some(7), ProbeMode::Kill);
    assert_eq!(e.argv, ["bash", "-s", "ab12", "7", "kill"]);
    assert!(e.sudo, "the probe reads every process's /proc as root");
    assert_eq!(probed(&e.argv, &e.stdin), Some(("ab12", Some(7), ProbeMode::Kill)));
    assert_eq!(probed(&e.argv, b"echo"), None, "only the probe itself");
    let argv: Vec<String> = ["bash", "-c", LAUNCH, "temper-fix-ab12"].map(String::from).to_vec();
    assert_eq!(launched(&argv), Some("ab12"));
}

/// A guest that keeps what it was asked to run.
#[derive(Default)]
struct Recorder(Mutex<Vec<Exec>>);

#[async_trait]
impl Guest for Recorder {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
        self.0.lock().unwrap().push(exec);
        Ok(ExecOutput { exit_code: Some(0), ..Default::default() })
    }
    async fn reconnect(&self, _within: Duration) -> PortResult<()> {
        Ok(())
    }
}

/// `run`, the one way a fix or revert reaches the guest: the script goes on stdin, never into
/// an argv word a shell would read.
#[tokio::test]
async fn run_passes_the_script_on_stdin_never_in_the_command() {
    let g = Recorder::default();
    let script = "echo '$(touch /tmp/owned)' `id` \"$HOME\"; exit 0\n";
    run(&g, script, 1024, Watch::default()).await.unwrap();
    let execs = g.0.lock().unwrap();
    let fix = execs.iter().find(|e| launched(&e.argv).is_some()).expect("the script was launched");
    assert_eq!(fix.stdin, script.as_bytes(), "the script, byte for byte, on stdin");
    assert!(fix.argv.iter().all(|a| !a.contains("touch")), "no part of it in the command: {:?}", fix.argv);
}

/// The probe itself, on this host: a bash named as the launcher names it, a busy child and a
/// sleeping one; then a second script that waits on a lock the first holds; then the kill.
#[test]
fn the_probe_reads_a_real_process_tree() {
    use std::process::{Command, Stdio};
    let launch = |tag: &str, script: &str| {
        let mut c = Command::new("bash")
            .args(["-c", LAUNCH, &format!("temper-fix-{tag}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        c.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
        c
    };
    let probe_of = |tag: &str, mode: &str| {
        let mut c = Command::new("bash").args(["-s", tag, "-", mode]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        use std::io::Write;
        c.stdin.take().unwrap().write_all(PROBE.as_bytes()).unwrap();
        String::from_utf8(c.wait_with_output().unwrap().stdout).unwrap()
    };
    let tag = format!("t{}", std::process::id());
    let lockfile = tempfile::NamedTempFile::new().unwrap();
    let lk = lockfile.path().display().to_string();
    let mut a = launch(&tag, &format!("flock {lk} sh -c 'while :; do :; done' & sleep 60 & wait"));
    std::thread::sleep(Duration::from_millis(700));
    let first = ProcSample::parse(&probe_of(&tag, "sample")).expect("a sample");
    std::thread::sleep(Duration::from_millis(500));
    let second = ProcSample::parse(&probe_of(&tag, "sample")).unwrap();
    assert_eq!(first.root, a.id(), "the launcher's bash is the root");
    assert!(second.procs >= 4, "bash, flock, its shell and sleep: {second:?}");
    assert!(second.ticks > first.ticks, "the busy child counts: {first:?} {second:?}");
    let waiter = format!("w{}", std::process::id());
    let mut b = launch(&waiter, &format!("flock {lk} true"));
    std::thread::sleep(Duration::from_millis(500));
    let waiting = ProcSample::parse(&probe_of(&waiter, "sample")).unwrap();
    let lock = waiting.lock.expect("the blocking wait is seen");
    assert!(lock.lock.starts_with("inode:") && lock.name == "flock", "{lock:?}");
    assert!(probe_of(&tag, "kill").contains("killed"));
    assert!(!a.wait().unwrap().success());
    b.wait().unwrap();
    assert_eq!(probe_of(&tag, "sample").trim(), "gone");
    // A script that execs another program at once is still found: the child of the command
    // that started it (here `timeout`, as over SSH), whose command line ends in the name.
    let execs = format!("x{}", std::process::id());
    let mut c =
        Command::new("timeout").args(["60", "bash", "-c", LAUNCH, &format!("temper-fix-{execs}")]).stdin(Stdio::piped()).spawn().unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(b"exec sleep 30\n").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let s = ProcSample::parse(&probe_of(&execs, "sample")).expect("found after its exec");
    assert_ne!(s.root, c.id(), "not timeout itself: its child");
    assert!(probe_of(&execs, "kill").contains("killed"));
    assert!(!c.wait().unwrap().success());
}
