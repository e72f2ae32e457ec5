//! The operator's controls a run was started with, stored with it (in `options_json`, under
//! `controls`) so that `resume`, the reports and the checklists see the same ones.
use std::path::Path;

use serde::{Deserialize, Serialize};
use temper_scap::{Benchmark, ScapError};

use crate::Run;
use crate::waiver::{Waiver, WaiverState};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunControls {
    #[serde(default)]
    pub tailoring: Option<TailoringRecord>,
    /// The skill's own waivers and the site's, as they were when the run started.
    #[serde(default)]
    pub waivers: Vec<Waiver>,
}

/// A tailoring file, kept whole: a resumed run scans with the same one even if the file changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailoringRecord {
    /// The path it was given as.
    pub file: String,
    pub sha256: String,
    /// The tailored profile the run uses.
    pub profile: String,
    /// The tailoring document's id.
    pub id: String,
    pub xml: String,
}

impl TailoringRecord {
    /// The file name, for reports and checklists.
    pub fn name(&self) -> &str {
        self.file.rsplit('/').next().unwrap_or(&self.file)
    }
}

impl RunControls {
    /// The run's controls; none for runs started before they existed.
    pub fn of(run: &Run) -> Self {
        #[derive(Deserialize)]
        struct OptionsWithControls {
            #[serde(default)]
            controls: RunControls,
        }
        serde_json::from_str::<OptionsWithControls>(&run.options_json).map(|o| o.controls).unwrap_or_default()
    }

    /// The datastream through the run's tailoring, when it has one (`temper_scap::read_content`).
    pub fn read_content(&self, profile: &str, datastream: &Path) -> Result<Benchmark, ScapError> {
        temper_scap::read_content(datastream, self.tailoring.as_ref().map(|t| t.xml.as_str()), profile)
    }

    /// [`RunControls::read_content`] for a stored run: its controls and its profile.
    pub fn run_content(run: &Run, datastream: &Path) -> Result<Benchmark, ScapError> {
        Self::of(run).read_content(&run.profile, datastream)
    }

    /// Each waiver with its state on the day the run started.
    pub fn waiver_states(&self, run: &Run) -> Vec<(&Waiver, WaiverState)> {
        let day = chrono::DateTime::parse_from_rfc3339(&run.started_at)
            .map(|t| t.date_naive())
            .unwrap_or_else(|_| chrono::Local::now().date_naive());
        self.waivers.iter().map(|w| (w, w.state(day))).collect()
    }
}
