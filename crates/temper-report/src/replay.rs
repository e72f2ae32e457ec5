//! The kept fixes as one bash script to replay on another image.
use std::fmt::Write;

use temper_scap::Benchmark;

use crate::data::RunData;
use crate::view::fixed_rules;

/// A bash script that applies the run's kept fixes in the order they were kept.
///
/// Each fix is passed verbatim, as a quoted here-document, to its own `bash -s`: exactly how
/// temper ran it on the target, so no quoting can change it. The script runs under
/// `set -euo pipefail`, needs root, stops at the first step that fails, and takes the step to
/// start from (`sudo bash replay.sh 3`) to resume after a failure. Stock SSG fixes check
/// before they change and are idempotent by design; fixes an LLM wrote were checked once on
/// the target, not for idempotence: review them first.
pub fn replay_script(data: &RunData, content: Option<&Benchmark>) -> String {
    let run = &data.run;
    let fixed = fixed_rules(data, content);
    let mut s = String::new();
    let _ = writeln!(s, "#!/usr/bin/env bash");
    let _ = writeln!(s, "# temper run {}: the {} fixes it kept, in the order it kept them.", run.id, fixed.len());
    let _ = writeln!(
        s,
        "# Target {}, profile {}, content {}.",
        one_line(&run.target),
        one_line(&run.profile),
        one_line(run.content_version.as_deref().unwrap_or("unknown"))
    );
    let _ = writeln!(s, "#");
    let _ = writeln!(s, "# Usage: sudo bash replay.sh [FIRST_STEP]");
    let _ = writeln!(s, "# Each step feeds one fix, verbatim, to its own `bash -s`, as temper ran it. The script stops");
    let _ = writeln!(s, "# at the first step that fails; rerun it with that step's number to resume.");
    let _ = writeln!(s, "# Stock SSG fixes (source: stock) check before they change and are idempotent by design.");
    let _ = writeln!(s, "# Fixes temper derived from a rule's own check (source: derived) set the values it names.");
    let _ = writeln!(s, "# Fixes an LLM wrote (source: llm) were verified once on the target, not for idempotence:");
    let _ = writeln!(s, "# review them before replaying them twice. Rescan afterwards: this script checks nothing.");
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(s);
    let _ = writeln!(s, "first=\"${{1:-1}}\"");
    let _ = writeln!(s, "if [ \"$(id -u)\" -ne 0 ]; then echo \"run as root: sudo bash $0\" >&2; exit 1; fi");
    let _ = writeln!(s);
    let _ = writeln!(s, "step() {{");
    let _ = writeln!(s, "  local n=\"$1\" rule=\"$2\"");
    let _ = writeln!(s, "  if [ \"$n\" -lt \"$first\" ]; then cat >/dev/null; echo \"== step $n ($rule): skipped\"; return 0; fi");
    let _ = writeln!(s, "  echo \"== step $n: $rule\"");
    let _ = writeln!(s, "  if ! bash -s; then echo \"step $n ($rule) failed; fix it, then: sudo bash $0 $n\" >&2; exit 1; fi");
    let _ = writeln!(s, "}}");
    for f in &fixed {
        let _ = writeln!(s);
        let _ = writeln!(s, "# Step {}: {}", f.order, one_line(&f.info.rule_id));
        let _ = writeln!(s, "#   {} [{}]", one_line(&f.info.title), one_line(f.info.severity.as_str()));
        if !f.info.stig_ids.is_empty() {
            let _ = writeln!(s, "#   DISA: {}", one_line(&f.info.stig_ids.join(", ")));
        }
        let _ = writeln!(s, "#   attempt {}, source {}: {}", f.attempt, one_line(&f.source), one_line(&f.description));
        let delim = delimiter(&f.fix_script, f.order);
        let _ = writeln!(s, "step {} {} <<'{delim}'", f.order, sh_quote(&f.info.rule_id));
        s.push_str(&f.fix_script);
        if !f.fix_script.ends_with('\n') {
            s.push('\n');
        }
        let _ = writeln!(s, "{delim}");
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "echo \"== done: {} steps\"", fixed.len());
    s
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

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(one_line("a\nb\r\nc"), "a b  c");
    }
}
