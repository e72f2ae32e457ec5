//! The handover's last fixes (the skill's `[[last]]`, an AIDE database): each script runs as root
//! on the handed-over image, after virt-sysprep, in libguestfs' appliance (virt-customize) with
//! no network. The image's own programs run there, chrooted into it, in a throwaway VM: never on
//! the host. Each step runs on its own, so one that fails leaves the others done.
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use temper_core::handover::LastStep;

use crate::enroll::{run, tool};

/// What one step did.
#[derive(Debug, Clone, Serialize)]
pub struct LastRun {
    pub rules: Vec<String>,
    pub ok: bool,
    pub secs: f64,
    /// When it failed: the end of what virt-customize said.
    pub said: Option<String>,
}

/// Runs each step on `image`; `scratch` holds each script's file while it runs.
pub async fn run_last(image: &Path, steps: &[LastStep], scratch: &Path) -> Vec<LastRun> {
    let mut out = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        let started = Instant::now();
        let file = scratch.join(format!(".temper-last-{}-{n}.sh", std::process::id()));
        let result = match std::fs::write(&file, &step.script) {
            Ok(()) => {
                let mut cmd = tool("virt-customize");
                cmd.args(["--format", "qcow2", "--no-network", "--no-logfile"]).arg("-a").arg(image);
                // virt-customize writes a machine id into the empty one sysprep left, before its
                // operations: emptied again first, so that a step that fails leaves it empty too,
                // and what the step records is the image as it leaves.
                cmd.args(crate::sysprep::NO_MACHINE_ID);
                cmd.arg("--run").arg(&file);
                run("virt-customize", cmd, image, "").await.map(|_| ()).map_err(|e| e.to_string())
            }
            Err(e) => Err(format!("{}: {e}", file.display())),
        };
        let _ = std::fs::remove_file(&file);
        out.push(LastRun {
            rules: step.rules.clone(),
            ok: result.is_ok(),
            secs: started.elapsed().as_secs_f64(),
            said: result.err().map(|e| tail(&e, 1500)),
        });
    }
    out
}

/// The last `max` bytes of `s`, from a line's start when one begins in them (else from a
/// character boundary).
fn tail(s: &str, max: usize) -> String {
    let start = s.len().saturating_sub(max);
    let start = (start..s.len()).find(|i| s.is_char_boundary(*i)).unwrap_or(s.len());
    let end = &s[start..];
    match end.find('\n') {
        Some(nl) if start > 0 && nl + 1 < end.len() => end[nl + 1..].to_string(),
        _ => end.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tail_keeps_the_end_on_a_character_boundary() {
        assert_eq!(super::tail("abcdef", 3), "def");
        assert_eq!(super::tail("ab", 3), "ab");
        assert_eq!(super::tail("aé", 1), "");
        assert_eq!(super::tail("aéb", 2), "b");
        assert_eq!(super::tail("one\ntwo\nthree", 8), "three", "from the line that starts in it");
        assert_eq!(super::tail("one\ntwo", 20), "one\ntwo");
    }
}
