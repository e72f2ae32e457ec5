use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The summary the loop writes at the end of a run (`runs.summary_json`). Read leniently: a
/// field an older or newer writer leaves out keeps its default.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSummary {
    pub run: i64,
    pub exit_code: i64,
    /// Rules by final status: fixed, escalated, skipped, waived, deferred, still_failing, passing...
    pub statuses: BTreeMap<String, usize>,
    pub before: BTreeMap<String, usize>,
    pub after: BTreeMap<String, usize>,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    pub attempts: usize,
    pub reverts: BTreeMap<String, usize>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// This process's wall time, and its parts.
    pub wall_secs: f64,
    pub guest_secs: f64,
    pub llm_secs: f64,
    pub harness_secs: f64,
    pub harness_pct: f64,
    /// Rules the final scan found failing that the run did not disposition.
    pub failing_after: Vec<String>,
}
