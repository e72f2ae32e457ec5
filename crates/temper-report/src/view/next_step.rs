//! A concrete next step for a human, drawn from an escalated rule's evidence.
use std::fmt;

use serde::{Serialize, Serializer};
use temper_journal::Verdict;
use temper_journal::{self as journal, Attempt, AttemptState, EscalationCause, ScanResult};

use temper_scap::oval::Evidence;

use super::info::RuleInfo;
use crate::run::RunData;
use crate::text::short;

/// What to check, and what to try.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NextStep {
    /// The verdict (or situation) this step answers.
    pub cause: Cause,
    pub check: String,
    pub try_: String,
}

/// What a next step answers; written as the verdict's name, `no fix available` or `escalated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// An attempt's verdict (an attempt closed on resume counts as `interrupted`).
    Verdict(Verdict),
    /// No fix was tried.
    NoFix,
    /// Nothing more specific: the escalation reason alone.
    Escalated,
    /// What the scanner found wrong, against what the check expects.
    Found,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Verdict(v) => v.as_str(),
            Self::NoFix => "no fix available",
            Self::Escalated => "escalated",
            Self::Found => "found by the scanner",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Cause {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What the scanner found first, when it says (the final scan's evidence, else an attempt's);
/// then one step per distinct verdict, the latest attempt's first; a step for "no fix at all"
/// when nothing was tried. Never empty.
pub fn next_steps(info: &RuleInfo, rule: &journal::Rule, attempts: &[&Attempt], data: &RunData) -> Vec<NextStep> {
    let mut out: Vec<NextStep> = data.evidence_of(&rule.rule_id).and_then(|(when, e)| found(&when, e)).into_iter().collect();
    let grounded = !out.is_empty();
    let mut seen: Vec<Verdict> = Vec::new();
    for a in attempts.iter().rev() {
        let Some(verdict) = verdict_of(a) else { continue };
        if seen.contains(&verdict) {
            continue;
        }
        seen.push(verdict);
        if let Some(step) = for_verdict(verdict, a, info, data) {
            out.push(step);
        }
    }
    let reason = rule.reason.as_deref().unwrap_or("");
    if attempts.is_empty() || rule.escalation_cause == Some(EscalationCause::NoFix) {
        out.push(no_fix(info, reason, !attempts.is_empty(), grounded));
    }
    if out.is_empty() {
        out.push(NextStep {
            cause: Cause::Escalated,
            check: format!("Read the escalation reason (\"{reason}\") and the attempts above; run `oscap xccdf eval --rule {}` on a copy of the target to see what the check finds.", rule.rule_id),
            try_: "Write the change by hand from the rule's description, test it on a snapshot, then rescan.".into(),
        });
    }
    out
}

/// An attempt's verdict reason without its leading `prefix`.
fn reason_after<'a>(a: &'a Attempt, prefix: &str) -> &'a str {
    let r = a.verdict_reason.as_deref().unwrap_or("stopped");
    r.strip_prefix(prefix).unwrap_or(r)
}

/// The verdict an attempt's step answers: its own, or `interrupted` for one closed on resume
/// before it had one; none for an attempt still under way.
fn verdict_of(a: &Attempt) -> Option<Verdict> {
    match (a.verdict, a.state) {
        (Some(v), _) => Some(v),
        (None, AttemptState::Interrupted) => Some(Verdict::Interrupted),
        (None, AttemptState::Started | AttemptState::Applied | AttemptState::Done) => None,
    }
}

fn for_verdict(verdict: Verdict, a: &Attempt, info: &RuleInfo, data: &RunData) -> Option<NextStep> {
    let step = |check: String, try_: String| Some(NextStep { cause: Cause::Verdict(verdict), check, try_ });
    match verdict {
        Verdict::Fixed => None,
        Verdict::HealthBroken => {
            let (check, try_) = health_broken(a.n.get(), a.findings.health_output.as_deref(), a.verdict_reason.as_deref());
            step(check, try_)
        }
        Verdict::Refused => {
            let why = a.verdict_reason.as_deref().unwrap_or("");
            step(
                format!("The deny-list refused attempt {}'s script before it ran: {why}.", a.n),
                "The pattern guards the harness's own access (SSH, sudo, its account) or the machine's availability, so no automation may run it. A human must decide whether the change is safe here and, if so, apply it by hand from a console session.".into(),
            )
        }
        Verdict::StillFailing => step(
            format!(
                "The fix ran but the rule still reads `{}`. Compare what the check expects{} with the configuration after the fix: `oscap xccdf eval --profile {} --rule {} --oval-results` shows the objects the check looked at.",
                a.findings.rule_result.map_or("?", ScanResult::as_str),
                info.oval.as_deref().map(|o| format!(" (OVAL definition {o})")).unwrap_or_default(),
                data.run.profile,
                info.rule_id
            ),
            "Change the setting where the check reads it (a drop-in file may override the main one, a later line may win), or use the content's stock fix as a reference.".into(),
        ),
        Verdict::ScanBroken => step(
            format!(
                "After attempt {}'s fix the rule's check could not run ({}): temper reverted the fix.",
                a.n,
                a.verdict_reason.as_deref().unwrap_or("the scan failed")
            ),
            format!(
                "Apply the fix on a snapshot and run `oscap xccdf eval --profile {} --rule {}` by hand: a fix that removes a file, a library or a package the scanner's probes need (or fills the disk) must be changed so the check can still run.",
                data.run.profile, info.rule_id
            ),
        ),
        Verdict::NeedsReboot => step(
            format!("Attempt {}'s fix takes effect only after a reboot, and this run did not reboot (its reboot proof was off).", a.n),
            "Run again with the reboot proof on (the default), or apply the fix in a maintenance window, reboot, check the machine comes back healthy, then rescan.".into(),
        ),
        Verdict::NotPersistent => step(
            format!("Attempt {}'s fix passed its rescan, then the rule failed again after a cold reboot: the change did not persist ({}).", a.n, a.verdict_reason.as_deref().unwrap_or("no reason recorded")),
            "Make the change where boot reads it: a file under /etc (sysctl.d, modprobe.d, a unit enabled, not only started), and look for a unit, tmpfiles.d entry or tmpfs that puts the old state back at boot. Reboot a snapshot, then rescan.".into(),
        ),
        Verdict::BreaksBoot => step(
            format!("With attempt {}'s fix the guest did not boot to SSH ({}); temper reverted to the last checkpoint that booted.", a.n, a.verdict_reason.as_deref().unwrap_or("no reason recorded")),
            "Boot a snapshot with the fix from its console: look for an /etc/fstab entry without `nofail` for a device that is absent, a kernel argument, a PAM or sshd change. Make the change so that boot tolerates it, reboot, then rescan.".into(),
        ),
        Verdict::ApplyFailed => step(
            format!(
                "Attempt {}'s fix failed to apply ({}): read its stderr above.",
                a.n,
                a.verdict_reason.as_deref().unwrap_or("no reason recorded")
            ),
            "Fix the script (a missing package, a path that differs on this image, a syntax error), run it by hand on a snapshot, then rescan.".into(),
        ),
        Verdict::Stalled => step(
            format!(
                "Attempt {}'s fix was {}. Run it by hand on a snapshot and watch what it waits on: a lock held by another process (apt, unattended-upgrades), a prompt, the network.",
                a.n,
                reason_after(a, "the fix was ")
            ),
            "Clear what it waits on and run temper again. If it was working but quiet for long stretches, raise `fix_stall_secs` in temper.toml (default 300) so that temper waits longer.".into(),
        ),
        Verdict::TimedOut => step(
            format!("Attempt {}'s fix was {}: it was still using CPU or writing when it was killed.", a.n, reason_after(a, "the fix was ")),
            "Raise `fix_timeout_secs` in temper.toml (default 10800, 3 hours) and run temper again, or run the fix by hand in a maintenance window.".into(),
        ),
        Verdict::Regression => {
            let broke: Vec<String> = a.findings.regressions.iter().map(|r| short(r).to_string()).collect();
            step(
                format!("Attempt {}'s fix made rules that passed fail: {}.", a.n, if broke.is_empty() { "see the attempt".to_string() } else { broke.join(", ") }),
                "Find the setting the rules disagree on and write one change that satisfies all of them; apply them together.".into(),
            )
        }
        Verdict::Lockout => step(
            format!(
                "Attempt {} cut the harness's access ({}).",
                a.n,
                a.verdict_reason.as_deref().unwrap_or("ssh or sudo failed")
            ),
            "Never automate this change. Test it on a console (out-of-band access) with a second root session open, and keep a way back in before you log out.".into(),
        ),
        Verdict::GuestDown => step(
            format!(
                "The guest stopped running during attempt {}'s checks ({}); the target was restored from its checkpoint.",
                a.n,
                a.verdict_reason.as_deref().unwrap_or("the hypervisor said so")
            ),
            "Read the guest's console log from the time of the attempt: a fix that panics the kernel or powers the guest off must be rewritten; a crash of the host or a `virsh destroy` is not the fix's fault, so run the rule again.".into(),
        ),
        Verdict::Interrupted => step(
            format!("Attempt {} was interrupted: the harness stopped mid-attempt and the target was restored.", a.n),
            "Run `temper resume` or start a new run for this rule.".into(),
        ),
    }
}

/// The scanner's findings as a step: each failed test's items against the state expected.
fn found(when: &str, e: &Evidence) -> Option<NextStep> {
    let findings = e.findings();
    let each: Vec<String> = findings
        .iter()
        .take(3)
        .map(|f| format!("{}: looked at {}, found {}, expected {}", f.test, f.object, f.found, f.expected))
        .collect();
    let more = findings.len().saturating_sub(each.len());
    (!each.is_empty()).then(|| NextStep {
        cause: Cause::Found,
        check: format!(
            "What the scanner found {when}: {}{}.",
            each.join("; "),
            if more > 0 { format!("; and {more} more tests (see the evidence)") } else { String::new() }
        ),
        try_: "Change each item found into the state expected, where the check looks; test the change on a snapshot, then rescan the rule."
            .into(),
    })
}

/// `tried`: fixes were tried before the agent ran out of them. `grounded`: a step before it
/// says what the scanner found.
fn no_fix(info: &RuleInfo, reason: &str, tried: bool, grounded: bool) -> NextStep {
    let from = if grounded { "from what the scanner found (above)" } else { "from the rule's description" };
    let try_ = match &info.stock_fix {
        Some(_) => format!(
            "Write the fix by hand {from}; the content's stock fix (shown with this rule) is a starting point: read it, adapt it to this image, test it on a snapshot."
        ),
        None => format!("Write the fix by hand {from}; the content has no stock fix for it. Test it on a snapshot, then rescan."),
    };
    NextStep {
        cause: Cause::NoFix,
        check: format!(
            "{}: {}.",
            if tried { "No other automatic fix to try" } else { "No automatic fix was tried" },
            if reason.is_empty() { "no reason recorded" } else { reason }
        ),
        try_,
    }
}

fn first_line(s: &str) -> Option<&str> {
    s.lines().map(str::trim).find(|l| !l.is_empty() && *l != "HEALTHY")
}

/// What to try when a service rejects a fix (the health check failed after it).
const SERVICE_TRY: &str = "Find which setting of the fix the service rejects and adjust the service (or an exception) so both hold; then apply the fix in a maintenance window where the service can be restarted and watched.";

/// The step for `health_broken`: from the health check's output when it printed one; else from
/// the verdict's reason, as when the reboot proof blamed a fix for a unit that fails at boot
/// (the health check itself passed, with no output).
fn health_broken(n: i64, output: Option<&str>, reason: Option<&str>) -> (String, String) {
    let out = output.unwrap_or("");
    let reason = reason.unwrap_or("").trim();
    if first_line(out).is_none() && !reason.is_empty() {
        let what = health_culprit(reason);
        let at_boot = reason.contains("reboot");
        let check = format!(
            "Attempt {n}'s fix was kept, then blamed: {reason}. Inspect {what} on a copy of the target with the fix applied{}: `systemctl status` and `journalctl -b -u` for it.",
            if at_boot { ", after a cold reboot" } else { "" }
        );
        let try_ = if at_boot {
            "Give the unit what it runs before the fix enables it (its program or package, and any state it reads, such as a database to initialise), or leave it disabled where it cannot run; reboot a snapshot and check that `systemctl --failed` lists nothing new, then rescan."
        } else {
            SERVICE_TRY
        };
        return (check, try_.into());
    }
    (
        format!(
            "The health check failed after attempt {n} ({}). Inspect {} on a copy of the target: `systemctl status` and `journalctl -u` for it, with the fix applied.",
            first_line(out).unwrap_or("no output"),
            health_culprit(out)
        ),
        SERVICE_TRY.into(),
    )
}

/// The unit or service the health output names, else its first line.
fn health_culprit(out: &str) -> String {
    let units: Vec<&str> = out
        .split(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | ';' | '(' | ')' | '\'' | '"'))
        .filter(|w| w.ends_with(".service") || w.ends_with(".socket"))
        .collect();
    if let Some(u) = units.first() {
        return format!("`{u}`");
    }
    match first_line(out) {
        Some(l) => format!("the service named in the health output (\"{l}\")"),
        None => "the services the health check covers".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_unit() {
        assert_eq!(health_culprit("nginx.service: failed\nUNHEALTHY"), "`nginx.service`");
        assert!(health_culprit("web: connection refused").contains("connection refused"));
        assert_eq!(health_culprit(""), "the services the health check covers");
    }

    /// The README run's blame: the unit that failed at boot, not "no output" from a health
    /// check that passed.
    #[test]
    fn a_unit_blamed_at_boot_is_named_from_the_reason() {
        let why = "aidecheck.service failed after the cold reboot, and had not before it: this fix names it (it wrote or enabled the unit)";
        let (check, try_) = health_broken(1, Some(""), Some(why));
        assert!(check.contains("`aidecheck.service`") && check.contains(why) && !check.contains("no output"), "{check}");
        assert!(try_.contains("systemctl --failed"), "{try_}");
        let (check, _) = health_broken(2, Some("nginx.service: failed"), Some("the health check fails after the fix"));
        assert!(check.starts_with("The health check failed after attempt 2 (nginx.service: failed)"), "{check}");
        let (check, _) = health_broken(3, None, None);
        assert!(check.contains("(no output)") && check.contains("the services the health check covers"), "{check}");
    }

    #[test]
    fn causes_are_written_as_before() {
        let json = |c: Cause| serde_json::to_string(&c).unwrap();
        assert_eq!(json(Cause::Verdict(Verdict::StillFailing)), "\"still_failing\"");
        assert_eq!(json(Cause::NoFix), "\"no fix available\"");
        assert_eq!(json(Cause::Escalated), "\"escalated\"");
        for v in Verdict::ALL {
            assert_eq!(Cause::Verdict(*v).to_string(), v.as_str());
        }
    }
}
