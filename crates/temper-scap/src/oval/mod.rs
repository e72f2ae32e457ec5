//! The OVAL scan engine's host side: for a set of rules, one small OVAL definitions document
//! cut from the datastream (the rules' definitions and everything they reference, plus the CPE
//! definitions their platforms need) and the profile's values as OVAL external variables, so
//! `oscap oval eval` can stand in for a whole `oscap xccdf eval`. Then the OVAL results mapped
//! back to XCCDF rule results exactly as oscap maps them.
//!
//! Rules whose result does not come from exactly one OVAL definition are routed to the xccdf
//! path with an [`XccdfReason`]. Platform applicability (the Benchmark's, each Group's and the
//! rule's) is evaluated from the CPE OVAL definitions, as oscap does: a platform holds only
//! when its definition is `true`. Either in the same document ([`OvalPlan::build`]) or first on
//! its own ([`OvalPlan::platforms`], then [`OvalPlan::split`]) so that the checks of rules that are
//! not applicable never run, as under `oscap xccdf eval`.
//!
//! Figures on this host (Debian 12, oscap 1.3.7, see `tests/oval_engine.rs`): one ANSSI rule
//! 23 ms against 0.99 s for `oscap xccdf eval --rule`; ten rules 0.8 s against 2.6 s.
//!
//! Pure: reads bytes, writes bytes; running oscap is the caller's.
mod cache;
mod content;
mod cpe;
pub(crate) mod doc;
mod error;
mod evidence;
mod graph;
pub(crate) mod index;
pub mod packages;
mod plan;
mod results;
mod route;
mod vars;
mod vocab;
mod walk;
mod xccdf;

pub use cache::{OvalEngine, PlanKey};
pub use content::OvalContent;
pub use error::OvalError;
pub(crate) use evidence::shown;
pub use evidence::{
    CollectedItem, Criterion, Definitions, Evidence, Field, Filter, FilterAction, Finding, MAX_ITEMS, NamedReport, Operator, OvalReport,
    Reading, RefusedItem, Spec, TestEvidence, TestResults,
};
pub use graph::{DocElement, PathEntity, document_elements};
pub use index::{DefClass, Section};
pub use plan::{CutFor, OvalPlan, PlanStats, PlannedRule, Stage};
pub use results::{DefinitionResult, OvalResults, RuleOutcome, Split};
pub use route::{OvalCheck, Route, XccdfReason};
pub use vocab::{Check, Existence, Flag, ItemStatus};
pub use walk::tree_walkers;

/// Where a plan's files are, for `oscap oval eval`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OvalEval<'a> {
    pub document: &'a str,
    pub variables: Option<&'a str>,
    pub results: &'a str,
    /// `--skip-valid`: the document is cut from a datastream oscap already validated, and
    /// schema validation is a fixed cost of each call (about 0.5 s for 400 rules).
    pub skip_valid: bool,
}

impl OvalEval<'_> {
    /// The arguments after `oscap`: `oval eval [--skip-valid] [--variables V] --results R DOC`.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec!["oval".to_string(), "eval".to_string()];
        if self.skip_valid {
            args.push("--skip-valid".into());
        }
        if let Some(v) = self.variables {
            args.extend(["--variables".to_string(), v.to_string()]);
        }
        args.extend(["--results".to_string(), self.results.to_string(), self.document.to_string()]);
        args
    }
}
