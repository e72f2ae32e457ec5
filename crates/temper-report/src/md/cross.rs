//! The guest cross-examined, in Markdown: the findings at the top of the report, the figures in
//! a section of their own.
use std::fmt::Write;

use super::found;
use crate::text::{md, md_code_id, md_id};
use crate::view::{CrossOutcome, CrossView};

/// The rules the guest passes and its disk fails: right under the run's table.
pub(super) fn findings(s: &mut String, x: &CrossView) {
    if x.outcome == CrossOutcome::Unreadable {
        let _ = writeln!(s, "## FINDING: the guest's disk does not read from outside\n");
        let _ = writeln!(
            s,
            "Its final state's disk could not be judged on the host: {}. The guest controls its disk: its scan is not \
             vouched for, and the run does not end as a success.\n",
            md(&x.reason, false)
        );
        return;
    }
    if x.lies.is_empty() {
        return;
    }
    let _ = writeln!(s, "## FINDING: the guest's scan disagrees with its disk ({})\n", x.lies.len());
    let _ = writeln!(
        s,
        "The guest's own final scan reports these rules passing; its disk, read on the host and judged by the host's \
         content and scanner, fails them. The guest's scan is not to be trusted: the run does not end as a success.\n"
    );
    let _ = writeln!(s, "| Rule | Title | Guest's scan | Its disk |\n|---|---|---|---|");
    for d in &x.lies {
        let _ = writeln!(s, "| {} | {} | {} | {} |", md_code_id(&d.info.short_id, true), md(&d.info.title, true), d.live, d.offline);
    }
    s.push('\n');
    for d in x.lies.iter().filter(|d| d.found.is_some()) {
        let _ = writeln!(s, "### What the disk shows: {} ({})\n", md(&d.info.title, false), md_id(&d.info.short_id, false));
        if let Some(f) = &d.found {
            found(s, f, "What the disk shows.");
        }
    }
}

/// The figures of the verdict from outside.
pub(super) fn section(s: &mut String, x: &CrossView) {
    let _ = writeln!(s, "## The verdict from outside the guest\n");
    match x.outcome {
        CrossOutcome::Failed => {
            let _ = writeln!(
                s,
                "The final state's disk could not be judged from outside the guest: {}. The verdicts above are the guest's scan alone.\n",
                md(&x.reason, false)
            );
            return;
        }
        CrossOutcome::Unreadable => {
            let _ = writeln!(s, "The final state's disk does not read from outside the guest (see the finding above).\n");
            return;
        }
        CrossOutcome::Skipped => {
            let _ = writeln!(s, "Not judged from outside the guest: {}.\n", md(&x.reason, false));
            return;
        }
        CrossOutcome::Done => {}
    }
    let _ = writeln!(
        s,
        "The final state's disk ({}) was read on the host, read-only, and judged by the host's content and scanner in {:.1} s: \
         {} of the {} rules the guest's final scan judged were judged from the disk too ({}), {} agree; {} rules can only be \
         judged on the running system (their last live result stands), {} were not judged offline.\n",
        md(&x.source, false),
        x.secs,
        x.both,
        x.live_judged,
        x.coverage,
        x.agree,
        x.live_only,
        x.not_judged
    );
    if let Some(why) = &x.unflushed {
        let _ = writeln!(
            s,
            "The guest's `sync` failed before its disk was read ({}): what its page cache held may be missing from the disk.\n",
            md(why, false)
        );
    }
    if x.lies.is_empty() && x.differ.is_empty() {
        let _ = writeln!(s, "The guest's scan and its disk agree on every rule both judged.\n");
    }
    if !x.differ.is_empty() {
        let _ = writeln!(s, "Other disagreements ({}):\n", x.differ.len());
        let _ = writeln!(s, "| Rule | Title | Guest's scan | Its disk |\n|---|---|---|---|");
        for d in &x.differ {
            let _ = writeln!(s, "| {} | {} | {} | {} |", md_code_id(&d.info.short_id, true), md(&d.info.title, true), d.live, d.offline);
        }
        s.push('\n');
    }
}
