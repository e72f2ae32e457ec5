//! What the templates (and the event stream) are given, beyond the journal's own records.
use serde::Serialize;
use temper_journal::{Attempt, Event, EventId, EventKind, Run};

use crate::progress::RunProgress;

/// A line of the runs page.
#[derive(Debug, Serialize)]
pub struct RunRow {
    pub run: Run,
    pub p: RunProgress,
}

/// One attempt with what the report also derives: its label, outcome and warning. Its fields,
/// the regressions among them, are the attempt's own.
#[derive(Debug, Serialize)]
pub struct LabeledAttempt {
    #[serde(flatten)]
    pub attempt: Attempt,
    pub label: String,
    pub outcome: String,
    pub warning: Option<String>,
}

impl LabeledAttempt {
    /// `all`: the rule's attempts, which tell a second pass from a first try.
    pub fn new(a: &Attempt, all: &[Attempt]) -> Self {
        Self { attempt: a.clone(), label: a.label(all), outcome: a.outcome(), warning: a.warning() }
    }
}

/// A journal event as the page lists it and as the stream sends it (the same fields).
#[derive(Debug, Serialize)]
pub struct EventView {
    pub id: EventId,
    pub ts: String,
    pub kind: EventKind,
    pub rule_id: Option<String>,
    pub rule_short: Option<String>,
    pub data: String,
}

impl From<&Event> for EventView {
    fn from(e: &Event) -> Self {
        Self {
            id: e.id,
            ts: e.ts.clone(),
            kind: e.kind,
            rule_id: e.rule_id.clone(),
            rule_short: e.rule_id.as_deref().map(|r| super::format::short_id(r).to_string()),
            data: e.json(),
        }
    }
}
