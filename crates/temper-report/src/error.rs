//! What can go wrong when a report is written.
use crate::format::{Format, UnknownFormat};
use crate::run::LoadError;
use temper_journal::RunId;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Format(#[from] UnknownFormat),
    #[error("a {0} checklist needs the run's datastream content (for DISA ids, check and fix text)")]
    NeedsContent(Format),
    #[error("run {0} has no rules yet (its first scan did not finish): nothing to put in a checklist")]
    NoRules(RunId),
    #[error("a fleet has no {0} file: each target has its own (`temper report RUN --format {0}`)")]
    FleetChecklist(Format),
    #[error("template: {0}")]
    Template(#[from] minijinja::Error),
    #[error("writing XML: {0}")]
    Xml(#[from] std::io::Error),
    #[error("writing JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0} is not empty: give a new or empty folder for the plan")]
    NotEmpty(String),
    #[error("writing {0}: {1}")]
    Write(String, std::io::Error),
}
