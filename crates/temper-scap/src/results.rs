//! XCCDF 1.2 TestResult, from an `oscap xccdf eval --results` file (a Benchmark with its
//! TestResult at the end), an ARF report (`--results-arf`) or a bare TestResult.
//!
//! The Benchmark's Groups and Rules and the ARF's report requests are skipped without
//! being read. When the input holds several TestResults, the last one is returned
//! (oscap appends a new TestResult after the earlier ones).
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use quick_xml::events::BytesStart;
use serde::{Deserialize, Serialize};

use crate::Severity;
use crate::error::{ScapError, ScapResult};
use crate::xml::{Xml, clip, local, read_file};

/// An XCCDF rule result; every value kept apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    Error,
    Unknown,
    NotApplicable,
    NotChecked,
    NotSelected,
    Informational,
    Fixed,
}

impl Outcome {
    pub const ALL: [Outcome; 9] = [
        Self::Pass,
        Self::Fail,
        Self::Error,
        Self::Unknown,
        Self::NotApplicable,
        Self::NotChecked,
        Self::NotSelected,
        Self::Informational,
        Self::Fixed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::Error => "error",
            Self::Unknown => "unknown",
            Self::NotApplicable => "notapplicable",
            Self::NotChecked => "notchecked",
            Self::NotSelected => "notselected",
            Self::Informational => "informational",
            Self::Fixed => "fixed",
        }
    }
}

impl FromStr for Outcome {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Self::ALL.into_iter().find(|o| o.as_str() == s).ok_or(())
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    /// e.g. `urn:xccdf:scoring:default`.
    pub system: String,
    pub maximum: Option<f64>,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleResult {
    pub idref: String,
    pub result: Outcome,
    /// `unknown` when the file gives none.
    pub severity: Severity,
    pub time: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct TestResult {
    pub id: String,
    pub benchmark_id: Option<String>,
    /// The profile evaluated (`profile idref`).
    pub profile: Option<String>,
    /// As written, e.g. `2026-11-21T23:01:23+00:00`.
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub test_system: Option<String>,
    pub target: Option<String>,
    pub target_addresses: Vec<String>,
    pub scores: Vec<Score>,
    pub rule_results: Vec<RuleResult>,
}

impl TestResult {
    /// Rule results per outcome (only outcomes that occur); `notselected` only on request.
    pub fn counts(&self, include_notselected: bool) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for r in &self.rule_results {
            if r.result == Outcome::NotSelected && !include_notselected {
                continue;
            }
            *out.entry(r.result.as_str().to_string()).or_insert(0) += 1;
        }
        out
    }

    /// The result of a rule by full id or short name (`sshd_disable_root_login`).
    pub fn result_of(&self, rule_id: &str) -> Option<Outcome> {
        self.rule_results.iter().find(|r| r.idref == rule_id || crate::short_rule_id(&r.idref) == rule_id).map(|r| r.result)
    }

    /// The default-model score, else the first.
    pub fn score(&self) -> Option<&Score> {
        self.scores.iter().find(|s| s.system == DEFAULT_SCORING).or_else(|| self.scores.first())
    }
}

pub(crate) const DEFAULT_SCORING: &str = "urn:xccdf:scoring:default";
const SHORT: usize = 4096;

pub fn parse_results(path: impl AsRef<Path>) -> ScapResult<TestResult> {
    parse_results_bytes(&read_file(path.as_ref())?)
}

pub fn parse_results_bytes(input: &[u8]) -> ScapResult<TestResult> {
    let mut x = Xml::new(input)?;
    let root = |name: &str| match name {
        "Benchmark" | "TestResult" | "asset-report-collection" => Ok(()),
        other => Err(ScapError::NotResults(other.to_string())),
    };
    let mut last = None;
    let wrappers = ["Benchmark", "asset-report-collection", "reports", "report", "content"];
    x.descend(&wrappers, "TestResult", root, |x, e, empty| {
        last = Some(test_result(x, &e, empty)?);
        Ok(None::<()>)
    })?;
    last.ok_or(ScapError::NoTestResult)
}

fn test_result(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> ScapResult<TestResult> {
    let [id, start, end, system] = x.attrs(e, ["id", "start-time", "end-time", "test-system"])?;
    let mut t = TestResult { id: id.unwrap_or_default(), start_time: start, end_time: end, test_system: system, ..TestResult::default() };
    if empty {
        return Ok(t);
    }
    loop {
        let Some((c, c_empty)) = x.child("TestResult")? else {
            return Ok(t);
        };
        let offset = x.pos();
        match local(&c) {
            "benchmark" => t.benchmark_id = x.attr(&c, "id")?,
            "profile" => t.profile = x.attr(&c, "idref")?,
            "target" if !c_empty => t.target = Some(x.plain("target", SHORT)?),
            "target-address" if !c_empty => t.target_addresses.push(x.plain("target-address", SHORT)?),
            "rule-result" => t.rule_results.push(rule_result(x, &c, c_empty)?),
            "score" => {
                let [system, maximum] = x.attrs(&c, ["system", "maximum"])?;
                let text = if c_empty { String::new() } else { x.plain("score", SHORT)? };
                t.scores.push(Score {
                    system: system.unwrap_or_else(|| DEFAULT_SCORING.into()),
                    maximum: maximum.map(|m| number(&m, "score@maximum", offset)).transpose()?,
                    value: number(&text, "score", offset)?,
                });
                continue;
            }
            _ => {}
        }
        if !c_empty && !matches!(local(&c), "target" | "target-address" | "rule-result") {
            x.skip(&c)?;
        }
    }
}

fn number(s: &str, what: &'static str, offset: u64) -> ScapResult<f64> {
    s.trim().parse::<f64>().map_err(|_| ScapError::Invalid { what, value: clip(s), offset })
}

fn rule_result(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> ScapResult<RuleResult> {
    let offset = x.pos();
    let [idref, severity, time] = x.attrs(e, ["idref", "severity", "time"])?;
    let idref = idref.ok_or(ScapError::MissingAttr { element: "rule-result", attr: "idref", offset })?;
    let mut result = None;
    if !empty {
        while let Some((c, c_empty)) = x.child("rule-result")? {
            if c_empty {
                continue;
            }
            if local(&c) == "result" {
                let offset = x.pos();
                let text = x.plain("result", SHORT)?;
                let outcome =
                    text.parse::<Outcome>().map_err(|_| ScapError::Invalid { what: "rule result", value: clip(&text), offset })?;
                result = Some(outcome);
            } else {
                x.skip(&c)?;
            }
        }
    }
    let result = result.ok_or(ScapError::Invalid { what: "rule-result (no <result>)", value: clip(&idref), offset })?;
    Ok(RuleResult { idref, result, severity: severity.map(Severity::from).unwrap_or_default(), time })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_round_trips() {
        for o in Outcome::ALL {
            assert_eq!(o.as_str().parse::<Outcome>(), Ok(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        assert!("passed".parse::<Outcome>().is_err());
    }
}
