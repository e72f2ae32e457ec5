//! The verdict on one attempt (`temper_journal::Verdict`), and `judge`, which decides it from
//! the checks after a fix.
mod judge;
#[cfg(test)]
mod tests;

pub use judge::{Checks, Exit, Guard, Judgement, Reboot, Rescan, judge};
use temper_journal::Verdict;
