//! The proven plan (`temper_journal::plan`, which makes it from a run's records) written as a folder:
//! `plan.json`, the steps' scripts under `steps/`, `replay.sh`, `playbook.yml` and `README.md`.
//! The seal (`SHA256SUMS`, its signature) is `temper_core::plan::seal`'s. The folder holds no
//! script that checks it: it is checked from outside (`temper plan verify`, `temper plan unpack`).
mod ansible;
mod readme;

use std::path::Path;

use temper_journal::plan::{self, Plan, Terms};

pub use ansible::playbook;
pub use readme::readme;

use crate::replay::{ReplayOrigin, replay};

use crate::error::ReportError;

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
