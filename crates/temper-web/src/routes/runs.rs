//! `/`: the runs; `/runs/{id}`: one run, its progress chart, the plan it applied (if any), its
//! rules (in review order, or those of one status: `?status=fixed`) and its events.
use axum::extract::{Path, Query, State};
use axum::response::Html;
use serde::{Deserialize, Serialize};
use temper_journal::{Rule, RuleStatus, Run, RunStatus};
use temper_report::Format;
use temper_report::PlanView;
use temper_report::{ProgressChart, chart_svg};

use crate::WebError;
use crate::pages::{EventView, RunRow};
use crate::progress::RunProgress;
use crate::state::AppState;
use temper_journal::RunId;

/// The runs page lists this many, newest first.
const RUNS: i64 = 100;

pub async fn index(State(app): State<AppState>) -> Result<Html<String>, WebError> {
    let mut rows = Vec::new();
    for run in app.journal.list_runs(RUNS).await? {
        let rules = app.journal.rules(run.id).await?;
        let events = if run.status == RunStatus::Running { app.journal.events(run.id, None).await? } else { Vec::new() };
        let memory = crate::progress::remembered(&app, &run).await?;
        rows.push(RunRow { p: RunProgress::of(&run, &rules, &events, &memory), run });
    }
    #[derive(Serialize)]
    struct Page {
        runs: Vec<RunRow>,
    }
    app.pages.render("index.html", Page { runs: rows })
}

/// The run page's query: `?status=fixed` shows the rules of that status only.
#[derive(Debug, Default, Deserialize)]
pub struct RunQuery {
    status: Option<String>,
}

impl RunQuery {
    /// The status asked for; none (or empty): every rule.
    fn status(&self) -> Result<Option<RuleStatus>, WebError> {
        match self.status.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some(s) => s.parse().map(Some).map_err(|_| WebError::BadStatus(s.to_string())),
        }
    }
}

pub async fn show(State(app): State<AppState>, Path(id): Path<RunId>, Query(q): Query<RunQuery>) -> Result<Html<String>, WebError> {
    let filter = q.status()?;
    let run = app.run(id).await?;
    let mut rules = app.journal.rules(id).await?;
    let events = app.journal.events(id, None).await?;
    let p = RunProgress::of(&run, &rules, &events, &crate::progress::remembered(&app, &run).await?);
    let total = rules.len();
    let plan = temper_report::applied(&run, &rules, &app.journal.attempts(id).await?, &events);
    let interruptions = temper_report::interruptions(&events);
    RuleStatus::sort_for_review(&mut rules, |r| r.status);
    if let Some(status) = filter {
        rules.retain(|r| r.status == status);
    }
    let chart = chart_svg(&live_chart(&run, &events));
    let last_event = events.last().map_or(0, |e| e.id.get());
    let events: Vec<EventView> = events.iter().rev().map(EventView::from).collect();
    let formats: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
    app.pages.render("run.html", RunPage { run, p, rules, total, filter, chart, plan, interruptions, events, last_event, formats })
}

/// The progress chart alone, as the run page has it: the live page fetches it again as the run
/// goes on.
pub async fn chart(State(app): State<AppState>, Path(id): Path<RunId>) -> Result<Html<String>, WebError> {
    let run = app.run(id).await?;
    Ok(Html(chart_svg(&live_chart(&run, &app.journal.events(id, None).await?))))
}

#[derive(Serialize)]
struct RunPage {
    run: Run,
    p: RunProgress,
    /// In review order; only `filter`'s when set.
    rules: Vec<Rule>,
    /// Every rule of the run, shown or not.
    total: usize,
    filter: Option<RuleStatus>,
    /// The progress chart (SVG, or a note), escaped by `chart_svg`.
    chart: String,
    /// The proven plan the run applied, step by step (`temper run --plan`).
    plan: Option<PlanView>,
    /// Each time the run stopped and was resumed, in order.
    interruptions: Vec<temper_report::Interruption>,
    /// Newest first.
    events: Vec<EventView>,
    /// Where the live stream starts.
    last_event: i64,
    formats: Vec<&'static str>,
}

/// The chart of `events`; a running run's time axis runs to now.
fn live_chart(run: &Run, events: &[temper_journal::Event]) -> ProgressChart {
    let chart = ProgressChart::of(events);
    if run.status == RunStatus::Running { chart.to_now(events, chrono::Utc::now().fixed_offset()) } else { chart }
}
