//! Which path each rule takes, decided as `oscap xccdf eval` would process it: selection,
//! `requires`/`conflicts`, role, then the one check it picks.
use std::collections::HashSet;

use serde::Serialize;

use crate::Benchmark;
use crate::results::Outcome;

use super::content::OvalContent;
use super::index::{DefClass, Section};
use super::xccdf::{OVAL_SYSTEM, SCE_SYSTEM, Xccdf, XccdfCheck, XccdfItem};

/// Why a rule is left to `oscap xccdf eval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum XccdfReason {
    /// The rule has no check at all (oscap: `notchecked`).
    NoCheck,
    /// Only checks oscap does not run, such as OCIL questionnaires (oscap: `notchecked`).
    OcilOnly,
    /// The check oscap would pick is an SCE script.
    Sce,
    ComplexCheck,
    /// `multi-check="true"`: one result per definition of a whole file.
    MultiCheck,
    /// A check with a `selector`, which a profile's `refine-rule` may switch.
    CheckSelector,
    /// Not exactly one `check-content-ref` with a definition name.
    ContentRefs,
    /// The `href` names no OVAL component of this datastream (e.g. a remote file).
    ExternalContent,
    /// The named definition is not in the component.
    UnknownDefinition,
    /// A `check-export` names a Value the Benchmark does not have.
    MissingValue,
    /// The definition uses an external variable the check does not export: oscap's result
    /// then depends on which rule ran before.
    UnexportedVariable,
    /// Another rule of the set exports the same variable with another value.
    VariableConflict,
    /// The rule or a profile's `refine-rule` gives it a role (unscored, unchecked).
    Role,
    /// `requires` or `conflicts` names a Group.
    GroupDependency,
}

impl XccdfReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoCheck => "no check",
            Self::OcilOnly => "OCIL only",
            Self::Sce => "SCE script",
            Self::ComplexCheck => "complex-check",
            Self::MultiCheck => "multi-check",
            Self::CheckSelector => "check selector",
            Self::ContentRefs => "not one content ref",
            Self::ExternalContent => "external content",
            Self::UnknownDefinition => "unknown definition",
            Self::MissingValue => "missing Value",
            Self::UnexportedVariable => "unexported variable",
            Self::VariableConflict => "variable conflict",
            Self::Role => "role",
            Self::GroupDependency => "requires a Group",
        }
    }
}

impl std::fmt::Display for XccdfReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The one OVAL definition a rule is decided by, and what turns its result into the rule's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OvalCheck {
    pub definition: String,
    /// The check's `href`.
    pub href: String,
    pub class: Option<DefClass>,
    pub negate: bool,
    /// `check-export`: (export name, value).
    pub exports: Vec<(String, String)>,
    /// Platforms of the Benchmark, each enclosing Group and the rule, outermost first: each
    /// list must have one that holds.
    pub platforms: Vec<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "path")]
pub enum Route {
    Oval(OvalCheck),
    /// Known without evaluating anything (`notselected` through `requires`/`conflicts`).
    Fixed {
        outcome: Outcome,
    },
    Xccdf {
        reason: XccdfReason,
    },
}

/// Decides rules one at a time, in the Benchmark's document order for `requires`/`conflicts`.
pub(crate) struct Router<'a> {
    pub content: &'a OvalContent,
    pub benchmark: &'a Benchmark,
    selected: HashSet<&'a str>,
    /// Rules `requires`/`conflicts` took out, as oscap does while it evaluates.
    deselected: HashSet<String>,
}

impl<'a> Router<'a> {
    pub fn new(content: &'a OvalContent, benchmark: &'a Benchmark) -> Self {
        let selected = benchmark.selected_rules.iter().map(|r| r.id.as_str()).collect();
        let mut r = Router { content, benchmark, selected, deselected: HashSet::new() };
        r.resolve_dependencies();
        r
    }

    fn xccdf(&self) -> &'a Xccdf {
        &self.content.xccdf
    }

    fn on(&self, id: &str) -> bool {
        self.selected.contains(id) && !self.deselected.contains(id)
    }

    fn resolve_dependencies(&mut self) {
        let x = self.xccdf();
        for rule in &x.rules {
            if !self.selected.contains(rule.id.as_str()) {
                continue;
            }
            let mut chain = x.ancestors(rule);
            chain.push(rule);
            let broken = chain
                .iter()
                .any(|i| i.conflicts.iter().any(|c| self.on(c)) || i.requires.iter().any(|alts| !alts.iter().any(|a| self.on(a))));
            if broken {
                self.deselected.insert(rule.id.clone());
            }
        }
    }

    fn names_group(&self, item: &XccdfItem) -> bool {
        let groups = &self.xccdf().groups;
        let is_group = |id: &String| groups.iter().any(|g| &g.id == id);
        item.conflicts.iter().any(is_group) || item.requires.iter().flatten().any(is_group)
    }

    /// The route of one rule of the Benchmark; `None` when the Benchmark has no such rule.
    pub fn route(&self, rule_id: &str) -> Option<Route> {
        let x = self.xccdf();
        let rule = x.rule(rule_id)?;
        let mut chain = x.ancestors(rule);
        chain.push(rule);
        if chain.iter().any(|i| self.names_group(i)) {
            return Some(Route::Xccdf { reason: XccdfReason::GroupDependency });
        }
        if !self.on(rule_id) {
            return Some(Route::Fixed { outcome: Outcome::NotSelected });
        }
        if rule.role.as_deref().is_some_and(|r| r != "full") || x.refined_roles.contains(rule_id) {
            return Some(Route::Xccdf { reason: XccdfReason::Role });
        }
        let check = match pick_check(rule) {
            Ok(c) => c,
            Err(reason) => return Some(Route::Xccdf { reason }),
        };
        Some(match self.oval_check(check, &chain) {
            Ok(c) => Route::Oval(c),
            Err(reason) => Route::Xccdf { reason },
        })
    }

    fn oval_check(&self, check: &XccdfCheck, chain: &[&XccdfItem]) -> Result<OvalCheck, XccdfReason> {
        if check.multi {
            return Err(XccdfReason::MultiCheck);
        }
        let [(href, Some(name))] = check.refs.as_slice() else {
            return Err(XccdfReason::ContentRefs);
        };
        let comp = self.content.component(href).ok_or(XccdfReason::ExternalContent)?;
        let def = comp.entries.get(name).filter(|e| e.section == Section::Definitions).ok_or(XccdfReason::UnknownDefinition)?;
        let mut exports = Vec::new();
        for (value_id, export) in &check.exports {
            let value = self.benchmark.resolved_values.get(value_id).ok_or(XccdfReason::MissingValue)?;
            exports.push((export.clone(), value.clone()));
        }
        let mut platforms = Vec::new();
        if !self.xccdf().benchmark_platforms.is_empty() {
            platforms.push(self.xccdf().benchmark_platforms.clone());
        }
        platforms.extend(chain.iter().filter(|i| !i.platforms.is_empty()).map(|i| i.platforms.clone()));
        Ok(OvalCheck { definition: name.clone(), href: href.clone(), class: def.class, negate: check.negate, exports, platforms })
    }
}

/// The check oscap picks: a complex-check wins; else the first check of a system it runs.
fn pick_check(rule: &XccdfItem) -> Result<&XccdfCheck, XccdfReason> {
    if rule.complex_check {
        return Err(XccdfReason::ComplexCheck);
    }
    if rule.checks.iter().any(|c| c.selector.is_some()) {
        return Err(XccdfReason::CheckSelector);
    }
    match rule.checks.iter().find(|c| c.system == OVAL_SYSTEM || c.system == SCE_SYSTEM) {
        Some(c) if c.system == OVAL_SYSTEM => Ok(c),
        Some(_) => Err(XccdfReason::Sce),
        None if rule.checks.is_empty() => Err(XccdfReason::NoCheck),
        None => Err(XccdfReason::OcilOnly),
    }
}
