//! The proven plan by default: a run applies first the plan of its target's last finished run of
//! the same job, when that run passed its reboot proof, as `temper run --plan` would; what the
//! plan does not fix goes to the loop. `--no-plan` runs the full loop. A scheduled nightly run
//! thus starts from the last night's proven fixes.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use temper_core::controls::RunControls;
use temper_core::journal::prelude::*;
use temper_core::journal::{RebootProof, Run, RunId, RunStatus, RunSummary};
use temper_core::plan::PlanOrigin;
use temper_core::plan::seal::Trust;
use temper_core::target::Target;

use super::plan::{Applied, export, for_run};
use crate::config::Config;

/// What makes two runs on one target and snapshot one job: skill, profile, rules asked for,
/// tailoring, waivers and datastream. Stored flattened in a run's options, and read from there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub skill: String,
    pub profile: String,
    #[serde(default)]
    pub rules: Vec<String>,
    #[serde(default)]
    pub max_rules: Option<usize>,
    /// The tailoring and waivers, kept whole so that a resume uses the same ones.
    #[serde(default)]
    pub controls: RunControls,
    /// The host datastream's sha256 when the run started (its plan names it; read by
    /// `temper_report::plan::recorded_content_sha256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_sha256: Option<String>,
}

/// Why a run applies no plan by default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoPlan {
    /// `--no-plan`.
    Off,
    /// No finished run of this job on this target.
    NoEarlierRun,
    /// The datastream could not be read: no run can be matched to it.
    UnknownContent,
    /// The last finished run of this job did not pass its reboot proof (or had none).
    NotProven { run: RunId, proof: RebootProof },
    /// The last finished run of this job kept no fix.
    NothingKept { run: RunId },
    /// Its plan could not be written or read back.
    Unreadable { run: RunId, error: String },
}

impl NoPlan {
    pub fn says(&self) -> String {
        match self {
            Self::Off => "--no-plan: the full loop".into(),
            Self::NoEarlierRun => "no earlier finished run of this job on this target".into(),
            Self::UnknownContent => "the datastream could not be read, so no earlier run can be matched to it".into(),
            Self::NotProven { run, proof } => {
                let why = if *proof == RebootProof::NotRun { "skipped the reboot proof" } else { "did not pass its reboot proof" };
                format!("the last run of this job, run {run}, {why}")
            }
            Self::NothingKept { run } => format!("the last run of this job, run {run}, kept no fix"),
            Self::Unreadable { run, error } => format!("run {run}'s plan could not be exported: {error}"),
        }
    }
}

/// The last finished run of `job` on `target` among `runs`, if it passed its reboot proof: the
/// run whose plan to apply. The last one decides: an older proven run behind a newer unproven
/// one is not used.
pub fn choose(runs: &[Run], target: &Target, job: &Job) -> Result<RunId, NoPlan> {
    if job.content_sha256.is_none() {
        return Err(NoPlan::UnknownContent);
    }
    let same = |r: &&Run| {
        r.status == RunStatus::Finished
            && r.target_config.as_ref().is_some_and(|t| t.name == target.name && t.baseline == target.baseline)
            && serde_json::from_str::<Job>(&r.options_json).is_ok_and(|j| j == *job)
    };
    let last = runs.iter().filter(same).max_by_key(|r| r.id).ok_or(NoPlan::NoEarlierRun)?;
    let summary = last.summary_json.as_deref().and_then(|s| serde_json::from_str::<RunSummary>(s).ok());
    let proof = RebootProof::of(summary.and_then(|s| s.rebooted));
    if proof != RebootProof::Proven {
        return Err(NoPlan::NotProven { run: last.id, proof });
    }
    Ok(last.id)
}

/// The plan `job`'s run on `target` applies by default, exported from the chosen run into its
/// folder and read back as `--plan` reads one (unsigned: this process wrote it, from its store),
/// or why there is none. Only the store failing is an error.
pub async fn take(config: &Config, store: &temper_store::Store, target: &Target, job: &Job) -> anyhow::Result<Result<Applied, NoPlan>> {
    let runs = store.list_runs(i64::MAX).await?;
    let run = match choose(&runs, target, job) {
        Ok(run) => run,
        Err(why) => return Ok(Err(why)),
    };
    let dir = dir(store, run);
    let unreadable = |e: anyhow::Error| NoPlan::Unreadable { run, error: format!("{e:#}") };
    let read = async {
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        let plan = export(config, store, run, &dir).await?;
        anyhow::Ok((plan.steps.len(), for_run(&dir, &Trust::Unsigned, &job.profile, &job.controls, job.content_sha256.as_deref())?))
    };
    Ok(match read.await {
        Ok((0, _)) => Err(NoPlan::NothingKept { run }),
        Ok((_, applied)) => Ok(Applied { origin: PlanOrigin::LastProven, ..applied }),
        Err(e) => Err(unreadable(e)),
    })
}

/// Where `run`'s plan is written to be applied by default: `plan/` in the run's own folder.
pub fn dir(store: &temper_store::Store, run: RunId) -> PathBuf {
    store.run_dir(run).join("plan")
}

#[cfg(test)]
mod tests;
