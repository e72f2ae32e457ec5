//! OVAL results (`oscap oval eval --results`): each definition's result, and the XCCDF result
//! it gives a rule, as oscap maps it (class, then the check's `negate`).
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use quick_xml::events::Event;
use serde::{Deserialize, Serialize};

use crate::results::Outcome;
use crate::xml::{Xml, local, read_file};

use super::cpe::CpeCheck;
use super::error::{OvalError, OvalResult};
use super::index::DefClass;
use super::plan::OvalPlan;
use super::route::{OvalCheck, Route};

/// An OVAL definition (or test, or criterion) result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefinitionResult {
    True,
    False,
    Unknown,
    Error,
    NotEvaluated,
    NotApplicable,
}

impl DefinitionResult {
    pub const ALL: [Self; 6] = [Self::True, Self::False, Self::Unknown, Self::Error, Self::NotEvaluated, Self::NotApplicable];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "true",
            Self::False => "false",
            Self::Unknown => "unknown",
            Self::Error => "error",
            Self::NotEvaluated => "not evaluated",
            Self::NotApplicable => "not applicable",
        }
    }

    /// oscap's `xccdf_get_result_from_oval`: vulnerability and patch definitions are true when
    /// the system is at fault, so their true is a fail.
    pub fn to_xccdf(self, class: Option<DefClass>) -> Outcome {
        let reversed = matches!(class, Some(DefClass::Vulnerability | DefClass::Patch));
        match self {
            Self::True if reversed => Outcome::Fail,
            Self::True => Outcome::Pass,
            Self::False if reversed => Outcome::Pass,
            Self::False => Outcome::Fail,
            Self::Unknown => Outcome::Unknown,
            Self::Error => Outcome::Error,
            Self::NotEvaluated => Outcome::NotChecked,
            Self::NotApplicable => Outcome::NotApplicable,
        }
    }
}

impl FromStr for DefinitionResult {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Self::ALL.into_iter().find(|r| r.as_str() == s).ok_or(())
    }
}

impl fmt::Display for DefinitionResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The definition results of one OVAL results document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OvalResults {
    pub definitions: HashMap<String, DefinitionResult>,
}

impl OvalResults {
    pub fn read(path: impl AsRef<Path>) -> OvalResult<Self> {
        Self::parse(&read_file(path.as_ref())?)
    }

    pub fn parse(input: &[u8]) -> OvalResult<Self> {
        let mut x = Xml::new(input)?;
        let mut out = OvalResults::default();
        let mut root = None;
        loop {
            let e = match x.next()? {
                Event::Start(e) | Event::Empty(e) => e,
                Event::Eof => break,
                _ => continue,
            };
            let name = local(&e);
            if root.is_none() {
                if name != "oval_results" {
                    return Err(OvalError::NotOvalResults(name.to_string()));
                }
                root = Some(());
                continue;
            }
            if name == "definition"
                && let [Some(id), Some(result)] = x.attrs(&e, ["definition_id", "result"])?
            {
                let r = result.parse().map_err(|_| OvalError::BadResult { id: id.clone(), value: result.clone() })?;
                out.definitions.insert(id, r);
            }
        }
        if root.is_none() {
            return Err(crate::ScapError::NoRootElement.into());
        }
        Ok(out)
    }

    pub fn definition(&self, id: &str) -> Option<DefinitionResult> {
        self.definitions.get(id).copied()
    }
}

/// A rule's result from the OVAL path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleOutcome {
    pub rule: String,
    pub outcome: Outcome,
    /// The definition's own result; `None` when the rule was not applicable or fixed.
    pub definition: Option<DefinitionResult>,
}

impl OvalPlan {
    fn applicable(&self, check: &OvalCheck, results: &OvalResults) -> bool {
        let is_true = |c: &CpeCheck| self.cpe_defs.get(c).and_then(|id| results.definition(id)) == Some(DefinitionResult::True);
        check.platforms.iter().all(|any| any.iter().any(|p| self.cpe.holds(p, &is_true)))
    }

    /// The XCCDF result of every rule not on the xccdf path. A definition missing from the
    /// results counts as `not evaluated` (oscap: `notchecked`). For a platforms-only plan,
    /// use [`OvalPlan::split`].
    pub fn outcomes(&self, results: &OvalResults) -> Vec<RuleOutcome> {
        self.rules.iter().filter_map(|r| self.outcome_of(r, results)).collect()
    }

    /// [`OvalPlan::outcomes`] for one rule; `None` when it is not in the plan or on the xccdf path.
    pub fn outcome(&self, rule: &str, results: &OvalResults) -> Option<RuleOutcome> {
        self.rules.iter().find(|r| r.id == rule).and_then(|r| self.outcome_of(r, results))
    }

    fn outcome_of(&self, r: &super::plan::PlannedRule, results: &OvalResults) -> Option<RuleOutcome> {
        let (outcome, definition) = match &r.route {
            Route::Xccdf { .. } => return None,
            Route::Fixed { outcome } => (*outcome, None),
            Route::Oval(c) => {
                if self.applicable(c, results) {
                    let id = r.document_id.as_deref().unwrap_or(&c.definition);
                    let d = results.definition(id).unwrap_or(DefinitionResult::NotEvaluated);
                    (negate(d.to_xccdf(c.class), c.negate), Some(d))
                } else {
                    (Outcome::NotApplicable, None)
                }
            }
        };
        Some(RuleOutcome { rule: r.id.clone(), outcome, definition })
    }

    /// The definitions (ids in the document) a rule's outcome is computed from: its check's,
    /// and those of the CPE checks its platforms name.
    pub fn depends_on(&self, rule: &str) -> Vec<String> {
        let Some(r) = self.rules.iter().find(|r| r.id == rule) else { return Vec::new() };
        let Route::Oval(c) = &r.route else { return Vec::new() };
        let mut checks = Vec::new();
        c.platforms.iter().flatten().for_each(|p| self.cpe.checks_of(p, &mut checks));
        let mut out: Vec<String> = r.document_id.iter().cloned().collect();
        for id in checks.iter().filter_map(|c| self.cpe_defs.get(c)) {
            if !out.contains(id) {
                out.push(id.clone());
            }
        }
        out
    }
}

/// A platforms run's verdict: the rules still to evaluate, and those not applicable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    pub evaluate: Vec<String>,
    pub not_applicable: Vec<RuleOutcome>,
}

impl OvalPlan {
    /// From the results of a platforms-only plan ([`OvalPlan::platforms`]): the rules whose
    /// platforms hold (and every rule not on the OVAL path) go on to a full plan; the rest are
    /// `notapplicable`, and their checks never run (oscap does not run them either).
    pub fn split(&self, results: &OvalResults) -> Split {
        let mut s = Split::default();
        for r in &self.rules {
            match &r.route {
                Route::Oval(c) if !self.applicable(c, results) => {
                    s.not_applicable.push(RuleOutcome { rule: r.id.clone(), outcome: Outcome::NotApplicable, definition: None })
                }
                _ => s.evaluate.push(r.id.clone()),
            }
        }
        s
    }
}

/// The check's `negate`: pass and fail swap, nothing else changes.
fn negate(o: Outcome, negate: bool) -> Outcome {
    match (o, negate) {
        (Outcome::Pass, true) => Outcome::Fail,
        (Outcome::Fail, true) => Outcome::Pass,
        (o, _) => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_like_oscap() {
        use DefinitionResult as D;
        assert_eq!(D::True.to_xccdf(Some(DefClass::Compliance)), Outcome::Pass);
        assert_eq!(D::True.to_xccdf(Some(DefClass::Vulnerability)), Outcome::Fail);
        assert_eq!(D::False.to_xccdf(Some(DefClass::Patch)), Outcome::Pass);
        assert_eq!(D::False.to_xccdf(None), Outcome::Fail);
        assert_eq!(D::NotEvaluated.to_xccdf(None), Outcome::NotChecked);
        assert_eq!(D::NotApplicable.to_xccdf(None), Outcome::NotApplicable);
        assert_eq!(negate(Outcome::Pass, true), Outcome::Fail);
        assert_eq!(negate(Outcome::Error, true), Outcome::Error);
        for r in D::ALL {
            assert_eq!(r.as_str().parse::<D>(), Ok(r));
        }
    }
}
