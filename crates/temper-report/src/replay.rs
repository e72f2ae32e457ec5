//! `replay.sh`: the plan's steps as one bash script, for a machine temper does not drive. The same
//! script is in every report.
//!
//! Every step's script is written out as data (a quoted here-document, never shell quoting), and
//! all of them are checked against their sha256 with `sha256sum` before the first one runs: a
//! changed script stops the replay before anything runs. Each runs as temper ran it, on the stdin
//! of its own `bash -s`. A step that exits non-zero stops the replay, unless the run kept that fix
//! with that very exit code (its checks passed despite it).
//!
//! In a plan's folder it checks no signature: a script in the folder cannot vouch for the folder
//! (whoever hands it over can change both). The plan is verified from outside it first (`temper
//! plan unpack`, or by hand as its README says) and run from that private copy. There the script
//! refuses a folder that holds anything the plan does not list (an `ansible.cfg`, a
//! `group_vars/`, a `verify.sh` of someone else's), a plan past its expiry and a machine the plan
//! does not name.

use chrono::SecondsFormat;
use temper_journal::plan::{self, Plan, PlanStep, Terms, at_boot};
use temper_journal::{Run, RunId};
use temper_scap::Benchmark;

/// Where the steps came from, for the script's comments.
#[derive(Debug, Clone)]
pub struct ReplayOrigin {
    pub run: RunId,
    pub target: String,
    pub profile: String,
    pub content: String,
    pub home: Home,
}

/// Where a replay script lives: what it can check before it runs anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Home {
    /// In a plan's folder, which holds `listing` alone (`Plan::listing`), bound by `terms`.
    Plan { listing: Vec<String>, terms: Terms },
    /// In a report: no folder around it.
    Report,
}

impl ReplayOrigin {
    pub fn of_plan(plan: &Plan, terms: &Terms) -> Self {
        let h = &plan.header;
        let content = format!("{} {} (sha256 {})", h.content.datastream, h.content.version, h.content.sha256);
        let home = Home::Plan { listing: plan.listing(), terms: terms.clone() };
        Self { run: h.source.run, target: h.source.target.clone(), profile: h.profile.clone(), content, home }
    }

    pub fn of_run(run: &Run) -> Self {
        let content = format!("{} {}", run.datastream, run.content_version.as_deref().unwrap_or("unknown"));
        Self { run: run.id, target: run.target.clone(), profile: run.profile.clone(), content, home: Home::Report }
    }
}

/// A run's kept fixes as one bash script (the plan's `replay.sh`), for the reports.
pub fn replay_script(r: plan::Records<'_>, content: Option<&Benchmark>) -> String {
    replay(&ReplayOrigin::of_run(r.run), &plan::steps(r, content))
}

/// The bash script that replays `steps` in order.
pub fn replay(origin: &ReplayOrigin, steps: &[PlanStep]) -> String {
    let mut s = String::new();
    let mut line = |l: &str| {
        s.push_str(l);
        s.push('\n');
    };
    line("#!/usr/bin/env bash");
    line(&format!("# temper run {}: the {} fixes it kept, in the order it kept them.", origin.run, steps.len()));
    line(&format!("# Target {}, profile {}.", one_line(&origin.target), one_line(&origin.profile)));
    line(&format!("# Content {}.", one_line(&origin.content)));
    line("#");
    match &origin.home {
        Home::Plan { .. } => {
            line("# Usage: sudo bash replay.sh [FIRST_STEP]");
            line("# Verify the plan from outside it first, and run it only from the private copy that makes:");
            line("#   temper plan unpack PLAN_DIR -o PRIVATE --allowed-signers FILE && sudo bash PRIVATE/replay.sh");
            line("# (README.md: the same by hand, with ssh-keygen and sha256sum). This script checks no");
            line("# signature: a script in the folder cannot vouch for the folder. It refuses a folder that holds");
            line("# anything the plan does not list, a plan past its expiry, and a machine the plan does not name.");
        }
        Home::Report => {
            line("# Usage: sudo bash replay.sh [FIRST_STEP]");
            line("# From a report, not a signed plan: `temper plan export --sign KEY` makes one that is checked.");
        }
    }
    line("# Every step's script is written below as data, and all are checked against their sha256");
    line("# (sha256sum) before the first one runs: a changed script stops the replay before anything runs.");
    line("# Each step feeds its fix, verbatim, to its own `bash -s`, as temper ran it. A step that exits");
    line("# non-zero stops the replay, unless the run kept that fix with that very exit code (its checks");
    line("# passed despite it); rerun with a step's number to resume there.");
    line("# Stock SSG fixes (source: stock) check before they change and are idempotent by design.");
    line("# Fixes an LLM wrote (source: llm) were verified once on the target, not for idempotence:");
    line("# review them before replaying them twice. Rescan afterwards: this script checks nothing.");
    line("set -u");
    line("set -o pipefail");
    line("");
    line("first=\"${1:-1}\"");
    if matches!(origin.home, Home::Plan { .. }) {
        line("case \"$first\" in");
        line("  --allowed-signers|--unsigned)");
        line(
            "    echo \"replay.sh: $first: this script checks no signature (a script in the folder cannot vouch for the folder): verify the plan from outside it, with temper plan unpack PLAN_DIR -o PRIVATE --allowed-signers FILE, then run PRIVATE/replay.sh; nothing was run\" >&2",
        );
        line("    exit 2 ;;");
        line("esac");
    }
    line("case \"$first\" in ''|*[!0-9]*) echo \"replay.sh: FIRST_STEP must be a step number, not '$first'\" >&2; exit 2 ;; esac");
    if let Home::Plan { listing, terms } = &origin.home {
        folder_checks(&mut line, listing, terms);
    }
    line("if [ \"$(id -u)\" -ne 0 ]; then echo \"replay.sh: run as root: sudo bash $0\" >&2; exit 1; fi");
    line("for tool in sha256sum truncate mktemp; do");
    line("  command -v \"$tool\" >/dev/null || { echo \"replay.sh: $tool (coreutils) is missing\" >&2; exit 1; }");
    line("done");
    line("work=\"$(mktemp -d)\" || { echo \"replay.sh: mktemp -d failed\" >&2; exit 1; }");
    line("trap 'rm -rf \"$work\"' EXIT");
    line("");
    line("# The steps' scripts, as data.");
    for st in steps {
        let delim = delimiter(&st.fix.text, st.n);
        line(&format!("# Step {}: {}", st.n, one_line(&st.rule)));
        line(&format!("#   {}", one_line(&st.title)));
        line(&format!("#   attempt {}, source {}: {}", st.attempt, st.source, one_line(&st.description)));
        if let Some(note) = st.one_way_note() {
            line(&format!("#   one way: {}", one_line(&note)));
        }
        if let Some(note) = st.derived_note() {
            line(&format!("#   derived: {note}"));
        }
        line(&format!("cat >\"$work/{}\" <<'{delim}'", file(st)));
        s_push(&mut line, &st.fix.text);
        line(&delim);
        if !st.fix.text.is_empty() && !st.fix.text.ends_with('\n') {
            // A here-document ends with a newline; the script did not.
            line(&format!("truncate -s -1 \"$work/{}\"", file(st)));
        }
    }
    line("");
    line("# Every script against its sha256, before any runs.");
    line("if ! (cd \"$work\" && sha256sum --check --strict --quiet >&2) <<'TEMPER_SHA256SUMS'");
    for st in steps {
        line(&format!("{}  {}", st.fix.sha256, file(st)));
    }
    line("TEMPER_SHA256SUMS");
    line("then");
    line("  echo \"replay.sh: the script of a step above does not match its sha256: this plan was changed; nothing was run\" >&2");
    line("  exit 1");
    line("fi");
    line("");
    line("# step N RULE ACCEPTED: runs step N; exit code 0 or ACCEPTED (the one the run kept it with) goes on.");
    line("step() {");
    line("  local n=\"$1\" rule=\"$2\" accepted=\"$3\" rc=0");
    line("  if [ \"$n\" -lt \"$first\" ]; then echo \"== step $n ($rule): skipped\"; return 0; fi");
    line("  echo \"== step $n: $rule\"");
    line("  bash -s <\"$work/$(printf '%03d' \"$n\").sh\" || rc=$?");
    line("  if [ \"$rc\" -eq 0 ]; then return 0; fi");
    line("  if [ \"$rc\" -eq \"$accepted\" ]; then");
    line("    echo \"== step $n ($rule) exited $rc, as it did in the run, whose checks kept it: going on\"");
    line("    return 0");
    line("  fi");
    line("  echo \"replay.sh: step $n ($rule) failed with exit code $rc; fix the cause, then: sudo bash $0 $n\" >&2");
    line("  exit 1");
    line("}");
    line("");
    for st in steps {
        let accepted = st.accepted_exit_codes().last().copied().unwrap_or(0);
        line(&format!("step {} {} {accepted}", st.n, sh_quote(&st.rule)));
    }
    line("");
    line(&format!("echo \"== done: {} steps\"", steps.len()));
    let at_boot: Vec<String> = at_boot(steps).map(|st| st.n.to_string()).collect();
    if !at_boot.is_empty() {
        let n = at_boot.len();
        line(&format!("echo \"== {n} step(s) take effect at boot ({}): reboot before you scan\"", at_boot.join(" ")));
    }
    s
}

/// What `replay.sh` checks in a plan's folder before anything runs: that the folder holds only
/// `listing` (no link, no other file or folder), and the plan's terms.
fn folder_checks(line: &mut impl FnMut(&str), listing: &[String], terms: &Terms) {
    line("for tool in find sort comm date uname; do");
    line("  command -v \"$tool\" >/dev/null || { echo \"replay.sh: $tool is missing\" >&2; exit 1; }");
    line("done");
    line("here=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd -P)\" || exit 1");
    line("# The folder holds what the plan lists, and nothing else (a seal's signature where it is signed).");
    line("listing=\"$(cat <<'TEMPER_PLAN_LISTING'");
    for l in listing {
        line(l);
    }
    line("TEMPER_PLAN_LISTING");
    line(")\"");
    line(
        "unlisted=\"$(cd \"$here\" && find . -mindepth 1 -printf '%y %P\\n' | LC_ALL=C sort | LC_ALL=C comm -23 - <(printf '%s\\n' \"$listing\"))\"",
    );
    line("if [ -n \"$unlisted\" ]; then");
    line("  echo \"replay.sh: $here holds what the plan does not list (l: a link, d: a folder, f: a file):\" >&2");
    line("  printf '  %s\\n' \"$unlisted\" >&2");
    line("  echo \"replay.sh: run the plan only from a private copy it was verified in (temper plan unpack); nothing was run\" >&2");
    line("  exit 1");
    line("fi");
    if let Some(t) = terms.expires {
        let at = t.to_rfc3339_opts(SecondsFormat::Secs, true);
        line(&format!("if [ \"$(date -u +%s)\" -ge {} ]; then", t.timestamp()));
        line(&format!("  echo \"replay.sh: the plan expired at {at} (its signer set it to): nothing was run\" >&2"));
        line("  exit 1");
        line("fi");
    }
    if !terms.targets.is_empty() {
        line("machine=\"$(uname -n)\"");
        line(&format!("case \" {} \" in", terms.targets.join(" ")));
        line("  *\" $machine \"*|*\" ${machine%%.*} \"*) ;;");
        line(&format!(
            "  *) echo \"replay.sh: the plan is for the targets {}, not this machine ($machine): nothing was run\" >&2; exit 1 ;;",
            terms.targets.join(", ")
        ));
        line("esac");
    }
    if let Some(f) = &terms.fleet {
        line(&format!(
            "echo \"replay.sh: the plan is for the runs of fleet {f}: apply it with temper (temper fleet run or temper worker); nothing was run\" >&2"
        ));
        line("exit 1");
    }
}

/// Pushes `text` (whole lines) through `line`; nothing for an empty text.
fn s_push(line: &mut impl FnMut(&str), text: &str) {
    if text.is_empty() {
        return;
    }
    for l in text.strip_suffix('\n').unwrap_or(text).split('\n') {
        line(l);
    }
}

/// The file a step's fix is written to in the replay's folder.
fn file(st: &PlanStep) -> String {
    format!("{:03}.sh", st.n)
}

/// A here-document delimiter that is no line of `script`.
fn delimiter(script: &str, n: usize) -> String {
    let mut d = format!("TEMPER_FIX_{n}_END");
    while script.lines().any(|l| l.trim_end_matches('\r') == d || l == d) {
        d.push('_');
    }
    d
}

/// One line for a comment: newlines and carriage returns become spaces.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// A single-quoted shell word.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiter_avoids_script_lines() {
        assert_eq!(delimiter("echo hi\n", 1), "TEMPER_FIX_1_END");
        assert_eq!(delimiter("cat <<X\nTEMPER_FIX_2_END\nX\n", 2), "TEMPER_FIX_2_END_");
    }

    fn step(n: usize, needs_reboot: bool) -> PlanStep {
        use temper_journal::plan::{Script, ScriptKind};
        let rule = format!("xccdf_org.ssgproject.content_rule_r{n}");
        PlanStep {
            n,
            title: String::new(),
            source: temper_journal::FixSource::Stock,
            attempt: temper_journal::AttemptNo::FIRST,
            description: String::new(),
            fix: Script::new(n, &rule, ScriptKind::Fix, "true\n"),
            revert: Script::new(n, &rule, ScriptKind::Revert, ""),
            rule,
            exit_code: Some(0),
            accepted_nonzero_exit: false,
            needs_reboot,
            one_way: None,
            derived: false,
            evidence_before: None,
            evidence_after: None,
        }
    }

    /// A one-way step says so in its comment, with the skill's reason, on one line.
    #[test]
    fn a_one_way_step_says_so() {
        let origin =
            ReplayOrigin { run: RunId::new(1).unwrap(), target: "t".into(), profile: "p".into(), content: "c".into(), home: Home::Report };
        let mut one_way = step(2, false);
        one_way.one_way = Some("held until\nthe next boot".into());
        let script = replay(&origin, &[step(1, false), one_way]);
        let said: Vec<&str> = script.lines().filter(|l| l.contains("one way")).collect();
        assert_eq!(said, ["#   one way: no revert undoes it on a running system (held until the next boot); undoing it takes a reboot"]);
    }

    /// A derived step says so in its comment: temper derives it again on each target.
    #[test]
    fn a_derived_step_says_so() {
        let origin =
            ReplayOrigin { run: RunId::new(1).unwrap(), target: "t".into(), profile: "p".into(), content: "c".into(), home: Home::Report };
        let mut derived = step(2, false);
        derived.source = temper_journal::FixSource::Derived;
        let script = replay(&origin, &[step(1, false), derived]);
        let said: Vec<&str> = script.lines().filter(|l| l.starts_with("#   derived: ")).collect();
        assert_eq!(said.len(), 1, "{script}");
        assert!(said[0].contains("temper derives it again on each target from that target's own evidence"), "{}", said[0]);
    }

    /// Steps that take effect at boot are named once all ran: rescanning before a reboot would
    /// find their rules failing.
    #[test]
    fn steps_that_need_a_reboot_are_named_at_the_end() {
        let origin =
            ReplayOrigin { run: RunId::new(1).unwrap(), target: "t".into(), profile: "p".into(), content: "c".into(), home: Home::Report };
        let script = replay(&origin, &[step(1, false), step(2, true), step(3, true)]);
        let tail: Vec<&str> = script.lines().rev().take(2).collect();
        assert_eq!(tail, ["echo \"== 2 step(s) take effect at boot (2 3): reboot before you scan\"", "echo \"== done: 3 steps\""]);
        let script = replay(&origin, &[step(1, false)]);
        assert_eq!(script.lines().last(), Some("echo \"== done: 1 steps\""), "no reboot said when none is needed");
    }

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(one_line("a\nb\r\nc"), "a b  c");
    }
}
