//! A scripted guest: it answers the commands the loop sends with a modelled machine, and oscap
//! with results built from a recorded results file. Its disk state follows the hypervisor's
//! snapshots (see `SimHypervisor`).
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use temper_journal::PowerOff;

use async_trait::async_trait;
use temper_core::ports::{Exec, ExecOutput, Guest, Hypervisor, PortError, PortResult};
use temper_core::scan::Trip;
use temper_core::script;
use temper_scap::{Outcome, TestResult};
use tokio::sync::Notify;

pub const PREFIX: &str = "xccdf_org.ssgproject.content_rule_";

pub fn full(rule: &str) -> String {
    if rule.starts_with(PREFIX) { rule.to_string() } else { format!("{PREFIX}{rule}") }
}

/// What a fix script does to the modelled machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// The rule's check passes from now on.
    Pass(String),
    /// The rule's check fails from now on (a regression, or a rule that became applicable).
    Fail(String),
    /// The rule passes, if `needs` passes now (a fix that depends on another's side effect).
    PassIf { rule: String, needs: String },
    /// The health check fails from now on.
    Unhealthy,
    /// The script exits with this code (after its other effects).
    Exit(u32),
    /// This happens at every boot from now on (a unit or tmpfs that undoes a change).
    AtBoot(Box<Effect>),
    /// The machine no longer boots to SSH (an fstab line for a missing device).
    NoBoot,
    /// The script runs this long, doing this, before its other effects (none if it is killed).
    Takes(Duration, SimDoing),
    /// The script prints this on its stdout.
    Prints(String),
    /// The rule's check reads this from now on (`notapplicable`, `unknown`...).
    Reads(String, Outcome),
    /// The rule's check gives no result from now on: it is missing from the results document.
    Vanishes(String),
    /// Every scan fails from now on (a fix that removes what oscap's probes need).
    BreaksScan,
    /// Every scan that names this rule fails from now on.
    BreaksScanOf(String),
    /// This happens once the guard has read the health check after the fix: damage that shows
    /// late (a timer, a service that dies a while after its restart).
    Later(Box<Effect>),
    /// This unit fails at every boot from now on (`systemctl --failed` lists it after a boot).
    UnitFailsAtBoot(String),
}

/// What a script's processes look like to the watch's probe while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimDoing {
    /// CPU time grows.
    Working,
    /// No CPU, nothing written.
    Sleeping,
    /// Waiting on dpkg's lock, which another process holds.
    WaitingOnDpkg,
}

/// The modelled disk and services: what a snapshot keeps.
#[derive(Debug, Clone, Default)]
pub struct SimMachine {
    /// Full rule id -> (severity, result): the recorded scan, then every effect applied since.
    pub results: BTreeMap<String, (String, Outcome)>,
    pub healthy: bool,
    pub at_boot: Vec<Effect>,
    pub breaks_boot: bool,
    /// Every scan fails.
    pub breaks_scan: bool,
    /// Scans naming any of these rules fail.
    pub breaks_scan_of: Vec<String>,
    /// Effects due after the next health read (`Effect::Later`).
    pub later: Vec<Effect>,
    /// Rules whose checks give no result (`Effect::Vanishes`).
    pub vanished: Vec<String>,
    /// Units that fail at every boot (`Effect::UnitFailsAtBoot`), and those failed now.
    pub units_failing_at_boot: Vec<String>,
    pub failed_units: Vec<String>,
}

impl SimMachine {
    fn apply(&mut self, e: &Effect) {
        match e {
            Effect::Pass(r) => self.set(r, Outcome::Pass),
            Effect::Fail(r) => self.set(r, Outcome::Fail),
            Effect::PassIf { rule, needs } => {
                if self.results.get(&full(needs)).is_some_and(|r| r.1 == Outcome::Pass) {
                    self.set(rule, Outcome::Pass)
                }
            }
            Effect::Unhealthy => self.healthy = false,
            Effect::Exit(_) => {}
            Effect::AtBoot(e) => self.at_boot.push((**e).clone()),
            Effect::NoBoot => self.breaks_boot = true,
            Effect::Takes(..) | Effect::Prints(_) => {}
            Effect::Reads(r, o) => self.set(r, *o),
            Effect::Vanishes(r) => {
                self.results.remove(&full(r));
                self.vanished.push(full(r));
            }
            Effect::BreaksScan => self.breaks_scan = true,
            Effect::BreaksScanOf(r) => self.breaks_scan_of.push(full(r)),
            Effect::Later(e) => self.later.push((**e).clone()),
            Effect::UnitFailsAtBoot(u) => self.units_failing_at_boot.push(u.clone()),
        }
    }

    /// Whether a scan naming `rules` (none: the whole profile) fails on this machine.
    fn scan_fails(&self, rules: &[String]) -> bool {
        self.breaks_scan || self.breaks_scan_of.iter().any(|r| rules.is_empty() || rules.contains(r))
    }

    /// The health check as the guard reads it; then the damage due after it shows.
    fn read_health(&mut self) -> bool {
        let healthy = self.healthy;
        for e in std::mem::take(&mut self.later) {
            self.apply(&e);
        }
        healthy
    }

    /// A cold boot: the boot-time effects run; false when it does not come up.
    fn boot(&mut self) -> bool {
        for e in self.at_boot.clone() {
            self.apply(&e);
        }
        self.failed_units = self.units_failing_at_boot.clone();
        !self.breaks_boot
    }
    fn set(&mut self, rule: &str, o: Outcome) {
        self.vanished.retain(|r| *r != full(rule));
        let entry = self.results.entry(full(rule)).or_insert_with(|| ("medium".into(), o));
        entry.1 = o;
    }
}

/// The rules of the world: what each script does.
#[derive(Default)]
struct SimWorld {
    /// Stock fix text -> its effects (a stock fix passes its own rule unless told otherwise).
    stock: HashMap<String, Vec<Effect>>,
    /// Effects of a stock fix on its n-th run onwards, by fix text (a fix that stops working).
    later: HashMap<String, (u32, Vec<Effect>)>,
    runs: HashMap<String, u32>,
    /// Full rule id -> the OVAL results document `oscap oval eval` gives while it fails (its
    /// evidence); without one a failing rule's definition is just `false`.
    oval: HashMap<String, String>,
    /// The datastream's sha256, as `sha256sum` in the guest prints it (the OVAL engine checks it).
    datastream_sha: Option<String>,
    /// Results every full scan's document carries besides the machine's (`forge_result`).
    forged: Vec<(String, Outcome)>,
}

#[derive(Default)]
struct SimState {
    now: SimMachine,
    snapshots: HashMap<String, SimMachine>,
    world: SimWorld,
    /// Every fix or revert script run, in order.
    scripts: Vec<String>,
    scans: u32,
    /// The rules each scan named, in order; empty for a full scan.
    scanned: Vec<Vec<String>>,
    /// The script text that makes `exec` hang (to kill a run mid-attempt), and the signal.
    hang_on: Option<(String, u32)>,
    /// The nth scan from now (1-based) hangs once it has read the machine.
    hang_on_scan: Option<u32>,
    /// The next power cycle hangs once the machine is back up.
    hang_on_boot: bool,
    /// Cold reboots so far.
    reboots: u32,
    /// Powered on but never reached SSH: every call fails until a revert.
    down: bool,
    /// The script under way that takes time: since when, and what it does.
    running: Option<(std::time::Instant, SimDoing)>,
    /// Scripts the watch killed, in order.
    killed: Vec<String>,
    /// Walks of the file system the scanner asked for (`scan_walk`).
    walks: u32,
    /// How long each walk takes (none: at once).
    walk_takes: Option<Duration>,
    /// Walks finished when each scan of `scanned` started.
    walks_done: Vec<u32>,
    /// Walks finished so far.
    walks_finished: u32,
    /// What `find` says on stderr in each walk, and its exit status then (none: nothing, 0).
    walk_errors: Option<Vec<u8>>,
}

impl SimState {
    /// One more scan, naming `rules`, with the walks finished as it starts.
    fn scan(&mut self, rules: Vec<String>) {
        self.scans += 1;
        self.scanned.push(rules);
        self.walks_done.push(self.walks_finished);
    }
}

/// The scripted guest. Clone it to share; all clones see one machine.
#[derive(Clone)]
pub struct SimGuest {
    state: Arc<Mutex<SimState>>,
    health_command: String,
    template: Arc<TestResult>,
    /// Notified when a script in `hang_on` starts (the attempt is under way).
    pub hanging: Arc<Notify>,
}

impl SimGuest {
    /// A guest whose machine starts as the recorded scan saw it.
    pub fn new(recorded: TestResult, health_command: &str) -> Self {
        let results = recorded
            .rule_results
            .iter()
            .filter(|r| r.result != Outcome::NotSelected)
            .map(|r| (r.idref.clone(), (r.severity.to_string(), r.result)))
            .collect();
        let state = SimState { now: SimMachine { results, healthy: true, ..SimMachine::default() }, ..SimState::default() };
        Self {
            state: Arc::new(Mutex::new(state)),
            health_command: health_command.into(),
            template: Arc::new(recorded),
            hanging: Arc::new(Notify::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SimState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the stock fix `script` does (by default it passes its own rule).
    pub fn stock_fix(&self, script: &str, effects: Vec<Effect>) {
        self.lock().world.stock.insert(script.to_string(), effects);
    }

    /// What `oscap oval eval` shows of `rule` while it fails: an OVAL results document.
    pub fn oval_results(&self, rule: &str, results: &str) {
        self.lock().world.oval.insert(full(rule), results.to_string());
    }

    /// The guest's datastream has this sha256 (the host's, for the OVAL engine).
    pub fn datastream_sha(&self, sha: &str) {
        self.lock().world.datastream_sha = Some(sha.to_string());
    }

    /// From its `nth` run on (1-based), the stock fix `script` has these effects instead.
    pub fn stock_fix_from_run(&self, script: &str, nth: u32, effects: Vec<Effect>) {
        self.lock().world.later.insert(script.to_string(), (nth, effects));
    }

    /// The next run of `script` never returns (a process killed mid-attempt).
    pub fn hang_on(&self, script: &str) {
        self.hang_on_nth(script, 1);
    }

    /// The `nth` run of `script` from now on never returns.
    pub fn hang_on_nth(&self, script: &str, nth: u32) {
        self.lock().hang_on = Some((script.to_string(), nth));
    }

    /// The `nth` scan from now on never returns (a process killed while oscap runs).
    pub fn hang_on_scan(&self, nth: u32) {
        self.lock().hang_on_scan = Some(nth);
    }

    /// The next power cycle never returns (a process killed during the reboot proof).
    pub fn hang_on_boot(&self) {
        self.lock().hang_on_boot = true;
    }

    /// Takes a scan's or a boot's hang: true when this call is the one to hang.
    fn take_hang(&self, scan: bool) -> bool {
        let mut s = self.lock();
        if !scan {
            return std::mem::take(&mut s.hang_on_boot);
        }
        match s.hang_on_scan {
            Some(1) => {
                s.hang_on_scan = None;
                true
            }
            Some(n) => {
                s.hang_on_scan = Some(n - 1);
                false
            }
            None => false,
        }
    }

    /// Killed here: nothing more answers.
    async fn hang(&self) -> ! {
        self.hanging.notify_one();
        std::future::pending::<()>().await;
        unreachable!()
    }

    pub fn result(&self, rule: &str) -> Option<Outcome> {
        self.lock().now.results.get(&full(rule)).map(|r| r.1)
    }

    pub fn scripts(&self) -> Vec<String> {
        self.lock().scripts.clone()
    }

    /// The rules each scan named, in order; empty for a full scan.
    pub fn scanned(&self) -> Vec<Vec<String>> {
        self.lock().scanned.clone()
    }

    pub fn scans(&self) -> u32 {
        self.lock().scans
    }

    /// Walks of the file system so far (the scanner's `COLLECT`, sent as data).
    pub fn walks(&self) -> u32 {
        self.lock().walks
    }

    /// Each walk takes `d` from now on.
    pub fn walk_takes(&self, d: Duration) {
        self.lock().walk_takes = Some(d);
    }

    /// Each walk from now on says `stderr` (`find`'s errors) and exits 1, as `find` does when it
    /// could not read a directory or a file vanished.
    pub fn walk_errors(&self, stderr: &[u8]) {
        self.lock().walk_errors = Some(stderr.to_vec());
    }

    /// The rules each scan named, with the walks finished when it started.
    pub fn scanned_after_walks(&self) -> Vec<(Vec<String>, u32)> {
        let s = self.lock();
        s.scanned.iter().cloned().zip(s.walks_done.iter().copied()).collect()
    }

    /// The one walk: a listing of `/` alone, after `walk_takes`.
    async fn walk(&self) -> ExecOutput {
        let takes = {
            let mut s = self.lock();
            s.walks += 1;
            s.walk_takes
        };
        if let Some(d) = takes {
            tokio::time::sleep(d).await;
        }
        let errors = {
            let mut s = self.lock();
            s.walks_finished += 1;
            s.walk_errors.clone()
        };
        let mut out = ok(b"d 755 0 0 2049 ext4\0/\0\0", u32::from(errors.is_some()));
        out.stderr = errors.unwrap_or_default();
        out
    }

    /// `rule` passes on the machine, and in every snapshot taken so far (a rule the recorded
    /// scan did not select, passing at the baseline).
    pub fn passes(&self, rule: &str) {
        let mut s = self.lock();
        s.now.set(rule, Outcome::Pass);
        s.snapshots.values_mut().for_each(|m| m.set(rule, Outcome::Pass));
    }

    pub fn reboots(&self) -> u32 {
        self.lock().reboots
    }

    /// Whether the machine as it is now would boot and pass its health check.
    pub fn boots_healthy(&self) -> bool {
        let mut m = self.lock().now.clone();
        m.boot() && m.healthy
    }

    /// The units that would fail if the guest booted now.
    pub fn units_failing_at_boot(&self) -> Vec<String> {
        self.lock().now.units_failing_at_boot.clone()
    }

    fn power_cycle(&self) {
        let mut s = self.lock();
        s.reboots += 1;
        s.down = !s.now.boot();
    }

    fn snapshot(&self, name: &str) {
        let mut s = self.lock();
        let now = s.now.clone();
        s.snapshots.insert(name.to_string(), now);
    }

    fn revert(&self, name: &str) -> PortResult<()> {
        let mut s = self.lock();
        let m = s.snapshots.get(name).cloned().ok_or_else(|| PortError::NoSnapshot(name.into()))?;
        s.now = m;
        s.down = false;
        Ok(())
    }

    /// How long `script` takes, and doing what, when it is told to take time.
    fn takes(&self, script: &str) -> Option<(Duration, SimDoing)> {
        let s = self.lock();
        let effects = s.world.stock.get(script)?;
        effects.iter().find_map(|e| if let Effect::Takes(t, d) = e { Some((*t, *d)) } else { None })
    }

    /// The watch's probe: the script under way, as `crate::script`'s probe reports it.
    fn probe(&self, mode: script::ProbeMode) -> ExecOutput {
        let mut s = self.lock();
        let Some((since, doing)) = s.running else { return ok(b"gone\n", 0) };
        if mode == script::ProbeMode::Kill {
            let last = s.scripts.len();
            s.killed.push(format!("script {last}"));
            return ok(b"root 4242\nkilled\n", 0);
        }
        let ms = since.elapsed().as_millis() as u64;
        let out = match doing {
            SimDoing::Working => format!("root 4242\ntree 3 {ms} {ms}\n"),
            SimDoing::Sleeping => "root 4242\ntree 2 1 20\n".to_string(),
            SimDoing::WaitingOnDpkg => format!("root 4242\ntree 2 {ms} 20\nlock /var/lib/dpkg/lock-frontend 812 unattended-upgr\n"),
        };
        ok(out.as_bytes(), 0)
    }

    /// From now on every scan reports `id_xml` (written into the results document as it is,
    /// already escaped for XML) with `outcome`: a guest that forges results.
    pub fn forge_result(&self, id_xml: &str, outcome: Outcome) {
        self.lock().world.forged.push((id_xml.to_string(), outcome));
    }

    /// Scripts the watch killed so far.
    pub fn killed(&self) -> usize {
        self.lock().killed.len()
    }

    fn run_script(&self, script: &str) -> ExecOutput {
        let mut s = self.lock();
        s.scripts.push(script.to_string());
        let n = {
            let c = s.world.runs.entry(script.to_string()).or_default();
            *c += 1;
            *c
        };
        let effects = match s.world.later.get(script) {
            Some((from, e)) if n >= *from => e.clone(),
            _ => match s.world.stock.get(script) {
                Some(e) => e.clone(),
                None => directives(script),
            },
        };
        for e in &effects {
            s.now.apply(e);
        }
        let code = effects.iter().find_map(|e| if let Effect::Exit(c) = e { Some(*c) } else { None }).unwrap_or(0);
        let printed: String = effects.iter().filter_map(|e| if let Effect::Prints(p) = e { Some(p.as_str()) } else { None }).collect();
        ExecOutput { exit_code: Some(code), stdout: format!("{printed}done\n").into_bytes(), ..Default::default() }
    }

    /// `oscap oval eval … DOC` in one trip: each definition of DOC is its rule's result now
    /// (`oval:ssg-RULE:def:1`; any other, a platform or an extended one, is true), inside the
    /// document registered for a failing rule when there is one (`oval_results`).
    fn oscap_oval(&self, trip: &Trip) -> ExecOutput {
        let doc = trip.args.last().and_then(|d| trip.inputs.iter().find(|(p, _)| p == d)).map(|(_, b)| String::from_utf8_lossy(b));
        let ids = definition_ids(doc.as_deref().unwrap_or_default());
        let mut s = self.lock();
        let rule_of = |id: &str| id.strip_prefix("oval:ssg-").and_then(|r| r.strip_suffix(":def:1")).map(full);
        let named: Vec<String> = ids.iter().filter_map(|id| rule_of(id)).collect();
        if s.now.scan_fails(&named) {
            s.scan(named);
            return scan_error();
        }
        s.scan(named);
        let failing = |r: &String| s.now.results.get(r).is_some_and(|x| x.1 == Outcome::Fail);
        let base = ids.iter().filter_map(|id| rule_of(id)).filter(failing).find_map(|r| s.world.oval.get(&r).cloned());
        let mut lines = String::new();
        let vanished = |id: &String| rule_of(id).is_some_and(|r| s.now.vanished.contains(&r));
        for id in ids.iter().filter(|id| !base.as_ref().is_some_and(|b| b.contains(&format!("definition_id=\"{id}\""))) && !vanished(id)) {
            let result = match rule_of(id).and_then(|r| s.now.results.get(&r).map(|x| x.1)) {
                Some(Outcome::Pass) | None => "true",
                Some(Outcome::Fail) => "false",
                Some(Outcome::NotApplicable) => "not applicable",
                Some(_) => "unknown",
            };
            lines += &format!("<definition definition_id=\"{id}\" result=\"{result}\"/>\n");
        }
        let xml = match base {
            Some(b) => {
                let at = b.find("<results>").and_then(|r| b[r..].find("<definitions>").map(|d| r + d + "<definitions>".len())).unwrap_or(0);
                format!("{}\n{lines}{}", &b[..at], &b[at..])
            }
            None => format!(
                "<?xml version=\"1.0\"?>\n<oval_results xmlns=\"http://oval.mitre.org/XMLSchema/oval-results-5\"><results><system><definitions>\n{lines}</definitions>{}</system></results></oval_results>\n",
                walk_probes(doc.as_deref().unwrap_or_default())
            ),
        };
        ok(xml.as_bytes(), 0)
    }

    /// `oscap xccdf eval [--rule R]…` in one trip: the results document on stdout. With
    /// `--oval-results` in a working folder, then the document registered for each failing rule
    /// (`oval_results`), as the trip frames what oscap wrote there.
    fn oscap_eval(&self, trip: &Trip) -> ExecOutput {
        let args = &trip.args;
        let rules: Vec<String> = args.windows(2).filter(|w| w[0] == "--rule").map(|w| w[1].clone()).collect();
        let mut s = self.lock();
        s.scan(rules.clone());
        if s.now.scan_fails(&rules) {
            return scan_error();
        }
        let selected: Vec<(String, String, Outcome)> = s
            .now
            .results
            .iter()
            .filter(|(id, _)| rules.is_empty() || rules.contains(id))
            .map(|(id, (sev, o))| (id.clone(), sev.clone(), *o))
            .chain(s.world.forged.iter().filter(|_| rules.is_empty()).map(|(id, o)| (id.clone(), "high".to_string(), *o)))
            .collect();
        let mut out = results_xml(&self.template, &selected).into_bytes();
        if trip.workdir.is_some() && args.iter().any(|a| a == "--oval-results") {
            for (id, ..) in selected.iter().filter(|r| r.2 == Outcome::Fail) {
                if let Some(doc) = s.world.oval.get(id) {
                    out.extend(format!("\0ssg-debian12-oval.xml.result.xml\0{doc}").into_bytes());
                }
            }
        }
        let failed = selected.iter().any(|r| matches!(r.2, Outcome::Fail | Outcome::Error));
        ExecOutput { exit_code: Some(if failed { 2 } else { 0 }), stdout: out, ..Default::default() }
    }
}

/// `# sim pass RULE`, `# sim fail RULE`, `# sim unhealthy`, `# sim exit N`, `# sim no-boot`,
/// `# sim at-boot fail RULE`, `# sim at-boot pass RULE` and `# sim at-boot unhealthy` lines: an
/// LLM-written fix's effects.
pub fn directives(script: &str) -> Vec<Effect> {
    script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# sim "))
        .filter_map(|d| {
            let mut w = d.split_whitespace();
            match (w.next()?, w.next()) {
                ("pass", Some(r)) => Some(Effect::Pass(r.into())),
                ("fail", Some(r)) => Some(Effect::Fail(r.into())),
                ("unhealthy", _) => Some(Effect::Unhealthy),
                ("exit", Some(c)) => c.parse().ok().map(Effect::Exit),
                ("no-boot", _) => Some(Effect::NoBoot),
                ("at-boot", Some("unhealthy")) => Some(Effect::AtBoot(Box::new(Effect::Unhealthy))),
                ("at-boot", Some("fail")) => w.next().map(|r| Effect::AtBoot(Box::new(Effect::Fail(r.into())))),
                ("at-boot", Some("pass")) => w.next().map(|r| Effect::AtBoot(Box::new(Effect::Pass(r.into())))),
                ("unit-fails-at-boot", Some(u)) => Some(Effect::UnitFailsAtBoot(u.into())),
                _ => None,
            }
        })
        .collect()
}

/// The ids of a definitions document's `definition`s (`<definition` or `<prefix:definition`).
fn definition_ids(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = doc[from..].find("definition ") {
        let at = from + i;
        from = at + 1;
        if at == 0 || !matches!(doc.as_bytes()[at - 1], b'<' | b':') {
            continue;
        }
        let tag = &doc[at..doc[at..].find('>').map_or(doc.len(), |e| at + e)];
        if let Some(j) = tag.find(" id=\"") {
            let id = &tag[j + 5..];
            out.push(id[..id.find('"').unwrap_or(id.len())].to_string());
        }
    }
    out
}

/// The system characteristics of the walk's variable probes (`oval:temper.walk:obj:N`) in
/// `doc`: each variable's one value `/` (the sim's one mount point, user home and start).
fn walk_probes(doc: &str) -> String {
    let mut ids: Vec<&str> = doc.match_indices("id=\"oval:temper.walk:obj:").map(|(i, _)| &doc[i + 4..]).collect();
    ids.iter_mut().for_each(|id| *id = &id[..id.find('"').unwrap_or(id.len())]);
    ids.dedup();
    if ids.is_empty() {
        return String::new();
    }
    let (mut objects, mut items) = (String::new(), String::new());
    for (n, id) in ids.iter().enumerate() {
        objects += &format!("<object id=\"{id}\" version=\"1\" flag=\"complete\"><reference item_ref=\"{}\"/></object>", n + 1);
        items += &format!("<variable_item id=\"{}\" status=\"exists\"><value>/</value></variable_item>", n + 1);
    }
    format!(
        "<oval_system_characteristics xmlns=\"http://oval.mitre.org/XMLSchema/oval-system-characteristics-5\"><collected_objects>{objects}</collected_objects><system_data>{items}</system_data></oval_system_characteristics>"
    )
}

/// An XCCDF TestResult for `rules`, with the recorded one's identity and a score over them.
fn results_xml(template: &TestResult, rules: &[(String, String, Outcome)]) -> String {
    let mut x = format!(
        "<?xml version=\"1.0\"?>\n<TestResult xmlns=\"http://checklists.nist.gov/xccdf/1.2\" id=\"{}\">\n<profile idref=\"{}\"/>\n",
        template.id,
        template.profile.clone().unwrap_or_default()
    );
    for (id, sev, o) in rules {
        x += &format!("<rule-result idref=\"{id}\" severity=\"{sev}\"><result>{}</result></rule-result>\n", o.as_str());
    }
    let scored: Vec<_> = rules.iter().filter(|r| matches!(r.2, Outcome::Pass | Outcome::Fail)).collect();
    let passed = scored.iter().filter(|r| r.2 == Outcome::Pass).count();
    let score = if scored.is_empty() { 0.0 } else { 100.0 * passed as f64 / scored.len() as f64 };
    x += &format!("<score system=\"urn:xccdf:scoring:default\" maximum=\"100\">{score:.6}</score>\n</TestResult>\n");
    x
}

/// What oscap gives when it cannot run the check: an error exit, no results.
fn scan_error() -> ExecOutput {
    ExecOutput { exit_code: Some(1), stderr: b"OpenSCAP Error: probe failed to start (sim)\n".to_vec(), ..Default::default() }
}

fn ok(stdout: &[u8], code: u32) -> ExecOutput {
    ExecOutput { exit_code: Some(code), stdout: stdout.to_vec(), ..Default::default() }
}

/// The sim's dpkg status: a Debian guest's, in brief.
const SIM_DPKG_STATUS: &str = "Package: dpkg\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.21.22\n\n\
                               Package: openssh-server\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1:9.2p1-2+deb12u3\n";

#[async_trait]
impl Guest for SimGuest {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
        if self.lock().down {
            return Err(PortError::Dropped("the guest is not up".into()));
        }
        if let Some(trip) = Trip::parse(&exec.argv, &exec.stdin) {
            let out = if trip.args.first().is_some_and(|a| a == "oval") { self.oscap_oval(&trip) } else { self.oscap_eval(&trip) };
            if self.take_hang(true) {
                self.hang().await;
            }
            return Ok(out);
        }
        if let Some((_, _, mode)) = script::probed(&exec.argv, &exec.stdin) {
            return Ok(self.probe(mode));
        }
        let argv = &exec.argv;
        let arg = |i: usize| argv.get(i).map(String::as_str).unwrap_or("");
        let launched = script::launched(argv).is_some();
        Ok(match arg(0) {
            "oscap" if arg(1) == "--version" => ok(b"OpenSCAP command line tool (oscap) 1.3.7 (sim)\n", 0),
            "bash" if arg(1) == "-s" || launched => {
                let script = String::from_utf8_lossy(&exec.stdin).into_owned();
                if let Some((took, doing)) = self.takes(&script) {
                    self.lock().running = Some((std::time::Instant::now(), doing));
                    tokio::time::sleep(took.min(exec.timeout)).await;
                    self.lock().running = None;
                    if took >= exec.timeout {
                        return Err(PortError::Timeout(exec.timeout));
                    }
                }
                let hang = {
                    let mut s = self.lock();
                    match &mut s.hang_on {
                        Some((text, n)) if *text == script && *n > 1 => {
                            *n -= 1;
                            false
                        }
                        Some((text, _)) => *text == script,
                        None => false,
                    }
                };
                let out = self.run_script(&script);
                if hang {
                    // Killed half-way: the script's changes are on the disk, no answer comes.
                    self.lock().hang_on = None;
                    self.hang().await;
                }
                out
            }
            // The one walk: a listing of `/` alone. A walked rule's result stays the modelled
            // machine's (the sim's `oscap oval eval` gives no criteria to judge again); the host's
            // judgement over a real walk is `temper-core`'s `scan_engines` test, against oscap.
            "sh" if arg(1) == "-s" && exec.stdin == temper_scap::fswalk::COLLECT.as_bytes() => self.walk().await,
            // The package list the scanner judges package tests over: the sim's `oscap oval eval`
            // gives no criteria to judge again, so a rule's result stays the modelled machine's.
            "cat" if arg(2) == temper_core::scan::DPKG_STATUS => ok(SIM_DPKG_STATUS.as_bytes(), 0),
            "test" | "true" | "pkill" | "ps" | "rm" | "journalctl" | "sync" => ok(b"", 0),
            "systemctl" if arg(1) == "--failed" => {
                let listing: String = self.lock().now.failed_units.iter().map(|u| format!("{u} loaded failed failed {u}\n")).collect();
                ok(listing.as_bytes(), 0)
            }
            "sha256sum" => match self.lock().world.datastream_sha.clone() {
                Some(sha) => ok(format!("{sha}  {}\n", arg(2)).as_bytes(), 0),
                None => ok(b"", 1),
            },
            cmd if cmd == self.health_command => {
                let healthy = self.lock().now.read_health();
                if healthy { ok(b"HEALTHY\n", 0) } else { ok(b"mission service down\n", 1) }
            }
            other => ok(format!("sim: {other}: command not found\n").as_bytes(), 127),
        })
    }

    async fn reconnect(&self, within: Duration) -> PortResult<()> {
        if self.lock().down { Err(PortError::Unreachable(within)) } else { Ok(()) }
    }
}

/// The hypervisor: libvirt's test driver does the snapshot bookkeeping (and refuses what libvirt
/// refuses); the guest's machine follows each snapshot taken and reverted.
pub struct SimHypervisor<H> {
    pub inner: H,
    pub guest: SimGuest,
}

#[async_trait]
impl<H: Hypervisor> Hypervisor for SimHypervisor<H> {
    async fn is_running(&self) -> PortResult<bool> {
        self.inner.is_running().await
    }
    async fn snapshot_list(&self) -> PortResult<Vec<String>> {
        self.inner.snapshot_list().await
    }
    async fn snapshot_create(&self, name: &str, description: &str) -> PortResult<()> {
        self.inner.snapshot_create(name, description).await?;
        self.guest.snapshot(name);
        Ok(())
    }
    async fn snapshot_revert(&self, name: &str) -> PortResult<()> {
        self.inner.snapshot_revert(name).await?;
        self.guest.revert(name)
    }
    async fn snapshot_delete(&self, name: &str) -> PortResult<()> {
        self.inner.snapshot_delete(name).await?;
        self.guest.lock().snapshots.remove(name);
        Ok(())
    }
    async fn power_cycle(&self, grace: Duration) -> PortResult<PowerOff> {
        let off = self.inner.power_cycle(grace).await?;
        self.guest.power_cycle();
        if self.guest.take_hang(false) {
            self.guest.hang().await;
        }
        Ok(off)
    }
}
