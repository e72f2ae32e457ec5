//! Where the real content lives, and real oscap as the oracle.
#![allow(dead_code)]
pub mod oval;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const DEFAULT_SSG_DIR: &str = "/var/cache/temper/vm/ssg/usr/share/xml/scap/ssg/content";

/// A file of the SSG 0.1.76 content; fails the test when it is missing.
pub fn ssg(name: &str) -> PathBuf {
    let dir = std::env::var("TEMPER_SSG_DIR").unwrap_or_else(|_| DEFAULT_SSG_DIR.into());
    let p = PathBuf::from(dir).join(name);
    assert!(p.is_file(), "SSG content missing: {} not found. Run `bash vm/fetch-ssg.sh` (or set TEMPER_SSG_DIR).", p.display());
    p
}

/// The real results file (oscap 1.3.7, debian12 `standard`, scanned in the test VM).
pub fn shared_results() -> PathBuf {
    let p = shared_dir().join("data/debian12-standard-results.xml");
    assert!(p.is_file(), "results file missing: {} (set TEMPER_SHARED_DIR)", p.display());
    p
}

/// `oscap` with args; fails the test when oscap is missing or fails.
pub fn oscap(args: &[&str]) -> String {
    let out = Command::new("oscap")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run oscap ({e}): install it with `bash vm/host-deps.sh`"));
    // xccdf eval exits 2 when a rule fails; anything else non-zero is an error.
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 2, "oscap {args:?} exited {code}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("oscap output is UTF-8")
}

/// Per selected rule, in oscap's order: (rule id, Some(script) or None when oscap says the
/// fix is missing), from `oscap xccdf generate fix --fix-type bash`.
pub fn oscap_fixes(ds: &str, profile: &str) -> Vec<(String, Option<String>)> {
    oscap_fixes_with(ds, profile, &[])
}

/// [`oscap_fixes`] with more options before the datastream (`--tailoring-file F`).
pub fn oscap_fixes_with(ds: &str, profile: &str, extra: &[&str]) -> Vec<(String, Option<String>)> {
    let mut args = vec!["xccdf", "generate", "fix", "--profile", profile, "--fix-type", "bash"];
    args.extend(extra);
    args.push(ds);
    let text = oscap(&args);
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix("# BEGIN fix (") else {
            continue;
        };
        let id = rest.split('\'').nth(1).expect("rule id in BEGIN line").to_string();
        lines.next(); // ####
        let echo = lines.next().expect("echo line");
        assert!(echo.starts_with("(>&2 echo \"Remediating rule"), "unexpected: {echo}");
        let end = format!("# END fix for '{id}'");
        let mut body = Vec::new();
        for l in lines.by_ref() {
            if l == end {
                break;
            }
            body.push(l);
        }
        let body = body.join("\n");
        let script = if body.contains("IS MISSING!\")") && body.lines().count() == 1 { None } else { Some(body) };
        out.push((id, script));
    }
    out
}

/// `TEMPER_SHARED_DIR`, else the `shared/` beside the checkout (where CI puts it).
pub fn shared_dir() -> PathBuf {
    if let Ok(d) = std::env::var("TEMPER_SHARED_DIR") {
        return PathBuf::from(d);
    }
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    if beside.is_dir() { beside } else { PathBuf::from("/work/shared") }
}

/// A tailoring file written by `autotailor` (Debian's openscap-utils) over `base`, with `args`
/// (`-v var=value`, `-u rule`, `-s rule`, `-p id`). Fails the test when autotailor is missing.
pub fn autotailor(dir: &Path, ds: &Path, base: &str, args: &[&str]) -> PathBuf {
    let out = dir.join("tailoring.xml");
    let status = Command::new("autotailor")
        .args(args)
        .arg("-o")
        .arg(&out)
        .arg(ds)
        .arg(base)
        .status()
        .unwrap_or_else(|e| panic!("cannot run autotailor ({e}): install openscap-utils with `bash vm/host-deps.sh`"));
    assert!(status.success(), "autotailor {args:?} failed");
    out
}
