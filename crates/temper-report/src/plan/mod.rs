//! The proven plan (`temper_journal::plan`) made from a run, and written as a folder:
//! `plan.json`, the steps' scripts under `steps/`, `replay.sh`, `playbook.yml` and `README.md`.
//! The seal (`SHA256SUMS`, its signature) is `temper_core::plan::seal`'s. The folder holds no
//! script that checks it: it is checked from outside (`temper plan verify`, `temper plan unpack`).
mod ansible;
mod readme;

use std::path::Path;

use temper_journal::Run;
use temper_journal::controls::RunControls;
use temper_journal::plan::{self, ContentRef, Header, Plan, SourceRun, TailoringRef, Terms};
use temper_scap::Benchmark;

pub use ansible::playbook;
pub use readme::readme;

use crate::replay::{ReplayOrigin, replay};
use crate::view::steps;

use crate::error::ReportError;
use crate::run::RunData;

/// The plan of a finished run. `content_sha256` is the datastream's, for runs that did not record
/// it when they started ([`recorded_content_sha256`]).
pub fn build(data: &RunData, content: Option<&Benchmark>, content_sha256: Option<String>) -> Result<Plan, ReportError> {
    let run = &data.run;
    let summary = data.summary.as_ref().ok_or(ReportError::Unfinished(run.id))?;
    let sha256 = recorded_content_sha256(run).or(content_sha256).ok_or(ReportError::NoContentSha(run.id))?;
    let tailoring = RunControls::of(run).tailoring.map(|t| TailoringRef { path: t.file, sha256: t.sha256 });
    let version = run.content_version.clone().or_else(|| content.map(|c| c.version.clone())).unwrap_or_else(|| "unknown".into());
    let header = Header {
        skill: run.skill.clone(),
        profile: run.profile.clone(),
        tailoring,
        content: ContentRef { datastream: run.datastream.clone(), version, sha256 },
        source: SourceRun {
            target: run.target.clone(),
            run: run.id,
            started_at: run.started_at.clone(),
            ended_at: run.ended_at.clone(),
            regression_every: run.regression_every.map(|n| n.max(1) as u32),
        },
        temper_version: env!("CARGO_PKG_VERSION").to_string(),
        reboot_proven: summary.rebooted == Some(true),
        exported_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    Ok(Plan { version: plan::VERSION, header, steps: steps(data, content) })
}

/// The datastream's sha256 as the run recorded it when it started (`content_sha256` in its
/// stored options).
pub fn recorded_content_sha256(run: &Run) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct OptionsWithContentSha {
        content_sha256: Option<String>,
    }
    serde_json::from_str::<OptionsWithContentSha>(&run.options_json).ok()?.content_sha256
}

/// Writes `plan` into `dir`, a new or empty folder, bound by `terms` (which `replay.sh` and the
/// playbook check too; the seal's manifest holds them).
pub fn write(plan: &Plan, dir: &Path, terms: &Terms) -> Result<(), ReportError> {
    let io = |e: std::io::Error| ReportError::Write(dir.display().to_string(), e);
    if dir.exists() && std::fs::read_dir(dir).map_err(io)?.next().is_some() {
        return Err(ReportError::NotEmpty(dir.display().to_string()));
    }
    std::fs::create_dir_all(dir.join(plan::STEPS_DIR)).map_err(io)?;
    for s in &plan.steps {
        for script in [&s.fix, &s.revert] {
            std::fs::write(dir.join(&script.file), &script.text).map_err(io)?;
        }
    }
    std::fs::write(dir.join(plan::FILE), serde_json::to_string_pretty(plan)? + "\n").map_err(io)?;
    std::fs::write(dir.join(plan::REPLAY), replay(&ReplayOrigin::of_plan(plan, terms), &plan.steps)).map_err(io)?;
    std::fs::write(dir.join(plan::PLAYBOOK), playbook(plan, terms)).map_err(io)?;
    std::fs::write(dir.join(plan::README), readme(plan, terms)).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join(plan::REPLAY), std::fs::Permissions::from_mode(0o755)).map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
