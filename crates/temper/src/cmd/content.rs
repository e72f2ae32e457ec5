//! `temper content profiles|rules`.
use anyhow::Context;

use super::print_json;
use crate::cli::ContentCmd;

pub fn run(cmd: ContentCmd) -> anyhow::Result<u8> {
    match cmd {
        ContentCmd::Profiles { datastream, json } => {
            let profiles = temper_scap::list_profiles(&datastream).with_context(|| datastream.display().to_string())?;
            if json {
                print_json(&temper_scap::json::profiles_json(&profiles))?;
            } else {
                for p in &profiles {
                    println!("{}\t{}", p.id, p.title);
                }
            }
        }
        ContentCmd::Rules { datastream, profile, tailoring_file, json } => {
            let b = match &tailoring_file {
                Some(path) => {
                    let t = temper_scap::Tailoring::read(path).with_context(|| format!("tailoring file {}", path.display()))?;
                    temper_scap::read_benchmark_tailored(&datastream, &t, profile.as_deref())
                }
                None => temper_scap::read_benchmark(&datastream, profile.as_deref()),
            }
            .with_context(|| datastream.display().to_string())?;
            let profile = b.profile.as_ref().map_or_else(|| profile.unwrap_or_default(), |p| p.id.clone());
            if json {
                print_json(&temper_scap::json::rules_json(&b.selected_rules))?;
            } else {
                for r in &b.selected_rules {
                    let stig = r.stig_ids.first().map(String::as_str).unwrap_or("-");
                    let fix = if r.has_fix() { "fix" } else { "no-fix" };
                    println!("{}\t{}\t{}\t{}\t{}", r.short_id(), r.severity, stig, fix, r.title);
                }
                eprintln!("{} rules selected by {}", b.selected_rules.len(), profile);
            }
        }
    }
    Ok(0)
}
