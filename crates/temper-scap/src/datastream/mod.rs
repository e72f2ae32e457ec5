//! SCAP source datastreams (1.2, 1.3) and plain XCCDF 1.2 benchmarks, read in one
//! streaming pass. Only the first XCCDF Benchmark of a datastream is read; OVAL, OCIL and
//! CPE components are skipped, and reading stops at the Benchmark's end.
//!
//! Selection follows XCCDF: a Rule is selected when its own `selected` (after the profile's
//! `<select>`, matched by id or `cluster-id`, last one wins) is true and so is every
//! ancestor Group's. A profile's `extends` chain is applied base first.
mod profile;
mod rule;
mod score;
mod tailoring;
mod value;
mod walk;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

pub use profile::ProfileInfo;
pub use rule::{ContentRule, FIX_SH, Fix, OvalRef, short_rule_id};
pub use score::ScoreTree;
pub use tailoring::{Tailoring, TailoringInfo};
pub use value::Value;

use crate::error::ScapResult;
use crate::xml::read_file;

/// Caps on what is kept. Prose beyond its cap is cut and marked; a fix script or a
/// value beyond its cap is an error, since a cut script would not be the stock fix.
pub const MAX_TITLE: usize = 4 * 1024;
pub const MAX_PROSE: usize = 64 * 1024;
pub const MAX_VALUE: usize = 64 * 1024;
pub const MAX_SCRIPT: usize = 1024 * 1024;

/// The Benchmark as seen through one profile.
#[derive(Debug, Clone, Serialize)]
pub struct Benchmark {
    pub id: String,
    pub title: String,
    /// The content version, e.g. `0.1.76` for SSG.
    pub version: String,
    /// The chosen profile; `None` means the Benchmark's default selection.
    pub profile: Option<ProfileInfo>,
    /// The tailoring file applied over the Benchmark, when one was given.
    pub tailoring: Option<TailoringInfo>,
    pub profiles: Vec<ProfileInfo>,
    /// All Values by id.
    pub values: BTreeMap<String, Value>,
    /// Value id -> the value the profile picks.
    pub resolved_values: BTreeMap<String, String>,
    /// The selected rules, in document order.
    pub selected_rules: Vec<ContentRule>,
    /// Every Rule in the Benchmark, selected or not.
    pub rule_count: usize,
    /// Groups and selected Rules with their weights: the default score of merged results.
    #[serde(skip)]
    pub score_tree: ScoreTree,
}

impl Benchmark {
    /// A selected rule by full id or short name (`sshd_disable_root_login`).
    pub fn rule(&self, id: &str) -> Option<&ContentRule> {
        self.selected_rules.iter().find(|r| r.id == id || r.short_id() == id)
    }
}

/// The profiles of the datastream's Benchmark (reading stops after them).
pub fn list_profiles(path: impl AsRef<Path>) -> ScapResult<Vec<ProfileInfo>> {
    list_profiles_bytes(&read_file(path.as_ref())?)
}

pub fn list_profiles_bytes(input: &[u8]) -> ScapResult<Vec<ProfileInfo>> {
    walk::profiles(input)
}

/// Reads the Benchmark with `profile` applied: a full profile id or its short name
/// (`stig`). `None` keeps the Benchmark's default selection and values.
pub fn read_benchmark(path: impl AsRef<Path>, profile: Option<&str>) -> ScapResult<Benchmark> {
    read_benchmark_bytes(&read_file(path.as_ref())?, profile)
}

pub fn read_benchmark_bytes(input: &[u8], profile: Option<&str>) -> ScapResult<Benchmark> {
    walk::benchmark(input, profile, None)
}

/// The datastream as a run reads it: through its tailoring (the tailoring document, kept whole
/// with the run) when it has one, else `profile` as it stands. The loop, the reports and the
/// web view all read content here.
pub fn read_content(path: impl AsRef<Path>, tailoring_xml: Option<&str>, profile: &str) -> ScapResult<Benchmark> {
    match tailoring_xml {
        Some(xml) => read_benchmark_tailored(path, &Tailoring::parse(xml.as_bytes())?, Some(profile)),
        None => read_benchmark(path, Some(profile)),
    }
}

/// Reads the Benchmark through a tailoring: `profile` (full id or short name) picks one of its
/// profiles, or a Benchmark profile one of them extends; with none, its only profile. The
/// tailored selection and values apply on top of its base profile's, as `oscap
/// --tailoring-file` does.
pub fn read_benchmark_tailored(path: impl AsRef<Path>, tailoring: &Tailoring, profile: Option<&str>) -> ScapResult<Benchmark> {
    let id = tailoring.pick(profile)?;
    walk::benchmark(&read_file(path.as_ref())?, Some(&id), Some(tailoring))
}
