//! `temper scan run|parse`.
use std::time::Duration;

use anyhow::Context;
use temper_core::scan::Scanner;

use super::print_json;
use crate::cli::ScanCmd;
use crate::config::Config;
use crate::wiring;

pub async fn run(config: &Config, cmd: ScanCmd) -> anyhow::Result<u8> {
    match cmd {
        ScanCmd::Parse { file, all, json } => {
            let t = temper_scap::parse_results(&file).with_context(|| file.display().to_string())?;
            show(&t, all, json)?;
        }
        ScanCmd::Run { target, rules, profile, tailoring_file, all, json } => {
            let target = config.target(target.name.as_deref())?;
            let skill = wiring::skill(config, &target.skill)?;
            let profile = profile.or(target.profile.clone()).unwrap_or(skill.manifest.profile.clone());
            let tailoring = tailoring_file.as_deref().or(config.tailoring_file.as_deref());
            let (controls, profile) = crate::controls::read(&skill, &profile, tailoring, None)?;
            let guest = wiring::guest(&target)?;
            let mut scanner = Scanner::new(wiring::guest_datastream(config, &skill), profile);
            scanner.timeout = Duration::from_secs(config.scan_timeout_secs);
            crate::controls::apply(&controls, skill, &mut scanner)?;
            scanner.check(&guest).await?;
            let scan = scanner.scan(&guest, &rules).await?;
            eprintln!("scan took {:.1}s", scan.took.as_secs_f64());
            show(&scan.results, all, json)?;
        }
    }
    Ok(0)
}

fn show(t: &temper_scap::TestResult, all: bool, json: bool) -> anyhow::Result<()> {
    if json {
        print_json(&temper_scap::json::results_json(t, all))?;
        return Ok(());
    }
    for r in t.rule_results.iter().filter(|r| all || r.result != temper_scap::Outcome::NotSelected) {
        println!("{}\t{}\t{}", r.result, r.severity, r.idref);
    }
    let counts = t.counts(all).into_iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    println!("{counts}");
    Ok(())
}
