//! A disk judged on the host: every rule of the profile, by the host's content and scanner.
//!
//! One OVAL document is cut for all the profile's rules and their platforms (the OVAL engine's
//! [`OvalPlan`]), evaluated by the host's `oscap-chroot` over the disk's copy. Then each test is
//! taken as the disk can answer it ([`crate::probe`]): oscap's result where its probe read the
//! copy, temper's own probe where oscap has none offline (dpkg's status), and *open* where only
//! the running system (or nothing temper implements) can answer. A rule is judged offline when
//! its result (its check, through the platforms that make it applicable) is the same whatever
//! its open tests would say, true or false: `AND` with a failing file check fails whatever a
//! sysctl's running value is. Otherwise it is judged live only, with what it needs.
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use temper_journal::ScanResult;
use temper_journal::offline::{DiskJudgement, LiveNeed, NotJudged, OfflineBasis, OfflineTimes, OfflineVerdict, RuleVerdict};
use temper_scap::oval::{Criterion, DefinitionResult, Evidence, OvalContent, OvalPlan, OvalReport, OvalResults, RuleOutcome};
use temper_scap::{Benchmark, Outcome};
use tokio::process::Command;

use crate::disk::{self, DiskSource, Tree};
use crate::error::{OfflineError, OfflineResult};
use crate::probe::{self, HostProbe, Reach};
use temper_scap::dpkg::Dpkg;

/// Open tests a rule may hang on before it is left to the running system (2^N evaluations).
const MAX_OPEN: usize = 12;
/// The host's oscap over a disk takes seconds; this is the cap.
const SCAN_TIMEOUT: Duration = Duration::from_secs(1800);

/// The host's content and profile, ready to judge disks.
pub struct Judge<'a> {
    pub content: &'a OvalContent,
    /// The profile (and tailoring) as the run resolved it.
    pub benchmark: &'a Benchmark,
    /// Where the private working folder goes (`$TMPDIR` when `None`): it holds the disk's files.
    pub scratch: Option<PathBuf>,
}

/// A disk judged, with what the CLI and the bench print.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    pub judgement: DiskJudgement,
    pub tree: TreeStats,
    /// Installed packages in the copy's dpkg status.
    pub packages: usize,
    /// Tests of the document by how the disk answers them.
    pub tests: TestCounts,
    /// Time of `qemu-img convert` within the extraction.
    pub raw_secs: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TreeStats {
    pub entries: u64,
    pub bytes: u64,
    pub special: u64,
    pub skipped: Vec<disk::Skipped>,
    pub partition: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TestCounts {
    pub disk: usize,
    pub host: usize,
    pub live: usize,
    pub unsupported: usize,
}

/// Why a test is open.
#[derive(Debug, Clone)]
enum Open {
    Live(BTreeSet<LiveNeed>),
    Unsupported,
    Incomplete,
}

impl Judge<'_> {
    /// Reads `source` and judges every rule the profile selects.
    pub async fn judge(&self, source: &DiskSource) -> OfflineResult<Judged> {
        let started = Instant::now();
        let scratch = self.scratch.clone().unwrap_or_else(std::env::temp_dir);
        let work = tempfile::Builder::new().prefix("temper-offline-").tempdir_in(&scratch).map_err(OfflineError::io(&scratch))?;
        let disk = disk::read(source, work.path()).await?;
        let extract_secs = started.elapsed().as_secs_f64();
        let scan_started = Instant::now();
        let mut judged = self.judge_tree(&disk.tree, work.path()).await?;
        judged.judgement.source = source.to_string();
        judged.judgement.times =
            OfflineTimes { extract_secs, scan_secs: scan_started.elapsed().as_secs_f64(), total_secs: started.elapsed().as_secs_f64() };
        judged.raw_secs = disk.raw.as_secs_f64();
        judged.tree.partition = disk.partition;
        let root = disk.tree.root.clone();
        // The copy holds the guest's files, set-user-ID ones included: gone before returning.
        tokio::task::spawn_blocking(move || {
            let _ = std::fs::remove_dir_all(&root);
            drop(work);
        })
        .await
        .map_err(|e| OfflineError::Scan(e.to_string()))?;
        Ok(judged)
    }

    /// Judges a copy already on the host (`tree.root`), with `work` for the scan's files.
    pub async fn judge_tree(&self, tree: &Tree, work: &Path) -> OfflineResult<Judged> {
        let rules: Vec<String> = self.benchmark.selected_rules.iter().map(|r| r.id.clone()).collect();
        let plan = OvalPlan::build(self.content, self.benchmark, &rules)?;
        let Some(document) = plan.document.as_deref() else {
            let verdicts = rules.iter().map(|r| verdict_without_document(&plan, r)).collect();
            return Ok(self.judged(DiskJudgement { verdicts, ..DiskJudgement::default() }, tree, 0, TestCounts::default()));
        };
        let xml = scan(&tree.root, work, document, plan.variables.as_deref()).await?;
        let report = OvalReport::parse(&xml).map_err(|e| OfflineError::Scan(format!("its results do not read: {e}")))?;
        let elements = temper_scap::oval::document_elements(document)?;
        let walkers: HashSet<&str> = elements.iter().filter(|e| e.walks).map(|e| e.id.as_str()).collect();
        let dpkg = Dpkg::read(&tree.root).map_err(OfflineError::io(tree.root.join("var/lib/dpkg/status")))?;

        let mut counts = TestCounts::default();
        let mut host: HashMap<String, (DefinitionResult, Vec<temper_scap::oval::CollectedItem>)> = HashMap::new();
        let mut open: HashMap<String, Open> = HashMap::new();
        let by_id: HashMap<&str, &temper_scap::oval::DocElement> = elements.iter().map(|e| (e.id.as_str(), e)).collect();
        for (test, reach) in probe::classify(&elements) {
            let walks = by_id.get(test.as_str()).is_some_and(|t| t.refs.iter().any(|r| walkers.contains(r.as_str())));
            match reach {
                Reach::Disk if walks && !tree.complete() => {
                    open.insert(test, Open::Incomplete);
                }
                Reach::Disk => counts.disk += 1,
                Reach::Host(HostProbe::Dpkg) => {
                    match report.test(&test).ok_or_else(|| format!("{test} is not in oscap's results")).and_then(|t| dpkg.judge(&t)) {
                        Ok(r) => {
                            counts.host += 1;
                            host.insert(test, r);
                        }
                        Err(why) => {
                            tracing::debug!(%test, %why, "left open");
                            counts.unsupported += 1;
                            open.insert(test, Open::Unsupported);
                        }
                    }
                }
                Reach::Live(needs) => {
                    counts.live += 1;
                    open.insert(test, Open::Live(needs));
                }
                Reach::Unsupported(why) => {
                    tracing::debug!(%test, %why, "left open");
                    counts.unsupported += 1;
                    open.insert(test, Open::Unsupported);
                }
            }
        }

        let base = report.results();
        let trees: HashMap<String, Criterion> =
            base.definitions.keys().filter_map(|d| report.criteria(d).map(|c| (d.clone(), c))).collect();
        let ctx = JudgeInputs { plan: &plan, trees: &trees, host: &host, open: &open };
        let mut work_results = base.clone();
        let mut verdicts = Vec::with_capacity(rules.len());
        let mut failing = Vec::new();
        for rule in &rules {
            let (v, outcome) = ctx.verdict(rule, &mut work_results);
            if let Some(o) = outcome.filter(|o| o.outcome == Outcome::Fail) {
                failing.push(o);
            }
            verdicts.push(RuleVerdict { rule: rule.clone(), verdict: v });
        }
        let evidence = ctx.evidence(&report, &failing);
        let judgement = DiskJudgement { source: String::new(), verdicts, evidence, times: OfflineTimes::default() };
        Ok(self.judged(judgement, tree, dpkg.len(), counts))
    }

    fn judged(&self, judgement: DiskJudgement, tree: &Tree, packages: usize, tests: TestCounts) -> Judged {
        let tree =
            TreeStats { entries: tree.entries, bytes: tree.bytes, special: tree.special, skipped: tree.skipped.clone(), partition: 0 };
        Judged { judgement, tree, packages, tests, raw_secs: 0.0 }
    }
}

fn verdict_without_document(plan: &OvalPlan, rule: &str) -> RuleVerdict {
    let results = OvalResults::default();
    let verdict = match plan.outcome(rule, &results) {
        Some(o) => offline(o.outcome, OfflineBasis::Disk),
        None => OfflineVerdict::NotJudged { why: NotJudged::XccdfPath, live: None },
    };
    RuleVerdict { rule: rule.to_string(), verdict }
}

/// A decided outcome as a verdict; `error`, `unknown` and `notchecked` are not judged.
fn offline(o: Outcome, basis: OfflineBasis) -> OfflineVerdict {
    match o {
        Outcome::Error => OfflineVerdict::NotJudged { why: NotJudged::Error, live: None },
        Outcome::Unknown | Outcome::NotChecked => OfflineVerdict::NotJudged { why: NotJudged::Unknown, live: None },
        o => OfflineVerdict::Offline { result: ScanResult::from(o), basis },
    }
}

/// What the per-rule judgement reads.
struct JudgeInputs<'a> {
    plan: &'a OvalPlan,
    trees: &'a HashMap<String, Criterion>,
    host: &'a HashMap<String, (DefinitionResult, Vec<temper_scap::oval::CollectedItem>)>,
    open: &'a HashMap<String, Open>,
}

impl JudgeInputs<'_> {
    /// One rule's verdict, and its outcome when the disk decides it.
    fn verdict(&self, rule: &str, results: &mut OvalResults) -> (OfflineVerdict, Option<RuleOutcome>) {
        let deps = self.plan.depends_on(rule);
        if deps.is_empty() {
            return match self.plan.outcome(rule, results) {
                Some(o) => (offline(o.outcome, OfflineBasis::Disk), Some(o)),
                None => (OfflineVerdict::NotJudged { why: NotJudged::XccdfPath, live: None }, None),
            };
        }
        let mut tests = Vec::new();
        for d in &deps {
            if let Some(t) = self.trees.get(d) {
                tests_of(t, &mut tests);
            }
        }
        let opens: Vec<&String> = tests.iter().filter(|t| self.open.contains_key(*t)).collect();
        let uses_host = tests.iter().any(|t| self.host.contains_key(t));
        let basis = if uses_host { OfflineBasis::Host } else { OfflineBasis::Disk };
        if opens.len() > MAX_OPEN {
            return (self.left_open(&opens), None);
        }
        let mut seen: Option<RuleOutcome> = None;
        for mask in 0u32..(1u32 << opens.len()) {
            let over = |t: &str| -> Option<DefinitionResult> {
                if let Some((r, _)) = self.host.get(t) {
                    return Some(*r);
                }
                let i = opens.iter().position(|o| o.as_str() == t)?;
                Some(if mask & (1 << i) != 0 { DefinitionResult::True } else { DefinitionResult::False })
            };
            for d in &deps {
                if let Some(t) = self.trees.get(d) {
                    results.definitions.insert(d.clone(), t.recompute(&over));
                }
            }
            let Some(o) = self.plan.outcome(rule, results) else {
                return (OfflineVerdict::NotJudged { why: NotJudged::XccdfPath, live: None }, None);
            };
            match &seen {
                Some(s) if s.outcome != o.outcome => return (self.left_open(&opens), None),
                Some(_) => {}
                None => seen = Some(o),
            }
        }
        let o = seen.expect("at least one evaluation");
        (offline(o.outcome, basis), Some(o))
    }

    /// The verdict of a rule its open tests decide.
    fn left_open(&self, opens: &[&String]) -> OfflineVerdict {
        let mut needs = BTreeSet::new();
        let mut incomplete = false;
        for t in opens {
            match self.open.get(*t) {
                Some(Open::Live(n)) => needs.extend(n.iter().copied()),
                Some(Open::Incomplete) => incomplete = true,
                _ => {}
            }
        }
        match (needs.is_empty(), incomplete) {
            (false, _) => OfflineVerdict::LiveOnly { needs: needs.into_iter().collect(), live: None },
            (true, true) => OfflineVerdict::NotJudged { why: NotJudged::Incomplete, live: None },
            (true, false) => OfflineVerdict::NotJudged { why: NotJudged::Unsupported, live: None },
        }
    }

    /// The evidence of the rules the disk fails: oscap's over the copy, with temper's probes'
    /// results and items in, and nothing of the open tests' items (what oscap's probes found
    /// there is the host's state, not the disk's).
    fn evidence(&self, report: &OvalReport, failing: &[RuleOutcome]) -> Vec<Evidence> {
        let mut out = self.plan.evidence(report, failing);
        let over =
            |t: &str| self.host.get(t).map(|(r, _)| *r).or_else(|| self.open.contains_key(t).then_some(DefinitionResult::NotEvaluated));
        for e in &mut out {
            if let Some(c) = e.criteria.as_ref() {
                e.result = c.recompute(&over);
                e.criteria = Some(c.rejudged(&over));
            }
            for t in &mut e.tests {
                if let Some((r, items)) = self.host.get(&t.id) {
                    t.result = *r;
                    t.flag = Some(temper_scap::oval::Flag::found(items.len()));
                    t.items_total = items.len();
                    t.items = items.clone();
                } else if self.open.contains_key(&t.id) {
                    t.result = DefinitionResult::NotEvaluated;
                    t.flag = None;
                    t.items.clear();
                    t.items_total = 0;
                    t.variables.clear();
                }
            }
        }
        out
    }
}

/// The tests a criteria tree names.
fn tests_of(c: &Criterion, out: &mut Vec<String>) {
    match c {
        Criterion::Test { test, .. } => {
            if !out.contains(test) {
                out.push(test.clone());
            }
        }
        Criterion::Criteria { children, .. } => children.iter().for_each(|c| tests_of(c, out)),
    }
}

/// The host's `oscap-chroot ROOT oval eval` of `document`: its results document.
async fn scan(root: &Path, work: &Path, document: &[u8], variables: Option<&[u8]>) -> OfflineResult<Vec<u8>> {
    let io = |p: &Path| OfflineError::io(p.to_path_buf());
    let (doc, vars, results) = (work.join("offline-oval.xml"), work.join("offline-variables.xml"), work.join("offline-results.xml"));
    tokio::fs::write(&doc, document).await.map_err(io(&doc))?;
    let mut cmd = Command::new("oscap-chroot");
    cmd.arg(root).args(["oval", "eval", "--skip-valid"]);
    if let Some(v) = variables {
        tokio::fs::write(&vars, v).await.map_err(io(&vars))?;
        cmd.arg("--variables").arg(&vars);
    }
    cmd.arg("--results").arg(&results).arg(&doc);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).kill_on_drop(true);
    let child = cmd.spawn().map_err(|source| OfflineError::Spawn { tool: "oscap-chroot", source })?;
    let out = tokio::time::timeout(SCAN_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| OfflineError::Scan(format!("no result after {} s", SCAN_TIMEOUT.as_secs())))?
        .map_err(|e| OfflineError::Scan(e.to_string()))?;
    let xml = match tokio::fs::read(&results).await {
        Ok(x) => x,
        Err(e) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("; ");
            return Err(OfflineError::Scan(format!("{} (exit {:?}): {tail}", e, out.status.code())));
        }
    };
    Ok(xml)
}
