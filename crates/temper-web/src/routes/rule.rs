//! `/runs/{id}/rules/{rule_id}`: one rule, its attempts, and what the run learned on it.
use axum::extract::{Path, State};
use axum::response::Html;
use serde::Serialize;
use temper_journal::{Ban, Lesson, Recall, Rule, Run};
use temper_report::StepView;
use temper_scap::oval::{Evidence, Finding};

use crate::WebError;
use crate::pages::LabeledAttempt;
use crate::state::AppState;
use temper_journal::RunId;

pub async fn show(State(app): State<AppState>, Path((id, rule_id)): Path<(RunId, String)>) -> Result<Html<String>, WebError> {
    let run = app.run(id).await?;
    let rule = app.rule(id, &rule_id).await?;
    let attempts = app.journal.rule_attempts(id, &rule_id).await?;
    let plan = plan_step(&app, &run, &rule_id).await?;
    let attempts: Vec<LabeledAttempt> = attempts.iter().map(|a| LabeledAttempt::new(a, &attempts)).collect();
    let lessons: Vec<Lesson> =
        app.journal.lessons(Recall::all().rule(&rule_id)).await?.into_iter().filter(|l| l.run_id == Some(id)).collect();
    let bans: Vec<Ban> = app
        .journal
        .bans(Recall::all())
        .await?
        .into_iter()
        .filter(|b| b.run_id == Some(id) && b.rule_id.as_ref() == Some(&rule_id))
        .collect();
    let findings = rule.final_evidence.as_ref().map(Evidence::findings).unwrap_or_default();
    let evidence = rule.final_evidence.as_ref().map(Evidence::to_text);
    app.pages.render("rule.html", RulePage { run, rule, plan, findings, evidence, attempts, lessons, bans })
}

#[derive(Serialize)]
struct RulePage {
    run: Run,
    rule: Rule,
    /// The plan step on this rule, when the run applied a plan that has one.
    plan: Option<StepView>,
    /// What the final scan found wrong with it, against what the check expects.
    findings: Vec<Finding>,
    evidence: Option<String>,
    attempts: Vec<LabeledAttempt>,
    lessons: Vec<Lesson>,
    bans: Vec<Ban>,
}

/// The step of the run's plan on `rule_id` and its outcome, as the run page shows it.
async fn plan_step(app: &AppState, run: &Run, rule_id: &str) -> Result<Option<StepView>, WebError> {
    let (rules, attempts, events) =
        (app.journal.rules(run.id).await?, app.journal.attempts(run.id).await?, app.journal.events(run.id, None).await?);
    Ok(temper_report::applied(run, &rules, &attempts, &events).and_then(|p| p.step(rule_id).cloned()))
}
