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
        ContentCmd::Rules { datastream, profile, json } => {
            let b = temper_scap::read_benchmark(&datastream, Some(&profile)).with_context(|| datastream.display().to_string())?;
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
