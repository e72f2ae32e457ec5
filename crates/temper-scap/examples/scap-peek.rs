//! Prints a summary of a datastream profile or a results file: `scap-peek DS PROFILE | scap-peek --results FILE`.
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let t = Instant::now();
    if args.first().map(String::as_str) == Some("--results") {
        let r = temper_scap::parse_results(&args[1])?;
        println!("{:?} in {:?}", r.counts(true), t.elapsed());
        println!("{}", serde_json::to_string_pretty(&temper_scap::results_json(&r, false))?.lines().take(30).collect::<Vec<_>>().join("\n"));
        return Ok(());
    }
    let b = temper_scap::read_benchmark(&args[0], args.get(1).map(String::as_str))?;
    let el = t.elapsed();
    let n = b.selected_rules.len();
    let stig = b.selected_rules.iter().filter(|r| !r.stig_ids.is_empty()).count();
    let fix = b.selected_rules.iter().filter(|r| r.has_fix()).count();
    println!("{} {} v{}: {} rules total, {} selected, {} with stig id, {} with fix, in {:?}", b.id, b.title, b.version, b.rule_count, n, stig, fix, el);
    if let Some(id) = args.get(2) {
        let r = b.rule(id).ok_or("no such rule")?;
        println!("{}", serde_json::to_string_pretty(r)?);
    }
    Ok(())
}
