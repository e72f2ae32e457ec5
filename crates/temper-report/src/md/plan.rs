//! The report's "Plan" section: each step of the proven plan the run applied, and its outcome.
use std::fmt::Write;

use temper_journal::plan::PlanOrigin;

use crate::run::PlanView;
use crate::text::md;

pub(super) fn section(s: &mut String, p: &PlanView) {
    let from = p.from_run.map(|r| format!(", exported from run {r}")).unwrap_or_default();
    let _ = writeln!(s, "## Plan ({} steps{from})\n", p.counts.steps);
    match (&p.dir, p.origin) {
        (_, PlanOrigin::LastProven) => {
            let _ = writeln!(
                s,
                "The proven plan of the last run of this job on this target, applied by default before the normal loop (`--no-plan` runs the full loop).\n"
            );
        }
        (Some(dir), PlanOrigin::Given) => {
            let _ = writeln!(s, "Applied from {} (`temper run --plan`) before the normal loop.\n", md(dir, false));
        }
        (None, PlanOrigin::Given) => {}
    }
    let c = &p.counts;
    let _ = writeln!(
        s,
        "{} applied from the plan and kept, {} redone by the loop, {} escalated, {} not fixed, {} not applied.\n",
        c.kept, c.redone, c.escalated, c.open, c.not_applied
    );
    let _ = writeln!(s, "| Step | Rule | Outcome | What happened |\n|---:|---|---|---|");
    for step in &p.steps {
        let again = match step.interrupted {
            0 => String::new(),
            n => format!(" (applied again after {n} interrupted batch(es))"),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {}{again} |",
            step.n,
            md(&step.short_id, true),
            step.outcome.kind().replace('_', " "),
            md(&step.says, true)
        );
    }
    s.push('\n');
}
