//! The Ralph loop in-process, without the VM: libvirt's `test:///default` driver as the
//! hypervisor, a scripted guest answering oscap from a recorded results file, a real SQLite
//! file as the journal, and the real agents (the LLM ones against the scripted HTTP server).
#![allow(dead_code)]
mod guest;
mod offline;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

#[allow(unused_imports)]
pub use guest::SimDoing;
pub use guest::{Effect, SimGuest, SimHypervisor, full};
#[allow(unused_imports)]
pub use offline::RecordedJudge;
use temper_agents::{LlmAgent, LlmConfig, StockAgent};
use temper_core::lease::Lease;
use temper_core::ports::{Clock, Guest, Hypervisor, Timed};
use temper_core::ralph::{Agents, LoopResult, Parts, Quiet, Ralph, Settings};
use temper_core::scan::{OvalSide, SCAN_LANES, Scanner};
use temper_core::skill::Skill;
pub use temper_journal::prelude::*;
use temper_journal::{Attempt, EventKind, NewRun, Rule};
use temper_journal::{RunId, RunSummary};
use temper_scap::Benchmark;
use temper_store::Store;
use temper_target::{LibvirtConfig, LibvirtHypervisor};

pub const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";
const HEALTH: &str = "/usr/local/bin/mission-healthcheck";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The datastream through the standard profile, read once per test binary.
pub fn content() -> &'static Benchmark {
    static C: OnceLock<Benchmark> = OnceLock::new();
    C.get_or_init(|| read(STANDARD))
}

/// The datastream as ANSSI BP-028 high selects it: a profile with tree walkers (`standard` has
/// none).
pub fn anssi() -> &'static Benchmark {
    static C: OnceLock<Benchmark> = OnceLock::new();
    C.get_or_init(|| read("xccdf_org.ssgproject.content_profile_anssi_bp28_high"))
}

fn read(profile: &str) -> Benchmark {
    let ds = datastream();
    assert!(ds.exists(), "{} is missing: run `bash vm/fetch-ssg.sh` (tests/run.sh does)", ds.display());
    temper_scap::read_benchmark(&ds, Some(profile)).unwrap()
}

/// SSG's Debian 12 datastream, the file `vm/fetch-ssg.sh` unpacks, as the real runs use.
pub fn datastream() -> PathBuf {
    let vm = std::env::var("TEMPER_VM_DIR").unwrap_or_else(|_| "/var/cache/temper/vm".into());
    Path::new(&vm).join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml")
}

/// The stock fix of `rule`, as the stock agent submits it.
pub fn stock_fix(rule: &str) -> String {
    content().rule(&full(rule)).and_then(|r| r.fix.as_ref()).map(|f| f.script.clone()).unwrap_or_else(|| panic!("{rule} has no stock fix"))
}

/// One test's world: its own libvirt test domain, guest, database and skill.
pub struct Sim {
    /// The target's label its runs are stored with (`runs.target`): what its memory holds on.
    pub label: String,
    pub guest: SimGuest,
    pub hv: SimHypervisor<LibvirtHypervisor>,
    pub store: Arc<Store>,
    pub skill: Skill,
    pub settings: Settings,
    /// Rules the scanner treats as walking a directory tree (checked at the final scan only).
    pub walkers: Vec<String>,
    /// The scanner's lanes (`scan_lanes`).
    pub lanes: usize,
    /// Scans of named rules through the OVAL engine (`with_oval`), with their evidence.
    pub oval: Option<OvalSide>,
    /// The run's content: `standard` unless [`Self::with_profile`].
    pub content: &'static Benchmark,
    /// The one walk (`scan_walk`): the walkers it judges are no longer costly (see
    /// `SimGuest`'s walk).
    pub walk: bool,
    /// Judges the final state's disk from outside the guest (`None`: no cross-examination).
    pub offline: Option<Arc<dyn temper_core::ports::OfflineJudge>>,
    /// Keeps test:///default's state alive (it lives while one connection is open).
    _conn: virt::connect::Connect,
    _dir: tempfile::TempDir,
}

impl Sim {
    pub async fn new(name: &str) -> Self {
        let conn = virt::connect::Connect::open(Some("test:///default")).expect("libvirt's test driver");
        let domain = format!("sim-{name}");
        let xml = format!("<domain type='test'><name>{domain}</name><memory>65536</memory><os><type>hvm</type></os></domain>");
        let dom = conn.define_domain_xml(&xml).expect("define the test domain");
        dom.create().expect("start the test domain");
        let inner = LibvirtHypervisor::new(LibvirtConfig { uri: "test:///default".into(), domain });
        let recorded = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/standard-results.xml")).unwrap();
        let guest = SimGuest::new(temper_scap::parse_results_bytes(&recorded).unwrap(), HEALTH);
        // A stock fix passes its own rule; a test tells the guest where it does more.
        for r in content().selected_rules.iter() {
            if let Some(f) = &r.fix {
                guest.stock_fix(&f.script, vec![Effect::Pass(r.id.clone())]);
            }
        }
        let hv = SimHypervisor { inner, guest: guest.clone() };
        hv.snapshot_create("baseline", "the sim's baseline").await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("temper.db").to_str().unwrap()).await.unwrap();
        let skill = Skill::load(repo().join("skills/debian12-anssi")).unwrap();
        let settings = Settings {
            health_command: HEALTH.into(),
            ssh_ready: Duration::from_secs(1),
            derive: Some(temper_agents::derived::again),
            ..Settings::default()
        };
        Self {
            label: format!("sim-{name}"),
            guest,
            hv,
            store: Arc::new(store),
            skill,
            settings,
            walkers: Vec::new(),
            lanes: SCAN_LANES,
            oval: None,
            walk: false,
            offline: None,
            content: content(),
            _conn: conn,
            _dir: dir,
        }
    }

    /// Scans of named rules go through the OVAL engine, as `--engine oval` runs do: the guest
    /// answers `oscap oval eval` (see `SimGuest::oval_results` for a failing rule's evidence).
    pub fn with_oval(&mut self) {
        let oval = temper_scap::oval::OvalContent::read(datastream()).unwrap();
        self.guest.datastream_sha(&oval.sha256_hex());
        let engine = Arc::new(temper_scap::oval::OvalEngine::new(oval));
        self.oval = Some(OvalSide { engine, benchmark: Arc::new(self.content.clone()) });
    }

    /// The run's content is `benchmark` (its profile's rules are the known ones, its stock fixes
    /// pass their rules); call before [`Self::with_oval`].
    pub fn with_profile(&mut self, benchmark: &'static Benchmark) {
        for r in benchmark.selected_rules.iter() {
            if let Some(f) = &r.fix {
                self.guest.stock_fix(&f.script, vec![Effect::Pass(r.id.clone())]);
            }
        }
        self.content = benchmark;
    }

    /// The run's skill becomes a copy of it whose `skill.toml` is `edit`ed (kept in the sim's folder).
    pub fn edit_skill(&mut self, edit: impl FnOnce(String) -> String) {
        let copy = self._dir.path().join("skill");
        let status = std::process::Command::new("cp").arg("-r").arg(&self.skill.dir).arg(&copy).status().unwrap();
        assert!(status.success(), "copying {}", self.skill.dir.display());
        let toml = std::fs::read_to_string(copy.join("skill.toml")).unwrap();
        std::fs::write(copy.join("skill.toml"), edit(toml)).unwrap();
        self.skill = Skill::load(&copy).unwrap();
    }

    pub async fn new_run(&self, agent: &str) -> RunId {
        self.new_run_with(agent, "{}").await
    }

    /// A run whose stored options are `options_json` (its controls, for the reports).
    pub async fn new_run_with(&self, agent: &str, options_json: &str) -> RunId {
        let run = NewRun {
            skill: self.skill.name().to_string(),
            profile: STANDARD.into(),
            datastream: "ssg-debian12-ds.xml".into(),
            content_version: None,
            target: self.label.clone(),
            agent: agent.into(),
            options_json: options_json.into(),
            baseline: "baseline".into(),
        };
        self.store.create_run(&run).await.unwrap()
    }

    /// Drives `run` to its end (or its error) with the stock agent.
    pub async fn stock(&self, run: RunId) -> LoopResult<RunSummary> {
        self.drive(run, &StockAgent, self.stock_settings()).await
    }

    /// As `temper run --agent stock` sets them: one fix per rule, so re-engage after each failure.
    fn stock_settings(&self) -> Settings {
        Settings { reengage_every: 1, ..self.settings.clone() }
    }

    /// Drives `run` with the LLM agent against the scripted server at `url`.
    pub async fn llm(&self, run: RunId, url: &str) -> LoopResult<RunSummary> {
        let mut cfg = LlmConfig::new(url, "scripted");
        cfg.max_retries = 0;
        cfg.timeout = Duration::from_secs(10);
        let agent = LlmAgent::new(cfg, &self.skill.dir).unwrap();
        self.drive(run, &agent, self.settings.clone()).await
    }

    /// Takes the run's lease and drives it, as `temper run` and `temper resume` do.
    pub async fn drive<A>(&self, run: RunId, agent: &A, settings: Settings) -> LoopResult<RunSummary>
    where
        A: temper_core::agent::Architect + temper_core::agent::Worker + temper_core::agent::Reflector,
    {
        let clock = Arc::new(Clock::default());
        let lease = Lease::take(self.store.clone(), run, clock.clone()).await.expect("the run's lease");
        let (hv, guest) = (Timed { inner: &self.hv, clock: &clock }, Timed { inner: &self.guest, clock: &clock });
        let agents = Agents { architect: agent, worker: agent, reflector: agent };
        let out = self.ralph(&hv, &guest, agents, settings, &lease).run().await;
        lease.release().await.unwrap();
        out
    }

    /// Drives `run` with the stock agent until `script` has run in the guest, then drops the loop
    /// there, its answer never read (as kill -9 would stop it), and lets its lease go as a dead
    /// process's runs out.
    pub async fn kill_during(&self, run: RunId, script: &str) {
        self.kill_during_nth(run, script, 1).await
    }

    /// `kill_during`, on the `nth` run of `script` from now on.
    pub async fn kill_during_nth(&self, run: RunId, script: &str, nth: u32) {
        self.guest.hang_on_nth(script, nth);
        self.kill_when_hung(run, script.lines().next().unwrap_or("")).await
    }

    /// Drives `run` with the stock agent until the guest hangs where a test told it to
    /// (`hang_on_*`), then drops the loop there, as kill -9 would stop it; `what` names the place.
    pub async fn kill_when_hung(&self, run: RunId, what: &str) {
        let clock = Arc::new(Clock::default());
        let lease = Lease::take(self.store.clone(), run, clock.clone()).await.unwrap();
        let (hv, guest) = (Timed { inner: &self.hv, clock: &clock }, Timed { inner: &self.guest, clock: &clock });
        let agents = Agents { architect: &StockAgent, worker: &StockAgent, reflector: &StockAgent };
        let ralph = self.ralph(&hv, &guest, agents, self.stock_settings(), &lease);
        tokio::select! {
            out = ralph.run() => panic!("the run ended before `{what}`: {out:?}"),
            () = self.guest.hanging.notified() => {}
        }
        lease.release().await.unwrap();
    }

    fn ralph<'a>(
        &'a self,
        hv: &'a dyn Hypervisor,
        guest: &'a dyn Guest,
        agents: Agents<'a>,
        settings: Settings,
        lease: &'a Lease,
    ) -> Ralph<'a> {
        let mut scanner = Scanner::new("/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml", STANDARD).with_lanes(self.lanes);
        // Named walkers stand in for the content's; none named, the OVAL content says.
        if !self.walkers.is_empty() {
            scanner = scanner.with_tree_walkers(self.walkers.clone());
        }
        scanner.walk = self.walk;
        if let Some(side) = &self.oval {
            scanner = scanner.with_oval(side.clone());
        }
        let parts = Parts {
            store: self.store.as_ref(),
            hv,
            guest,
            agents,
            skill: &self.skill,
            content: self.content,
            scanner,
            settings,
            observer: &Quiet,
            offline: self.offline.as_deref(),
        };
        Ralph::new(parts, lease)
    }

    pub async fn rules(&self, run: RunId) -> Vec<Rule> {
        self.store.rules(run).await.unwrap()
    }

    pub async fn rule(&self, run: RunId, rule: &str) -> Rule {
        self.store.rule(run, &full(rule)).await.unwrap().unwrap_or_else(|| panic!("no rule {rule}"))
    }

    /// The data of `run`'s events of `kind`, in order, as the store keeps it.
    pub async fn events(&self, run: RunId, kind: EventKind) -> Vec<serde_json::Value> {
        let all = self.store.events(run, None).await.unwrap();
        all.into_iter().filter(|e| e.kind == kind).map(|e| e.data.fields()).collect()
    }

    /// The snapshots left besides the baseline and `run`'s checkpoint (stones not dropped).
    pub async fn snapshots_left(&self, run: RunId) -> Vec<String> {
        let checkpoint = self.store.run(run).await.unwrap().checkpoint;
        self.hv.snapshot_list().await.unwrap().into_iter().filter(|s| s != "baseline" && *s != checkpoint).collect()
    }

    pub async fn attempts(&self, run: RunId, rule: &str) -> Vec<Attempt> {
        self.store.rule_attempts(run, &full(rule)).await.unwrap()
    }

    /// Short ids of the rules with `status`, sorted.
    pub async fn with_status(&self, run: RunId, status: temper_journal::RuleStatus) -> Vec<String> {
        let mut v: Vec<String> = self
            .rules(run)
            .await
            .into_iter()
            .filter(|r| r.status == status)
            .map(|r| temper_scap::short_rule_id(&r.rule_id).to_string())
            .collect();
        v.sort();
        v
    }

    /// The run's Markdown report, as `temper report --format md` writes it.
    pub async fn report(&self, run: RunId) -> String {
        let data = temper_report::load(self.store.as_ref(), run).await.unwrap();
        temper_report::render(&data, Some(content()), temper_report::Format::Md).unwrap()
    }
}

/// Prints a test's run time (the issue asks for them), and returns it.
pub fn took(name: &str, since: Instant) -> Duration {
    let t = since.elapsed();
    println!("in-process loop test {name}: {:.2} s", t.as_secs_f64());
    t
}
