//! `/`: the runs; `/runs/{id}`: one run, its rules and its events.
use axum::extract::{Path, State};
use axum::response::Html;
use serde::Serialize;
use temper_core::journal::{Rule, Run};
use temper_report::Format;

use crate::WebError;
use crate::pages::{EventView, RunRow};
use crate::progress::Progress;
use crate::state::AppState;

/// The runs page lists this many, newest first.
const RUNS: i64 = 100;

pub async fn index(State(app): State<AppState>) -> Result<Html<String>, WebError> {
    let mut rows = Vec::new();
    for run in app.journal.list_runs(RUNS).await? {
        let rules = app.journal.rules(run.id).await?;
        rows.push(RunRow { p: Progress::of(&run, &rules), run });
    }
    #[derive(Serialize)]
    struct Page {
        runs: Vec<RunRow>,
    }
    app.pages.render("index.html", Page { runs: rows })
}

pub async fn show(State(app): State<AppState>, Path(id): Path<i64>) -> Result<Html<String>, WebError> {
    let run = app.run(id).await?;
    let rules = app.journal.rules(id).await?;
    let events = app.journal.events(id, 0).await?;
    let p = Progress::of(&run, &rules);
    let last_event = events.last().map_or(0, |e| e.id);
    let events: Vec<EventView> = events.iter().rev().map(EventView::from).collect();
    let formats: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
    app.pages.render("run.html", RunPage { run, p, rules, events, last_event, formats })
}

#[derive(Serialize)]
struct RunPage {
    run: Run,
    p: Progress,
    rules: Vec<Rule>,
    /// Newest first.
    events: Vec<EventView>,
    /// Where the live stream starts.
    last_event: i64,
    formats: Vec<&'static str>,
}
