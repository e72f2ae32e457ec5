//! This machine as the guest: its `oscap` and SSG's Debian 12 datastream, as
//! `vm/fetch-ssg.sh` unpacks it.
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use temper_core::ports::{Exec, ExecOutput, Guest, PortError, PortResult};
use temper_core::scan::Trip;
use tokio::io::AsyncWriteExt;

/// This machine as the guest. A command runs under `timeout`, as over SSH, and as over SSH it
/// goes on when its answer is no longer awaited (the watchdog gave up on it).
#[derive(Default)]
pub struct Here {
    pub log: Mutex<Vec<Vec<String>>>,
    /// The oscap runs among them, read back.
    pub trips: Mutex<Vec<Trip>>,
    /// Commands run in the mount namespace of this process (`nsenter -t PID -m`).
    pub within: Option<u32>,
    /// A folder put first on the commands' PATH (stand-ins for the guest's programs).
    pub path_first: Option<std::path::PathBuf>,
}

impl Here {
    /// This machine as seen from the mount namespace process `pid` holds.
    #[allow(dead_code)] // not every test that shares this module needs one
    pub fn within(pid: u32) -> Self {
        Self { within: Some(pid), ..Self::default() }
    }
}

#[async_trait]
impl Guest for Here {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
        self.log.lock().unwrap().push(exec.argv.clone());
        if let Some(t) = Trip::parse(&exec.argv, &exec.stdin) {
            self.trips.lock().unwrap().push(t);
        }
        let fail = |e: std::io::Error| PortError::Other(format!("{}: {e}", exec.argv[0]));
        let ns: Vec<String> =
            self.within.map(|pid| vec!["-t".into(), pid.to_string(), "-m".into(), "--".into(), "timeout".into()]).unwrap_or_default();
        let mut child = tokio::process::Command::new(if ns.is_empty() { "timeout" } else { "nsenter" })
            .args(&ns)
            .args(["-k", "2", &format!("{:.3}", exec.timeout.as_secs_f64())])
            .args(&exec.argv)
            .envs(self.path_first.iter().map(|dir| ("PATH", format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default()))))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(fail)?;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&exec.stdin).await.map_err(fail)?;
        drop(stdin);
        let out = child.wait_with_output().await.map_err(fail)?;
        Ok(ExecOutput { exit_code: out.status.code().map(|c| c as u32), stdout: out.stdout, stderr: out.stderr, ..Default::default() })
    }
    async fn reconnect(&self, _: Duration) -> PortResult<()> {
        Ok(())
    }
}

pub fn datastream() -> String {
    let ds = temper_journal::target::vm_dir().join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml");
    assert!(ds.exists(), "{} is missing: run `bash vm/fetch-ssg.sh` (tests/run.sh does)", ds.display());
    ds.to_str().unwrap().to_string()
}
