//! The table of `docs/verdicts.md`, proven against `judge` for every combination of the checks.
use std::time::Duration;

use super::*;
use crate::script::Stop;
use temper_journal::ScanResult;

const DOC: &str = include_str!("../../../../docs/verdicts.md");

/// The table's columns before the verdict, each with the words its cells may use (and `any`).
const COLUMNS: [(&str, &[&str]); 6] = [
    ("exit", &["0", "non-zero", "did not finish", "stalled", "at the cap"]),
    ("access", &["ok", "lost", "down"]),
    ("health", &["healthy", "unhealthy", "could not run"]),
    ("rule result", &["pass", "not pass", "rescan failed", "not run"]),
    ("regressions", &["none", "some"]),
    ("reboot", &["no", "with proof", "without proof"]),
];

/// One row of the table: per column, `None` for `any` or the words listed.
struct TableRow {
    line: usize,
    cells: Vec<Option<Vec<String>>>,
    verdict: Verdict,
}

impl TableRow {
    fn matches(&self, words: &[&str]) -> bool {
        self.cells.iter().zip(words).all(|(cell, word)| cell.as_ref().is_none_or(|list| list.iter().any(|w| w == word)))
    }
}

fn cells(line: &str) -> Vec<String> {
    line.trim().trim_matches('|').split('|').map(|c| c.trim().trim_matches('`').to_string()).collect()
}

fn table() -> Vec<TableRow> {
    let mut lines = DOC.lines().enumerate().skip_while(|(_, l)| !l.starts_with("| exit"));
    let header = cells(lines.next().expect("docs/verdicts.md has a table whose first column is `exit`").1);
    let names: Vec<&str> = COLUMNS.iter().map(|c| c.0).chain(["verdict"]).collect();
    assert_eq!(header[..names.len()], names, "the table's columns");
    let rows = lines.skip(1).take_while(|(_, l)| l.starts_with('|'));
    rows.map(|(i, l)| {
        let (line, c) = (i + 1, cells(l));
        let verdict = Verdict::parse(&c[6]).unwrap_or_else(|| panic!("line {line}: no verdict {:?}", c[6]));
        let cells = COLUMNS
            .iter()
            .zip(&c)
            .map(|((name, words), cell)| {
                let list: Vec<String> = (cell != "any").then(|| cell.split(',').map(|w| w.trim().to_string()).collect())?;
                for w in &list {
                    assert!(words.contains(&w.as_str()), "line {line}: {name} has no value {w:?}");
                }
                Some(list)
            })
            .collect();
        TableRow { line, cells, verdict }
    })
    .collect()
}

/// Every combination of the checks (regression checks batched or not too), in the table's words.
fn combinations() -> Vec<([&'static str; 6], Checks)> {
    let exits = [
        ("0", Exit::Zero),
        ("non-zero", Exit::NonZero("the fix exited 1".into())),
        ("did not finish", Exit::Unfinished("the fix did not finish: ssh session dropped".into())),
        ("stalled", Exit::Stopped(Stop::Stalled { idle: Duration::from_secs(300), lock: None })),
        ("at the cap", Exit::Stopped(Stop::Cap(Duration::from_secs(10_800)))),
    ];
    let rescans: Vec<(&str, Rescan)> = ScanResult::ALL
        .iter()
        .map(|r| (if *r == ScanResult::Pass { "pass" } else { "not pass" }, Rescan::Read(*r)))
        .chain([("rescan failed", Rescan::Failed("oscap exited 1".into())), ("not run", Rescan::NotRun)])
        .collect();
    let regressions = [("none", vec![]), ("some", vec!["rule_b".to_string(), "rule_c".to_string()])];
    let reboots = [("no", Reboot::No), ("with proof", Reboot::WithProof), ("without proof", Reboot::WithoutProof)];
    let mut all = Vec::new();
    for (exit_w, exit) in &exits {
        for access in ["ok", "lost", "down"] {
            for health in ["healthy", "unhealthy", "could not run"] {
                let guard = match (access, health) {
                    ("lost", _) => Guard::Lockout("a fresh ssh login failed".into()),
                    ("down", _) => Guard::Down("the guest is not running".into()),
                    (_, "could not run") => Guard::HealthError("connection reset".into()),
                    (_, h) => Guard::Health { ok: h == "healthy", output: if h == "healthy" { "HEALTHY" } else { "app down" }.into() },
                };
                for ((rule_w, rescan), (reg_w, regs)) in rescans.iter().flat_map(|r| regressions.iter().map(move |g| (r, g))) {
                    for ((reboot_w, reboot), batched) in reboots.iter().flat_map(|r| [false, true].map(|b| (r, b))) {
                        let (exit, guard, rescan, regressions) = (exit.clone(), guard.clone(), rescan.clone(), regs.clone());
                        let checks = Checks { exit, guard, rescan, regressions, reboot: *reboot, batched };
                        all.push(([*exit_w, access, health, *rule_w, *reg_w, *reboot_w], checks));
                    }
                }
            }
        }
    }
    all
}

#[test]
fn judge_gives_the_verdict_of_the_docs_table() {
    let rows = table();
    let all = combinations();
    assert_eq!(all.len(), 5 * 3 * 3 * (ScanResult::ALL.len() + 2) * 2 * 3 * 2);
    let mut used = vec![0; rows.len()];
    let mut wrong = Vec::new();
    for (words, checks) in &all {
        let matching: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].matches(words)).collect();
        let [i] = matching[..] else {
            let lines: Vec<usize> = matching.iter().map(|&i| rows[i].line).collect();
            panic!("{words:?} matches {} rows of docs/verdicts.md (lines {lines:?}), not one", lines.len());
        };
        used[i] += 1;
        let got = judge(checks);
        if got.verdict != rows[i].verdict {
            wrong.push(format!("{words:?} {checks:?}: line {} says {}, judge gives {got:?}", rows[i].line, rows[i].verdict));
        }
    }
    assert!(wrong.is_empty(), "{} of {} combinations disagree with the table:\n{}", wrong.len(), all.len(), wrong.join("\n"));
    let unused: Vec<usize> = (0..rows.len()).filter(|&i| used[i] == 0).map(|i| rows[i].line).collect();
    assert!(unused.is_empty(), "rows no combination matches, at lines {unused:?}");
}

#[test]
fn the_rule_result_is_read_only_when_the_checks_get_to_it() {
    for (words, checks) in combinations() {
        let reached = matches!(words, [_, "ok", "healthy", "pass" | "not pass", ..])
            && !["did not finish", "stalled", "at the cap"].contains(&words[0]);
        assert_eq!(judge(&checks).read, reached, "{words:?}");
    }
}

#[test]
fn reasons_say_what_the_checks_found() {
    let checks = |exit: Exit, result: ScanResult, reboot: Reboot| Checks {
        exit,
        guard: Guard::Health { ok: true, output: "HEALTHY".into() },
        rescan: Rescan::Read(result),
        regressions: vec![],
        reboot,
        batched: false,
    };
    let exited = || Exit::NonZero("the fix exited 2".into());
    let reason = |c: Checks| judge(&c).reason;
    assert_eq!(
        reason(checks(exited(), ScanResult::Pass, Reboot::No)),
        "the rule passes, the health check is HEALTHY, access works, no regression; kept on the checks' word, with a warning: the fix exited 2"
    );
    assert_eq!(reason(checks(exited(), ScanResult::Fail, Reboot::No)), "the fix exited 2, and the rule's result after the fix is fail");
    assert_eq!(
        reason(checks(Exit::Zero, ScanResult::NotApplicable, Reboot::WithProof)),
        "the stock fix takes effect after a reboot and the rule reads notapplicable until then: kept for the run's reboot proof"
    );
    assert_eq!(
        reason(Checks { batched: true, ..checks(Exit::Zero, ScanResult::Pass, Reboot::No) }),
        "the rule passes, the health check is HEALTHY, access works; the regression set is checked with the batch"
    );
}
