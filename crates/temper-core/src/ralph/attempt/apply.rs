//! The fix script run in the guest, watched, and judged from its checks (`verdict::judge`).
use std::time::Instant;

use super::Attempter;
use super::rescan::RescanScope;
use crate::ralph::error::LoopResult;
use crate::ralph::machine::OUTPUT_CAP;
use crate::ralph::state::RunState;
use crate::scan::{Scan, tail};
use crate::script::ScriptError;
use crate::verdict::{self, Checks, Exit, Guard, Reboot};
use temper_journal::turn::ApplyFix;
use temper_journal::{Evaluation, Findings, ScanResult};

/// What the fix script did.
#[derive(Clone)]
pub(in crate::ralph) struct ScriptRun {
    pub exit_code: Option<i64>,
    stdout: Option<String>,
    stderr: Option<String>,
    ms: i64,
    /// How the script ended, for the verdict.
    exit: Exit,
}

impl ScriptRun {
    /// How long the script ran.
    pub(in crate::ralph) fn took(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.ms.max(0) as u64)
    }
    /// How the script ended, for the verdict.
    pub(in crate::ralph) fn exit(&self) -> Exit {
        self.exit.clone()
    }
}

impl Attempter<'_> {
    /// Runs the fix script in the guest, on stdin, watched (`crate::script`).
    pub(in crate::ralph) async fn apply(&self, fix: &ApplyFix) -> ScriptRun {
        let started = Instant::now();
        let out = self.machine.run_script(&fix.fix_script).await;
        let ms = started.elapsed().as_millis() as i64;
        let unfinished = |exit| ScriptRun { exit_code: None, stdout: None, stderr: None, ms, exit };
        match out {
            Ok(out) => ScriptRun {
                exit_code: out.exit_code.map(i64::from),
                stdout: Some(capped(&out.stdout_str(), out.stdout_truncated)),
                stderr: Some(capped(&out.stderr_str(), out.stderr_truncated)),
                ms,
                exit: match out.exit_code {
                    Some(0) => Exit::Zero,
                    Some(c) => Exit::NonZero(format!("the fix exited {c}")),
                    None => Exit::Unfinished("the fix ended without an exit code".into()),
                },
            },
            Err(ScriptError::Stopped(stop)) => unfinished(Exit::Stopped(stop)),
            Err(ScriptError::Port(e)) => unfinished(Exit::Unfinished(format!("the fix did not finish: {e}"))),
        }
    }

    /// The guard (lockout, then health) beside the rescan (`rescan.rs`), judged (`verdict::judge`):
    /// the verdict and everything measured on the way, and the scan when the checks got that far.
    #[tracing::instrument(name = "evaluate", skip_all)]
    pub(super) async fn evaluate(
        &self,
        state: &RunState,
        rescan: &RescanScope,
        stock: bool,
        applied: &ScriptRun,
    ) -> LoopResult<(Evaluation, Option<Scan>)> {
        let rule = rescan.rule.as_str();
        let rules = rescan.rules(state);
        // The guard logs in afresh beside the live session, so the rescan runs alongside it; a
        // script that did not finish is never rescanned.
        let (guard, scan) = if applied.exit_code.is_some() {
            let (g, s) = tokio::join!(self.machine.guard(), self.machine.scan(&rules));
            (g, Some(s))
        } else {
            (self.machine.guard().await, None)
        };
        let exit = applied.exit();
        let (reading, scan) = match scan {
            None => (verdict::Rescan::NotRun, None),
            Some(Err(e)) => (verdict::Rescan::Failed(e.to_string()), None),
            Some(Ok(s)) => (verdict::Rescan::Read(ScanResult::from(s.outcome(rule))), Some(s)),
        };
        let needs_reboot = stock && self.offer.stock_needs_reboot(rule);
        let reboot = Reboot::of(needs_reboot, self.proof);
        let regressions = scan.as_ref().map(|s| s.not_passing(&rescan.regression_rules(state))).unwrap_or_default();
        let checks = Checks { exit, guard: Guard::from(guard), rescan: reading, regressions, reboot, batched: state.batched() };
        let e = evaluation(applied, &checks, scan.as_ref(), rule);
        let scan = if e.findings.rule_result.is_some() { scan } else { None };
        Ok((e, scan))
    }
}

/// The verdict on one fix from its checks (`verdict::judge`), with what was measured on the way;
/// the rule's result, regressions and evidence only when the checks got that far.
pub(in crate::ralph) fn evaluation(applied: &ScriptRun, checks: &Checks, scan: Option<&Scan>, rule: &str) -> Evaluation {
    let j = verdict::judge(checks);
    let mut f = Findings {
        fix_exit_code: applied.exit_code,
        fix_stdout: applied.stdout.clone(),
        fix_stderr: applied.stderr.clone(),
        apply_ms: Some(applied.ms),
        access_ok: Some(checks.guard.access_ok()),
        ..Findings::default()
    };
    if let Guard::Health { ok, output } = &checks.guard {
        (f.health_ok, f.health_output) = (Some(*ok), Some(output.clone()));
    }
    if let (Some(scan), verdict::Rescan::Read(result), true) = (scan, &checks.rescan, j.read) {
        (f.rule_result, f.regressions, f.evidence_after) = (Some(*result), checks.regressions.clone(), scan.evidence_of(rule).cloned());
    }
    Evaluation::new(j.verdict, j.reason).found(f)
}

/// What the Reflector sees of a failed fix: its output, the checks, and the guest's journal errors.
pub(in crate::ralph) fn diagnostics(o: &Evaluation, journal: &str) -> String {
    let found =
        o.findings.evidence_after.as_ref().map_or(String::new(), |e| format!("\nwhat the scanner found after the fix:\n{}", e.brief()));
    format!(
        "fix exit code: {:?}\nfix stdout:\n{}\nfix stderr:\n{}\nrule result: {}{found}\nhealth: {}\nregressions: {}\njournal errors:\n{}",
        o.findings.fix_exit_code,
        tail(o.findings.fix_stdout.as_deref().unwrap_or(""), 2000),
        tail(o.findings.fix_stderr.as_deref().unwrap_or(""), 2000),
        o.findings.rule_result.map_or("not scanned", ScanResult::as_str),
        o.findings.health_output.as_deref().unwrap_or("not run"),
        o.findings.regressions.join(", "),
        tail(&temper_scap::secret::withhold(journal), 3000),
    )
}

/// A fix's output as the journal keeps it: its secrets withheld by kind (a hash it printed, a
/// key it showed), and marked where the cap cut it.
fn capped(s: &str, truncated: bool) -> String {
    let s = temper_scap::secret::withhold(s);
    if truncated { format!("{s}\n[output cut at {OUTPUT_CAP} bytes]") } else { s.into_owned() }
}
