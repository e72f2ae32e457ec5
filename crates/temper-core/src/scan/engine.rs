//! Which evaluator a scan of named rules uses. `xccdf`: one `oscap xccdf eval --rule ...` that
//! loads the whole datastream. `oval`: the OVAL engine (`temper_scap::oval`) cuts one small
//! document for those rules on the host, and the guest runs `oscap oval eval` on it; rules whose
//! result is not one OVAL definition still go to `oscap xccdf eval`, in the same scan. The OVAL
//! results also give each failing rule its evidence.
//!
//! A full profile scan (no rules named) is an `oscap xccdf eval`: its results carry the score
//! and every rule's `notselected`. With the OVAL engine the tree walkers go beside it
//! (`full.rs`). A large set of rules goes in two stages (platforms
//! first), as oscap skips the checks of rules that are not applicable.
use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::join_all;

use temper_scap::oval::{CutFor, Evidence, OvalEngine, OvalEval, OvalPlan, OvalReport, RuleOutcome, Stage, TestResults, XccdfReason};
use temper_scap::{Benchmark, Outcome, RuleResult, TestResult};

use temper_scap::fswalk::{COLLECT, Fallback, Filled, Gap, GapAt, Listing};

use super::packages::PackageList;
use super::{Call, ScanError, Scanner, WalkSummary, tail};
use crate::ports::{Exec, Guest};

/// Largest walk read back: about 80 bytes an entry, six million entries (a host with build
/// trees walked 699,437 entries here). Past it, or past `fswalk::MAX_ENTRIES` entries, the walk
/// is not used and its objects go to oscap (docs/scan-engines.md, "Bounds").
pub const MAX_WALK: usize = 512 * 1024 * 1024;

/// Largest stderr of the walk read back (`find`'s errors, a line each): past it, the walk is
/// not used.
pub const MAX_WALK_ERRORS: usize = 1024 * 1024;

/// The OVAL engine's host side for one scanner: the datastream's index (and its plan cache)
/// and the Benchmark as the run's profile and tailoring resolve it.
#[derive(Debug, Clone)]
pub struct OvalSide {
    pub engine: Arc<OvalEngine>,
    pub benchmark: Arc<Benchmark>,
}

impl OvalSide {
    /// The evidence of each rule failing in a profile's `oscap xccdf eval`, from the OVAL results
    /// `documents` it wrote (by file name): their results and items, read against the host's
    /// definitions. A document that does not parse gives none: evidence informs, the results
    /// judge.
    pub(super) fn profile_evidence(&self, results: &TestResult, documents: &[(String, &[u8])]) -> Vec<Evidence> {
        let failing: Vec<(String, Outcome)> = results
            .rule_results
            .iter()
            .filter(|r| matches!(r.result, Outcome::Fail | Outcome::Error))
            .map(|r| (r.idref.clone(), r.result))
            .collect();
        let mut reports = Vec::new();
        for (name, bytes) in documents {
            match OvalReport::from_guest(bytes) {
                Ok(r) => reports.push((name.clone(), r)),
                Err(e) => {
                    tracing::warn!(name, error = %e, "an OVAL results document of the profile's eval does not parse: no evidence from it")
                }
            }
        }
        self.engine.profile_evidence(&self.benchmark, &reports, &failing)
    }
}

/// The one walk: its listing and seconds, or why it cannot be used (then its objects go to
/// oscap).
type Walked = Result<(Listing, f64), GapAt>;

/// The one walk, started or to start.
type Walking<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Walked> + Send + 'a>>;

/// One `oscap oval eval`: its results document and the stalls it took.
type EvalRun = Result<(Vec<u8>, u32), ScanError>;
/// Each plan's `oscap oval eval` (its results and stalls), the walk, and how the feeds' objects
/// were filled from it (how many, and those that fell to oscap).
type Evaluated = (Vec<EvalRun>, Option<Walked>, Filled);

/// What the OVAL path of one scan gave.
pub(super) struct OvalScan {
    pub results: TestResult,
    pub evidence: Vec<Evidence>,
    pub stalls: u32,
    pub routed: Vec<(String, XccdfReason)>,
    pub walk: Option<WalkSummary>,
    /// Package tests judged on the host over the guest's dpkg status (`packages.rs`).
    pub packages: usize,
}

/// From this many rules a scan goes in two stages: the platforms first, so the checks of rules
/// that are not applicable never run (as under `oscap xccdf eval`); a one-rule rescan does not
/// pay for the extra run. A set with a rule whose check walks the whole tree goes in two stages
/// however small ([`two_stages`]).
pub const TWO_STAGE_FROM: usize = 20;

/// Whether `rules` go in two stages, platforms first: a large set, or one with a tree walker
/// (minutes under TCG: `audit_rules_privileged_commands` at the baseline, where auditd is not
/// installed, took 103 to 107 s to say `notapplicable` in one stage, and oscap 15.6 s).
pub fn two_stages(side: &OvalSide, rules: &[String]) -> bool {
    rules.len() >= TWO_STAGE_FROM || !side.engine.tree_walkers(&side.benchmark, rules).is_empty()
}

/// From this many rules to evaluate, the set is shared out to the scanner's lanes.
pub const LANES_FROM: usize = 40;

/// `rules` shared out to `lanes` parts, in turn (neighbours in a profile tend to cost alike);
/// one part below [`LANES_FROM`] rules.
fn lanes(rules: &[String], lanes: usize) -> Vec<Vec<String>> {
    let n = if rules.len() < LANES_FROM { 1 } else { lanes.clamp(1, rules.len()) };
    let mut parts = vec![Vec::new(); n];
    for (i, r) in rules.iter().enumerate() {
        parts[i % n].push(r.clone());
    }
    parts
}

impl Scanner {
    /// `rules` through the OVAL engine: one `oscap oval eval` for the rules it plans (after one
    /// for their platforms, for large sets and tree walkers; a large set in one per lane, side by side), one
    /// `oscap xccdf eval` for the rest. Results come in the order of `rules`.
    ///
    /// The package tests are judged on the host over the guest's dpkg status (`packages.rs`);
    /// when it cannot be read, the scan runs again with oscap's own probe for them.
    pub(super) async fn scan_oval(&self, guest: &dyn Guest, side: &OvalSide, rules: &[String]) -> Result<OvalScan, ScanError> {
        match self.scan_oval_cut(guest, side, rules, self.packages).await {
            Err(ScanError::PackageList(why)) => {
                tracing::warn!(%why, "the guest's package list could not be read: oscap's own probe judges the package tests");
                self.scan_oval_cut(guest, side, rules, false).await
            }
            done => done,
        }
    }

    async fn scan_oval_cut(&self, guest: &dyn Guest, side: &OvalSide, rules: &[String], packages: bool) -> Result<OvalScan, ScanError> {
        let list = PackageList::default();
        let mut judged_packages = 0;
        let severity = |id: &str| side.benchmark.rule(id).map(|r| r.severity).unwrap_or_default();
        let result = |rule: String, outcome| RuleResult { severity: severity(&rule), idref: rule, result: outcome, time: None };
        let mut found: Vec<RuleResult> = Vec::new();
        let mut stalls = 0;
        let mut evaluate = rules.to_vec();
        // With tree walkers in a two-stage set, the walk starts beside the platforms' run: it is
        // needed unless they all prove not applicable, and then it is dropped unread.
        let two = two_stages(side, rules);
        let early = self.walk && two && !side.engine.tree_walkers(&side.benchmark, rules).is_empty();
        let walk_early = self.walk_guest(guest);
        tokio::pin!(walk_early);
        let mut walked: Option<Walked> = None;
        if two {
            let first = side.engine.planned(&side.benchmark, rules, Stage::Platforms, CutFor { walk: false, packages })?;
            if let Some(document) = first.document.clone() {
                let platforms = async {
                    let eval = self.oval_eval(guest, document, first.variables.as_ref());
                    tokio::join!(eval, list.warm(guest, first.packages.is_some())).0
                };
                tokio::pin!(platforms);
                let (bytes, s) = match early {
                    true => tokio::select! {
                        r = &mut platforms => r?,
                        w = &mut walk_early => {
                            walked = Some(w);
                            platforms.await?
                        }
                    },
                    false => platforms.await?,
                };
                stalls += s;
                let report = OvalReport::from_guest(&bytes)?;
                let mut results = report.results();
                if let Some(part) = &first.packages {
                    let judged = part.judge(list.get(guest).await.map_err(ScanError::PackageList)?);
                    judged.rejudge(&mut results, &report, None);
                }
                let split = first.split(&results);
                found.extend(split.not_applicable.into_iter().map(|o| result(o.rule, o.outcome)));
                evaluate = split.evaluate;
            }
        }
        let plan = |part: &Vec<String>| side.engine.planned(&side.benchmark, part, Stage::Full, CutFor { walk: self.walk, packages });
        let plans = lanes(&evaluate, self.lanes).iter().map(plan).collect::<Result<Vec<_>, _>>()?;
        let evaluated: Vec<&OvalPlan> = plans.iter().filter(|p| p.document.is_some()).map(|p| p.as_ref()).collect();
        let walks = |p: &&OvalPlan| p.walk.as_ref().is_some_and(|w| !w.tests.is_empty() || !w.feeds.is_empty());
        let walk = match evaluated.iter().any(walks) {
            false => None,
            true if walked.is_some() => walked.map(|w| Box::pin(async { w }) as Walking<'_>),
            true if early => Some(Box::pin(walk_early) as Walking<'_>),
            true => Some(Box::pin(self.walk_guest(guest)) as Walking<'_>),
        };
        let listed = list.warm(guest, evaluated.iter().any(|p| p.packages.is_some()));
        let (runs, walk, filled) = tokio::join!(self.evaluate(guest, &evaluated, walk), listed).0?;
        let parts: Vec<&temper_scap::fswalk::WalkPart> = evaluated.iter().filter_map(|p| p.walk.as_ref()).collect();
        let (entries, secs) = match &walk {
            Some(Ok((l, s))) => (l.len(), *s),
            _ => (0, 0.0),
        };
        let walk = walk.map(|w| w.map(|(listing, _)| listing));
        let mut fell_back: Vec<Fallback> = filled.fallen;
        // The rules whose walked objects fell to oscap: scanned again, oscap walking.
        let mut to_oscap: Vec<String> = Vec::new();
        let mut evidence = Vec::new();
        for (plan, run) in evaluated.into_iter().zip(runs) {
            let (bytes, s) = run?;
            stalls += s;
            // One parse gives the outcomes and the evidence: the guest's results and items, its
            // copy of the definitions unread (the evidence reads the host's: `OvalPlan::evidence`).
            let report = OvalReport::from_guest(&bytes)?;
            let judged = match (&plan.walk, &walk) {
                (Some(part), Some(Ok(listing))) => Some(part.judge(&bytes, &report, listing)),
                (Some(part), Some(Err(at))) => Some(part.unwalked(&report, at)),
                _ => None,
            };
            let again = judged.as_ref().map(|j| j.rules_to_oscap(plan, &report)).unwrap_or_default();
            fell_back.extend(judged.iter().flat_map(|j| j.fallen.iter().cloned()));
            let mut results = judged.as_ref().map_or_else(|| report.results(), |j| j.results.clone());
            // The decisive tests picked by the host's results (the walk's, the packages'), not
            // the stand-ins'.
            let mut over: Option<TestResults> = judged.as_ref().map(|j| j.test_results());
            let host_packages = match &plan.packages {
                Some(part) => {
                    let j = part.judge(list.get(guest).await.map_err(ScanError::PackageList)?);
                    j.rejudge(&mut results, &report, over.as_ref());
                    over.get_or_insert_with(TestResults::new).extend(j.results());
                    judged_packages += j.tests.len();
                    Some(j)
                }
                None => None,
            };
            let outcomes = plan.outcomes(&results);
            let mut found_evidence = plan.evidence_judged(&report, &outcomes, over.as_ref());
            if let Some(j) = &host_packages {
                j.patch(&mut found_evidence);
            }
            if let Some(j) = &judged {
                j.patch(&mut found_evidence);
                // A walked test's items are the walk's, collected on the host by its own object:
                // what the guest gave for the stand-in is gone, and so is any item it refused.
                for t in found_evidence.iter_mut().flat_map(|e| e.tests.iter_mut()).filter(|t| j.tests.contains_key(&t.id)) {
                    t.refused.clear();
                }
            }
            evidence.extend(found_evidence.into_iter().filter(|e| !again.contains(&e.rule)));
            found.extend(outcomes.into_iter().filter(|o| !again.contains(&o.rule)).map(|o| result(o.rule, o.outcome)));
            to_oscap.extend(again);
        }
        if !to_oscap.is_empty() {
            tracing::warn!(
                objects = fell_back.len(),
                rules = to_oscap.len(),
                "the walk could not complete some objects: oscap walks for them"
            );
            let (outcomes, again_evidence, s) = self.oscap_walks(guest, side, &to_oscap).await?;
            stalls += s;
            evidence.extend(again_evidence);
            found.extend(outcomes.into_iter().map(|o| result(o.rule, o.outcome)));
        }
        // Said whenever the plans had walking objects, taken over or left to oscap.
        let summary = parts.iter().any(|w| !w.tests.is_empty() || !w.feeds.is_empty() || !w.left.is_empty()).then(|| WalkSummary {
            entries,
            secs,
            tests: parts.iter().map(|w| w.tests.len()).sum(),
            fed: filled.walked,
            left: parts.iter().flat_map(|w| w.left.clone()).collect(),
            fell_back,
            to_oscap,
        });
        let routed: Vec<(String, XccdfReason)> =
            plans.iter().flat_map(|p| p.xccdf_rules()).map(|(id, why)| (id.to_string(), why)).collect();
        let rest: Vec<String> = routed.iter().map(|(id, _)| id.clone()).collect();
        if !rest.is_empty() {
            tracing::debug!(rules = rest.len(), "rules whose check is not one OVAL definition: oscap xccdf eval");
            let x = self.xccdf(guest, &rest, &[]).await?;
            stalls += x.stalls;
            found.extend(x.results.rule_results.into_iter().filter(|r| rest.contains(&r.idref)));
        }
        let at = |id: &str| rules.iter().position(|r| r == id).unwrap_or(usize::MAX);
        found.sort_by_key(|r| at(&r.idref));
        let results = TestResult {
            id: format!("temper-oval-{}", self.tag),
            benchmark_id: Some(side.benchmark.id.clone()),
            profile: Some(self.profile.clone()),
            rule_results: found,
            ..TestResult::default()
        };
        Ok(OvalScan { results, evidence, stalls, routed, walk: summary, packages: judged_packages })
    }

    /// The plans' `oscap oval eval`s beside `walk`, when they walk, unless an object feeds
    /// variables ([`temper_scap::fswalk::feed`]): then the walk and the feeds' first runs go
    /// first, and each such plan's document is filled from the walk before oscap evaluates it;
    /// the plans that feed nothing (the other lane's) run at once, beside the walk. Returns each
    /// plan's run, in `plans`' order, the walk, and how many objects were fed from it.
    async fn evaluate(&self, guest: &dyn Guest, plans: &[&OvalPlan], walk: Option<Walking<'_>>) -> Result<Evaluated, ScanError> {
        let walk = async move {
            match walk {
                Some(w) => Some(w.await),
                None => None,
            }
        };
        let feeds = |p: &OvalPlan| p.walk.as_ref().is_some_and(|w| !w.feeds.is_empty());
        let document = |p: &OvalPlan| p.document.clone().expect("a plan with a document");
        // Plans that feed nothing run at once, beside the walk; those that feed wait for it.
        let (plain, fed): (Vec<usize>, Vec<usize>) = (0..plans.len()).partition(|&i| !feeds(plans[i]));
        let now = join_all(plain.iter().map(|&i| self.oval_eval(guest, document(plans[i]), plans[i].variables.as_ref())));
        let later = async {
            let (pre, walk) = tokio::join!(join_all(fed.iter().map(|&i| self.pre_eval(guest, plans[i]))), walk);
            let mut filled = Filled::default();
            if fed.is_empty() {
                return Ok((Vec::new(), walk, filled));
            }
            let listing = match walk.as_ref().expect("plans with feeds walk") {
                Ok((l, _)) => Ok(l),
                Err(at) => Err(at),
            };
            let mut docs = Vec::new();
            for (&i, vars) in fed.iter().zip(pre) {
                let part = plans[i].walk.as_ref().expect("a plan that feeds walks");
                // Values the first run gave that the walk cannot take: its objects go to oscap.
                let (vars, listing) = match vars {
                    Ok(v) => (v, listing),
                    Err(ScanError::Walk(e)) => (HashMap::new(), Err(&GapAt::new(Gap::Unsupported, e.to_string()))),
                    Err(e) => return Err(e),
                };
                let one = part.fill(&document(plans[i]), &vars, listing)?;
                filled.walked += one.walked;
                filled.fallen.extend(one.fallen);
                docs.push(one.document);
            }
            let runs = join_all(fed.iter().zip(docs).map(|(&i, d)| self.oval_eval(guest, d, plans[i].variables.as_ref()))).await;
            Ok::<_, ScanError>((runs, walk, filled))
        };
        let (now, later) = tokio::join!(now, later);
        let (later, walk, filled) = later?;
        let mut runs: Vec<(usize, EvalRun)> = plain.into_iter().zip(now).chain(fed.into_iter().zip(later)).collect();
        runs.sort_by_key(|(i, _)| *i);
        Ok((runs.into_iter().map(|(_, r)| r).collect(), walk, filled))
    }

    /// The first run of a plan whose feeds need variables: their values, by variable id.
    async fn pre_eval(&self, guest: &dyn Guest, plan: &OvalPlan) -> Result<HashMap<String, Vec<String>>, ScanError> {
        let Some(pre) = plan.walk.as_ref().and_then(|w| w.pre.as_ref()) else { return Ok(HashMap::new()) };
        let (bytes, _) = self.oval_eval(guest, pre.document.clone(), None).await?;
        Ok(pre.values(&bytes)?)
    }

    /// `rules` through oscap alone, walking for their objects (the rules whose walked objects
    /// fell to oscap): their outcomes and evidence, and the stalls it took.
    async fn oscap_walks(
        &self,
        guest: &dyn Guest,
        side: &OvalSide,
        rules: &[String],
    ) -> Result<(Vec<RuleOutcome>, Vec<Evidence>, u32), ScanError> {
        let plan = side.engine.plan(&side.benchmark, rules)?;
        let Some(document) = plan.document.clone() else { return Ok((Vec::new(), Vec::new(), 0)) };
        let (bytes, stalls) = self.oval_eval(guest, document, plan.variables.as_ref()).await?;
        let report = OvalReport::parse(&bytes)?;
        let outcomes = plan.outcomes(&report.results());
        let evidence = plan.evidence(&report, &outcomes);
        Ok((outcomes, evidence, stalls))
    }

    /// The one walk of the guest's file system: [`COLLECT`] as data, as root, every entry
    /// under `/`. Output cut short, over its bounds or that does not read is never a smaller
    /// tree: the walk is not used, and why is returned; what `find` could not read is a gap in
    /// it (`Listing::read_errors`).
    async fn walk_guest(&self, guest: &dyn Guest) -> Walked {
        let exec = Exec::new(["sh", "-s", "--", "--", "/"])
            .stdin(COLLECT.as_bytes().to_vec())
            .timeout(self.timeout)
            .max_output(MAX_WALK)
            .max_stderr(MAX_WALK_ERRORS);
        let started = std::time::Instant::now();
        let unused = |why: String| {
            tracing::warn!(%why, "the walk of the guest cannot be used: its objects go to oscap");
            GapAt::new(Gap::Walk, why)
        };
        let out = guest.exec(exec).await.map_err(|e| unused(e.to_string()))?;
        if out.stdout_truncated || out.stderr_truncated {
            return Err(unused(format!("over {MAX_WALK} bytes of entries or {MAX_WALK_ERRORS} of errors")));
        }
        // 0: every entry listed; 1: some could not be, each named on stderr.
        let stderr: Vec<&[u8]> = out.stderr.split(|&b| b == b'\n').filter(|l| !l.is_empty() && !l.starts_with(b"sudo: ")).collect();
        match out.exit_code {
            Some(0) => {}
            Some(1) if !stderr.is_empty() => {}
            code => return Err(unused(format!("find exited {code:?}: {}", tail(&out.stderr_str(), 300)))),
        }
        let bytes = out.stdout.len();
        let mut listing = Listing::parse(out.stdout).map_err(|e| unused(e.to_string()))?;
        listing.read_errors(&stderr.join(&b'\n')).map_err(|e| unused(e.to_string()))?;
        let secs = started.elapsed().as_secs_f64();
        tracing::debug!(entries = listing.len(), bytes, errors = stderr.len(), secs, "walked the guest");
        Ok((listing, secs))
    }

    /// One `oscap oval eval` of `document` (a plan's, perhaps filled from the walk) and its
    /// variables, written to the guest as data; its results document and the stalls it
    /// took.
    async fn oval_eval(&self, guest: &dyn Guest, document: Vec<u8>, variables: Option<&Vec<u8>>) -> Result<(Vec<u8>, u32), ScanError> {
        self.run(guest, |f| {
            let variables = variables.map(|v| (f.variables.clone(), v.clone()));
            let eval = OvalEval {
                document: &f.document,
                variables: variables.as_ref().map(|v| v.0.as_str()),
                results: &f.results,
                skip_valid: self.skip_valid_rescans,
            };
            let mut inputs = vec![(f.document.clone(), document.clone())];
            inputs.extend(variables.clone());
            Call { args: eval.args(), inputs, workdir: None }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_set_is_shared_out_in_turn_and_a_small_one_is_not() {
        let rules: Vec<String> = (0..LANES_FROM + 1).map(|i| format!("r{i}")).collect();
        let parts = lanes(&rules, 2);
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].len(), parts[1].len()), (21, 20));
        assert_eq!((&parts[0][..2], &parts[1][..2]), (&["r0".to_string(), "r2".into()][..], &["r1".to_string(), "r3".into()][..]));
        assert_eq!(lanes(&rules[..LANES_FROM - 1], 2).len(), 1, "below the threshold: one oscap");
        assert_eq!(lanes(&rules, 0).len(), 1, "no lanes is one lane");
        let mut all: Vec<String> = parts.concat();
        all.sort();
        let mut want = rules.clone();
        want.sort();
        assert_eq!(all, want, "every rule in exactly one part");
    }
}
