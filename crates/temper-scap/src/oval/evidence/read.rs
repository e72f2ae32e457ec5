//! A guest's results read against definitions ([`Definitions`]: the host's own): the criteria
//! as the definitions write them, each node's result judged from the guest's test results; the
//! decisive tests; each test's object, states and variables from the definitions, and its items
//! from the guest, each checked against its object (`items.rs`).
use crate::results::Outcome;

use super::super::results::DefinitionResult;
use super::host::{Definitions, Variable};
use super::parse::ParsedResults;
use super::parts::Node;
use super::{CollectedItem, Criterion, Evidence, Filter, MAX_ITEMS, MAX_TESTS, Operator, RefusedItem, Spec, TestEvidence, items};

/// How deep a set object's members are followed, and how many of each.
const MAX_SET_DEPTH: usize = 3;
const MAX_MEMBERS: usize = 8;
/// Deepest nesting of extended definitions followed, and the most nodes a tree holds; beyond
/// either, nodes are left out.
const MAX_EXTENDS: usize = 16;
const MAX_NODES: usize = 1024;

/// One results document read against one set of definitions.
#[derive(Debug, Clone, Copy)]
pub struct Reading<'a> {
    pub(super) guest: &'a ParsedResults,
    pub(super) defs: &'a Definitions,
    /// Tests judged on the host (the one walk's), whose results replace the guest's.
    pub(super) judged: Option<&'a TestResults>,
}

/// Tests' results by test id.
pub type TestResults = std::collections::HashMap<String, DefinitionResult>;

impl Definitions {
    /// An object or state, with its set members `depth` levels down.
    fn spec(&self, sid: &str, depth: usize) -> Option<Spec> {
        let e = self.elements.get(sid)?;
        let members =
            if depth == 0 { Vec::new() } else { e.set_refs.iter().take(MAX_MEMBERS).filter_map(|m| self.spec(m, depth - 1)).collect() };
        Some(Spec {
            id: sid.into(),
            kind: e.kind.clone(),
            comment: e.comment.clone(),
            fields: e.fields.clone(),
            operator: e.operator.clone(),
            members,
        })
    }
}

impl Reading<'_> {
    /// The definition's criteria as the definitions write them, through its extended
    /// definitions; each test's result the guest's, each node's judged from them.
    pub fn criteria(&self, definition: &str) -> Option<Criterion> {
        self.defs.trees.get(definition)?;
        let mut budget = MAX_NODES;
        Some(self.tree(definition, false, 0, &mut budget))
    }

    fn tree(&self, definition: &str, negate: bool, depth: usize, budget: &mut usize) -> Criterion {
        let nodes = self.defs.trees.get(definition).map(Vec::as_slice).unwrap_or_default();
        let children: Vec<Criterion> = nodes.iter().filter_map(|n| self.node(n, depth, budget)).collect();
        let result = Operator::And.combine(&children.iter().map(Criterion::result).collect::<Vec<_>>()).negated(negate);
        Criterion::Criteria { operator: Operator::And, negate, result, definition: Some(definition.to_string()), children }
    }

    fn node(&self, n: &Node, depth: usize, budget: &mut usize) -> Option<Criterion> {
        *budget = budget.checked_sub(1)?;
        Some(match n {
            Node::Criteria { operator, negate, children, .. } => {
                let children: Vec<Criterion> = children.iter().filter_map(|c| self.node(c, depth, budget)).collect();
                let result = operator.combine(&children.iter().map(Criterion::result).collect::<Vec<_>>()).negated(*negate);
                Criterion::Criteria { operator: *operator, negate: *negate, result, definition: None, children }
            }
            Node::Test { id, negate, .. } => {
                let result = self.test_result(id).negated(*negate);
                Criterion::Test { test: id.clone(), negate: *negate, result }
            }
            Node::Extend { id, negate, .. } if depth < MAX_EXTENDS => self.tree(id, *negate, depth + 1, budget),
            Node::Extend { .. } => return None,
        })
    }

    /// A test's result as the host judged it, else as the guest gives it; `unknown` when it
    /// gives none.
    fn test_result(&self, id: &str) -> DefinitionResult {
        if let Some(r) = self.judged.and_then(|j| j.get(id)) {
            return *r;
        }
        self.guest.tests.get(id).and_then(|t| t.result).unwrap_or(DefinitionResult::Unknown)
    }

    /// The tests that decided a definition's result: those not `true` under criteria not
    /// `true`, through extended definitions; every test when negation hides them all.
    pub fn decisive_tests(&self, definition: &str) -> Vec<String> {
        let Some(tree) = self.criteria(definition) else { return Vec::new() };
        let mut out = Vec::new();
        decisive(&tree, false, &mut out);
        if out.is_empty() {
            decisive(&tree, true, &mut out);
        }
        out
    }

    /// The evidence of one test.
    pub fn test(&self, id: &str) -> Option<TestEvidence> {
        let el = self.defs.elements.get(id)?;
        let r = self.guest.tests.get(id);
        let plain = |sid: &str| self.defs.spec(sid, 0);
        let spec = |sid: &str| self.defs.spec(sid, MAX_SET_DEPTH);
        let collected = el.object_ref.as_deref().and_then(|o| self.guest.collected.get(o));
        let tested: Vec<(String, Option<DefinitionResult>)> = match r {
            Some(t) if !t.items.is_empty() => t.items.clone(),
            _ => collected.map(|(_, refs)| refs.iter().map(|i| (i.clone(), None)).collect()).unwrap_or_default(),
        };
        let object = el.object_ref.as_deref().and_then(spec);
        let states: Vec<Spec> = el.state_refs.iter().filter_map(|s| spec(s)).collect();
        // What the results give for variables: the test's, then its objects' (a set's members too).
        let mut given: Vec<(String, String)> = r.map(|t| t.variables.clone()).unwrap_or_default();
        let mut objects: Vec<&Spec> = object.iter().collect();
        while let Some(o) = objects.pop() {
            given.extend(
                self.guest.object_variables.get(&o.id).into_iter().flatten().filter(|v| !given.contains(v)).cloned().collect::<Vec<_>>(),
            );
            objects.extend(&o.members);
        }
        let variables = self.variables(object.iter().chain(&states), &given);
        let mut items = Vec::new();
        let mut refused = Vec::new();
        for (iid, result) in tested.iter().take(MAX_ITEMS) {
            let Some(i) = self.guest.items.get(iid) else { continue };
            let item = CollectedItem { id: iid.clone(), kind: i.kind.clone(), status: i.status, result: *result, fields: i.fields.clone() };
            let raw = CollectedItem { fields: i.raw.clone(), ..item.clone() };
            match object.as_ref().map_or(Ok(()), |o| items::check(o, &variables, &raw)) {
                Ok(()) => items.push(item),
                // Its values were read whole for the check: the reason keeps none of their secrets.
                Err(why) => {
                    refused.push(RefusedItem { id: item.id.clone(), item: item.name(), why: crate::secret::withhold(&why).into_owned() })
                }
            }
        }
        let filters = object
            .iter()
            .flat_map(|o| o.fields.iter().chain(o.members.iter().flat_map(|m| m.fields.iter())))
            .filter_map(|f| Filter::named(&f.name, &f.value))
            .filter_map(|(action, sid)| plain(&sid).map(|state| Filter { action, state }))
            .collect();
        Some(TestEvidence {
            id: id.into(),
            kind: el.kind.clone(),
            comment: el.comment.clone(),
            result: r.and_then(|t| t.result).unwrap_or(DefinitionResult::Unknown),
            check: el.check,
            check_existence: el.check_existence,
            object,
            flag: collected.map(|(f, _)| *f),
            states,
            variables,
            items_total: tested.len() - refused.len(),
            items,
            filters,
            refused,
        })
    }

    /// The values of the variables `specs` name: the host's, where it knows them (a constant's,
    /// the profile's for an external one); the results' only for a `local_variable`, which the
    /// guest's probes compute from its own state (and an external one of a trusted document).
    fn variables<'s>(&self, specs: impl Iterator<Item = &'s Spec>, guest: &[(String, String)]) -> Vec<(String, String)> {
        let mut named: Vec<&str> = Vec::new();
        let mut stack: Vec<&Spec> = specs.collect();
        while let Some(s) = stack.pop() {
            for v in s.fields.iter().filter_map(|f| f.var_ref.as_deref()) {
                if !named.contains(&v) {
                    named.push(v);
                }
            }
            stack.extend(&s.members);
        }
        let mut out = Vec::new();
        for v in named {
            match self.defs.variables.get(v) {
                Some(Variable::Known(values)) => out.extend(values.iter().map(|x| (v.to_string(), x.clone()))),
                Some(Variable::Results) => out.extend(guest.iter().filter(|(id, _)| id == v).cloned()),
                Some(Variable::Unbound) | None => {}
            }
        }
        out
    }

    /// A definition's result (the guest's), title and decisive tests (at most [`MAX_TESTS`]).
    pub fn definition(&self, id: &str) -> Option<(DefinitionResult, String, Vec<TestEvidence>)> {
        let (result, _) = self.guest.definitions.get(id)?;
        let tests = self.decisive_tests(id).iter().take(MAX_TESTS).filter_map(|t| self.test(t)).collect();
        Some((*result, self.defs.titles.get(id).cloned().unwrap_or_default(), tests))
    }

    /// A rule's evidence, where its check's `definition` has the id `id` in the document.
    pub fn evidence(&self, rule: &str, outcome: Outcome, definition: &str, id: &str) -> Option<Evidence> {
        let (result, title, tests) = self.definition(id)?;
        let criteria = self.criteria(id);
        Some(Evidence { rule: rule.to_string(), outcome, definition: definition.to_string(), title, result, tests, criteria })
    }
}

/// The tests of `c` not `true` under criteria not `true` (`all`: every test), in order, once.
fn decisive(c: &Criterion, all: bool, out: &mut Vec<String>) {
    let mut stack = vec![c];
    while let Some(c) = stack.pop() {
        match c {
            Criterion::Criteria { result, children, .. } if all || *result != DefinitionResult::True => {
                stack.extend(children.iter().rev());
            }
            Criterion::Test { test, result, .. } if (all || *result != DefinitionResult::True) && !out.contains(test) => {
                out.push(test.clone());
            }
            _ => {}
        }
    }
}

impl Criterion {
    /// The node's result.
    pub fn result(&self) -> DefinitionResult {
        match self {
            Self::Criteria { result, .. } | Self::Test { result, .. } => *result,
        }
    }
}

impl CollectedItem {
    /// What names the item: its file, else the first of its fields.
    pub fn name(&self) -> String {
        let get = |n: &str| self.fields.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        get("filepath")
            .or_else(|| get("path").map(|p| format!("{}/{}", p.trim_end_matches('/'), get("filename").unwrap_or_default())))
            .or_else(|| self.fields.first().map(|(k, v)| format!("{k}={v}")))
            .unwrap_or_else(|| self.kind.clone())
    }
}
