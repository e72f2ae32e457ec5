//! The proven plan by default: a run applies first the plan of its target's last finished run of
//! the same job, when that run passed its reboot proof, as `temper run --plan` would; what the
//! plan does not fix goes to the loop. `--no-plan` runs the full loop. A scheduled nightly run
//! thus starts from the last night's proven fixes.
//!
//! The store does not run code: the run that proved the plan seals it at its end ([`seal_at_end`]),
//! with the host's own key (`temper_core::plan::own_key`), into `plan/` in its folder; the next
//! run verifies that folder as it would any plan (read once, the signature by that key alone,
//! every file) and refuses it unless the store still holds the very steps that were sealed. A
//! step written into the store by hand stops the run before anything runs.
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use temper_core::plan::own_key::OwnKey;
use temper_core::plan::seal::{self, Trust};
use temper_journal::controls::RunControls;
use temper_journal::plan::{Applying, PlanOrigin, PlannedFix, Terms};
use temper_journal::prelude::*;
use temper_journal::target::Target;
use temper_journal::{RebootOutcome, Run, RunId, RunStatus, RunSummary};

use super::plan::{AppliedPlan, ForRun, export, for_run};
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
    /// `temper_journal::plan::recorded_content_sha256`).
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
    NotProven { run: RunId, proof: RebootOutcome },
    /// The last finished run of this job kept no fix.
    NothingKept { run: RunId },
    /// Its plan could not be written or read back.
    Unreadable { run: RunId, error: String },
    /// It left no plan sealed with this host's key (it ran before plans were sealed, on another
    /// host, or its seal was taken away).
    NotSealed { run: RunId },
}

impl NoPlan {
    pub fn says(&self) -> String {
        match self {
            Self::Off => "--no-plan: the full loop".into(),
            Self::NoEarlierRun => "no earlier finished run of this job on this target".into(),
            Self::UnknownContent => "the datastream could not be read, so no earlier run can be matched to it".into(),
            Self::NotProven { run, proof } => {
                let why = if *proof == RebootOutcome::NotRun { "skipped the reboot proof" } else { "did not pass its reboot proof" };
                format!("the last run of this job, run {run}, {why}")
            }
            Self::NothingKept { run } => format!("the last run of this job, run {run}, kept no fix"),
            Self::Unreadable { run, error } => format!("run {run}'s plan could not be exported: {error}"),
            Self::NotSealed { run } => format!(
                "the last run of this job, run {run}, left no plan sealed with this host's key (a run before plans were sealed, or on another host)"
            ),
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
    let proof = RebootOutcome::of(summary.and_then(|s| s.rebooted));
    if proof != RebootOutcome::Proven {
        return Err(NoPlan::NotProven { run: last.id, proof });
    }
    Ok(last.id)
}

/// The plan `job`'s run on `target` applies by default: the one the chosen run sealed at its
/// end, verified as any plan is (read once; the signature by the host's own key; every file;
/// the content, profile and tailoring) and matched against the store, or why there is none.
/// Errors stop the run before it exists: the store failing, the host's key exposed, or a sealed
/// plan that does not hold or that the store no longer agrees with.
pub async fn take(config: &Config, store: &temper_store::Store, target: &Target, job: &Job) -> anyhow::Result<Result<AppliedPlan, NoPlan>> {
    let runs = store.list_runs(i64::MAX).await?;
    let run = match choose(&runs, target, job) {
        Ok(run) => run,
        Err(why) => return Ok(Err(why)),
    };
    let dir = dir(store, run);
    if !dir.join(temper_journal::plan::SIGNATURE).exists() {
        return Ok(Err(NoPlan::NotSealed { run }));
    }
    let at = Applying { now: chrono::Utc::now(), target: Some(&target.name), fleet: None };
    let applied = proven(config, store, run, &dir, job, at).await?;
    Ok(if applied.fixes.is_empty() {
        Err(NoPlan::NothingKept { run })
    } else {
        Ok(AppliedPlan { origin: PlanOrigin::LastProven, ..applied })
    })
}

/// Run `run`'s plan sealed in `dir`, verified with the host's own key `at` a target, and the
/// store's steps of `run` the very ones sealed.
pub async fn proven(
    config: &Config,
    store: &temper_store::Store,
    run: RunId,
    dir: &Path,
    job: &Job,
    at: Applying<'_>,
) -> anyhow::Result<AppliedPlan> {
    let key = OwnKey::open(&config.plan_key_file)?;
    let refused = || format!("run {run}'s plan, sealed at its end in {}, is refused; `--no-plan` runs the full loop", dir.display());
    let trust = Trust::Signers(key.signers.clone());
    let r = ForRun { trust: &trust, profile: &job.profile, controls: &job.controls, content_sha256: job.content_sha256.as_deref(), at };
    let applied = for_run(dir, &r).with_context(refused)?;
    if applied.from_run != run {
        anyhow::bail!("{}: it is run {}'s, not run {run}'s; nothing was run", refused(), applied.from_run);
    }
    let stored = stored_steps(config, store, run, job.content_sha256.clone()).await.with_context(refused)?;
    if let Some(why) = differs(&applied.fixes, &stored) {
        anyhow::bail!(
            "{}: the store's steps of run {run} are not those sealed at its end ({why}): a step was written into the store by hand, or taken out; nothing was run",
            refused()
        );
    }
    Ok(applied)
}

/// Seals run `run`'s plan at its end, from the process that ran it: exported from the store into
/// `plan/` in its folder (anew) and signed with the host's own key. A run that did not pass its
/// reboot proof seals none. Returns the folder.
pub async fn seal_at_end(config: &Config, store: &temper_store::Store, run: RunId) -> anyhow::Result<PathBuf> {
    let key = OwnKey::open(&config.plan_key_file)?;
    let dir = dir(store, run);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    export(config, store, run, &dir, &Terms::default()).await?;
    seal::sign(&dir, &key.key, None).with_context(|| format!("sealing {} with the host's own key", dir.display()))?;
    Ok(dir)
}

/// The steps of `run`'s plan as the store holds them now (`content_sha256`: for a run that did
/// not record its datastream's).
async fn stored_steps(
    config: &Config,
    store: &temper_store::Store,
    run: RunId,
    content_sha256: Option<String>,
) -> anyhow::Result<Vec<PlannedFix>> {
    let data = temper_report::load(store, run).await?;
    let content = super::report::content(config, &data.run);
    Ok(temper_journal::plan::build(data.records(), content.as_ref(), content_sha256)?.fixes())
}

/// Where `sealed` and `stored` part, if they do.
fn differs(sealed: &[PlannedFix], stored: &[PlannedFix]) -> Option<String> {
    for (i, (a, b)) in sealed.iter().zip(stored).enumerate() {
        if a != b {
            return Some(format!("step {} ({}): the store holds {} instead", i + 1, a.rule, what(b)));
        }
    }
    match sealed.len().cmp(&stored.len()) {
        std::cmp::Ordering::Less => Some(format!("the store holds a step {} more: {}", sealed.len() + 1, what(&stored[sealed.len()]))),
        std::cmp::Ordering::Greater => Some(format!("the store lacks step {} ({})", stored.len() + 1, sealed[stored.len()].rule)),
        std::cmp::Ordering::Equal => None,
    }
}

/// A step as the refusal names it: its rule and its fix's sha256.
fn what(f: &PlannedFix) -> String {
    format!("{} with a fix of sha256 {}", f.rule, temper_journal::plan::sha256_hex(f.fix.fix_script.as_bytes()))
}

/// Where `run`'s plan is written to be applied by default: `plan/` in the run's own folder.
pub fn dir(store: &temper_store::Store, run: RunId) -> PathBuf {
    store.run_dir(run).join("plan")
}

#[cfg(test)]
mod tests;
