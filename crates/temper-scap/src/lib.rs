//! temper-scap: streaming readers for SCAP source datastreams (profiles, selected rules,
//! resolved stock fixes) and XCCDF results (plain or ARF). Pure: reads bytes or files only.
//!
//! Hostile input gets a [`ScapError`], never a panic: DTDs are refused, only the five XML
//! entities and character references are read, prose is capped, fix scripts and values
//! over their caps are errors.
pub mod datastream;
pub mod dpkg;
pub mod error;
pub mod fswalk;
pub mod json;
pub mod oval;
pub mod results;
pub mod secret;
mod severity;
mod text;
mod xml;

pub use datastream::{
    Benchmark, ContentRule, FIX_SH, Fix, OvalRef, ProfileInfo, ScoreTree, Tailoring, TailoringInfo, Value, list_profiles,
    list_profiles_bytes, read_benchmark, read_benchmark_bytes, read_benchmark_tailored, read_content, short_rule_id,
};
pub use error::ScapError;
pub use json::{profiles_json, results_json, rule_json, rules_json};
pub use results::{Outcome, RuleResult, Score, TestResult, parse_results, parse_results_bytes};
pub use severity::Severity;
pub use xml::MAX_INPUT;
