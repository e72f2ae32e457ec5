//! The fleet report as Markdown.
use crate::text::{md as cell, md_ticks};
use crate::view::FleetReport;

fn score(s: Option<f64>) -> String {
    s.map_or("-".into(), |v| format!("{v:.2}"))
}

fn health(h: Option<bool>) -> &'static str {
    match h {
        Some(true) => "healthy",
        Some(false) => "NOT healthy",
        None => "-",
    }
}

pub fn render(r: &FleetReport) -> String {
    let mut out = format!("# temper fleet report: {}\n\n", cell(&r.fleet, false));
    out += &format!("{} target(s): {} rule(s) fixed, {} escalated.\n\n", r.targets.len(), r.fixed, r.escalated);
    out += "| target | run | status | fixed | escalated | still failing | score | wall time | at the end | plan |\n";
    out += "|---|---|---|---|---|---|---|---|---|---|\n";
    for t in &r.targets {
        out += &format!(
            "| {} | {} | {} | {} | {} | {} | {} → {} | {} | {} | {} |\n",
            cell(&t.target, true),
            t.run,
            t.status,
            t.fixed,
            t.escalated,
            t.still_failing,
            score(t.score_before),
            score(t.score_after),
            t.wall,
            health(t.healthy),
            cell(t.plan.as_deref().unwrap_or("-"), true)
        );
    }
    out += "\n## Escalations across targets\n\n";
    if r.escalations.is_empty() {
        out += "None.\n";
    }
    for e in &r.escalations {
        let targets = e.targets.iter().map(|t| cell(t, false)).collect::<Vec<_>>().join(", ");
        let recurs = if e.recurs { " (recurs)" } else { "" };
        out += &format!("### {}{recurs}\n\n{}\n\n", cell(&e.short_id, false), cell(&e.title, false));
        out += &format!("- on {} target(s): {targets}\n- why: {}\n", e.targets.len(), cell(&e.reason, false));
        out += &format!("- next step: {} {}\n\n", md_ticks(&e.next_step.check), md_ticks(&e.next_step.try_));
    }
    out += "## Checklists per target\n\n";
    for t in &r.targets {
        out += &format!("- {}: `{}`\n", cell(&t.target, false), t.checklist);
    }
    out
}
