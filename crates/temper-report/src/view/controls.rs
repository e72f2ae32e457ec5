//! The run's tailoring and waivers, as the reports show them: each waiver with its expiry,
//! and an expired one flagged (it no longer applied, so its rules were worked on). The datastream
//! a run reads is `temper_scap::read_content` (`RunControls::read_content`).
use serde::Serialize;
use temper_journal::controls::RunControls;
use temper_journal::waiver::WaiverState;

use crate::run::RunData;

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

/// The checklist's target comment: the run, and the tailoring it was scanned with.
pub fn target_comment(data: &RunData) -> String {
    let mut s = format!("temper run {} on {}", data.run.id, data.run.target);
    if let Some(t) = RunControls::of(&data.run).tailoring {
        s.push_str(&format!("; tailoring {} (profile {}, sha256 {})", t.name(), t.profile, t.sha256));
    }
    s
}
