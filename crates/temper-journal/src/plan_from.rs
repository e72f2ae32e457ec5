//! What `temper fleet run --plan-from FIRST` did with FIRST's plan for a run of the fleet:
//! handed on (the run applies it) or withheld (the run goes through the full loop) and why.
//! Stored with the run (in `options_json`, under `plan_from`), for the log, the fleet report
//! and `resume`.
use serde::{Deserialize, Serialize};

use crate::{RebootOutcome, Run, RunId, RunStatus, reboot_line};

/// What the fleet did with the first target's plan, stored with each other target's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanFrom {
    /// The first target's run passed its reboot proof: its plan, exported to `dir`, is applied.
    Applied { target: String, run: RunId, dir: String, steps: usize },
    /// Not handed on: this run goes through the full loop.
    Withheld { target: String, run: Option<RunId>, why: Withheld },
}

/// Why the first target's plan was not handed on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Withheld {
    #[error("its run was never recorded (exit code {exit_code})")]
    NoRun { exit_code: u8 },
    #[error("its run did not finish (it is {status}, exit code {exit_code})")]
    Unfinished { status: RunStatus, exit_code: u8 },
    #[error("its reboot proof did not pass ({})", proof_words(*proof))]
    NotProven { proof: RebootOutcome },
    #[error("its plan could not be exported: {error}")]
    Export { error: String },
    /// Its plan, sealed at its end with the host's own key, is missing, does not hold, or the
    /// store no longer holds its steps.
    #[error("its plan, sealed at its end with this host's key, is refused: {error}")]
    Refused { error: String },
}

/// The reboot proof as the reports say it.
fn proof_words(proof: RebootOutcome) -> &'static str {
    reboot_line(match proof {
        RebootOutcome::Proven => Some(true),
        RebootOutcome::NotProven => Some(false),
        RebootOutcome::NotRun => None,
    })
}

impl PlanFrom {
    /// The log line.
    pub fn says(&self) -> String {
        match self {
            Self::Applied { target, run, dir, steps } => {
                format!("target {target}'s run {run} passed its reboot proof: the other targets apply its plan ({steps} steps, {dir})")
            }
            Self::Withheld { target, run, why } => {
                let run = run.map(|r| format!(" (run {r})")).unwrap_or_default();
                format!("target {target}{run}: its plan is not handed on, {why}; the other targets run the full loop")
            }
        }
    }

    /// The run's, when `temper fleet run --plan-from` started it.
    pub fn of(run: &Run) -> Option<Self> {
        #[derive(Deserialize)]
        struct OptionsWithPlanFrom {
            plan_from: Option<PlanFrom>,
        }
        serde_json::from_str::<OptionsWithPlanFrom>(&run.options_json).ok()?.plan_from
    }
}
