//! stderr written to a file: no escape codes in text, and one JSON object per line with
//! `--log-format json` (or `TEMPER_LOG_FORMAT=json`). The command is a scheduled fire that logs
//! at info level, starts a run and fails on a missing content folder (no VM needed or touched).
mod support;

use std::process::Stdio;

use serde_json::Value;
use support::*;

/// Runs `temper [global] schedule fire -- --quiet` with stderr to a file; returns (exit code, stderr).
fn fire(global: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let w = World::new();
    let log = w.dir.path().join("stderr.log");
    let missing = w.dir.path().join("no-content");
    let mut c = w.temper();
    c.env_remove("NO_COLOR")
        .env_remove("TEMPER_LOG_FORMAT")
        .env("TEMPER_CONTENT_DIR", &missing)
        .env("TEMPER_LIBVIRT_URI", "test:///default")
        .env("TEMPER_DOMAIN", "absent")
        .env("TEMPER_SSH_PORT", "1")
        .envs(env.iter().copied())
        .args(global)
        .args(["schedule", "fire", "--name", "logs", "--", "--quiet"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let status = c.status().unwrap();
    let err = std::fs::read_to_string(&log).unwrap();
    eprintln!("temper {global:?} {env:?}: {status}\n{err}");
    (status.code(), err)
}

#[test]
fn text_logs_to_a_file_have_no_escape_codes() {
    let (code, err) = fire(&[], &[]);
    assert_eq!(code, Some(1), "the run fails on the missing content");
    assert!(err.lines().any(|l| l.contains("INFO") && l.contains("scheduled run: starting a new run")), "the info line:\n{err}");
    assert!(err.contains("temper: run 1 started"), "{err}");
    assert!(!err.contains('\u{1b}'), "an ESC byte in:\n{err:?}");
    assert!(!err.contains('\r'), "a carriage return in:\n{err:?}");
}

#[test]
fn json_logs_are_one_object_per_line() {
    for (global, env) in [(&["--log-format", "json"][..], &[][..]), (&[][..], &[("TEMPER_LOG_FORMAT", "json")][..])] {
        let (code, err) = fire(global, env);
        assert_eq!(code, Some(1));
        let lines: Vec<Value> = err
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        for v in &lines {
            assert!(v.is_object() && v["level"].is_string() && v["fields"].is_object(), "{v}");
        }
        let said = |level: &str, text: &str| {
            lines.iter().any(|v| v["level"] == level && v["fields"]["message"].as_str().is_some_and(|m| m.contains(text)))
        };
        assert!(said("INFO", "scheduled run: starting a new run"), "the tracing event:\n{err}");
        assert!(said("INFO", "run 1 started"), "the run's notice:\n{err}");
        assert!(said("ERROR", "no-content"), "the error:\n{err}");
        assert!(!err.contains('\u{1b}'));
    }
}
