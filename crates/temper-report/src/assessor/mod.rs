//! What an assessor's tools read: STIG Viewer checklists (CKL for STIG Viewer 2, CKLB for STIG
//! Viewer 3) from one merged checklist model, OSCAL assessment results and POA&M, and Heimdall's
//! HDF.
mod checklist;
mod ckl;
mod cklb;
mod hdf;
mod oscal;

use temper_scap::Benchmark;

pub use checklist::{CklStatus, merge_outcomes, status_of};
pub use hdf::render as hdf;
pub use oscal::ar::render as oscal_ar;
pub use oscal::poam::render as oscal_poam;

use crate::error::ReportError;
use crate::run::RunData;

/// The STIG Viewer 2 checklist (XML).
pub fn ckl(data: &RunData, content: &Benchmark) -> Result<String, ReportError> {
    ckl::render(&checklist::checklist(data, content)?)
}

/// The STIG Viewer 3 checklist (JSON).
pub fn cklb(data: &RunData, content: &Benchmark) -> Result<String, ReportError> {
    cklb::render(&checklist::checklist(data, content)?)
}
