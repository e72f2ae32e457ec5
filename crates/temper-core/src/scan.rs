//! OpenSCAP in the guest. Verdicts come from the XCCDF results XML, never from stdout.
use std::time::Duration;

use tokio::time::Instant;

use temper_scap::{Outcome, TestResult, parse_results_bytes};

use crate::ports::{Exec, ExecOutput, Guest, PortError};

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("oscap is not installed in the guest ({0})")]
    NoOscap(String),
    #[error("datastream {0} is missing or unreadable in the guest")]
    NoDatastream(String),
    #[error("oscap failed with exit code {code:?}: {stderr}")]
    Failed { code: Option<u32>, stderr: String },
    #[error("results file: {0}")]
    Results(#[from] temper_scap::ScapError),
    #[error("rule id `{0}` is not a valid XCCDF id")]
    BadRuleId(String),
    #[error("oscap stopped making progress {0} times and was killed each time (a known oscap probe deadlock)")]
    Stalled(u32),
    #[error("scan: {0}")]
    Port(#[from] PortError),
}

/// A profile scan of one datastream in the guest.
#[derive(Debug, Clone)]
pub struct Scanner {
    pub datastream: String,
    pub profile: String,
    pub timeout: Duration,
    /// Pass `--skip-valid` on rescans: the datastream was validated by the first full scan, and
    /// schema validation is a large part of each call's fixed cost (see `benches/rescan.rs`).
    pub skip_valid_rescans: bool,
    /// oscap's probes can deadlock (every thread parked, the scan never ends): a scan whose CPU
    /// time has not grown for this long is killed and run again, up to [`SCAN_TRIES`] times.
    pub stall_after: Duration,
    /// A tailoring document (`temper_scap::Tailoring::for_oscap`), written to the guest as data
    /// before each scan (a snapshot revert may have removed it) and passed with `--tailoring-file`.
    pub tailoring: Option<Vec<u8>>,
}

pub const SCAN_TRIES: u32 = 3;
/// The watchdog's first look, then its cadence: a short rescan never pays for it.
const WATCH_FROM: Duration = Duration::from_secs(30);
const WATCH_EVERY: Duration = Duration::from_secs(15);

/// One finished scan.
#[derive(Debug, Clone)]
pub struct Scan {
    pub results: TestResult,
    pub took: Duration,
    /// Runs of oscap killed by the watchdog before this one finished.
    pub stalls: u32,
}

impl Scan {
    pub fn outcome(&self, rule_id: &str) -> Option<Outcome> {
        self.results.result_of(rule_id)
    }
    /// Those of `rules` that fail or error in this scan: a regression when they passed before.
    pub fn failing(&self, rules: &[String]) -> Vec<String> {
        rules.iter().filter(|r| self.outcome(r).is_some_and(|o| matches!(o, Outcome::Fail | Outcome::Error))).cloned().collect()
    }
    /// Full ids with this outcome.
    pub fn with(&self, outcome: Outcome) -> Vec<String> {
        self.results.rule_results.iter().filter(|r| r.result == outcome).map(|r| r.idref.clone()).collect()
    }
}

const RESULTS: &str = "/var/tmp/temper-results.xml";
const TAILORING: &str = "/var/tmp/temper-tailoring.xml";
const MAX_RESULTS: usize = 128 * 1024 * 1024;

fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() < 512 && id.chars().all(|c| c.is_ascii_alphanumeric() || "_.-:".contains(c))
}

impl Scanner {
    pub fn new(datastream: impl Into<String>, profile: impl Into<String>) -> Self {
        Self {
            datastream: datastream.into(),
            profile: profile.into(),
            timeout: Duration::from_secs(1800),
            skip_valid_rescans: true,
            stall_after: Duration::from_secs(120),
            tailoring: None,
        }
    }

    /// Checks oscap and the datastream, so a missing one gets a clear error up front.
    pub async fn check(&self, guest: &dyn Guest) -> Result<String, ScanError> {
        let v = guest.exec(Exec::new(["oscap", "--version"]).timeout(Duration::from_secs(60))).await?;
        if !v.success() {
            return Err(ScanError::NoOscap(v.stderr_str().trim().to_string()));
        }
        let t = guest.exec(Exec::new(["test", "-r", &self.datastream])).await?;
        if !t.success() {
            return Err(ScanError::NoDatastream(self.datastream.clone()));
        }
        Ok(v.stdout_str().lines().next().unwrap_or_default().to_string())
    }

    /// Evaluates the profile, or only `rules` (one oscap call, `--rule` repeated).
    #[tracing::instrument(name = "oscap", skip_all, fields(rules = rules.len()))]
    pub async fn scan(&self, guest: &dyn Guest, rules: &[String]) -> Result<Scan, ScanError> {
        let start = Instant::now();
        let mut argv = vec!["oscap", "xccdf", "eval", "--profile", &self.profile];
        if let Some(xml) = &self.tailoring {
            let put = guest.exec(Exec::new(["dd", &format!("of={TAILORING}"), "status=none"]).stdin(xml.clone())).await?;
            if !put.success() {
                return Err(ScanError::Failed { code: put.exit_code, stderr: format!("writing {TAILORING}: {}", put.stderr_str()) });
            }
            argv.extend(["--tailoring-file", TAILORING]);
        }
        if self.skip_valid_rescans && !rules.is_empty() {
            argv.push("--skip-valid");
        }
        for r in rules {
            if !valid_id(r) {
                return Err(ScanError::BadRuleId(r.clone()));
            }
            argv.extend(["--rule", r.as_str()]);
        }
        argv.extend(["--results", RESULTS, &self.datastream]);
        guest.exec(Exec::new(["rm", "-f", RESULTS])).await?;
        let (out, stalls) = self.run_watched(guest, &argv).await?;
        // 0: all pass, 2: some rule failed; anything else is an error.
        match out.exit_code {
            Some(0) | Some(2) => {}
            Some(127) => return Err(ScanError::NoOscap(out.stderr_str())),
            code => {
                let mut stderr = out.stderr_str();
                if stderr.trim().is_empty() {
                    stderr = out.stdout_str();
                }
                return Err(ScanError::Failed { code, stderr: tail(&stderr, 2000) });
            }
        }
        let xml = guest
            .exec(
                Exec::new(["sh", "-c", "cat -- \"$1\" && rm -f -- \"$1\"", "sh", RESULTS])
                    .max_output(MAX_RESULTS)
                    .timeout(Duration::from_secs(120)),
            )
            .await?;
        if !xml.success() || xml.stdout_truncated {
            return Err(ScanError::Failed { code: xml.exit_code, stderr: format!("reading {RESULTS}: {}", xml.stderr_str()) });
        }
        let results = parse_results_bytes(&xml.stdout)?;
        Ok(Scan { results, took: start.elapsed(), stalls })
    }

    /// Runs oscap while a watchdog samples its CPU time; a stalled run is killed and tried again.
    async fn run_watched(&self, guest: &dyn Guest, argv: &[&str]) -> Result<(ExecOutput, u32), ScanError> {
        for stalls in 0..SCAN_TRIES {
            let exec = Exec::new(argv.iter().copied()).timeout(self.timeout).max_output(64 * 1024);
            tokio::select! {
                out = guest.exec(exec) => return Ok((out?, stalls)),
                () = self.watch(guest) => {
                    tracing::warn!(stalls = stalls + 1, "oscap made no progress for {:?}: killed, scanning again", self.stall_after);
                    guest.exec(Exec::new(["pkill", "-KILL", "-x", "oscap"])).await?;
                }
            }
        }
        Err(ScanError::Stalled(SCAN_TRIES))
    }

    /// Returns once oscap's CPU time (`ps -o times`, all its threads) has not grown for
    /// `stall_after`. A sample that cannot be read never counts as a stall.
    async fn watch(&self, guest: &dyn Guest) {
        tokio::time::sleep(WATCH_FROM).await;
        let (mut last, mut since) = (None, Instant::now());
        loop {
            let probe = Exec::new(["ps", "-C", "oscap", "-o", "times="]).as_user().timeout(Duration::from_secs(30));
            let cpu = guest.exec(probe).await.ok().and_then(|o| cpu_seconds(&o.stdout_str()));
            match cpu {
                Some(_) if cpu != last => (last, since) = (cpu, Instant::now()),
                Some(_) if since.elapsed() >= self.stall_after => return,
                _ => {}
            }
            tokio::time::sleep(WATCH_EVERY).await;
        }
    }
}

/// The summed CPU seconds in `ps -o times=` output; `None` when no oscap runs.
fn cpu_seconds(ps: &str) -> Option<u64> {
    let v: Vec<u64> = ps.split_whitespace().filter_map(|t| t.parse().ok()).collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

pub(crate) fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("…{}", &s[s.ceil_char_boundary(s.len() - max)..])
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use async_trait::async_trait;

    use super::*;
    use crate::ports::PortResult;

    const RESULT: &str = r#"<TestResult id="t"><rule-result idref="r"><result>pass</result></rule-result></TestResult>"#;

    /// A guest whose first `hung` oscap runs deadlock: they never end, and their CPU time
    /// stays put.
    struct Deadlocking {
        hung: u32,
        log: Mutex<Vec<String>>,
        calls: Mutex<Vec<(Vec<String>, Vec<u8>)>>,
        oscap_runs: Mutex<u32>,
    }

    #[async_trait]
    impl Guest for Deadlocking {
        async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
            self.log.lock().unwrap().push(exec.argv[0].clone());
            self.calls.lock().unwrap().push((exec.argv.clone(), exec.stdin.clone()));
            let ok = |stdout: &str| ExecOutput { exit_code: Some(0), stdout: stdout.as_bytes().to_vec(), ..Default::default() };
            match exec.argv[0].as_str() {
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
                "ps" => Ok(ok(" 12\n 3\n")),
                "sh" => Ok(ok(RESULT)),
                _ => Ok(ok("")),
            }
        }
        async fn reconnect(&self, _: Duration) -> PortResult<()> {
            Ok(())
        }
    }

    fn guest(hung: u32) -> Deadlocking {
        Deadlocking { hung, log: Mutex::default(), calls: Mutex::default(), oscap_runs: Mutex::default() }
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadlocked_oscap_is_killed_and_the_scan_run_again() {
        let g = guest(1);
        let scan = Scanner::new("ds.xml", "p").scan(&g, &[]).await.unwrap();
        assert_eq!(scan.stalls, 1);
        assert_eq!(scan.outcome("r"), Some(Outcome::Pass), "the second run's results are read");
        let log = g.log.lock().unwrap();
        assert_eq!(log.iter().filter(|c| *c == "oscap").count(), 2);
        assert_eq!(log.iter().filter(|c| *c == "pkill").count(), 1);
        assert!(log.iter().filter(|c| *c == "ps").count() >= 8, "sampled for 120 s every 15 s: {log:?}");
        assert!(scan.took >= Duration::from_secs(150), "30 s before the first sample, then 120 s without progress");
    }

    #[tokio::test(start_paused = true)]
    async fn a_scan_that_always_deadlocks_is_an_error_not_a_hang() {
        let g = guest(u32::MAX);
        let e = Scanner::new("ds.xml", "p").scan(&g, &[]).await.unwrap_err();
        assert!(matches!(e, ScanError::Stalled(SCAN_TRIES)), "{e}");
        assert_eq!(*g.oscap_runs.lock().unwrap(), SCAN_TRIES);
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
        assert_eq!(puts[0].0, ["dd", &format!("of={TAILORING}"), "status=none"]);
        assert_eq!(puts[0].1, b"<Tailoring id='t'/>", "the document is stdin, not an argument");
        for (argv, _) in calls.iter().filter(|(argv, _)| argv[0] == "oscap") {
            let at = argv.iter().position(|a| a == "--tailoring-file").expect("passed to oscap");
            assert_eq!(argv[at + 1], TAILORING);
        }
    }

    #[test]
    fn cpu_seconds_sums_every_oscap_and_knows_none() {
        assert_eq!(cpu_seconds(" 140\n  2\n"), Some(142));
        assert_eq!(cpu_seconds(""), None);
    }
}
