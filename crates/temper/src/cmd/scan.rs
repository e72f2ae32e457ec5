//! `temper scan run|parse`.

use anyhow::Context;
use temper_journal::Engine;
use temper_scap::oval::Evidence;

use super::print_json;
use crate::cli::ScanCmd;
use crate::config::Config;
use crate::wiring;

pub async fn run(config: &Config, cmd: ScanCmd) -> anyhow::Result<u8> {
    match cmd {
        ScanCmd::Parse { file, all, json } => {
            let t = temper_scap::parse_results(&file).with_context(|| file.display().to_string())?;
            show(&t, all, json, None)?;
        }
        ScanCmd::Run { target, mut rules, profile, tailoring_file, engine, evidence, all, json } => {
            let target = config.target(target.name.as_deref())?;
            let skill = wiring::skill(config, &target.skill)?;
            let profile = profile.or(target.profile.clone()).unwrap_or(skill.manifest.profile.clone());
            let tailoring = tailoring_file.as_deref().or(config.tailoring_file.as_deref());
            let (controls, profile) = crate::controls::read(&skill, &profile, tailoring, None)?;
            let guest = wiring::guest(config, &target)?;
            let mut scanner = wiring::scanner(config, &skill, &profile);
            // Short ids become full ones with either engine (oscap takes only full ids).
            let content = if engine == Engine::Oval || rules.iter().any(|r| !r.starts_with("xccdf_")) {
                let ds = wiring::host_datastream(config, &skill);
                let content = controls.read_content(&profile, &ds).with_context(|| ds.display().to_string())?;
                rules = full_ids(&content, &rules)?;
                Some(content)
            } else {
                None
            };
            if let (Engine::Oval, Some(content)) = (engine, content) {
                scanner = scanner.with_oval(wiring::oval(config, &skill, content)?);
            }
            crate::controls::apply(&controls, skill, &mut scanner)?;
            scanner.check(&guest).await?;
            let scan = scanner.scan(&guest, &rules).await?;
            let score = scan.results.score().map(|s| format!(", score {:.6}", s.value)).unwrap_or_default();
            eprintln!("scan took {:.1}s ({} engine{score})", scan.took.as_secs_f64(), scan.engine);
            if scan.engine == Engine::Oval && rules.is_empty() {
                let split = scanner.split_from_full();
                eprintln!("{} tree walker(s) by OVAL beside oscap xccdf eval: {}", split.len(), short(&split));
            } else if scan.engine == Engine::Oval {
                let routed: Vec<String> = scan.routed.iter().map(|(r, why)| format!("{} ({why})", temper_scap::short_rule_id(r))).collect();
                eprintln!(
                    "{} rule(s) by OVAL, {} by oscap xccdf eval{}",
                    rules.len() - routed.len(),
                    routed.len(),
                    if routed.is_empty() { String::new() } else { format!(": {}", routed.join(", ")) }
                );
            }
            if let Some(w) = &scan.walk {
                let left: Vec<String> = w.left.iter().map(|(o, why)| format!("{o} ({why})")).collect();
                eprintln!(
                    "one walk: {} entries in {:.1}s, {} tree-walking test(s) judged over it, {} object(s) fed to variables from it{}",
                    w.entries,
                    w.secs,
                    w.tests,
                    w.fed,
                    if left.is_empty() { String::new() } else { format!("; left to oscap: {}", left.join(", ")) }
                );
                if !w.fell_back.is_empty() {
                    let fell: Vec<String> = w.fell_back.iter().map(ToString::to_string).collect();
                    eprintln!(
                        "the walk could not complete {} object(s), so oscap walked for them: {}; rescanned so: {}",
                        fell.len(),
                        fell.join(", "),
                        short(&w.to_oscap)
                    );
                }
            }
            show(&scan.results, all, json, evidence.then_some(&scan.evidence[..]))?;
        }
    }
    Ok(0)
}

/// `rules` (short or full ids) as the full ids of the rules `content`'s profile selects.
fn full_ids(content: &temper_scap::Benchmark, rules: &[String]) -> anyhow::Result<Vec<String>> {
    let profile = content.profile.as_ref().map_or("(the default selection)", |p| p.id.as_str());
    rules
        .iter()
        .map(|r| content.rule(r).map(|c| c.id.clone()).with_context(|| format!("rule {r} is not selected by profile {profile}")))
        .collect()
}

fn short(rules: &[String]) -> String {
    rules.iter().map(|r| temper_scap::short_rule_id(r)).collect::<Vec<_>>().join(", ")
}

/// The results, and with `evidence` each failing rule's (in the JSON as `evidence`).
fn show(t: &temper_scap::TestResult, all: bool, json: bool, evidence: Option<&[Evidence]>) -> anyhow::Result<()> {
    if json {
        let mut v = temper_scap::json::results_json(t, all);
        if let (Some(e), Some(o)) = (evidence, v.as_object_mut()) {
            o.insert("evidence".into(), serde_json::to_value(e)?);
        }
        print_json(&v)?;
        return Ok(());
    }
    for e in evidence.unwrap_or_default() {
        println!("{}", e.to_text());
    }
    for r in t.rule_results.iter().filter(|r| all || r.result != temper_scap::Outcome::NotSelected) {
        println!("{}\t{}\t{}", r.result, r.severity, r.idref);
    }
    let counts = t.counts(all).into_iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    println!("{counts}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::full_ids;

    #[test]
    fn short_ids_become_full_ones_and_unknown_ones_are_refused() {
        let dir = std::env::var("TEMPER_VM_DIR").unwrap_or_else(|_| "/var/cache/temper/vm".into());
        let ds = std::path::Path::new(&dir).join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml");
        assert!(ds.exists(), "{} is missing: run `bash vm/fetch-ssg.sh`", ds.display());
        let content = temper_scap::read_benchmark(&ds, Some("xccdf_org.ssgproject.content_profile_standard")).unwrap();
        let full = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login".to_string();
        assert_eq!(full_ids(&content, &["sshd_disable_root_login".into(), full.clone()]).unwrap(), [full.clone(), full]);
        let err = full_ids(&content, &["no_such_rule".into()]).unwrap_err().to_string();
        assert!(err.contains("no_such_rule") && err.contains("content_profile_standard"), "{err}");
    }
}
