//! A plan for a set of rules: each rule's route, and for the OVAL ones one small definitions
//! document (their definitions and the CPE platforms they need) with its variables document.
use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use crate::Benchmark;

use super::content::OvalContent;
use super::cpe::{Cpe, CpeCheck};
use super::doc::{build, closure};
use super::error::{OvalError, OvalResult};
use super::index::Section;
use super::route::{Route, Router, XccdfReason};
use super::vars::{Binding, variables_document};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedRule {
    pub id: String,
    pub route: Route,
    /// For an OVAL route: the definition's id in the document (renamed only when another
    /// component of the document has the same id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
}

/// Sizes, for the figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlanStats {
    pub oval_rules: usize,
    pub xccdf_rules: usize,
    pub fixed_rules: usize,
    /// Elements per list of the document (`definitions`, `tests`...).
    pub elements: BTreeMap<String, usize>,
    pub document_bytes: usize,
    pub datastream_bytes: usize,
}

/// What a plan's document evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The rules' definitions and their platforms' CPE definitions: one run decides them.
    Full,
    /// Only the CPE definitions: a first, cheap run that finds the rules not applicable, so
    /// their checks never run (oscap skips them too). See [`OvalPlan::split`].
    Platforms,
}

/// What a document is cut for, besides oscap's own evaluation: the tree-walking tests the one
/// walk judges ([`crate::fswalk`]), and the package tests the host judges ([`super::packages`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CutFor {
    pub walk: bool,
    pub packages: bool,
}

#[derive(Debug, Clone)]
pub struct OvalPlan {
    pub stage: Stage,
    pub rules: Vec<PlannedRule>,
    /// The OVAL definitions document; `None` when no rule takes the OVAL path.
    pub document: Option<Vec<u8>>,
    /// The external variables document (`--variables`); `None` when nothing is bound.
    pub variables: Option<Vec<u8>>,
    pub stats: PlanStats,
    pub(crate) cpe: Cpe,
    /// Each CPE check the document evaluates -> its definition id there.
    pub(crate) cpe_defs: HashMap<CpeCheck, String>,
    /// The tests the one walk judges ([`OvalPlan::build_walked`]); their definitions' results come
    /// from [`crate::fswalk::WalkPart::results`].
    pub walk: Option<crate::fswalk::WalkPart>,
    /// The package tests the host judges ([`super::packages`]), over the guest's dpkg status.
    pub packages: Option<super::packages::PackagePart>,
    /// The host's definitions the document was cut from, for the evidence ([`OvalPlan::evidence`]).
    pub(crate) source: Option<super::evidence::Source>,
}

impl OvalPlan {
    /// Plans `rules` (full ids) of `benchmark` (read with the profile and tailoring to scan).
    pub fn build(content: &OvalContent, benchmark: &Benchmark, rules: &[String]) -> OvalResult<Self> {
        Self::build_stage(content, benchmark, rules, Stage::Full)
    }

    /// The first stage of a two-stage scan: only the platforms of `rules`.
    pub fn platforms(content: &OvalContent, benchmark: &Benchmark, rules: &[String]) -> OvalResult<Self> {
        Self::build_stage(content, benchmark, rules, Stage::Platforms)
    }

    /// As [`OvalPlan::build`], with the document cut for the one walk: the tree-walking tests it
    /// implements are judged on the host over the walk ([`OvalPlan::walk`]).
    pub fn build_walked(content: &OvalContent, benchmark: &Benchmark, rules: &[String]) -> OvalResult<Self> {
        Self::build_with(content, benchmark, rules, Stage::Full, CutFor { walk: true, packages: false })
    }

    pub fn build_stage(content: &OvalContent, benchmark: &Benchmark, rules: &[String], stage: Stage) -> OvalResult<Self> {
        Self::build_with(content, benchmark, rules, stage, CutFor::default())
    }

    /// `rules` planned for `stage`, the document cut as `cut` says (the walk's part only at the
    /// full stage).
    pub fn build_with(content: &OvalContent, benchmark: &Benchmark, rules: &[String], stage: Stage, cut: CutFor) -> OvalResult<Self> {
        let router = Router::new(content, benchmark);
        let mut planned: Vec<PlannedRule> = Vec::new();
        let mut seen = HashSet::new();
        for id in rules.iter().filter(|id| seen.insert(id.as_str())) {
            let route = router.route(id).ok_or_else(|| OvalError::UnknownRule(id.clone()))?;
            planned.push(PlannedRule { id: id.clone(), route, document_id: None });
        }
        check_variables(content, &mut planned)?;

        // Roots per component: the rules' definitions first, then the CPE checks.
        let mut roots: Vec<(usize, Vec<String>)> = Vec::new();
        let mut add = |ci: usize, id: &str| match roots.iter_mut().find(|r| r.0 == ci) {
            Some(r) if r.1.iter().any(|x| x == id) => {}
            Some(r) => r.1.push(id.to_string()),
            None => roots.push((ci, vec![id.to_string()])),
        };
        let mut cpe_checks: Vec<CpeCheck> = Vec::new();
        for r in &planned {
            if let Route::Oval(c) = &r.route {
                if stage == Stage::Full {
                    add(content.hrefs[&c.href], &c.definition);
                }
                c.platforms.iter().flatten().for_each(|p| content.xccdf.cpe.checks_of(p, &mut cpe_checks));
            }
        }
        let mut cpe_at: Vec<(CpeCheck, usize)> = Vec::new();
        for c in cpe_checks {
            let ci = content.hrefs.get(&c.href).copied();
            if let Some(ci) = ci.filter(|&ci| content.components[ci].entries.get(&c.id).is_some_and(|e| e.section == Section::Definitions))
            {
                add(ci, &c.id);
                cpe_at.push((c, ci));
            }
        }
        if roots.is_empty() {
            return Ok(OvalPlan::new(stage, planned, None, None, BTreeMap::new(), content, HashMap::new()));
        }
        let built = build(content, &roots, CutFor { walk: cut.walk && stage == Stage::Full, ..cut })?;
        let doc_id = |ci: usize, id: &str| {
            let n = roots.iter().position(|r| r.0 == ci).expect("every root component is in the document");
            built.renamed[n].get(id).cloned().unwrap_or_else(|| id.to_string())
        };
        let mut values: HashMap<String, String> = HashMap::new();
        for r in planned.iter_mut().filter(|_| stage == Stage::Full) {
            if let Route::Oval(c) = &r.route {
                let ci = content.hrefs[&c.href];
                r.document_id = Some(doc_id(ci, &c.definition));
                values.extend(c.exports.iter().map(|(name, v)| (doc_id(ci, name), v.clone())));
            }
        }
        let bindings: Vec<Binding> = built
            .externals
            .iter()
            .filter_map(|(id, datatype)| values.get(id).map(|v| Binding { id: id.clone(), datatype: datatype.clone(), value: v.clone() }))
            .collect();
        let first = &content.components[roots[0].0];
        let generator = first.generator.clone().map(|g| String::from_utf8_lossy(&content.bytes[g]).into_owned()).unwrap_or_default();
        let variables = variables_document(&bindings, &generator);
        let cpe_defs = cpe_at.into_iter().map(|(c, ci)| (c.clone(), doc_id(ci, &c.id))).collect();
        let mut source = content.source();
        source.renamed = roots.iter().zip(built.renamed).filter(|(_, m)| !m.is_empty()).map(|((ci, _), m)| (*ci, m)).collect();
        let mut plan = OvalPlan::new(stage, planned, Some(built.bytes), variables, built.counts, content, cpe_defs);
        plan.walk = built.walk;
        plan.packages = built.packages.filter(|p| !p.tests.is_empty());
        plan.source = Some(source);
        Ok(plan)
    }

    fn new(
        stage: Stage,
        rules: Vec<PlannedRule>,
        document: Option<Vec<u8>>,
        variables: Option<Vec<u8>>,
        counts: BTreeMap<Section, usize>,
        content: &OvalContent,
        cpe_defs: HashMap<CpeCheck, String>,
    ) -> Self {
        let count = |f: fn(&Route) -> bool| rules.iter().filter(|r| f(&r.route)).count();
        let stats = PlanStats {
            oval_rules: count(|r| matches!(r, Route::Oval(_))),
            xccdf_rules: count(|r| matches!(r, Route::Xccdf { .. })),
            fixed_rules: count(|r| matches!(r, Route::Fixed { .. })),
            elements: counts.into_iter().map(|(s, n)| (s.local().to_string(), n)).collect(),
            document_bytes: document.as_ref().map_or(0, Vec::len),
            datastream_bytes: content.len(),
        };
        OvalPlan {
            stage,
            rules,
            document,
            variables,
            stats,
            cpe: content.xccdf.cpe.clone(),
            cpe_defs,
            walk: None,
            packages: None,
            source: None,
        }
    }

    /// The rules left to `oscap xccdf eval`, with why.
    pub fn xccdf_rules(&self) -> Vec<(&str, XccdfReason)> {
        self.rules
            .iter()
            .filter_map(|r| match r.route {
                Route::Xccdf { reason } => Some((r.id.as_str(), reason)),
                _ => None,
            })
            .collect()
    }
}

/// Sends to the xccdf path the OVAL rules whose definition needs an external variable their
/// check does not export, or that export one with another value than an earlier rule.
fn check_variables(content: &OvalContent, planned: &mut [PlannedRule]) -> OvalResult<()> {
    let mut bound: HashMap<(usize, String), String> = HashMap::new();
    for r in planned.iter_mut() {
        let Route::Oval(c) = &r.route else { continue };
        let ci = content.hrefs[&c.href];
        let comp = &content.components[ci];
        let ids = closure(comp, std::slice::from_ref(&c.definition))?;
        let exported: HashSet<&str> = c.exports.iter().map(|(n, _)| n.as_str()).collect();
        let reason = if ids.iter().any(|id| comp.entries[id].external.is_some() && !exported.contains(id.as_str())) {
            Some(XccdfReason::UnexportedVariable)
        } else if c.exports.iter().any(|(n, v)| bound.get(&(ci, n.clone())).is_some_and(|b| b != v)) {
            Some(XccdfReason::VariableConflict)
        } else {
            None
        };
        match reason {
            Some(reason) => r.route = Route::Xccdf { reason },
            None => bound.extend(c.exports.iter().map(|(n, v)| ((ci, n.clone()), v.clone()))),
        }
    }
    Ok(())
}
