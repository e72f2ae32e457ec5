//! A mount namespace of a test's own, holding the hostile trees of `tests/walk/hostile.sh`: the
//! walk and oscap run in it (`nsenter`), and no other process on this host sees its mounts.
//! Included by path by the tests that use it (`temper-scap`'s `fswalk_hostile`, `temper-core`'s
//! `scan_walk_hostile`). Needs root, `unshare`, `nsenter` and `bindfs` (vm/host-deps.sh).
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The hostile trees' script.
pub const HOSTILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/walk/hostile.sh");

/// A mount namespace, held by a `sleep` in it; its trees are taken down and the `sleep`
/// killed (by its pid) when it drops.
pub struct Namespace {
    holder: Child,
    trees: Vec<PathBuf>,
}

impl Namespace {
    pub fn new() -> Self {
        let holder = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sleep", "infinity"])
            .stdin(Stdio::null())
            .spawn()
            .expect("unshare (util-linux)");
        let ours = std::fs::read_link("/proc/self/ns/mnt").unwrap();
        let theirs = format!("/proc/{}/ns/mnt", holder.id());
        let t = Instant::now();
        while std::fs::read_link(&theirs).ok().is_none_or(|n| n == ours) {
            assert!(t.elapsed() < Duration::from_secs(10), "unshare made no namespace");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { holder, trees: Vec::new() }
    }

    /// The holder's pid: `nsenter -t PID -m` enters the namespace.
    pub fn pid(&self) -> u32 {
        self.holder.id()
    }

    /// `argv` to run in the namespace.
    pub fn argv<S: AsRef<str>>(&self, argv: &[S]) -> Vec<String> {
        let mut v = vec!["nsenter".to_string(), "-t".into(), self.pid().to_string(), "-m".into(), "--".into()];
        v.extend(argv.iter().map(|a| a.as_ref().to_string()));
        v
    }

    /// Runs `argv` in the namespace; its stdout, or a panic with its stderr.
    pub fn run<S: AsRef<str>>(&self, argv: &[S]) -> String {
        let a = self.argv(argv);
        let out = Command::new(&a[0]).args(&a[1..]).output().unwrap();
        assert!(out.status.success(), "{:?}: {}", &a[5..], String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The `set` of hostile trees (`clean` or `gaps`) under `root`, taken down on drop.
    pub fn trees(&mut self, set: &str, root: &Path) -> String {
        self.trees.push(root.to_path_buf());
        self.run(&["bash", HOSTILE, set, root.to_str().unwrap()])
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        for root in self.trees.iter().rev() {
            let a = self.argv(&["bash", HOSTILE, "down", root.to_str().unwrap()]);
            let _ = Command::new(&a[0]).args(&a[1..]).stdout(Stdio::null()).status();
        }
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}
