//! Timings on the real test VM (`bash vm/up.sh` first): snapshot create / revert / delete,
//! SSH ready after a revert, exec round trips. Prints min / median / max over RUNS runs.
//! Uses temporary snapshots `bench-<pid>-<i>` and ends at `baseline`.
use std::future::Future;
use std::time::{Duration, Instant};

use temper_core::ports::{Exec, Guest, Hypervisor, PortResult};
use temper_target::{LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};

const RUNS: usize = 5;
const BASELINE: &str = "baseline";

#[derive(Default)]
struct Series(Vec<(&'static str, Vec<Duration>)>);

impl Series {
    fn add(&mut self, name: &'static str, d: Duration) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(d),
            None => self.0.push((name, vec![d])),
        }
    }
    fn print(&self) {
        println!("{:<34} {:>5} {:>9} {:>9} {:>9}", "step", "n", "min s", "median s", "max s");
        for (name, v) in &self.0 {
            let mut v = v.clone();
            v.sort();
            let s = |d: Duration| format!("{:.3}", d.as_secs_f64());
            println!("{name:<34} {:>5} {:>9} {:>9} {:>9}", v.len(), s(v[0]), s(v[v.len() / 2]), s(v[v.len() - 1]));
        }
    }
}

async fn timed<T>(f: impl Future<Output = PortResult<T>>) -> PortResult<(T, Duration)> {
    let t0 = Instant::now();
    let r = f.await?;
    Ok((r, t0.elapsed()))
}

async fn bench(h: &LibvirtHypervisor, g: &SshGuest, s: &mut Series) -> PortResult<()> {
    for i in 0..RUNS {
        let snap = format!("bench-{}-{i}", std::process::id());
        let (_, d) = timed(h.snapshot_create(&snap, "temper-target bench: temporary")).await?;
        s.add("snapshot create (memory)", d);
        for _ in 0..3 {
            s.add("exec `true` (sudo)", timed(g.exec(Exec::new(["true"]))).await?.1);
            s.add("exec `true` (as user)", timed(g.exec(Exec::new(["true"]).as_user())).await?.1);
        }
        let (_, d) = timed(h.snapshot_revert(&snap)).await?;
        s.add("snapshot revert", d);
        let (_, r) = timed(g.reconnect(Duration::from_secs(120))).await?;
        s.add("ssh ready after revert (connect)", r);
        let (_, e) = timed(g.exec(Exec::new(["true"]))).await?;
        s.add("first exec after revert", e);
        s.add("revert -> first exec done", d + r + e);
        let (_, d) = timed(g.sync_clock()).await?;
        s.add("guest clock sync (date -s)", d);
        let (_, d) = timed(h.snapshot_delete(&snap)).await?;
        s.add("snapshot delete", d);
    }
    Ok(())
}

#[tokio::main]
async fn main() {
    let h = LibvirtHypervisor::new(LibvirtConfig::from_env());
    let mut cfg = SshConfig::from_env().expect("ssh settings");
    cfg.sync_clock = false; // timed on its own
    let g = match SshGuest::connect(cfg).await {
        Ok(g) => g,
        Err(e) => {
            eprintln!("test VM not reachable: {e}. run bash vm/up.sh first");
            std::process::exit(1);
        }
    };
    let mut s = Series::default();
    let res = bench(&h, &g, &mut s).await;
    // Leave the VM at baseline whatever happened.
    let back = async {
        h.snapshot_revert(BASELINE).await?;
        g.reconnect(Duration::from_secs(120)).await?;
        g.sync_clock().await
    }
    .await;
    s.print();
    if let Err(e) = res.and(back) {
        eprintln!("bench failed: {e} (temporary snapshots bench-{}-* may need deleting)", std::process::id());
        std::process::exit(1);
    }
}
