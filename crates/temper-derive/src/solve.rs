//! Which failing tests to make pass: the definition's criteria walked from the top. Every
//! failing child of an AND; of an OR, the alternative that changes least (`Action::cost`).
use temper_scap::oval::{Criterion, DefinitionResult, Evidence, Operator};

use crate::Refusal;
use crate::action::{self, Action};
use crate::family;

/// How many exact fixes the evidence has: the most of any of its tests.
pub fn choices(e: &Evidence) -> usize {
    e.tests.iter().map(family::choices).max().unwrap_or(1)
}

/// The actions of fix `choice`: each test's own choice of that rank (its last where it has fewer).
pub fn actions(e: &Evidence, choice: usize) -> Result<Vec<Action>, Refusal> {
    let raw = match &e.criteria {
        Some(c) => node(e, c, choice)?,
        // Evidence kept before the tree was: its failing tests, all of them.
        None => {
            let mut out = Vec::new();
            for t in e.tests.iter().filter(|t| t.result != DefinitionResult::True) {
                out.extend(family::actions(t, choice)?);
            }
            out
        }
    };
    let merged = action::merge(raw)?;
    if let Some(Action::Line(l)) = merged.iter().find(|a| matches!(a, Action::Line(l) if l.value.is_empty())) {
        return Err(Refusal::Unsupported { test: l.path.clone(), why: format!("no value for {} in the check", l.key) });
    }
    Ok(merged)
}

fn node(e: &Evidence, c: &Criterion, choice: usize) -> Result<Vec<Action>, Refusal> {
    match c {
        Criterion::Test { result: DefinitionResult::True, .. } | Criterion::Criteria { result: DefinitionResult::True, .. } => {
            Ok(Vec::new())
        }
        Criterion::Test { test: id, negate: true, .. } => Err(Refusal::Negated { test: id.clone() }),
        Criterion::Test { test: id, result: DefinitionResult::False, .. } => {
            family::actions(e.tests.iter().find(|t| t.id == *id).ok_or_else(|| Refusal::MissingTest { test: id.clone() })?, choice)
        }
        Criterion::Test { test: id, result, .. } => Err(Refusal::Undecided { test: id.clone(), result: result.to_string() }),
        Criterion::Criteria { negate: true, definition, .. } => {
            Err(Refusal::Negated { test: definition.clone().unwrap_or_else(|| "a criteria".into()) })
        }
        Criterion::Criteria { operator: Operator::And, children, .. } => {
            let mut out = Vec::new();
            for child in children {
                out.extend(node(e, child, choice)?);
            }
            Ok(out)
        }
        Criterion::Criteria { operator: Operator::Or, children, .. } => {
            let mut best: Option<Vec<Action>> = None;
            let mut first_err = None;
            for child in children {
                match node(e, child, choice) {
                    Ok(a) if best.as_ref().is_none_or(|b| cost(&a) < cost(b)) => best = Some(a),
                    Ok(_) => {}
                    Err(r) => {
                        first_err.get_or_insert(r);
                    }
                }
            }
            best.ok_or_else(|| first_err.unwrap_or(Refusal::NothingFailing))
        }
        Criterion::Criteria { operator, definition, .. } => Err(Refusal::Unsupported {
            test: definition.clone().unwrap_or_else(|| "a criteria".into()),
            why: format!("criteria {operator:?}: exactly one of its children must hold"),
        }),
    }
}

fn cost(actions: &[Action]) -> u32 {
    actions.iter().map(Action::cost).sum()
}
