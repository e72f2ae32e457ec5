//! The report as one value: what Markdown, HTML and JSON all show.
use std::collections::BTreeMap;

use serde::Serialize;
use temper_core::journal::{self, Attempt, KeptState, RevertMethod, RuleStatus, ScanResult};
use temper_core::verdict::Verdict;
use temper_scap::oval::{Evidence, Finding};
use temper_scap::{Benchmark, Rule, Severity};

use crate::data::{BlamedBy, RunData};
use crate::next_step::{NextStep, next_steps};
use crate::text::{ms, short, span_ms};

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub run: RunInfo,
    /// Scan results, first scan against final scan.
    pub results: Vec<Count>,
    /// What the run did with each rule: fixed, escalated, skipped...
    pub dispositions: Vec<Count>,
    /// Failing rules outside the run's scope (`--rules`): not worked on, counted in no total.
    pub out_of_scope: usize,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    /// `61.20 → 78.50`, `-` for a score not known.
    pub score: String,
    /// Whether the final state survived a cold reboot, and why it says so.
    pub reboot: Reboot,
    pub roles: Vec<RoleTime>,
    pub attempt_time: AttemptTime,
    pub reverts: Vec<Count>,
    pub timing: Option<Timing>,
    pub escalated: Vec<RuleSection>,
    /// The other rules the final scan found failing, with what it found (OVAL engine runs).
    pub left_failing: Vec<LeftFailing>,
    pub fixed: Vec<FixedRule>,
    /// In review order ([`RuleStatus::REVIEW_ORDER`]), each status in content order.
    pub rules: Vec<RuleLine>,
    /// The statuses the rules have, in review order, with their counts.
    pub groups: Vec<StatusGroup>,
    /// Rules fixed and scores over time.
    pub progress: crate::chart::Progress,
    pub controls: crate::ControlsView,
    pub replay: String,
}

#[derive(Debug, Serialize)]
pub struct Reboot {
    pub proof: journal::RebootProof,
    /// In words (`temper_core::journal::reboot_line`).
    pub reason: String,
}

impl Reboot {
    fn of(summary: Option<&journal::RunSummary>) -> Self {
        match summary {
            Some(s) => Self { proof: journal::RebootProof::of(s.rebooted), reason: journal::reboot_line(s.rebooted).into() },
            None => Self { proof: journal::RebootProof::NotRun, reason: "the run has not finished".into() },
        }
    }
}

#[derive(Debug, Serialize)]
pub struct RunInfo {
    pub id: i64,
    pub target: String,
    pub skill: String,
    pub profile: String,
    pub profile_title: String,
    pub benchmark: String,
    pub datastream: String,
    pub content_version: String,
    pub agent: String,
    pub status: String,
    pub started_at: String,
    pub ended_at: String,
    pub duration: String,
    pub exit_code: Option<i64>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub name: String,
    pub before: usize,
    pub after: usize,
}

#[derive(Debug, Serialize)]
pub struct RoleTime {
    pub role: String,
    pub turns: usize,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub time: String,
    pub errors: usize,
}

#[derive(Debug, Serialize)]
pub struct AttemptTime {
    pub attempts: usize,
    pub apply: String,
    pub evaluate: String,
    pub revert: String,
}

#[derive(Debug, Serialize)]
pub struct Timing {
    pub wall: String,
    pub guest: String,
    pub llm: String,
    pub harness: String,
    pub harness_pct: String,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
}

/// DISA and SSG ids and prose for one rule, from the content when it has the rule.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RuleInfo {
    pub rule_id: String,
    pub short_id: String,
    pub anchor: String,
    pub title: String,
    pub severity: Severity,
    pub stig_ids: Vec<String>,
    pub sv_ids: Vec<String>,
    pub v_ids: Vec<String>,
    pub srg_ids: Vec<String>,
    pub cci: Vec<String>,
    pub description: String,
    pub rationale: String,
    pub oval: Option<String>,
    pub stock_fix: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RuleSection {
    pub info: RuleInfo,
    pub initial_result: String,
    pub final_result: Option<String>,
    pub reason: String,
    pub verdicts: Vec<String>,
    pub attempts: Vec<AttemptView>,
    pub lessons: Vec<LessonView>,
    pub bans: Vec<LessonView>,
    pub next_steps: Vec<NextStep>,
    /// What the final scan found wrong with it, when it says.
    pub found: Option<Found>,
}

/// What the scanner found wrong with a rule: each failed test's items against the state
/// expected, and the whole evidence as text.
#[derive(Debug, Serialize)]
pub struct Found {
    pub findings: Vec<Finding>,
    pub text: String,
}

impl Found {
    fn of(e: &Evidence) -> Self {
        Self { findings: e.findings(), text: e.to_text() }
    }
}

/// A rule left failing that no section covers (still failing, out of scope, waived...), with what
/// the final scan found.
#[derive(Debug, Serialize)]
pub struct LeftFailing {
    pub info: RuleInfo,
    pub status: RuleStatus,
    pub reason: String,
    pub found: Found,
}

#[derive(Debug, Serialize)]
pub struct AttemptView {
    pub n: i64,
    pub source: String,
    pub state: String,
    pub plan: String,
    pub description: String,
    pub fix_script: String,
    pub revert_script: String,
    pub exit_code: Option<i64>,
    pub stdout: String,
    pub stderr: String,
    pub rule_result: String,
    pub health: String,
    pub health_output: String,
    pub access: String,
    pub regressions: Vec<String>,
    pub verdict: String,
    pub verdict_reason: String,
    pub revert_method: String,
    pub reverted: String,
    pub apply: String,
    pub evaluate: String,
    pub revert: String,
    pub warning: Option<String>,
    /// What the scanner found wrong before the fix, and after it (OVAL engine runs).
    pub evidence_before: Option<String>,
    pub evidence_after: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct LessonView {
    pub text: String,
    pub detail: String,
    pub extra: String,
}

#[derive(Debug, Serialize)]
pub struct FixedRule {
    pub order: usize,
    pub info: RuleInfo,
    pub attempt: i64,
    pub source: String,
    pub description: String,
    pub fix_script: String,
    pub final_result: String,
    /// Kept though its script exited non-zero.
    pub warning: Option<String>,
    /// What the scanner found wrong before the fix (OVAL engine runs).
    pub evidence: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RuleLine {
    pub rule_id: String,
    pub short_id: String,
    pub anchor: String,
    pub title: String,
    pub severity: Severity,
    /// The most severe first, for sorting: high 0, medium 1, low 2, info 3, unknown 4.
    pub sev_rank: u8,
    pub stig_ids: String,
    pub initial_result: String,
    pub final_result: String,
    pub status: RuleStatus,
    pub attempts: i64,
    pub reason: String,
}

/// The rules of one status, for the report's jump links and headings.
#[derive(Debug, Serialize)]
pub struct StatusGroup {
    pub status: RuleStatus,
    pub n: usize,
}

/// The dispositions shown even at zero, in this order.
const DISPOSITIONS: [RuleStatus; 6] =
    [RuleStatus::Fixed, RuleStatus::Escalated, RuleStatus::StillFailing, RuleStatus::Skipped, RuleStatus::Waived, RuleStatus::Deferred];

pub fn build(data: &RunData, content: Option<&Benchmark>) -> Report {
    let run = &data.run;
    let lookup = |id: &str| content.and_then(|c| c.rule(id));
    let mut rules: Vec<RuleLine> = data
        .rules
        .iter()
        .map(|r| {
            let info = rule_info(r, lookup(&r.rule_id));
            RuleLine {
                rule_id: r.rule_id.clone(),
                short_id: info.short_id.clone(),
                anchor: info.anchor.clone(),
                title: info.title.clone(),
                severity: info.severity,
                sev_rank: Severity::High as u8 - info.severity as u8,
                stig_ids: info.stig_ids.join(", "),
                initial_result: r.initial_result.to_string(),
                final_result: r.final_result.map(|f| f.to_string()).unwrap_or_default(),
                status: r.status,
                attempts: r.attempts,
                reason: r.reason.clone().unwrap_or_default(),
            }
        })
        .collect();
    RuleStatus::sort_for_review(&mut rules, |l| l.status);
    let groups = RuleStatus::REVIEW_ORDER
        .into_iter()
        .map(|status| StatusGroup { status, n: rules.iter().filter(|l| l.status == status).count() })
        .filter(|g| g.n > 0)
        .collect();
    let escalated = data.rules.iter().filter(|r| r.status == RuleStatus::Escalated).map(|r| section(data, r, lookup(&r.rule_id))).collect();
    let mut left_failing: Vec<LeftFailing> = data
        .rules
        .iter()
        .filter(|r| r.status != RuleStatus::Escalated)
        .filter_map(|r| {
            let found = Found::of(r.final_evidence.as_ref()?);
            let reason = r.reason.clone().unwrap_or_default();
            Some(LeftFailing { info: rule_info(r, lookup(&r.rule_id)), status: r.status, reason, found })
        })
        .collect();
    RuleStatus::sort_for_review(&mut left_failing, |l| l.status);
    let fixed = fixed_rules(data, content);
    let score_before = run.score_before.or(data.summary.as_ref().and_then(|s| s.score_before));
    let score_after = run.score_after.or(data.summary.as_ref().and_then(|s| s.score_after));
    let score_text = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
    Report {
        schema: "temper-report/2",
        run: RunInfo {
            id: run.id,
            target: run.target.clone(),
            skill: run.skill.clone(),
            profile: run.profile.clone(),
            profile_title: content.and_then(|c| c.profile.as_ref()).map(|p| p.title.clone()).unwrap_or_default(),
            benchmark: content.map(|c| c.title.clone()).unwrap_or_default(),
            datastream: run.datastream.clone(),
            content_version: run.content_version.clone().or_else(|| content.map(|c| c.version.clone())).unwrap_or_else(|| "unknown".into()),
            agent: run.agent.clone(),
            status: run.status.to_string(),
            started_at: run.started_at.clone(),
            ended_at: run.ended_at.clone().unwrap_or_else(|| "not finished".into()),
            duration: span_ms(&run.started_at, run.ended_at.as_deref()).map(ms).unwrap_or_else(|| "-".into()),
            exit_code: run.exit_code,
            error: run.error.clone(),
        },
        results: results(&data.rules),
        dispositions: dispositions(&data.rules),
        out_of_scope: temper_core::journal::Tally::of(&data.rules).out_of_scope,
        score: format!("{} → {}", score_text(score_before), score_text(score_after)),
        reboot: Reboot::of(data.summary.as_ref()),
        score_before,
        score_after,
        roles: roles(data),
        attempt_time: AttemptTime {
            attempts: data.attempts.len(),
            apply: ms(data.attempts.iter().filter_map(|a| a.apply_ms).sum()),
            evaluate: ms(data.attempts.iter().filter_map(|a| a.evaluate_ms).sum()),
            revert: ms(data.attempts.iter().filter_map(|a| a.revert_ms).sum()),
        },
        reverts: reverts(&data.attempts),
        timing: data.summary.as_ref().map(|s| Timing {
            wall: ms((s.wall_secs * 1000.0) as i64),
            guest: ms((s.guest_secs * 1000.0) as i64),
            llm: ms((s.llm_secs * 1000.0) as i64),
            harness: ms((s.harness_secs * 1000.0) as i64),
            harness_pct: format!("{:.1}%", s.harness_pct),
            prompt_tokens: s.prompt_tokens,
            completion_tokens: s.completion_tokens,
        }),
        escalated,
        left_failing,
        fixed,
        rules,
        groups,
        progress: data.progress.clone(),
        controls: crate::controls::build(data),
        replay: crate::replay_script(data, content),
    }
}

pub fn rule_info(r: &journal::Rule, c: Option<&Rule>) -> RuleInfo {
    let short_id = short(&r.rule_id).to_string();
    let title = c.map(|c| c.title.clone()).filter(|t| !t.is_empty()).unwrap_or_else(|| r.title.clone());
    RuleInfo {
        rule_id: r.rule_id.clone(),
        anchor: format!("rule-{}", short_id.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "-")),
        short_id,
        title: if title.is_empty() { short(&r.rule_id).to_string() } else { title },
        severity: c.map_or(r.severity, |c| c.severity),
        stig_ids: c.map(|c| c.stig_ids.clone()).unwrap_or_default(),
        sv_ids: c.map(|c| c.sv_ids.clone()).unwrap_or_default(),
        v_ids: c.map(|c| c.v_ids.clone()).unwrap_or_default(),
        srg_ids: c.map(|c| c.srg_ids.clone()).unwrap_or_default(),
        cci: c.map(|c| c.cci.clone()).unwrap_or_default(),
        description: c.map(|c| c.description.clone()).unwrap_or_default(),
        rationale: c.map(|c| c.rationale.clone()).unwrap_or_default(),
        oval: c.and_then(|c| c.oval.as_ref()).map(|o| format!("{} in {}", o.name, o.href)),
        stock_fix: c.and_then(|c| c.fix.as_ref()).map(|f| f.script.clone()),
    }
}

fn section(data: &RunData, r: &journal::Rule, c: Option<&Rule>) -> RuleSection {
    let attempts: Vec<&Attempt> = data.attempts.iter().filter(|a| a.rule_id == r.rule_id).collect();
    let info = rule_info(r, c);
    let next_steps = next_steps(&info, r, &attempts, data);
    RuleSection {
        initial_result: r.initial_result.to_string(),
        final_result: r.final_result.map(|f| f.to_string()),
        reason: r.reason.clone().unwrap_or_else(|| "no reason recorded".into()),
        verdicts: attempts.iter().map(|a| a.outcome()).collect(),
        attempts: attempts.iter().map(|a| attempt_view(a, &attempts, data.blamed_by(a))).collect(),
        lessons: data
            .lessons
            .iter()
            .filter(|l| l.rule_id.as_deref() == Some(&r.rule_id))
            .map(|l| LessonView { text: l.distilled.clone(), detail: l.lesson.clone(), extra: l.preferred.clone() })
            .collect(),
        bans: data
            .bans
            .iter()
            .filter(|b| b.rule_id.as_deref() == Some(&r.rule_id))
            .map(|b| LessonView { text: b.pattern.clone(), detail: b.reason.clone(), extra: String::new() })
            .collect(),
        next_steps,
        found: r.final_evidence.as_ref().map(Found::of),
        info,
    }
}

fn yes_no(v: Option<bool>, yes: &str, no: &str) -> String {
    match v {
        Some(true) => yes.into(),
        Some(false) => no.into(),
        None => "not checked".into(),
    }
}

fn attempt_view(a: &Attempt, rule_attempts: &[&Attempt], blamed: Option<BlamedBy>) -> AttemptView {
    let method = a.revert_method.map(|m| m.to_string()).unwrap_or_default();
    let rolled_back = a.kept == Some(KeptState::RolledBack);
    let fixed = a.verdict == Some(Verdict::Fixed);
    let reverted = match a.revert_method {
        _ if rolled_back && fixed => "rolled back with its batch when an earlier fix was found to regress; replayed",
        _ if rolled_back && blamed == Some(BlamedBy::RebootProof) => {
            "kept, then rolled back by the reboot proof (what a cold reboot found is its verdict); the VM went back to the last checkpoint that booted"
        }
        _ if rolled_back && blamed == Some(BlamedBy::FinalScan) => {
            "kept, then rolled back when the final scan found a rule it broke (the run had no reboot proof); the other fixes were replayed"
        }
        _ if rolled_back => "kept, then blamed by the batch's regression check; the VM went back to the snapshot before it",
        Some(RevertMethod::None) if fixed => "kept (new checkpoint)",
        Some(RevertMethod::None) => "nothing to revert (the script never ran)",
        Some(RevertMethod::Script) => "reverted by its revert script, verified by a rescan and the health check",
        Some(RevertMethod::Snapshot) => "restored from the checkpoint snapshot",
        Some(RevertMethod::ScriptThenSnapshot) => "the revert script did not verify; restored from the checkpoint snapshot",
        None => "not recorded",
    }
    .to_string();
    AttemptView {
        n: a.n,
        source: a.label(rule_attempts.iter().copied()),
        state: a.state.to_string(),
        plan: a.plan.clone(),
        description: a.description.clone(),
        fix_script: a.fix_script.clone(),
        revert_script: a.revert_script.clone(),
        exit_code: a.fix_exit_code,
        stdout: a.fix_stdout.clone().unwrap_or_default(),
        stderr: a.fix_stderr.clone().unwrap_or_default(),
        rule_result: a.rule_result.map_or_else(|| "not scanned".into(), |r| r.to_string()),
        health: yes_no(a.health_ok, "healthy", "BROKEN"),
        health_output: a.health_output.clone().unwrap_or_default(),
        access: yes_no(a.access_ok, "ssh and sudo work", "LOST"),
        regressions: regressions(a),
        verdict: a.outcome(),
        verdict_reason: a.verdict_reason.clone().unwrap_or_default(),
        revert_method: method,
        reverted,
        apply: a.apply_ms.map(ms).unwrap_or_else(|| "-".into()),
        evaluate: a.evaluate_ms.map(ms).unwrap_or_else(|| "-".into()),
        revert: a.revert_ms.map(ms).unwrap_or_else(|| "-".into()),
        warning: a.warning(),
        evidence_before: a.evidence_before.as_ref().map(Evidence::to_text),
        evidence_after: a.evidence_after.as_ref().map(Evidence::to_text),
    }
}

/// `attempts.regressions` is a JSON array of rule ids.
pub fn regressions(a: &Attempt) -> Vec<String> {
    a.regressions.as_deref().and_then(|s| serde_json::from_str::<Vec<String>>(s).ok()).unwrap_or_default()
}

/// The fixes in force at the end of the run, in the order they were kept.
pub fn kept_attempts(data: &RunData) -> Vec<&Attempt> {
    let mut kept: Vec<&Attempt> = data.attempts.iter().filter(|a| a.in_force()).collect();
    kept.sort_by(|a, b| (a.ended_at.as_deref(), a.id).cmp(&(b.ended_at.as_deref(), b.id)));
    kept
}

/// The kept fixes, in the order they were kept.
pub fn fixed_rules(data: &RunData, content: Option<&Benchmark>) -> Vec<FixedRule> {
    kept_attempts(data)
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let r = data.rules.iter().find(|r| r.rule_id == a.rule_id)?;
            Some(FixedRule {
                order: i + 1,
                info: rule_info(r, content.and_then(|c| c.rule(&r.rule_id))),
                attempt: a.n,
                source: a.label(&data.attempts),
                description: a.description.clone(),
                fix_script: a.fix_script.clone(),
                final_result: r.final_result.map_or_else(|| "not scanned".into(), |r| r.to_string()),
                warning: a.warning(),
                evidence: a.evidence_before.as_ref().map(Evidence::to_text),
            })
        })
        .collect()
}

fn results(rules: &[journal::Rule]) -> Vec<Count> {
    let mut m: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in rules {
        m.entry(r.initial_result.to_string()).or_default().0 += 1;
        if let Some(f) = &r.final_result {
            m.entry(f.to_string()).or_default().1 += 1;
        }
    }
    let rank = |s: &str| ["fail", "error", "unknown", "pass", "notapplicable", "notchecked"].iter().position(|x| *x == s).unwrap_or(9);
    let mut v: Vec<Count> = m.into_iter().map(|(name, (before, after))| Count { name, before, after }).collect();
    v.sort_by_key(|c| (rank(&c.name), c.name.clone()));
    v
}

/// Before the run every failing rule is open (its first-scan status); after, its final status.
fn dispositions(rules: &[journal::Rule]) -> Vec<Count> {
    let after = |s: RuleStatus| rules.iter().filter(|r| r.status == s).count();
    // Other statuses, where rules have them, by name.
    let mut others: Vec<RuleStatus> = RuleStatus::ALL.iter().copied().filter(|s| !DISPOSITIONS.contains(s) && after(*s) > 0).collect();
    others.sort_by_key(|s| s.as_str());
    DISPOSITIONS.into_iter().chain(others).map(|s| Count { name: s.to_string(), before: before(s, rules), after: after(s) }).collect()
}

/// How many rules the first scan left as `status`: failing rules open, the rest as scanned.
fn before(status: RuleStatus, rules: &[journal::Rule]) -> usize {
    let scanned = |s: ScanResult| rules.iter().filter(|r| r.initial_result == s).count();
    match status {
        // Set aside at the first scan: so they stay.
        RuleStatus::Skipped | RuleStatus::Waived | RuleStatus::Deferred | RuleStatus::OutOfScope => {
            rules.iter().filter(|r| r.status == status).count()
        }
        RuleStatus::StillFailing => rules.iter().filter(|r| r.initial_result == ScanResult::Fail && !r.status.set_aside()).count(),
        RuleStatus::Passing => scanned(ScanResult::Pass),
        RuleStatus::Fixed | RuleStatus::Escalated | RuleStatus::Pending | RuleStatus::Unstable => 0,
        RuleStatus::NotApplicable => scanned(ScanResult::NotApplicable),
        RuleStatus::NotChecked => scanned(ScanResult::NotChecked),
        RuleStatus::NotSelected => scanned(ScanResult::NotSelected),
        RuleStatus::Error => scanned(ScanResult::Error),
        RuleStatus::Unknown => scanned(ScanResult::Unknown),
        RuleStatus::Informational => scanned(ScanResult::Informational),
    }
}

fn roles(data: &RunData) -> Vec<RoleTime> {
    let mut m: BTreeMap<String, RoleTime> = BTreeMap::new();
    let mut lat: BTreeMap<String, i64> = BTreeMap::new();
    for t in &data.turns {
        let e = m.entry(t.role.to_string()).or_insert_with(|| RoleTime {
            role: t.role.to_string(),
            turns: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            time: String::new(),
            errors: 0,
        });
        e.turns += 1;
        e.prompt_tokens += t.prompt_tokens.unwrap_or(t.prompt_tokens_est);
        e.completion_tokens += t.completion_tokens.unwrap_or(0);
        e.errors += usize::from(t.error.is_some());
        *lat.entry(t.role.to_string()).or_default() += t.latency_ms;
    }
    m.into_values()
        .map(|mut r| {
            r.time = ms(lat.get(&r.role).copied().unwrap_or(0));
            r
        })
        .collect()
}

fn reverts(attempts: &[Attempt]) -> Vec<Count> {
    let mut m: BTreeMap<String, usize> = BTreeMap::new();
    for a in attempts {
        if let Some(method) = a.revert_method.filter(|m| *m != RevertMethod::None) {
            *m.entry(method.to_string()).or_default() += 1;
        }
    }
    m.into_iter().map(|(name, n)| Count { name, before: 0, after: n }).collect()
}
