//! OpenSCAP in the guest. Verdicts come from the XCCDF results XML, never from stdout.
use std::time::{Duration, Instant};

use temper_scap::{Outcome, TestResult, parse_results_bytes};

use crate::ports::{Exec, Guest, PortError};

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
}

/// One finished scan.
#[derive(Debug, Clone)]
pub struct Scan {
    pub results: TestResult,
    pub took: Duration,
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
        let out = guest.exec(Exec::new(argv).timeout(self.timeout).max_output(64 * 1024)).await?;
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
        Ok(Scan { results, took: start.elapsed() })
    }
}

pub(crate) fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("…{}", &s[s.ceil_char_boundary(s.len() - max)..])
}
