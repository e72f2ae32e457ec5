//! temper-report: what a run did, for a human (Markdown, HTML), for a program (JSON), and for
//! an assessor (STIG Viewer checklists: CKL for STIG Viewer 2, CKLB for STIG Viewer 3; OSCAL
//! assessment results and POA&M; Heimdall's HDF).
//!
//! The whole API:
//!
//! ```no_run
//! # async fn f(store: &dyn temper_journal::Journal, content: &temper_scap::Benchmark) -> Result<(), temper_report::ReportError> {
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
//! - [`chart_svg`] draws a run's [`ProgressChart`] (the HTML report and the web view).
//! - [`plan::build`] and [`plan::write`]: the run's proven plan (`temper plan export`), the
//!   folder and what is in it.
//! - [`applied`]: how a run applied a plan given to it, step by step ([`PlanView`]).
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
//!
//! Its floors, each using only those below it: `text`, `format` and `replay` at the bottom;
//! `run` (one run loaded from the store); `error`; `view` (the values every format renders);
//! the formats (`md`, `html`, `assessor`, `plan`); and this file, which picks one.
mod assessor;
mod error;
mod format;
mod html;
mod md;
pub mod plan;
mod replay;
mod run;
mod text;
mod view;

pub use assessor::{CklStatus, merge_outcomes, status_of};
pub use error::ReportError;
pub use format::{Format, UnknownFormat};
pub use html::{PLAN as PLAN_TEMPLATE, svg as chart_svg};
pub use replay::replay_script;
pub use run::{
    Interruption, LoadError, NotApplied, PlanCounts, PlanTry, PlanView, ProgressChart, RunData, StepOutcome, StepView, applied,
    interruptions, load, resolve_run,
};
/// A duration in milliseconds as the reports write it: `850 ms`, `12.3 s`, `4 min 05 s`, `1 h 02 min`.
pub use text::ms as human_duration;
pub use view::{ControlsView, FleetEscalation, FleetReport, SCHEMA, TargetRow, WaiverView, load_fleet};

/// Writes `data` in `format`. Every format is text (UTF-8).
pub fn render(data: &RunData, content: Option<&temper_scap::Benchmark>, format: Format) -> Result<String, ReportError> {
    let needs_content = || content.ok_or(ReportError::NeedsContent(format));
    match format {
        Format::Md => Ok(md::render(&view::build(data, content))),
        Format::Html => html::render(&view::build(data, content)),
        Format::Json => Ok(serde_json::to_string_pretty(&view::build(data, content))?),
        Format::Ckl => assessor::ckl(data, needs_content()?),
        Format::Cklb => assessor::cklb(data, needs_content()?),
        Format::OscalAr => assessor::oscal_ar(data, content),
        Format::OscalPoam => assessor::oscal_poam(data, content),
        Format::Hdf => assessor::hdf(data, content),
    }
}

/// Writes the fleet report as Markdown, HTML or JSON; checklists are per target.
pub fn render_fleet(r: &FleetReport, format: Format) -> Result<String, ReportError> {
    match format {
        Format::Md => Ok(md::render_fleet(r)),
        Format::Html => html::render_fleet(r),
        Format::Json => Ok(serde_json::to_string_pretty(r)?),
        Format::Ckl | Format::Cklb | Format::OscalAr | Format::OscalPoam | Format::Hdf => Err(ReportError::FleetChecklist(format)),
    }
}
