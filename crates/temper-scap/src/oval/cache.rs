//! Plans cached per (content, profile and tailoring as resolved, rule set): the same rescan
//! asked again costs a hash lookup.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::Benchmark;

use super::content::{OvalContent, hex};
use super::error::OvalResult;
use super::plan::{CutFor, OvalPlan, Stage};

/// What a plan depends on. The selection part hashes what the profile and tailoring resolve
/// to (profile id, tailoring id and version, every Value's pick, the selected rules), so two
/// tailorings that pick the same values share a plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanKey {
    pub content: [u8; 32],
    pub selection: [u8; 32],
    pub rules: [u8; 32],
}

impl PlanKey {
    pub fn new(content: &OvalContent, benchmark: &Benchmark, rules: &[String]) -> Self {
        Self::staged(content, benchmark, rules, Stage::Full)
    }

    pub fn staged(content: &OvalContent, benchmark: &Benchmark, rules: &[String], stage: Stage) -> Self {
        let mut s = Sha256::new();
        let field = |h: &mut Sha256, v: &str| {
            h.update((v.len() as u64).to_le_bytes());
            h.update(v.as_bytes());
        };
        field(&mut s, benchmark.profile.as_ref().map_or("", |p| p.id.as_str()));
        if let Some(t) = &benchmark.tailoring {
            field(&mut s, &t.id);
            field(&mut s, &t.version);
        }
        for (k, v) in &benchmark.resolved_values {
            field(&mut s, k);
            field(&mut s, v);
        }
        for r in &benchmark.selected_rules {
            field(&mut s, &r.id);
        }
        let mut r = Sha256::new();
        field(&mut r, &format!("{stage:?}"));
        for id in rules {
            field(&mut r, id);
        }
        PlanKey { content: *content.sha256(), selection: s.finalize().into(), rules: r.finalize().into() }
    }

    /// A short name for files: 16 hex digits of each part.
    pub fn file_stem(&self) -> String {
        format!("{}-{}-{}", &hex(&self.content)[..16], &hex(&self.selection)[..16], &hex(&self.rules)[..16])
    }
}

/// One datastream's index and the plans built from it.
#[derive(Debug)]
pub struct OvalEngine {
    content: Arc<OvalContent>,
    plans: Mutex<HashMap<PlanKey, Arc<OvalPlan>>>,
}

impl OvalEngine {
    pub fn new(content: OvalContent) -> Self {
        Self { content: Arc::new(content), plans: Mutex::new(HashMap::new()) }
    }

    pub fn content(&self) -> &OvalContent {
        &self.content
    }

    /// The plan for `rules` under `benchmark`'s profile, built on first use.
    pub fn plan(&self, benchmark: &Benchmark, rules: &[String]) -> OvalResult<Arc<OvalPlan>> {
        self.staged(benchmark, rules, Stage::Full)
    }

    /// The platforms-only plan of a two-stage scan (see [`OvalPlan::split`]).
    pub fn platforms(&self, benchmark: &Benchmark, rules: &[String]) -> OvalResult<Arc<OvalPlan>> {
        self.staged(benchmark, rules, Stage::Platforms)
    }

    /// The plan for `rules` with the one walk's part ([`OvalPlan::build_walked`]).
    pub fn plan_walked(&self, benchmark: &Benchmark, rules: &[String]) -> OvalResult<Arc<OvalPlan>> {
        self.planned(benchmark, rules, Stage::Full, CutFor { walk: true, packages: false })
    }

    fn staged(&self, benchmark: &Benchmark, rules: &[String], stage: Stage) -> OvalResult<Arc<OvalPlan>> {
        self.planned(benchmark, rules, stage, CutFor::default())
    }

    /// The plan for `rules` at `stage`, its document cut as `cut` says ([`OvalPlan::build_with`]).
    pub fn planned(&self, benchmark: &Benchmark, rules: &[String], stage: Stage, cut: CutFor) -> OvalResult<Arc<OvalPlan>> {
        let mut key = PlanKey::staged(&self.content, benchmark, rules, stage);
        for (on, what) in [(cut.walk, &b"walked"[..]), (cut.packages, &b"packages"[..])] {
            if on {
                key.rules = Sha256::new().chain_update(key.rules).chain_update(what).finalize().into();
            }
        }
        if let Some(p) = self.plans.lock().expect("plan cache lock").get(&key) {
            return Ok(p.clone());
        }
        let plan = Arc::new(OvalPlan::build_with(&self.content, benchmark, rules, stage, cut)?);
        self.plans.lock().expect("plan cache lock").insert(key, plan.clone());
        Ok(plan)
    }

    /// The rules of `rules` whose check walks a directory tree ([`super::tree_walkers`]).
    pub fn tree_walkers(&self, benchmark: &Benchmark, rules: &[String]) -> Vec<String> {
        super::tree_walkers(&self.content, benchmark, rules)
    }

    /// How many plans are cached.
    pub fn cached(&self) -> usize {
        self.plans.lock().expect("plan cache lock").len()
    }
}
