//! A definition's criteria as the results give them (operators, negations, each node's result),
//! and the states an object's filters name: what a fix derived from the check must know besides
//! the failing tests (which alternative of an OR to meet, which items a filter already picked).
use serde::{Deserialize, Serialize};

use super::super::results::{DefinitionResult, OvalResults};
use super::parts::Node;
use super::{OvalReport, Spec};

/// How a `criteria` combines its children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    And,
    Or,
    One,
    Xor,
}

impl Operator {
    /// The schema's names; an unknown one reads as `AND`, the schema's default.
    pub(crate) fn parse(s: &str) -> Self {
        match s {
            "OR" => Self::Or,
            "ONE" => Self::One,
            "XOR" => Self::Xor,
            _ => Self::And,
        }
    }

    /// The operator over its children's results, by OVAL's truth tables (oval-common-5): each
    /// `not applicable` child is left out, and none left is `not applicable`.
    pub fn combine(self, results: &[DefinitionResult]) -> DefinitionResult {
        use DefinitionResult as R;
        let n = |r: R| results.iter().filter(|&&x| x == r).count();
        let (t, f, e, u, ne) = (n(R::True), n(R::False), n(R::Error), n(R::Unknown), n(R::NotEvaluated));
        if t + f + e + u + ne == 0 {
            return R::NotApplicable;
        }
        // What decides when the trues and falses do not: error, then unknown, then not evaluated.
        let rest = || {
            if e > 0 {
                R::Error
            } else if u > 0 {
                R::Unknown
            } else {
                R::NotEvaluated
            }
        };
        let open = e + u + ne > 0;
        match self {
            Self::And if f > 0 => R::False,
            Self::And if !open => R::True,
            Self::Or if t > 0 => R::True,
            Self::Or if !open => R::False,
            Self::One if t > 1 => R::False,
            Self::One if !open => {
                if t == 1 {
                    R::True
                } else {
                    R::False
                }
            }
            Self::Xor if !open => {
                if t % 2 == 1 {
                    R::True
                } else {
                    R::False
                }
            }
            _ => rest(),
        }
    }
}

impl DefinitionResult {
    /// `negate="true"`: true and false swap, the rest stay.
    pub fn negated(self, negate: bool) -> Self {
        match self {
            Self::True if negate => Self::False,
            Self::False if negate => Self::True,
            r => r,
        }
    }
}

/// A node of a definition's criteria tree. An `extend_definition` is the extended definition's
/// criteria, with `definition` naming it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "node", rename_all = "snake_case")]
pub enum Criterion {
    Criteria {
        operator: Operator,
        negate: bool,
        result: DefinitionResult,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        definition: Option<String>,
        children: Vec<Criterion>,
    },
    Test {
        test: String,
        negate: bool,
        result: DefinitionResult,
    },
}

impl Criterion {
    /// The tree with every node's result judged again as [`Criterion::recompute`] does.
    pub fn rejudged(&self, over: &dyn Fn(&str) -> Option<DefinitionResult>) -> Criterion {
        match self {
            Self::Test { test, negate, .. } => Self::Test { test: test.clone(), negate: *negate, result: self.recompute(over) },
            Self::Criteria { operator, negate, definition, children, .. } => Self::Criteria {
                operator: *operator,
                negate: *negate,
                result: self.recompute(over),
                definition: definition.clone(),
                children: children.iter().map(|c| c.rejudged(over)).collect(),
            },
        }
    }

    /// Whether the tree names a test `has` holds; a stack of its own, no recursion.
    pub fn names_any(&self, has: &dyn Fn(&str) -> bool) -> bool {
        let mut todo = vec![self];
        while let Some(c) = todo.pop() {
            match c {
                Self::Test { test, .. } if has(test) => return true,
                Self::Test { .. } => {}
                Self::Criteria { children, .. } => todo.extend(children),
            }
        }
        false
    }

    /// The node's result again, with the results of some tests replaced (`over`; `None`
    /// keeps oscap's): how tests judged on the host give their definitions' results.
    pub fn recompute(&self, over: &dyn Fn(&str) -> Option<DefinitionResult>) -> DefinitionResult {
        match self {
            Self::Test { test, negate, result } => match over(test) {
                Some(r) => r.negated(*negate),
                None => *result,
            },
            Self::Criteria { operator, negate, children, .. } => {
                let each: Vec<DefinitionResult> = children.iter().map(|c| c.recompute(over)).collect();
                operator.combine(&each).negated(*negate)
            }
        }
    }
}

/// Deepest nesting of extended definitions followed, and the most nodes a tree holds (hostile
/// input must not grow it without bound); beyond either, nodes are left out.
const MAX_EXTENDS: usize = 16;
const MAX_NODES: usize = 1024;

impl OvalReport {
    /// `results` with every definition whose criteria name a test `names` holds judged again,
    /// each such test's result from `over` (`None` keeps oscap's): how the tests the host judged
    /// (the one walk's, the packages') give their definitions' results.
    pub fn rejudge(&self, results: &mut OvalResults, names: &dyn Fn(&str) -> bool, over: &dyn Fn(&str) -> Option<DefinitionResult>) {
        for (id, r) in results.definitions.iter_mut() {
            if let Some(c) = self.criteria(id).filter(|c| c.names_any(names)) {
                *r = c.recompute(over);
            }
        }
    }

    /// The criteria tree of a definition's result, through its extended definitions.
    pub fn criteria(&self, definition: &str) -> Option<Criterion> {
        let (result, nodes) = self.parsed.definitions.get(definition)?;
        let mut budget = MAX_NODES;
        Some(self.wrap(Some(definition), false, *result, nodes, 0, &mut budget))
    }

    fn wrap(
        &self,
        def: Option<&str>,
        negate: bool,
        result: DefinitionResult,
        nodes: &[Node],
        depth: usize,
        budget: &mut usize,
    ) -> Criterion {
        let children = nodes.iter().filter_map(|n| self.node(n, depth, budget)).collect();
        Criterion::Criteria { operator: Operator::And, negate, result, definition: def.map(str::to_string), children }
    }

    fn node(&self, n: &Node, depth: usize, budget: &mut usize) -> Option<Criterion> {
        *budget = budget.checked_sub(1)?;
        Some(match n {
            Node::Criteria { operator, negate, result, children } => Criterion::Criteria {
                operator: *operator,
                negate: *negate,
                result: *result,
                definition: None,
                children: children.iter().filter_map(|c| self.node(c, depth, budget)).collect(),
            },
            Node::Test { id, negate, result } => Criterion::Test { test: id.clone(), negate: *negate, result: *result },
            Node::Extend { id, negate, result } if depth < MAX_EXTENDS => {
                let nodes = self.parsed.definitions.get(id).map(|(_, n)| n.as_slice()).unwrap_or_default();
                self.wrap(Some(id), *negate, *result, nodes, depth + 1, budget)
            }
            Node::Extend { .. } => return None,
        })
    }
}

/// What a filter does with the items its state matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterAction {
    Include,
    Exclude,
}

/// An object's `filter`: the items its state matches are kept (include) or dropped (exclude).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    pub action: FilterAction,
    pub state: Spec,
}

impl Filter {
    /// A field of an object that names a filter (`filter (include)`), and its state's id.
    pub(crate) fn named(name: &str, value: &str) -> Option<(FilterAction, String)> {
        let action = match name {
            "filter (include)" => FilterAction::Include,
            "filter (exclude)" => FilterAction::Exclude,
            _ => return None,
        };
        Some((action, value.trim().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(c: &Criterion) -> usize {
        match c {
            Criterion::Criteria { children, .. } => 1 + children.iter().map(count).sum::<usize>(),
            Criterion::Test { .. } => 1,
        }
    }

    #[test]
    fn the_tree_keeps_operators_and_negations_and_stays_bounded() {
        // A definition that extends itself twice: 2^16 nodes unbounded.
        let doc = br#"<oval_results><results><system><definitions>
          <definition definition_id="d" result="false"><criteria operator="OR" result="false">
            <criterion test_ref="t" negate="true" result="false"/>
            <extend_definition definition_ref="d" result="false"/><extend_definition definition_ref="d" result="false"/>
          </criteria></definition></definitions></system></results></oval_results>"#;
        let tree = OvalReport::parse(doc).unwrap().criteria("d").unwrap();
        let Criterion::Criteria { definition, children, .. } = &tree else { panic!("{tree:?}") };
        assert_eq!(definition.as_deref(), Some("d"));
        let Criterion::Criteria { operator, children, .. } = &children[0] else { panic!("{tree:?}") };
        assert_eq!(*operator, Operator::Or);
        assert_eq!(children[0], Criterion::Test { test: "t".into(), negate: true, result: DefinitionResult::False });
        assert!(count(&tree) <= MAX_NODES + 1, "{} nodes", count(&tree));
    }
}
