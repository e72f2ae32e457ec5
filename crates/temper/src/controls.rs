//! The operator's controls for a run: the tailoring file and the waivers, read when a run
//! starts and stored with it (`temper_core::controls::RunControls`), then applied to the skill,
//! the content and the scanner, the same way on `run` and on `resume`.
use std::path::Path;

use anyhow::Context;
use temper_core::scan::Scanner;
use temper_core::skill::Skill;
use temper_journal::controls::{RunControls, TailoringRecord};
use temper_scap::Tailoring;

/// Reads the tailoring (if any) and the waivers (the skill's own, then `waivers`); returns the
/// controls and the profile the run uses (the tailored one when there is a tailoring).
pub fn read(skill: &Skill, profile: &str, tailoring: Option<&Path>, waivers: Option<&Path>) -> anyhow::Result<(RunControls, String)> {
    let mut all = skill.waivers().to_vec();
    if let Some(path) = waivers {
        all.extend(temper_journal::waiver::load(path)?);
    }
    let Some(path) = tailoring else {
        return Ok((RunControls { tailoring: None, waivers: all }, profile.to_string()));
    };
    let bytes = std::fs::read(path).with_context(|| format!("reading the tailoring file {}", path.display()))?;
    let t = Tailoring::parse(&bytes).with_context(|| format!("tailoring file {}", path.display()))?;
    let tailored = t.pick(Some(profile)).with_context(|| format!("tailoring file {}", path.display()))?;
    let xml = String::from_utf8(bytes).context("the tailoring file is not UTF-8")?;
    let record = TailoringRecord {
        file: path.display().to_string(),
        sha256: temper_journal::plan::sha256_hex(xml.as_bytes()),
        profile: tailored.clone(),
        id: t.id.clone(),
        xml,
    };
    Ok((RunControls { tailoring: Some(record), waivers: all }, tailored))
}

/// The skill with the run's waivers judged today, and the scanner with its tailoring.
pub fn apply(controls: &RunControls, skill: Skill, scanner: &mut Scanner) -> anyhow::Result<Skill> {
    if let Some(t) = &controls.tailoring {
        scanner.tailoring = Some(Tailoring::parse(t.xml.as_bytes())?.for_oscap());
    }
    Ok(skill.with_waivers(controls.waivers.clone(), chrono::Local::now().date_naive()))
}
