//! How a run made with `temper run --plan` applied its plan: for each step, whether its fix was
//! kept, redone by the loop (and why), not needed on this target, or escalated. The one place
//! these outcomes are computed: the Markdown, HTML and JSON reports and the web view show them.
use serde::{Deserialize, Serialize};
use temper_journal::plan::{PlanOrigin, PlannedFix};
use temper_journal::{Attempt, Event, EventData, FixSource, PickedBy, Rule, RuleStatus, Run, RunStatus};
use temper_journal::{AttemptNo, RunId, Verdict};
use temper_scap::short_rule_id;

/// The plan a run applied, step by step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanView {
    /// The run the plan was exported from (absent when the run's options do not say).
    pub from_run: Option<RunId>,
    /// The plan's folder, as the run was given it.
    pub dir: Option<String>,
    /// Given (`--plan`), or the job's last proven plan, applied by default.
    pub origin: PlanOrigin,
    /// In the plan's order.
    pub steps: Vec<StepView>,
    pub counts: PlanCounts,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    pub n: usize,
    pub rule_id: String,
    pub short_id: String,
    pub outcome: StepOutcome,
    /// Times the step's batch was stopped by another step and it was applied again (these are
    /// not tries).
    pub interrupted: usize,
    /// The outcome in words.
    pub says: String,
}

/// What became of one plan step on this target.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepOutcome {
    /// Applied from the plan and kept: the fix in force is the plan's.
    Kept { attempt: AttemptNo },
    /// The plan's fix did not hold here; the normal loop fixed the rule with another fix.
    Redone { plan: PlanTry, fixed_by: FixSource, attempt: AttemptNo },
    /// The plan's fix did not hold here, nor did the loop's: the rule needs a human.
    Escalated { plan: PlanTry, reason: Option<String> },
    /// The plan's fix did not hold here, and the rule is not fixed (yet): its status says where
    /// it stands.
    Open { plan: PlanTry, status: RuleStatus },
    /// Never applied on this target.
    NotApplied { why: NotApplied },
}

/// The plan step's own attempt, and why it was not kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanTry {
    pub attempt: AttemptNo,
    /// `None` while it is being judged.
    pub verdict: Option<Verdict>,
    pub reason: String,
    /// It was kept, then rolled back (by a regression check, the reboot proof or the final scan).
    pub rolled_back: bool,
}

/// Why a step was never applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NotApplied {
    /// The rule passed at this target's first scan: nothing to fix.
    PassedAlready,
    /// The rule does not apply to this target.
    NotApplicable,
    /// The rule was fixed in this run before its step came: by another step's fix, or another
    /// attempt of the loop.
    FixedOtherwise,
    /// The rule is not in this target's scan.
    NotScanned,
    /// Set aside by the run (waived, skipped, deferred, out of scope) or otherwise not worked
    /// on: its status says which.
    SetAside { status: RuleStatus },
    /// The run has not reached it (yet).
    NotReached,
}

/// How many steps ended each way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlanCounts {
    pub steps: usize,
    pub kept: usize,
    pub redone: usize,
    pub escalated: usize,
    pub open: usize,
    pub not_applied: usize,
}

/// The plan a run applied, from its stored options (`temper run --plan` keeps the steps there)
/// and else from its pick events; `None` for a run without a plan.
pub fn applied(run: &Run, rules: &[Rule], attempts: &[Attempt], events: &[Event]) -> Option<PlanView> {
    let stored = stored_plan(run);
    let mut steps: Vec<(usize, String)> =
        stored.as_ref().map(|p| p.fixes.iter().map(|f| (f.n, f.rule.clone())).collect()).unwrap_or_default();
    for e in events {
        if let (EventData::Pick(p), Some(rule)) = (&e.data, &e.rule_id)
            && let PickedBy::Plan { plan_step } = p.by
            && !steps.iter().any(|(n, _)| *n == plan_step)
        {
            steps.push((plan_step, rule.clone()));
        }
    }
    if steps.is_empty() && stored.is_none() {
        return None;
    }
    steps.sort_by_key(|(n, _)| *n);
    let finished = run.status == RunStatus::Finished;
    let steps: Vec<StepView> = steps
        .into_iter()
        .map(|(n, rule_id)| {
            let mine: Vec<&Attempt> = attempts.iter().filter(|a| a.spec.rule_id == rule_id).collect();
            let interrupted = mine.iter().filter(|a| a.spec.source == FixSource::Plan && interrupted(a)).count();
            let outcome = outcome(rules.iter().find(|r| r.rule_id == rule_id), &mine, finished);
            StepView { n, short_id: short_rule_id(&rule_id).to_string(), says: outcome.says(), outcome, interrupted, rule_id }
        })
        .collect();
    let counts = PlanCounts::of(&steps);
    let origin = stored.as_ref().map(|p| p.origin).unwrap_or_default();
    Some(PlanView { from_run: stored.as_ref().map(|p| p.from_run), dir: stored.map(|p| p.dir), origin, steps, counts })
}

/// What `temper run` stores of the plan in the run's options (`plan`).
#[derive(Deserialize)]
struct Stored {
    dir: String,
    from_run: RunId,
    fixes: Vec<PlannedFix>,
    #[serde(default)]
    origin: PlanOrigin,
}

fn stored_plan(run: &Run) -> Option<Stored> {
    #[derive(Deserialize)]
    struct OptionsWithPlan {
        plan: Option<Stored>,
    }
    serde_json::from_str::<OptionsWithPlan>(&run.options_json).ok()?.plan
}

/// A step's outcome from its rule and the rule's attempts (in the order they started).
fn outcome(rule: Option<&Rule>, attempts: &[&Attempt], finished: bool) -> StepOutcome {
    let Some(rule) = rule else { return StepOutcome::NotApplied { why: NotApplied::NotScanned } };
    let plan = attempts.iter().rev().find(|a| a.spec.source == FixSource::Plan && !interrupted(a));
    let Some(plan) = plan else {
        let why = match rule.status {
            RuleStatus::Passing => NotApplied::PassedAlready,
            RuleStatus::NotApplicable => NotApplied::NotApplicable,
            RuleStatus::Fixed => NotApplied::FixedOtherwise,
            RuleStatus::Pending | RuleStatus::StillFailing if !finished => NotApplied::NotReached,
            status => NotApplied::SetAside { status },
        };
        return StepOutcome::NotApplied { why };
    };
    if plan.in_force() {
        return StepOutcome::Kept { attempt: plan.n };
    }
    let rolled_back = matches!(plan.verdict, Some(Verdict::Fixed | Verdict::NeedsReboot));
    let try_ = PlanTry { attempt: plan.n, verdict: plan.verdict, reason: plan.verdict_reason.clone().unwrap_or_default(), rolled_back };
    match (rule.status, attempts.iter().rev().find(|a| a.in_force())) {
        (RuleStatus::Fixed, Some(by)) => StepOutcome::Redone { plan: try_, fixed_by: by.spec.source, attempt: by.n },
        (RuleStatus::Escalated, _) => StepOutcome::Escalated { plan: try_, reason: rule.reason.clone() },
        (status, _) => StepOutcome::Open { plan: try_, status },
    }
}

/// Closed without a judgement of its own: a crash, or its batch stopped by another step. Not a
/// try; the step is applied again.
fn interrupted(a: &Attempt) -> bool {
    !a.is_try() || a.verdict == Some(Verdict::Interrupted)
}

impl StepOutcome {
    /// `kept`, `redone`, `escalated`, `open`, `not_applied`: for CSS classes and tests.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Kept { .. } => "kept",
            Self::Redone { .. } => "redone",
            Self::Escalated { .. } => "escalated",
            Self::Open { .. } => "open",
            Self::NotApplied { .. } => "not_applied",
        }
    }

    /// In words, for the reports and the web view.
    pub fn says(&self) -> String {
        match self {
            Self::Kept { attempt } => format!("applied from the plan and kept (attempt {attempt})"),
            Self::Redone { plan, fixed_by, attempt } => {
                format!("redone by the loop: {}; fixed by the {fixed_by} fix (attempt {attempt})", plan.why())
            }
            Self::Escalated { plan, reason } => {
                let reason = reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
                format!("escalated: {}; the loop found no fix that holds either{reason}", plan.why())
            }
            Self::Open { plan, status } => format!("not fixed: {}; the rule is {status}", plan.why()),
            Self::NotApplied { why } => why.says(),
        }
    }
}

impl PlanTry {
    /// Why the plan's fix was not kept, in words.
    pub fn why(&self) -> String {
        let verdict = self.verdict.map_or_else(|| "not judged yet".to_string(), |v| v.to_string());
        let reason = if self.reason.is_empty() { String::new() } else { format!(" ({})", self.reason) };
        if self.rolled_back {
            format!("the plan's fix (attempt {}) was kept, then rolled back{reason}", self.attempt)
        } else {
            format!("the plan's fix (attempt {}) was {verdict}{reason}", self.attempt)
        }
    }
}

impl NotApplied {
    pub fn says(&self) -> String {
        match self {
            Self::PassedAlready => "not needed: the rule passed already on this target".into(),
            Self::NotApplicable => "not needed: the rule does not apply to this target".into(),
            Self::FixedOtherwise => "not needed: the rule was fixed in this run without it".into(),
            Self::NotScanned => "not applied: the rule is not in this target's scan".into(),
            Self::SetAside { status } => format!("not applied: the rule is {status} in this run"),
            Self::NotReached => "not applied yet: the run has not reached it".into(),
        }
    }
}

impl PlanCounts {
    fn of(steps: &[StepView]) -> Self {
        let mut c = Self { steps: steps.len(), ..Self::default() };
        for s in steps {
            let n = match s.outcome {
                StepOutcome::Kept { .. } => &mut c.kept,
                StepOutcome::Redone { .. } => &mut c.redone,
                StepOutcome::Escalated { .. } => &mut c.escalated,
                StepOutcome::Open { .. } => &mut c.open,
                StepOutcome::NotApplied { .. } => &mut c.not_applied,
            };
            *n += 1;
        }
        c
    }
}

impl PlanView {
    /// The step on `rule_id`, if the plan has one.
    pub fn step(&self, rule_id: &str) -> Option<&StepView> {
        self.steps.iter().find(|s| s.rule_id == rule_id)
    }
}
