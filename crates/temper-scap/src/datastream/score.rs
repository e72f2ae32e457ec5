//! The XCCDF default scoring model (NISTIR 7275r4, table 40), as `oscap xccdf eval` computes
//! it: a rule that passes (or was fixed) scores 100, any other scored result 0; a Group or the
//! Benchmark scores the weighted mean of its children that scored anything. `notselected`,
//! `notapplicable`, `informational` and `notchecked` are left out. Sums are in `f32`, as oscap's.
//! Used when a scan's results are merged from several evaluations (a split full scan).
use std::collections::HashMap;

use crate::results::{DEFAULT_SCORING, Outcome, Score, TestResult};

/// The Benchmark's Groups and selected Rules, in document order, with their weights.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreTree {
    nodes: Vec<ScoreNode>,
}

#[derive(Debug, Clone, PartialEq)]
enum ScoreNode {
    Group { weight: f32, children: Vec<usize> },
    Rule { id: String, weight: f32 },
}

/// The root's index: the Benchmark itself, weight 1.
const ROOT: usize = 0;

impl Default for ScoreTree {
    /// The Benchmark alone.
    fn default() -> Self {
        Self { nodes: vec![ScoreNode::Group { weight: 1.0, children: Vec::new() }] }
    }
}

impl ScoreTree {
    /// Adds a Group under `parent` and returns its index (pass it as a later parent).
    pub(super) fn group(&mut self, parent: Option<usize>, weight: f32) -> usize {
        self.add(parent, ScoreNode::Group { weight, children: Vec::new() })
    }

    pub(super) fn rule(&mut self, parent: Option<usize>, id: String, weight: f32) {
        self.add(parent, ScoreNode::Rule { id, weight });
    }

    fn add(&mut self, parent: Option<usize>, node: ScoreNode) -> usize {
        let i = self.nodes.len();
        self.nodes.push(node);
        if let ScoreNode::Group { children, .. } = &mut self.nodes[parent.unwrap_or(ROOT)] {
            children.push(i);
        }
        i
    }

    /// The default-model score of `results` over this tree; `None` when no rule scored.
    pub fn default_score(&self, results: &TestResult) -> Option<f64> {
        let outcomes: HashMap<&str, Outcome> = results.rule_results.iter().map(|r| (r.idref.as_str(), r.result)).collect();
        self.score(ROOT, &outcomes).map(|s| f64::from(s.score))
    }

    /// Sets `results`' default score to this tree's over them (results merged from several
    /// evaluations); other models' scores, over part of them, are dropped.
    pub fn rescore(&self, results: &mut TestResult) {
        let Some(value) = self.default_score(results) else { return };
        results.scores.retain(|s| s.system == DEFAULT_SCORING);
        match results.scores.first_mut() {
            Some(s) => s.value = value,
            None => results.scores.push(Score { system: DEFAULT_SCORING.into(), maximum: Some(100.0), value }),
        }
    }

    fn score(&self, i: usize, outcomes: &HashMap<&str, Outcome>) -> Option<Scored> {
        match &self.nodes[i] {
            ScoreNode::Rule { id, weight } => {
                let o = *outcomes.get(id.as_str())?;
                if matches!(o, Outcome::NotSelected | Outcome::NotApplicable | Outcome::Informational | Outcome::NotChecked) {
                    return None;
                }
                let score = if matches!(o, Outcome::Pass | Outcome::Fixed) { 100.0 } else { 0.0 };
                Some(Scored { score, weight: *weight })
            }
            ScoreNode::Group { weight, children } => {
                let (mut sum, mut acc, mut count) = (0f32, 0f32, 0);
                for s in children.iter().filter_map(|&c| self.score(c, outcomes)) {
                    sum += s.score * s.weight;
                    acc += s.weight;
                    count += 1;
                }
                (count > 0).then(|| Scored { score: if acc != 0.0 { sum / acc } else { sum }, weight: *weight })
            }
        }
    }
}

struct Scored {
    score: f32,
    weight: f32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RuleResult;

    fn results(of: &[(&str, Outcome)]) -> TestResult {
        let rule_results = of
            .iter()
            .map(|(id, result)| RuleResult { idref: id.to_string(), result: *result, severity: crate::Severity::Medium, time: None })
            .collect();
        TestResult { rule_results, ..TestResult::default() }
    }

    #[test]
    fn groups_average_their_children_not_the_rules() {
        // root: [g1: a, b, c] [g2: d]; a, d pass, b, c fail. Per group: 33.3 and 100, mean 66.7.
        // A flat mean over the rules would be 50.
        let mut t = ScoreTree::default();
        let g1 = t.group(None, 1.0);
        for r in ["a", "b", "c"] {
            t.rule(Some(g1), r.into(), 1.0);
        }
        let g2 = t.group(None, 1.0);
        t.rule(Some(g2), "d".into(), 1.0);
        let r = results(&[("a", Outcome::Pass), ("b", Outcome::Fail), ("c", Outcome::Error), ("d", Outcome::Pass)]);
        let s = t.default_score(&r).unwrap();
        assert!((s - 66.666_664).abs() < 1e-4, "{s}");
    }

    #[test]
    fn unscored_results_and_empty_groups_are_left_out_and_weights_count() {
        let mut t = ScoreTree::default();
        let g1 = t.group(None, 3.0);
        t.rule(Some(g1), "a".into(), 1.0);
        t.rule(Some(g1), "na".into(), 1.0);
        let g2 = t.group(None, 1.0);
        t.rule(Some(g2), "b".into(), 1.0);
        t.rule(Some(g2), "skipped".into(), 1.0);
        let g3 = t.group(None, 5.0);
        t.rule(Some(g3), "nc".into(), 1.0);
        let r = results(&[
            ("a", Outcome::Fixed),
            ("na", Outcome::NotApplicable),
            ("b", Outcome::Fail),
            ("skipped", Outcome::NotSelected),
            ("nc", Outcome::NotChecked),
        ]);
        // g1 = 100 (weight 3), g2 = 0 (weight 1), g3 scores nothing: 300 / 4.
        assert_eq!(t.default_score(&r), Some(75.0));
        assert_eq!(t.default_score(&results(&[("na", Outcome::NotApplicable)])), None);
    }

    #[test]
    fn rescore_replaces_the_default_score_and_drops_the_others() {
        let mut t = ScoreTree::default();
        t.rule(None, "a".into(), 1.0);
        t.rule(None, "b".into(), 1.0);
        let mut r = results(&[("a", Outcome::Pass), ("b", Outcome::Fail)]);
        let flat = Score { system: "urn:xccdf:scoring:flat".into(), maximum: Some(1.0), value: 1.0 };
        r.scores = vec![flat, Score { system: DEFAULT_SCORING.into(), maximum: Some(100.0), value: 100.0 }];
        t.rescore(&mut r);
        assert_eq!(r.scores, vec![Score { system: DEFAULT_SCORING.into(), maximum: Some(100.0), value: 50.0 }]);
        r.scores.clear();
        t.rescore(&mut r);
        assert_eq!(r.score().map(|s| s.value), Some(50.0), "a missing default score is added");
    }
}
