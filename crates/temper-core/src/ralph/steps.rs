//! The loop's steps, each a type made for one call: what it holds is what it may touch. A step
//! that moves the loop's state on holds it, or the part of it that it moves; the others hold only
//! the loop (its ports, settings and the run's journal). Their methods live beside their work.
use super::{Ralph, RunState};

/// Step 1, before the loop (`preflight.rs`): the checkpoint restored (or rebuilt), access
/// checked, the first scan or the state a resumed run left, and the regression set's cadence.
#[derive(Clone, Copy)]
pub(super) struct Preflight<'r, 'a> {
    pub ralph: &'r Ralph<'a>,
}

/// Step 2, the pick (`pick.rs`, `planned.rs`, `reuse.rs`): the harness offers, the Architect
/// picks. Of the loop's state it moves only the count of rules worked on (`--max-rules`).
pub(super) struct Picker<'r, 'a> {
    pub ralph: &'r Ralph<'a>,
    pub worked: &'r mut usize,
}

/// Steps 3 to 5, one attempt on one rule (`attempt.rs`, `evidence.rs`, `rescan.rs`, `keep.rs`,
/// `revert.rs`): from the proposal to the verdict, the fix applied, checked, then kept or
/// reverted. [`Batch`] applies and judges its steps through the same surface.
#[derive(Clone, Copy)]
pub(super) struct Attempter<'r, 'a> {
    pub ralph: &'r Ralph<'a>,
}

/// One regression check (`regress.rs`): the batch of kept fixes it settles, and the loop's
/// state it moves on.
pub(super) struct Check<'r, 'a> {
    pub ralph: &'r Ralph<'a>,
    pub state: &'r mut RunState,
}

/// A proven plan's batch (`plan_batch.rs`): its due steps applied together, checked once, kept
/// together or bisected. It applies and judges each step through `attempt`.
#[derive(Clone, Copy)]
pub(super) struct Batch<'r, 'a> {
    pub ralph: &'r Ralph<'a>,
    pub attempt: Attempter<'r, 'a>,
}

/// Step 6, after a fix failed (`reflect.rs`, `escalate.rs`): the Reflector's lesson and ban, and
/// the escalation of a rule whose budget is spent, that plateaus, or that the Architect gives up.
#[derive(Clone, Copy)]
pub(super) struct Reflection<'r, 'a> {
    pub ralph: &'r Ralph<'a>,
}

impl<'r, 'a> Preflight<'r, 'a> {
    pub(super) fn new(ralph: &'r Ralph<'a>) -> Self {
        Self { ralph }
    }
}

impl<'r, 'a> Attempter<'r, 'a> {
    pub(super) fn new(ralph: &'r Ralph<'a>) -> Self {
        Self { ralph }
    }
}

impl<'r, 'a> Batch<'r, 'a> {
    pub(super) fn new(ralph: &'r Ralph<'a>) -> Self {
        Self { ralph, attempt: Attempter::new(ralph) }
    }
}

impl<'r, 'a> Reflection<'r, 'a> {
    pub(super) fn new(ralph: &'r Ralph<'a>) -> Self {
        Self { ralph }
    }
}

impl<'r, 'a> Picker<'r, 'a> {
    pub(super) fn new(ralph: &'r Ralph<'a>, worked: &'r mut usize) -> Self {
        Self { ralph, worked }
    }
}

impl<'r, 'a> Check<'r, 'a> {
    pub(super) fn new(ralph: &'r Ralph<'a>, state: &'r mut RunState) -> Self {
        Self { ralph, state }
    }
}
