//! temper-report: what a run did, for a human (Markdown, HTML), for a program (JSON), and for
//! an assessor (STIG Viewer checklists: CKL for STIG Viewer 2, CKLB for STIG Viewer 3; OSCAL
//! assessment results and POA&M; Heimdall's HDF).
//!
//! The whole API:
//!
//! ```no_run
//! # async fn f(store: &dyn temper_core::journal::Journal, content: &temper_scap::Benchmark) -> Result<(), temper_report::ReportError> {
//! use temper_report::{Format, load, render, resolve_run};
//! let id = resolve_run(store, "latest").await?; // or "12"
//! let data = load(store, id).await?;
//! let html = render(&data, Some(content), Format::Html)?;
//! # Ok(()) }
//! ```
//!
//! - [`load`] reads one run from the store: the run, its rules, attempts, turns, and this run's
//!   lessons and bans.
//! - [`render`] writes it in a [`Format`]. `content` is the datastream read with the run's
//!   profile (`temper_scap::read_benchmark(path, Some(profile))`): it gives titles, rationale,
//!   DISA ids, the OVAL check and the stock fix. Reports work without it (less detail);
//!   checklists need it and say so.
//! - [`replay_script`] is the fixed rules as one bash script (also inside every report).
//! - [`plan::build`] and [`plan::write`]: the run's proven plan (`temper plan export`).
//! - [`load_fleet`] and [`render_fleet`]: one fleet's targets side by side, and the
//!   escalations that recur across them (Markdown, HTML, JSON).
//!
//! Checklists hold one entry per DISA STIG id (`RHEL-09-255045`); several SSG rules that share
//! one are merged, the worst result winning (error over fail over unknown over pass), so a pass
//! never hides a failure. For a profile with no DISA ids at all (Debian ANSSI, say) each SSG
//! rule is its own entry and its SSG id stands in for the STIG id (`Rule_Ver`) and the V id
//! (`Vuln_Num`), so such runs still give a valid checklist. In a profile with DISA ids, a rule
//! without one is left out. An entry's status comes from the final scan (the first scan when
//! the run has none): pass is NotAFinding, fail and error are Open, notapplicable is
//! Not_Applicable, anything else Not_Reviewed. FINDING_DETAILS holds temper's evidence (each
//! SSG rule's results, status and verdicts), COMMENTS the fix kept or the escalation and its
//! next step. SSG's `unknown` severity, which a checklist cannot carry, is written as medium.
pub mod chart;
mod ckl;
mod cklb;
mod controls;
mod data;
mod fleet;
mod hdf;
mod html;
pub mod interruptions;
mod md;
mod merge;
mod next_step;
mod oscal;
pub mod plan;
mod text;
mod view;

use std::str::FromStr;

pub use controls::{ControlsView, WaiverView, read_content, run_content};
pub use data::{RunData, load, resolve_run};
pub use fleet::{Escalation, FleetReport, TargetRow, load_fleet, render_fleet};
pub use merge::{CklStatus, merge_outcomes, status_of};
/// A duration in milliseconds as the reports write it: `850 ms`, `12.3 s`, `4 min 05 s`, `1 h 02 min`.
pub use text::ms as human_duration;
pub use view::SCHEMA;

/// The run's kept fixes as one bash script (the plan's `replay.sh`), for the reports.
pub fn replay_script(data: &RunData, content: Option<&temper_scap::Benchmark>) -> String {
    plan::replay(&plan::Origin::of_run(&data.run), &plan::steps(data, content))
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Md,
    Html,
    Json,
    /// STIG Viewer 2 checklist (XML).
    Ckl,
    /// STIG Viewer 3 checklist (JSON).
    Cklb,
    /// OSCAL assessment results (JSON).
    OscalAr,
    /// OSCAL plan of action and milestones (JSON).
    OscalPoam,
    /// Heimdall Data Format (JSON).
    Hdf,
}

impl Format {
    pub const ALL: [Format; 8] = [Self::Md, Self::Html, Self::Json, Self::Ckl, Self::Cklb, Self::OscalAr, Self::OscalPoam, Self::Hdf];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Md => "md",
            Self::Html => "html",
            Self::Json => "json",
            Self::Ckl => "ckl",
            Self::Cklb => "cklb",
            Self::OscalAr => "oscal-ar",
            Self::OscalPoam => "oscal-poam",
            Self::Hdf => "hdf",
        }
    }

    /// A file's extension: the name, with `.json` after the JSON formats that are not named so.
    pub fn extension(self) -> &'static str {
        match self {
            Self::OscalAr => "oscal-ar.json",
            Self::OscalPoam => "oscal-poam.json",
            Self::Hdf => "hdf.json",
            Self::Md | Self::Html | Self::Json | Self::Ckl | Self::Cklb => self.as_str(),
        }
    }

    /// Every format's name, for messages: `md, html, json, ckl, cklb, oscal-ar, oscal-poam or hdf`.
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|f| f.as_str()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

impl FromStr for Format {
    type Err = ReportError;
    fn from_str(s: &str) -> Result<Self, ReportError> {
        Self::ALL.into_iter().find(|f| f.as_str().eq_ignore_ascii_case(s)).ok_or_else(|| ReportError::Format(s.to_string()))
    }
}

/// The CLI's `--format`: the names above, without help per value.
#[cfg(feature = "clap")]
impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("store: {0}")]
    Store(#[from] temper_core::journal::JournalError),
    #[error("no run in the store yet: start one with `temper run`")]
    NoRuns,
    #[error("`{0}` is not a run: give a run number or `latest`")]
    BadRun(String),
    #[error("unknown format `{0}`: use {names}", names = Format::names())]
    Format(String),
    #[error("a {0} checklist needs the run's datastream content (for DISA ids, check and fix text)")]
    NeedsContent(Format),
    #[error("run {0} has no rules yet (its first scan did not finish): nothing to put in a checklist")]
    NoRules(i64),
    #[error("{}", match .0 { Some(f) => format!("no run belongs to fleet `{f}`"), None => "no fleet run in the store yet: start one with `temper fleet run`".into() })]
    NoFleet(Option<String>),
    #[error("a fleet has no {0} file: each target has its own (`temper report RUN --format {0}`)")]
    FleetChecklist(Format),
    #[error("template: {0}")]
    Template(#[from] minijinja::Error),
    #[error("writing XML: {0}")]
    Xml(#[from] std::io::Error),
    #[error("writing JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("run {0} has not finished: it has no proven plan yet")]
    Unfinished(i64),
    #[error("run {0} did not record its content's sha256, and the datastream is not on this host to compute it")]
    NoContentSha(i64),
    #[error("{0} is not empty: give a new or empty folder for the plan")]
    NotEmpty(String),
    #[error("writing {0}: {1}")]
    Write(String, std::io::Error),
}

/// Writes `data` in `format`. Every format is text (UTF-8).
pub fn render(data: &RunData, content: Option<&temper_scap::Benchmark>, format: Format) -> Result<String, ReportError> {
    match format {
        Format::Md => Ok(md::render(&view::build(data, content))),
        Format::Html => html::render(&view::build(data, content)),
        Format::Json => Ok(serde_json::to_string_pretty(&view::build(data, content))?),
        Format::Ckl | Format::Cklb => {
            let content = content.ok_or(ReportError::NeedsContent(format))?;
            let list = merge::checklist(data, content)?;
            if format == Format::Ckl { ckl::render(&list) } else { cklb::render(&list) }
        }
        Format::OscalAr => oscal::ar::render(data, content),
        Format::OscalPoam => oscal::poam::render(data, content),
        Format::Hdf => hdf::render(data, content),
    }
}
