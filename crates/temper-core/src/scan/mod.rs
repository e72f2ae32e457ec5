//! OpenSCAP in the guest. Verdicts come from the XCCDF results XML, never from stdout.
//!
//! Nothing a scan leaves in the guest is shared: each run of oscap has its own results,
//! tailoring and pid files (`files.rs`), removed once read, and a stalled one is killed by its
//! own PID (`watch.rs`). Two runs can scan one guest at once. Named rules can go through the
//! OVAL engine instead (`engine.rs`).
mod engine;
mod files;
mod full;
mod packages;
mod trip;
mod watch;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use temper_journal::Engine;

use temper_scap::fswalk::Fallback;
use temper_scap::oval::{Evidence, OvalError, XccdfReason};
use temper_scap::{Outcome, TestResult, parse_results_bytes};
use tokio::time::Instant;

pub use engine::{MAX_WALK, MAX_WALK_ERRORS, OvalSide, TWO_STAGE_FROM, two_stages};
pub use files::{ScanFiles, random_tag};
pub use packages::DPKG_STATUS;
pub use trip::{TRIP, Trip};

use crate::ports::{Exec, Guest, PortError};
use temper_journal::{EventData, RunId};

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
    #[error(transparent)]
    Oval(#[from] OvalError),
    #[error("the walk of the guest's file system: {0}")]
    Walk(#[from] temper_scap::fswalk::WalkError),
    /// The guest's package list could not be read: the scan runs again with oscap's own probe.
    #[error("the guest's package list: {0}")]
    PackageList(String),
    #[error(
        "the OVAL engine reads the host's datastream, and the guest's differs (host sha256 {host}, guest {guest}): \
         install the same content on both, or scan with --engine xccdf"
    )]
    ContentMismatch { host: String, guest: String },
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
    /// A scan whose CPU time has not grown for this long is killed and run again, up to
    /// [`SCAN_TRIES`] times (see `watch.rs`).
    pub stall_after: Duration,
    /// Sooner, this long, when every thread of it is parked on a futex (oscap's deadlock).
    pub parked_after: Duration,
    /// A scan whose CPU time grows with no system time for this long (a probe spinning in user
    /// space) is killed and run again, as a stall is.
    pub spin_after: Duration,
    /// The watchdog's cadence; its first look comes after two of these.
    pub watch_every: Duration,
    /// A tailoring document (`temper_scap::Tailoring::for_oscap`), written to the guest as data
    /// before each scan (a snapshot revert may have removed it) and passed with `--tailoring-file`.
    pub tailoring: Option<Vec<u8>>,
    /// The guest folder for the scan's files.
    pub dir: String,
    /// In the names of this scanner's files: the run (`for_run`) or random.
    pub tag: String,
    /// Numbers this scanner's oscap runs (shared by its clones, so no two get one name).
    seq: Arc<AtomicU32>,
    /// Set: scans of named rules go through the OVAL engine ([`Engine::Oval`]).
    oval: Option<OvalSide>,
    /// Rules known to walk directory trees, where no OVAL content says ([`Self::tree_walkers`]).
    walkers: Option<Arc<[String]>>,
    /// OVAL engine: how many `oscap oval eval` a large set of rules is shared out to, side by
    /// side (the guest's vCPUs; oscap evaluates on one). See `engine.rs`.
    pub lanes: usize,
    /// OVAL engine: the tree-walking tests are judged on the host over one walk of the guest's
    /// file system (`temper_scap::fswalk`), so oscap no longer walks for them (`scan_walk`).
    pub walk: bool,
    /// OVAL engine: the package tests are judged on the host over the guest's dpkg status
    /// (`packages.rs`), so oscap's dpkginfo probe (about 2 s a run under TCG) never starts.
    pub packages: bool,
    /// What each tree walker took in the last full scan, to start the costliest first (`full.rs`).
    walk_costs: full::WalkCosts,
    /// The content's rule ids: a result for any other is dropped at this edge ([`Scan::unknown`]).
    known: Option<Arc<std::collections::HashSet<String>>>,
    /// Events the scans found worth a note (objects the walk left to oscap), for the run's
    /// journal: [`Self::take_notes`].
    notes: Arc<Mutex<Vec<EventData>>>,
}

pub const SCAN_TRIES: u32 = 3;

/// What a scan's one walk did: the entries it listed and how long that took, the tests judged
/// over it, and the walking objects left to oscap, each with why: when the document was cut
/// (`left`), and at run time, where the walk could not complete them (`fell_back`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WalkSummary {
    pub entries: usize,
    pub secs: f64,
    pub tests: usize,
    /// Walking objects that variables take values from, fed to them from the walk.
    pub fed: usize,
    pub left: Vec<(String, String)>,
    /// Objects the walk could not complete in this scan, each with why: oscap walked for them.
    pub fell_back: Vec<Fallback>,
    /// The rules scanned again with oscap walking, for those objects.
    pub to_oscap: Vec<String>,
}

/// An exit status that says oscap died of a crash (SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV), as
/// the shell reports it (128 + the signal): worth another run, unlike SIGKILL or SIGTERM.
fn crashed(code: u32) -> bool {
    matches!(code, 132 | 134 | 135 | 136 | 139)
}
/// A scan's timeout, unless set (`Scanner::timeout`, `scan_timeout_secs`).
pub const SCAN_TIMEOUT: Duration = Duration::from_secs(1800);
/// The OVAL engine's lanes, unless set (`Scanner::lanes`, `scan_lanes`).
pub const SCAN_LANES: usize = 2;
const MAX_RESULTS: usize = 128 * 1024 * 1024;

/// One finished scan.
#[derive(Debug, Clone)]
pub struct Scan {
    pub results: TestResult,
    pub took: Duration,
    /// Runs of oscap killed by the watchdog before this one finished.
    pub stalls: u32,
    pub engine: Engine,
    /// What the scanner found wrong, per failing rule (OVAL engine only).
    pub evidence: Vec<Evidence>,
    /// OVAL engine: the rules it left to `oscap xccdf eval`, and why.
    pub routed: Vec<(String, XccdfReason)>,
    /// The one walk, when the scan took one.
    pub walk: Option<WalkSummary>,
    /// OVAL engine: the package tests judged on the host, over the guest's dpkg status.
    pub packages: usize,
    /// Results the guest gave for rules the content does not have, dropped here: each id as a
    /// plain-character rendering (`?` for anything else, at most 80 characters), for the event.
    pub unknown: Vec<String>,
}

impl Scan {
    pub fn outcome(&self, rule_id: &str) -> Option<Outcome> {
        self.results.result_of(rule_id)
    }
    /// Those of `rules` that fail or error in this scan.
    pub fn failing(&self, rules: &[String]) -> Vec<String> {
        rules.iter().filter(|r| self.outcome(r).is_some_and(|o| matches!(o, Outcome::Fail | Outcome::Error))).cloned().collect()
    }
    /// Those of `rules` that do not read exactly `pass` in this scan: `fail`, `error`,
    /// `notapplicable`, `unknown`, `notchecked`, ... or no result at all. For rules that passed
    /// before, each is a regression: only `pass` proves a rule.
    pub fn not_passing(&self, rules: &[String]) -> Vec<String> {
        rules.iter().filter(|r| self.outcome(r) != Some(Outcome::Pass)).cloned().collect()
    }
    /// The evidence of a rule (full id), when the scan has some.
    pub fn evidence_of(&self, rule_id: &str) -> Option<&Evidence> {
        self.evidence.iter().find(|e| e.rule == rule_id)
    }
    /// Those of `rules` whose outcome differs in `other` (another engine's scan, say), each as
    /// `rule: this X, other Y`.
    pub fn differences(&self, other: &Scan, rules: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for r in rules {
            let (a, b) = (self.outcome(r), other.outcome(r));
            if a != b {
                out.push(format!("{r}: {} {a:?}, {} {b:?}", self.engine, other.engine));
            }
        }
        out
    }
    /// Full ids with this outcome.
    pub fn with(&self, outcome: Outcome) -> Vec<String> {
        self.results.rule_results.iter().filter(|r| r.result == outcome).map(|r| r.idref.clone()).collect()
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() < 512 && id.chars().all(|c| c.is_ascii_alphanumeric() || "_.-:".contains(c))
}

impl Scanner {
    pub fn new(datastream: impl Into<String>, profile: impl Into<String>) -> Self {
        Self {
            datastream: datastream.into(),
            profile: profile.into(),
            timeout: SCAN_TIMEOUT,
            skip_valid_rescans: true,
            stall_after: Duration::from_secs(120),
            parked_after: Duration::from_secs(30),
            spin_after: Duration::from_secs(300),
            watch_every: Duration::from_secs(15),
            tailoring: None,
            dir: "/var/tmp".into(),
            tag: files::random_tag(),
            seq: Arc::default(),
            oval: None,
            walkers: None,
            lanes: SCAN_LANES,
            walk: false,
            packages: true,
            walk_costs: full::WalkCosts::default(),
            known: None,
            notes: Arc::default(),
        }
    }

    /// The notes the scans made since the last call, oldest first (the run's journal writes
    /// them: `walk_fallback`).
    pub fn take_notes(&self) -> Vec<EventData> {
        std::mem::take(&mut *self.notes.lock().expect("notes lock"))
    }

    /// From now on a result whose rule is not one of `ids` (the content's) is dropped: the guest
    /// writes the results document, and an id it makes up must reach no report, plan or prompt.
    pub fn with_known_rules(mut self, ids: impl IntoIterator<Item = String>) -> Self {
        self.known = Some(Arc::new(ids.into_iter().collect()));
        self
    }

    /// Drops the results of rules not in the content; those the scan selected are named in
    /// [`Scan::unknown`] (a not-selected one is dropped silently: the loop never reads it).
    fn drop_unknown(&self, scan: &mut Scan) {
        let Some(known) = &self.known else { return };
        let mut unknown = Vec::new();
        scan.results.rule_results.retain(|r| {
            let keep = known.contains(&r.idref);
            if !keep && r.result != Outcome::NotSelected {
                unknown.push(r.idref.chars().take(80).map(|c| if valid_id(&c.to_string()) { c } else { '?' }).collect());
            }
            keep
        });
        scan.evidence.retain(|e| known.contains(&e.rule));
        if !unknown.is_empty() {
            tracing::warn!(count = unknown.len(), "the guest's results name rules the content does not have: dropped");
        }
        scan.unknown = unknown;
    }

    /// Scans of named rules go through the OVAL engine from now on.
    pub fn with_oval(mut self, side: OvalSide) -> Self {
        self.oval = Some(side);
        self
    }

    /// How many `oscap oval eval` a large set is shared out to ([`Self::lanes`]).
    pub fn with_lanes(mut self, lanes: usize) -> Self {
        self.lanes = lanes;
        self
    }

    /// Names the rules whose checks walk a directory tree, instead of the OVAL content.
    pub fn with_tree_walkers(mut self, rules: Vec<String>) -> Self {
        self.walkers = Some(rules.into());
        self
    }

    /// The rules of `rules` whose check walks a directory tree with no depth limit: minutes each
    /// under TCG. Known from the OVAL content (or [`Self::with_tree_walkers`]); none otherwise.
    pub fn tree_walkers(&self, rules: &[String]) -> Vec<String> {
        match (&self.walkers, &self.oval) {
            (Some(w), _) => rules.iter().filter(|r| w.contains(r)).cloned().collect(),
            (None, Some(side)) => side.engine.tree_walkers(&side.benchmark, rules),
            (None, None) => Vec::new(),
        }
    }

    /// The rules of `rules` that add no `oscap xccdf eval` of their own to a scan of named rules:
    /// with the OVAL engine, those it evaluates itself; with the xccdf engine, all of them.
    pub fn without_own_xccdf(&self, rules: &[String]) -> Vec<String> {
        let Some(side) = &self.oval else { return rules.to_vec() };
        match side.engine.plan(&side.benchmark, rules) {
            Ok(plan) => {
                let routed: Vec<&str> = plan.xccdf_rules().into_iter().map(|(id, _)| id).collect();
                rules.iter().filter(|r| !routed.contains(&r.as_str())).cloned().collect()
            }
            // A set that cannot be planned fails its scan, with the error: nothing to leave out.
            Err(_) => rules.to_vec(),
        }
    }

    /// The tree walkers of `rules` that still cost a walk of their own in each scan: all of
    /// them, unless the one walk is on ([`Self::walk`]); then those with an object it leaves to
    /// oscap. The loop checks these at the final scan only.
    pub fn costly_walkers(&self, rules: &[String]) -> Vec<String> {
        let walkers = self.tree_walkers(rules);
        let Some(side) = self.oval.as_ref().filter(|_| self.walk) else { return walkers };
        let left = |r: &String| {
            side.engine
                .plan_walked(&side.benchmark, std::slice::from_ref(r))
                .map_or(true, |p| p.walk.as_ref().is_none_or(|w| !w.left.is_empty()))
        };
        walkers.into_iter().filter(left).collect()
    }

    /// The rules of `rules` one OVAL rescan takes evidence for cheaply: no costly tree walkers,
    /// none sent to an `oscap xccdf eval` of their own (it gives no evidence). None with the
    /// xccdf engine.
    pub fn cheap_evidence(&self, rules: &[String]) -> Vec<String> {
        if self.oval.is_none() {
            return Vec::new();
        }
        let walkers = self.costly_walkers(rules);
        self.without_own_xccdf(&rules.iter().filter(|r| !walkers.contains(r)).cloned().collect::<Vec<_>>())
    }

    pub fn engine(&self) -> Engine {
        if self.oval.is_some() { Engine::Oval } else { Engine::Xccdf }
    }

    /// Names this scanner's files after run `run` (and a random part: two databases can each
    /// have a run of that number on one guest).
    pub fn for_run(mut self, run: RunId) -> Self {
        self.tag = format!("r{run}-{}", &files::random_tag()[..8]);
        self
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
        if let Some(side) = &self.oval {
            let sum = guest.exec(Exec::new(["sha256sum", "--", &self.datastream]).timeout(Duration::from_secs(120))).await?;
            let guest_sha = sum.stdout_str().split_whitespace().next().unwrap_or_default().to_string();
            let host = side.engine.content().sha256_hex();
            if !sum.success() || guest_sha != host {
                return Err(ScanError::ContentMismatch { host, guest: if sum.success() { guest_sha } else { sum.stderr_str() } });
            }
        }
        Ok(v.stdout_str().lines().next().unwrap_or_default().to_string())
    }

    /// Evaluates the profile, or only `rules` (with the OVAL engine when it is set, else one
    /// `oscap xccdf eval` with `--rule` repeated). With the OVAL engine the profile's tree walkers
    /// go beside the profile's `oscap xccdf eval` (`full.rs`). A run the watchdog kills is run again, with
    /// files of its own.
    #[tracing::instrument(name = "oscap", skip_all, fields(rules = rules.len(), engine))]
    pub async fn scan(&self, guest: &dyn Guest, rules: &[String]) -> Result<Scan, ScanError> {
        if let Some(bad) = rules.iter().find(|r| !valid_id(r)) {
            return Err(ScanError::BadRuleId(bad.clone()));
        }
        let start = Instant::now();
        let split = if rules.is_empty() { self.split_from_full() } else { Vec::new() };
        let mut scan = match &self.oval {
            Some(side) if !rules.is_empty() => {
                tracing::Span::current().record("engine", "oval");
                let o = self.scan_oval(guest, side, rules).await?;
                let took = start.elapsed();
                Scan {
                    results: o.results,
                    took,
                    stalls: o.stalls,
                    engine: Engine::Oval,
                    evidence: o.evidence,
                    routed: o.routed,
                    walk: o.walk,
                    packages: o.packages,
                    unknown: Vec::new(),
                }
            }
            Some(side) if !split.is_empty() => {
                tracing::Span::current().record("engine", "split");
                self.full(guest, side, &split).await?
            }
            _ => {
                tracing::Span::current().record("engine", "xccdf");
                let x = self.xccdf(guest, rules, &[]).await?;
                Scan {
                    results: x.results,
                    took: start.elapsed(),
                    stalls: x.stalls,
                    engine: Engine::Xccdf,
                    evidence: x.evidence,
                    routed: Vec::new(),
                    walk: None,
                    packages: 0,
                    unknown: Vec::new(),
                }
            }
        };
        self.drop_unknown(&mut scan);
        if let Some(w) = scan.walk.as_ref().filter(|w| !w.fell_back.is_empty()) {
            let note = EventData::WalkFallback { objects: w.fell_back.clone(), rules: w.to_oscap.clone() };
            self.notes.lock().expect("notes lock").push(note);
        }
        Ok(scan)
    }

    /// `oscap xccdf eval` of the profile, or of `rules`, leaving out `skip`; with the stalls it
    /// took. With the OVAL engine, a profile's eval also writes its OVAL results
    /// (`--oval-results`), for the evidence of each rule it finds failing.
    async fn xccdf(&self, guest: &dyn Guest, rules: &[String], skip: &[String]) -> Result<XccdfScan, ScanError> {
        let side = self.oval.as_ref().filter(|_| rules.is_empty());
        let (bytes, stalls) = self
            .run(guest, |f| {
                let mut args = vec!["xccdf".to_string(), "eval".into(), "--profile".into(), self.profile.clone()];
                let mut inputs = Vec::new();
                if let Some(xml) = &self.tailoring {
                    inputs.push((f.tailoring.clone(), xml.clone()));
                    args.extend(["--tailoring-file".to_string(), f.tailoring.clone()]);
                }
                if self.skip_valid_rescans && !rules.is_empty() {
                    args.push("--skip-valid".into());
                }
                for r in rules {
                    args.extend(["--rule".to_string(), r.clone()]);
                }
                for r in skip {
                    args.extend(["--skip-rule".to_string(), r.clone()]);
                }
                if side.is_some() {
                    args.push("--oval-results".into());
                }
                args.extend(["--results".to_string(), f.results.clone(), self.datastream.clone()]);
                Call { args, inputs, workdir: side.map(|_| f.workdir.clone()) }
            })
            .await?;
        let (results, documents) = trip::split_output(&bytes);
        let results = parse_results_bytes(results)?;
        let evidence = side.map(|s| s.profile_evidence(&results, &documents)).unwrap_or_default();
        Ok(XccdfScan { results, stalls, evidence })
    }

    /// Runs the oscap `call` makes for a run's files until one is neither killed by the watchdog,
    /// nor crashed, nor cut off by a dropped SSH session (then the session is made again and the
    /// orphaned oscap killed by its pid file), up to [`SCAN_TRIES`] runs; returns its results
    /// document and how many runs were killed.
    async fn run(&self, guest: &dyn Guest, call: impl Fn(&ScanFiles) -> Call) -> Result<(Vec<u8>, u32), ScanError> {
        let mut stalls = 0;
        for tried in 1..=SCAN_TRIES {
            let files = ScanFiles::new(&self.dir, &self.tag, self.seq.fetch_add(1, Ordering::Relaxed) + 1);
            match self.run_once(guest, call(&files), &files).await {
                Ok(Ok(results)) => return Ok((results, stalls)),
                Ok(Err(stall)) => {
                    stalls += 1;
                    tracing::warn!(stalls, "oscap made no progress for {:?} ({}): killed, scanning again", stall.idle, stall.kind)
                }
                Err(ScanError::Failed { code: Some(code), stderr }) if crashed(code) && tried < SCAN_TRIES => {
                    tracing::warn!(code, %stderr, "oscap crashed (signal {}): scanning again", code - 128);
                    self.remove(guest, &files).await;
                }
                Err(ScanError::Port(PortError::Dropped(why))) if tried < SCAN_TRIES => {
                    tracing::warn!(%why, "the SSH session dropped during oscap: reconnecting, scanning again");
                    guest.reconnect(crate::ports::SSH_READY).await?;
                    if let Err(e) = self.kill(guest, &files).await {
                        tracing::debug!(error = %e, "killing the cut-off oscap");
                    }
                    self.remove(guest, &files).await;
                }
                Err(e) => {
                    self.remove(guest, &files).await;
                    return Err(e);
                }
            }
        }
        Err(ScanError::Stalled(stalls))
    }

    /// One run of oscap with its own files, in one round trip (`trip.rs`); the watchdog's
    /// [`watch::Stall`] when it killed the run.
    async fn run_once(&self, guest: &dyn Guest, call: Call, files: &ScanFiles) -> Result<Result<Vec<u8>, watch::Stall>, ScanError> {
        let trip =
            Trip { pid: files.pid.clone(), results: files.results.clone(), workdir: call.workdir, inputs: call.inputs, args: call.args };
        let (argv, stdin) = trip.argv_and_stdin();
        let exec = Exec::new(argv).stdin(stdin).timeout(self.timeout).max_output(MAX_RESULTS);
        let out = tokio::select! {
            out = guest.exec(exec) => out?,
            stall = self.watch(guest, files) => {
                self.kill(guest, files).await?;
                self.remove(guest, files).await;
                return Ok(Err(stall));
            }
        };
        // 0: all pass, 2: some rule failed; anything else is an error.
        match out.exit_code {
            Some(0) | Some(2) if !out.stdout_truncated => Ok(Ok(out.stdout)),
            Some(0) | Some(2) => Err(ScanError::Failed {
                code: out.exit_code,
                stderr: format!("the results of {} are over {MAX_RESULTS} bytes", files.results),
            }),
            Some(127) => Err(ScanError::NoOscap(out.stderr_str())),
            code => Err(ScanError::Failed { code, stderr: tail(&out.stderr_str(), 2000) }),
        }
    }

    /// Removes a run's files and folder (best effort: after an error the guest may be gone).
    async fn remove(&self, guest: &dyn Guest, files: &ScanFiles) {
        let mut argv = vec!["rm", "-rf", "--"];
        argv.extend(files.all());
        if let Err(e) = guest.exec(Exec::new(argv)).await {
            tracing::debug!(error = %e, "removing the scan's files");
        }
    }
}

/// One oscap command: its arguments after `oscap`, and the files it reads, each written to the
/// guest as data (on stdin, see `trip.rs`); the folder it runs in, when it writes documents there.
struct Call {
    args: Vec<String>,
    inputs: Vec<(String, Vec<u8>)>,
    workdir: Option<String>,
}

/// What one `oscap xccdf eval` gave.
struct XccdfScan {
    results: TestResult,
    stalls: u32,
    /// Of the rules failing in a profile's eval with the OVAL engine (none otherwise).
    evidence: Vec<Evidence>,
}

pub(crate) fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("…{}", &s[s.ceil_char_boundary(s.len() - max)..])
}

#[cfg(test)]
mod tests;
