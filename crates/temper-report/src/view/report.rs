//! The run report as one value: what Markdown, HTML and JSON all show.
use serde::Serialize;
use temper_journal::{self as journal, RuleStatus, RunId};
use temper_scap::{Benchmark, Severity};

use super::controls::ControlsView;
use super::counts::{BeforeAfter, RoleTime, dispositions, results, reverts, roles};
use super::info::rule_info;
use super::rules::{FixedRule, LeftFailing, RuleFindings, RuleLine, RuleSection, StatusGroup, fixed_rules, section};
use crate::replay::replay_script;
use crate::run::{Interruption, PlanView, ProgressChart, RunData};
use crate::text::{ms, span_ms};

/// The JSON report's schema name (`schemas/report.schema.json`): 2, `reboot` is a value with its
/// reason; 3, `plan`; 4, `interruptions`; 7, the rest of the run's time in its parts
/// (`time_split.rest`); 8, `cross_examination` and each rule's `offline`; 9, the rest's
/// `replays` part.
pub const SCHEMA: &str = "temper-report/10";

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub run: RunInfo,
    /// Scan results, first scan against final scan.
    pub results: Vec<BeforeAfter>,
    /// What the run did with each rule: fixed, escalated, skipped...
    pub dispositions: Vec<BeforeAfter>,
    /// Failing rules outside the run's scope (`--rules`): not worked on, counted in no total.
    pub out_of_scope: usize,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    /// `61.20 → 78.50`, `-` for a score not known.
    pub score: String,
    /// Whether the final state survived a cold reboot, and why it says so.
    pub reboot: RebootView,
    pub roles: Vec<RoleTime>,
    pub attempt_time: AttemptTime,
    pub reverts: Vec<BeforeAfter>,
    pub timing: Option<Timing>,
    /// Where a finished run's wall time went: its fix scripts, and the proof around them.
    pub time_split: Option<journal::TimeSplit>,
    pub escalated: Vec<RuleSection>,
    /// The other rules the final scan found failing, with what it found (OVAL engine runs).
    pub left_failing: Vec<LeftFailing>,
    pub fixed: Vec<FixedRule>,
    /// In review order ([`RuleStatus::REVIEW_ORDER`]), each status in content order.
    pub rules: Vec<RuleLine>,
    /// The statuses the rules have, in review order, with their counts.
    pub groups: Vec<StatusGroup>,
    /// Rules fixed and scores over time.
    pub progress: ProgressChart,
    pub controls: ControlsView,
    pub replay: String,
    /// The proven plan the run applied (`temper run --plan`): each step's outcome; `null` for a
    /// run without a plan.
    pub plan: Option<PlanView>,
    /// Each time the run stopped and `temper resume` took it up, in order; empty for a run that
    /// went through in one go.
    pub interruptions: Vec<Interruption>,
    /// The guest's final scan against its disk judged from outside the guest; `null` for a run
    /// that did not ask for it (or has not finished).
    pub cross_examination: Option<super::cross::CrossView>,
}

#[derive(Debug, Serialize)]
pub struct RebootView {
    pub proof: journal::RebootOutcome,
    /// In words (`temper_journal::reboot_line`).
    pub reason: String,
}

impl RebootView {
    fn of(summary: Option<&journal::RunSummary>) -> Self {
        match summary {
            Some(s) => Self { proof: journal::RebootOutcome::of(s.rebooted), reason: journal::reboot_line(s.rebooted).into() },
            None => Self { proof: journal::RebootOutcome::NotRun, reason: "the run has not finished".into() },
        }
    }
}

#[derive(Debug, Serialize)]
pub struct RunInfo {
    pub id: RunId,
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
                offline: super::cross::offline_cell(r.offline_verdict.as_ref()),
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
            let found = RuleFindings::of(r.final_evidence.as_ref()?);
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
        schema: SCHEMA,
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
        out_of_scope: temper_journal::Tally::of(&data.rules).out_of_scope,
        score: format!("{} → {}", score_text(score_before), score_text(score_after)),
        reboot: RebootView::of(data.summary.as_ref()),
        score_before,
        score_after,
        roles: roles(data),
        attempt_time: AttemptTime {
            attempts: data.attempts.len(),
            apply: ms(data.attempts.iter().filter_map(|a| a.findings.apply_ms).sum()),
            evaluate: ms(data.attempts.iter().filter_map(|a| a.findings.evaluate_ms).sum()),
            revert: ms(data.attempts.iter().filter_map(|a| a.findings.revert_ms).sum()),
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
        controls: super::controls::build(data),
        replay: replay_script(data.records(), content),
        plan: data.plan.clone(),
        interruptions: data.interruptions.clone(),
        time_split: data.split.clone(),
        cross_examination: super::cross::CrossView::of(data, content),
    }
}
