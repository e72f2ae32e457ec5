//! The report as Markdown. Prose and cells are escaped; scripts and output go in fences
//! longer than any backtick run they hold.
use std::fmt::Write;

mod cross;
mod fleet;
mod plan;

pub use fleet::render as render_fleet;

use crate::run::Interruption;
use crate::text::{md, md_code, md_code_id, md_id, md_ticks, md_ticks_cell};
use crate::view::{BeforeAfter, ControlsView, Report, RuleFindings, RuleSection};

/// The tailoring and the waivers, each with its expiry; an expired one is flagged.
fn controls(s: &mut String, c: &ControlsView) {
    if c.tailoring.is_none() && c.waivers.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Tailoring and waivers\n");
    if let Some(t) = &c.tailoring {
        let _ = writeln!(
            s,
            "Tailoring: `{}` (id {}, profile {}, sha256 {})\n",
            md(&t.file, true),
            md(&t.id, true),
            md(&t.profile, true),
            t.sha256
        );
    }
    if c.expired > 0 {
        let _ = writeln!(s, "**{} waiver(s) EXPIRED**: they no longer apply, and their rules were worked on.\n", c.expired);
    }
    if !c.waivers.is_empty() {
        let _ = writeln!(s, "| Waiver | State | Expires | Approved by | Reason | Rules in this run |\n|---|---|---|---|---|---|");
        for w in &c.waivers {
            let state = match w.state {
                temper_journal::waiver::WaiverState::Active => "active",
                temper_journal::waiver::WaiverState::Expired => "**EXPIRED**",
            };
            let _ = writeln!(
                s,
                "| `{}` | {state} | {} | {} | {} | {} |",
                md(&w.rule, true),
                w.expires,
                md(&w.approved_by, true),
                md(&w.reason, true),
                md(&w.rules.join(", "), true)
            );
        }
        s.push('\n');
    }
}

pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let run = &r.run;
    let _ = writeln!(s, "# temper report: run {}\n", run.id);
    let rows = [
        ("Target", run.target.clone()),
        ("Skill", run.skill.clone()),
        ("Profile", if run.profile_title.is_empty() { run.profile.clone() } else { format!("{} ({})", run.profile_title, run.profile) }),
        ("Content", format!("{} {}", run.benchmark, run.content_version).trim().to_string()),
        ("Agent", run.agent.clone()),
        ("Started", run.started_at.clone()),
        ("Ended", format!("{} ({})", run.ended_at, run.duration)),
        ("Status", format!("{}{}", run.status, run.exit_code.map(|c| format!(", exit code {c}")).unwrap_or_default())),
        ("Score", r.score.clone()),
        ("Reboot proof", r.reboot.reason.clone()),
        (
            "Resumed",
            match r.interruptions.len() {
                0 => "no: it went through in one go".to_string(),
                n => format!("{n} time(s): see Interruptions"),
            },
        ),
    ];
    let _ = writeln!(s, "| | |\n|---|---|");
    for (k, v) in rows {
        let _ = writeln!(s, "| {k} | {} |", md(&v, true));
    }
    if let Some(e) = &run.error {
        let _ = writeln!(s, "| Error | {} |", md(e, true));
    }
    s.push('\n');
    if let Some(x) = &r.cross_examination {
        cross::findings(&mut s, x);
    }
    controls(&mut s, &r.controls);

    let _ = writeln!(s, "## Summary\n");
    if r.out_of_scope > 0 {
        let _ = writeln!(
            s,
            "Scope: {} failing rules were outside this run's scope (`--rules`): shown as `out_of_scope`, not worked on, \
             and counted neither as still failing nor in the exit code.\n",
            r.out_of_scope
        );
    }
    counts(&mut s, "Rule", "before", "after", &r.dispositions);
    counts(&mut s, "Scan result", "first scan", "final scan", &r.results);
    let _ = writeln!(s, "### Time and tokens\n");
    let _ = writeln!(s, "| Role | Turns | Prompt tokens | Completion tokens | LLM time | Errors |\n|---|---:|---:|---:|---:|---:|");
    for t in &r.roles {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            md(&t.role, true),
            t.turns,
            t.prompt_tokens,
            t.completion_tokens,
            t.time,
            t.errors
        );
    }
    let a = &r.attempt_time;
    let _ = writeln!(s, "\n{} attempts: apply {}, evaluate {}, revert {}.", a.attempts, a.apply, a.evaluate, a.revert);
    if let Some(t) = &r.timing {
        let _ = writeln!(s, "Wall time {}: guest {}, LLM {}, harness {} ({}).", t.wall, t.guest, t.llm, t.harness, t.harness_pct);
    }
    if let Some(t) = &r.time_split {
        time_split(&mut s, t);
    }
    let reverts: Vec<String> = r.reverts.iter().map(|c| format!("{} {}", c.after, md(&c.name, false))).collect();
    let _ = writeln!(s, "Reverts by method: {}.\n", if reverts.is_empty() { "none".into() } else { reverts.join(", ") });

    if let Some(x) = &r.cross_examination {
        cross::section(&mut s, x);
    }
    interruptions(&mut s, &r.interruptions);
    if let Some(p) = &r.plan {
        plan::section(&mut s, p);
    }

    let _ = writeln!(s, "## Escalated rules ({})\n", r.escalated.len());
    if r.escalated.is_empty() {
        let _ = writeln!(s, "None: no rule needs a human.\n");
    }
    for e in &r.escalated {
        escalated(&mut s, e);
    }

    if !r.left_failing.is_empty() {
        let _ = writeln!(s, "## Other rules left failing ({})\n", r.left_failing.len());
        for l in &r.left_failing {
            let _ = writeln!(s, "### {} ({})\n", md(&l.info.title, false), md_id(&l.info.short_id, false));
            let _ = writeln!(
                s,
                "- Status: {}{}\n",
                md(&l.status.as_str().replace('_', " "), false),
                if l.reason.is_empty() { String::new() } else { format!(": {}", md_ticks(&l.reason)) }
            );
            found(&mut s, &l.found, "What the final scan found.");
        }
    }

    let _ = writeln!(s, "## Fixed rules ({})\n", r.fixed.len());
    if r.fixed.is_empty() {
        let _ = writeln!(s, "None.\n");
    } else {
        let _ = writeln!(s, "| # | Rule | Severity | DISA | Attempt | Source | Change |\n|---:|---|---|---|---:|---|---|");
        for f in &r.fixed {
            let _ = writeln!(
                s,
                "| {} | {} ({}) | {} | {} | {} | {} | {} |",
                f.order,
                md(&f.info.title, true),
                md_code_id(&f.info.short_id, true),
                md(f.info.severity.as_str(), true),
                md(&f.info.stig_ids.join(", "), true),
                f.attempt,
                md(&f.source, true),
                md(&f.description, true) + &f.warning.as_ref().map(|w| format!(" **Warning**: {}", md(w, true))).unwrap_or_default()
            );
        }
        let found: Vec<_> = r.fixed.iter().filter_map(|f| Some((f, f.evidence.as_deref()?))).collect();
        if !found.is_empty() {
            let _ = writeln!(s, "\n### What the scanner found before each fix\n");
            for (f, text) in found {
                let _ = writeln!(s, "{} ({}):\n", md(&f.info.title, false), md_code_id(&f.info.short_id, false));
                s.push_str(&md_code(text, "text"));
                s.push('\n');
            }
        }
        let _ = writeln!(s, "\n### Replay script\n");
        let _ = writeln!(s, "The fixes above, in order, as one script to replay on another image (`sudo bash replay.sh`):\n");
        s.push_str(&md_code(&r.replay, "bash"));
        s.push('\n');
    }

    let _ = writeln!(s, "## All rules ({})\n", r.rules.len());
    let _ = writeln!(s, "In review order: escalated, still failing, fixed, then the rest.\n");
    let _ = writeln!(
        s,
        "| Rule | Title | Severity | DISA | First scan | Final scan | Status | Attempts | Disk |\n|---|---|---|---|---|---|---|---:|---|"
    );
    for l in &r.rules {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            md_code_id(&l.short_id, true),
            md(&l.title, true),
            md(l.severity.as_str(), true),
            md(&l.stig_ids, true),
            md(&l.initial_result, true),
            md(&l.final_result, true),
            md(&if l.reason.is_empty() { l.status.to_string() } else { format!("{}: {}", l.status, l.reason) }, true),
            l.attempts,
            md(&l.offline, true)
        );
    }
    s
}

/// Each stop and resume, so that a reader knows the run did not go through in one go.
fn interruptions(s: &mut String, all: &[Interruption]) {
    if all.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Interruptions ({})\n", all.len());
    let _ = writeln!(
        s,
        "The run stopped and `temper resume` took it up again from its last kept state (rebuilt when its snapshots were gone); an attempt cut short was closed, never run again.\n"
    );
    let _ = writeln!(s, "| Resumed at | Last event before | What happened |\n|---|---|---|");
    for i in all {
        let before = i.stopped_at.as_deref().unwrap_or("-");
        let _ = writeln!(s, "| {} | {} | {} |", md(&i.resumed_at, true), md(before, true), md_ticks_cell(&i.says));
    }
    s.push('\n');
}

fn counts(s: &mut String, what: &str, before: &str, after: &str, rows: &[BeforeAfter]) {
    let _ = writeln!(s, "| {what} | {before} | {after} |\n|---|---:|---:|");
    for c in rows {
        let _ = writeln!(s, "| {} | {} | {} |", md(&c.name.replace('_', " "), true), c.before, c.after);
    }
    s.push('\n');
}

/// What the final scan found: each failed test's items against the state expected, then the
/// whole evidence in a fence.
fn found(s: &mut String, f: &RuleFindings, heading: &str) {
    let _ = writeln!(s, "**{heading}**\n");
    for x in &f.findings {
        let _ = writeln!(
            s,
            "- {}: looked at {}; found {}; expected {}.",
            md(&x.test, false),
            md(&x.object, false),
            md(&x.found, false),
            md(&x.expected, false)
        );
    }
    s.push('\n');
    s.push_str(&md_code(&f.text, "text"));
    s.push('\n');
}

fn escalated(s: &mut String, e: &RuleSection) {
    let i = &e.info;
    let _ = writeln!(s, "### {} ({})\n", md(&i.title, false), md_id(&i.short_id, false));
    let _ = writeln!(s, "- Rule: {}", md_code_id(&i.rule_id, false));
    let _ = writeln!(s, "- Severity: {}", md(i.severity.as_str(), false));
    let ids = [("STIG", &i.stig_ids), ("SV", &i.sv_ids), ("V", &i.v_ids), ("SRG", &i.srg_ids), ("CCI", &i.cci)];
    for (name, v) in ids {
        if !v.is_empty() {
            let _ = writeln!(s, "- {name}: {}", md(&v.join(", "), false));
        }
    }
    let _ = writeln!(
        s,
        "- Result: first scan {}, final scan {}",
        md(&e.initial_result, false),
        md(e.final_result.as_deref().unwrap_or("none"), false)
    );
    let _ = writeln!(s, "- Escalated because: {}\n", md_ticks(&e.reason));
    if !i.rationale.is_empty() {
        let _ = writeln!(s, "**Why it matters.** {}\n", md(&i.rationale, false));
    }
    let _ = writeln!(s, "**Next step for a human.**\n");
    for n in &e.next_steps {
        let _ =
            writeln!(s, "- *{}*: check: {} Try: {}", md(&n.cause.as_str().replace('_', " "), false), md_ticks(&n.check), md_ticks(&n.try_));
    }
    s.push('\n');
    if let Some(f) = &e.found {
        found(s, f, "What the final scan found.");
    }
    for a in &e.attempts {
        let _ = writeln!(s, "#### Attempt {}: {} ({} fix)\n", a.n, md(&a.verdict, false), md(&a.source, false));
        if !a.plan.is_empty() {
            let _ = writeln!(s, "- Plan: {}", md(&a.plan, false));
        }
        if !a.description.is_empty() {
            let _ = writeln!(s, "- Change: {}", md(&a.description, false));
        }
        let _ = writeln!(s, "- Verdict: {}: {}", md(&a.verdict, false), md_ticks(&a.verdict_reason));
        if let Some(w) = &a.warning {
            let _ = writeln!(s, "- **Warning**: {}", md(w, false));
        }
        let _ =
            writeln!(s, "- Rule result: {}; health: {}; access: {}", md(&a.rule_result, false), md(&a.health, false), md(&a.access, false));
        if !a.regressions.is_empty() {
            let _ = writeln!(s, "- Regressions: {}", md(&a.regressions.join(", "), false));
        }
        let _ = writeln!(s, "- Reverted: {} (revert took {})", md(&a.reverted, false), a.revert);
        let _ = writeln!(s, "- Time: apply {}, evaluate {}\n", a.apply, a.evaluate);
        let blocks = [
            ("What the scanner found before the fix", a.evidence_before.as_deref().unwrap_or(""), "text"),
            ("Fix script", &a.fix_script, "bash"),
            ("Revert script", &a.revert_script, "bash"),
            ("Output (stdout)", &a.stdout, "text"),
            ("Output (stderr)", &a.stderr, "text"),
            ("Health check output", &a.health_output, "text"),
            ("What the scanner found after the fix", a.evidence_after.as_deref().unwrap_or(""), "text"),
        ];
        for (name, body, lang) in blocks {
            if !body.trim().is_empty() {
                let _ = writeln!(
                    s,
                    "{name}{}:\n",
                    a.exit_code.filter(|_| name == "Fix script").map(|c| format!(" (exit code {c})")).unwrap_or_default()
                );
                s.push_str(&md_code(body, lang));
                s.push('\n');
            }
        }
    }
    if !e.lessons.is_empty() {
        let _ = writeln!(s, "**Reflections and lessons.**\n");
        for l in &e.lessons {
            let _ = write!(s, "- {}", md(&l.text, false));
            if !l.detail.is_empty() && l.detail != l.text {
                let _ = write!(s, " ({})", md(&l.detail, false));
            }
            if !l.extra.is_empty() {
                let _ = write!(s, " Prefer: {}", md(&l.extra, false));
            }
            s.push('\n');
        }
        s.push('\n');
    }
    if !e.bans.is_empty() {
        let _ = writeln!(s, "**Bans learned.**\n");
        for b in &e.bans {
            let _ = writeln!(s, "- `{}`: {}", b.text.replace('`', "'"), md(&b.detail, false));
        }
        s.push('\n');
    }
    if let Some(fix) = &i.stock_fix {
        let _ = writeln!(s, "<details><summary>The content's stock fix</summary>\n");
        s.push_str(&md_code(fix, "bash"));
        let _ = writeln!(s, "\n</details>\n");
    }
}

/// Where a finished run's time went, and the proof's share beside its fix scripts.
fn time_split(s: &mut String, t: &temper_journal::TimeSplit) {
    let share = |secs: f64| if t.wall_secs > 0.0 { format!("{:.1}%", 100.0 * secs / t.wall_secs) } else { "-".into() };
    let _ = writeln!(s, "\n| Where the time went | Count | Time | Share |\n|---|---:|---:|---:|");
    for p in &t.parts {
        let _ = writeln!(s, "| {} | {} | {:.0} s | {} |", p.part.says(), p.count, p.secs, share(p.secs));
    }
    let _ = writeln!(s, "| the rest | | {:.0} s | {} |", t.rest_secs, share(t.rest_secs));
    for p in t.rest.iter().filter(|p| p.count > 0) {
        let _ = writeln!(s, "| … of it, {} | {} | {:.0} s | {} |", p.part.says(), p.count, p.secs, share(p.secs));
    }
    let _ = writeln!(
        s,
        "| … of it, unnamed (picks, each fix's evidence and context, the store) | | {:.0} s | {} |",
        t.unnamed_secs,
        share(t.unnamed_secs)
    );
    let ratio =
        t.proof_ratio.map(|r| format!(", {r:.2}× the fix scripts' {:.0} s", t.secs(temper_journal::Part::FixScripts))).unwrap_or_default();
    let _ = writeln!(s, "\nThe proof (everything but the fix scripts): {:.0} s{ratio}.\n", t.proof_secs);
}
