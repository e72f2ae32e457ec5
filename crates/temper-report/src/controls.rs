//! The run's tailoring and waivers, as the reports show them: each waiver with its expiry,
//! and an expired one flagged (it no longer applied, so its rules were worked on).
use std::path::Path;

use serde::Serialize;
use temper_core::controls::RunControls;
use temper_core::journal::Run;
use temper_core::waiver::WaiverState;
use temper_scap::{Benchmark, ScapError, Tailoring};

use crate::RunData;

#[derive(Debug, Clone, Serialize)]
pub struct ControlsView {
    pub tailoring: Option<TailoringView>,
    pub waivers: Vec<WaiverView>,
    /// Expired waivers (they no longer apply; the report flags each).
    pub expired: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct TailoringView {
    pub file: String,
    pub id: String,
    pub profile: String,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WaiverView {
    pub rule: String,
    pub reason: String,
    pub approved_by: String,
    pub expires: String,
    pub state: WaiverState,
    pub source: String,
    /// The run's rules it names, with their status in this run.
    pub rules: Vec<String>,
}

pub fn build(data: &RunData) -> ControlsView {
    let controls = RunControls::of(&data.run);
    let tailoring = controls.tailoring.as_ref().map(|t| TailoringView {
        file: t.file.clone(),
        id: t.id.clone(),
        profile: t.profile.clone(),
        sha256: t.sha256.clone(),
    });
    let waivers: Vec<WaiverView> = controls
        .waiver_states(&data.run)
        .into_iter()
        .map(|(w, state)| WaiverView {
            rule: w.rule.clone(),
            reason: w.reason.clone(),
            approved_by: w.approved_by.clone(),
            expires: w.expires.to_string(),
            state,
            source: w.source.clone(),
            rules: data
                .rules
                .iter()
                .filter(|r| w.matches(temper_scap::short_rule_id(&r.rule_id)))
                .map(|r| format!("{} ({})", temper_scap::short_rule_id(&r.rule_id), r.status))
                .collect(),
        })
        .collect();
    let expired = waivers.iter().filter(|w| w.state == WaiverState::Expired).count();
    ControlsView { tailoring, waivers, expired }
}

/// The datastream as a run reads it: through its tailoring when it has one. The loop, the
/// reports and the web view all read content here.
pub fn read_content(controls: &RunControls, profile: &str, datastream: &Path) -> Result<Benchmark, ScapError> {
    match &controls.tailoring {
        Some(t) => temper_scap::read_benchmark_tailored(datastream, &Tailoring::parse(t.xml.as_bytes())?, Some(profile)),
        None => temper_scap::read_benchmark(datastream, Some(profile)),
    }
}

/// [`read_content`] for a stored run.
pub fn run_content(run: &Run, datastream: &Path) -> Result<Benchmark, ScapError> {
    read_content(&RunControls::of(run), &run.profile, datastream)
}

/// The checklist's target comment: the run, and the tailoring it was scanned with.
pub fn target_comment(data: &RunData) -> String {
    let mut s = format!("temper run {} on {}", data.run.id, data.run.target);
    if let Some(t) = RunControls::of(&data.run).tailoring {
        s.push_str(&format!("; tailoring {} (profile {}, sha256 {})", t.name(), t.profile, t.sha256));
    }
    s
}
