//! A real run in a real SQLite store, written through the Store API the loop uses, with rule
//! ids, titles and DISA ids from the real RHEL 9 datastream's `stig` profile.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::json;
pub use temper_journal::Verdict;
pub use temper_journal::prelude::*;
use temper_journal::turn::TurnRecord;
use temper_journal::{AttemptId, RunId};
pub use temper_journal::{
    AttemptSpec, AttemptState, Escalation, EscalationCause, Evaluation, Findings, FixSource, NewRule, NewRun, NewTurn, RevertMethod,
    RuleStatus, RunSummary, ScanResult, TurnMode, TurnRole,
};
use temper_scap::Benchmark;
use temper_store::Store;

mod progress;
#[allow(unused_imports)]
pub use progress::hostile_rule_id;

pub const SSG_DIR: &str = "/var/cache/temper/vm/ssg/usr/share/xml/scap/ssg/content";
pub const STIG: &str = "xccdf_org.ssgproject.content_profile_stig";
pub const ANSSI: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";

pub fn ssg(name: &str) -> PathBuf {
    let dir = std::env::var("TEMPER_SSG_DIR").unwrap_or_else(|_| SSG_DIR.into());
    let p = PathBuf::from(dir).join(name);
    assert!(p.is_file(), "SSG content missing: {} (run `bash vm/fetch-ssg.sh` or set TEMPER_SSG_DIR)", p.display());
    p
}

/// The RHEL 9 datastream read with the DISA STIG profile (read once per test binary).
pub fn rhel9() -> &'static Benchmark {
    static B: OnceLock<Benchmark> = OnceLock::new();
    B.get_or_init(|| temper_scap::read_benchmark(ssg("ssg-rhel9-ds.xml"), Some(STIG)).expect("RHEL 9 datastream reads"))
}

pub fn debian12_anssi() -> &'static Benchmark {
    static B: OnceLock<Benchmark> = OnceLock::new();
    B.get_or_init(|| temper_scap::read_benchmark(ssg("ssg-debian12-ds.xml"), Some(ANSSI)).expect("Debian 12 datastream reads"))
}

/// The full id of a selected rule, by short id; fails the test when the content lacks it.
pub fn full(content: &Benchmark, short: &str) -> String {
    content.rule(short).unwrap_or_else(|| panic!("rule {short} not selected in {}", content.id)).id.clone()
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `target/test-artifacts`, created.
pub fn artifacts() -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| repo_root().join("target"));
    let dir = target.join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub struct ReportFixture {
    pub _dir: tempfile::TempDir,
    pub store: Store,
    pub run: RunId,
}

/// Text a report must escape: markup, entities, quotes, a CDATA end, template braces, a
/// backtick fence, an ANSI escape, and the replay script's own here-doc delimiter.
pub const NASTY: &str = "a < b && c > d \"dq\" 'sq' </pre><script>alert(1)</script> ]]> {{ x }} ``` \u{1b}[31mred";

// The rules of the fixture run: (short id, first scan, final scan, status).
pub const FIXED_ROOT: &str = "sshd_disable_root_login";
pub const FIXED_OWNER: &str = "file_owner_sshd_config";
pub const FIXED_EMPTY: &str = "sshd_disable_empty_passwords";
pub const ESC_DROPIN: &str = "file_owner_sshd_drop_in_config";
pub const ESC_FAILLOCK: &str = "accounts_passwords_pam_faillock_deny";
pub const ESC_GRUB: &str = "grub2_audit_argument";
pub const ESC_KEEPALIVE: &str = "sshd_set_keepalive";
pub const ESC_NOFIX: &str = "aide_periodic_cron_checking";
pub const ESCALATED: [&str; 5] = [ESC_DROPIN, ESC_FAILLOCK, ESC_GRUB, ESC_KEEPALIVE, ESC_NOFIX];

/// (short id, initial, final, status, reason) for rules that no attempt touches.
const QUIET: &[(&str, ScanResult, ScanResult, RuleStatus, Option<&str>)] = {
    use RuleStatus as S;
    use ScanResult as R;
    &[
        ("directory_owner_sshd_config_d", R::Pass, R::Pass, S::Passing, None),
        ("package_aide_installed", R::Pass, R::Pass, S::Passing, None),
        ("aide_build_database", R::Pass, R::Pass, S::Passing, None),
        ("audit_rules_dac_modification_chmod", R::Pass, R::Pass, S::Passing, None),
        ("audit_rules_dac_modification_fchmod", R::Error, R::Error, S::Error, None),
        ("enable_fips_mode", R::Fail, R::Fail, S::Skipped, Some("FIPS mode needs a reboot & a new initramfs: out of scope")),
        ("configure_crypto_policy", R::Fail, R::Fail, S::Waived, Some("waiver W-17 <approved by the ISSO>")),
        ("package_usbguard_installed", R::Fail, R::Fail, S::Deferred, Some("after the USB inventory")),
        ("dconf_gnome_banner_enabled", R::NotApplicable, R::NotApplicable, S::NotApplicable, None),
        ("sshd_set_idle_timeout", R::Fail, R::Fail, S::Pending, None),
        ("package_audit_installed", R::Pass, R::Pass, S::Passing, None),
        ("service_auditd_enabled", R::Pass, R::Pass, S::Passing, None),
    ]
};

fn outcome(verdict: Verdict, reason: &str) -> Evaluation {
    Evaluation::new(verdict, reason)
}

/// A rule of the run as the first scan found it.
pub fn new_rule(rule_id: &str, title: &str, severity: &str, initial: ScanResult, status: RuleStatus, reason: Option<&str>) -> NewRule {
    NewRule {
        rule_id: rule_id.into(),
        title: title.into(),
        severity: severity.into(),
        initial_result: initial,
        status,
        reason: reason.map(Into::into),
    }
}

/// A run of `skill` on `profile`, from the `baseline` snapshot.
pub fn new_run(skill: &str, profile: &str, datastream: &str, content_version: Option<String>, target: &str, agent: &str) -> NewRun {
    NewRun {
        skill: skill.into(),
        profile: profile.into(),
        datastream: datastream.into(),
        content_version,
        target: target.into(),
        agent: agent.into(),
        options_json: "{}".into(),
        baseline: "baseline".into(),
    }
}

/// Records one LLM call of the run.
async fn turn(store: &Store, run: RunId, attempt: Option<AttemptId>, rule: &str, role: TurnRole, tokens: (u32, u32), ms: u64) {
    let record = TurnRecord {
        prompt_chars: tokens.0 as usize * 4,
        prompt_tokens_est: tokens.0,
        prompt_tokens: Some(tokens.0),
        completion_tokens: Some(tokens.1),
        latency_ms: ms,
        mode: TurnMode::Native,
        finish_reason: Some("tool_calls".into()),
        ..TurnRecord::new(role, "qwen2.5-1.5b-instruct")
    };
    store.add_turn(run, &NewTurn { attempt_id: attempt, rule_id: Some(rule), record: &record }).await.unwrap();
}

/// A fresh store in a temporary folder (kept while the folder is).
pub async fn empty_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("temper.db").to_str().unwrap()).await.unwrap();
    (dir, store)
}

impl ReportFixture {
    /// A fresh store holding one new run, `run`.
    pub async fn open(run: &NewRun) -> Self {
        let (dir, store) = empty_store().await;
        let run = store.create_run(run).await.unwrap();
        Self { _dir: dir, store, run }
    }

    async fn attempt(&self, rule: &str, source: FixSource, plan: &str, fix: &str, revert: &str, description: &str) -> AttemptId {
        let (id, _) = self
            .store
            .start_attempt(
                self.run,
                &AttemptSpec {
                    rule_id: rule.into(),
                    plan: plan.into(),
                    source,
                    replayed: false,
                    fix_script: fix.into(),
                    revert_script: revert.into(),
                    description: description.into(),
                    checkpoint: "baseline".into(),
                    evidence_before: None,
                },
            )
            .await
            .unwrap();
        turn(&self.store, self.run, Some(id), rule, TurnRole::Worker, (2400, 180), 5200).await;
        self.store.set_attempt_state(id, AttemptState::Applied).await.unwrap();
        id
    }

    async fn fixed(&self, rule: &str, fix: &str, description: &str) {
        turn(&self.store, self.run, None, rule, TurnRole::Architect, (1800, 90), 3100).await;
        let id = self.attempt(rule, FixSource::Stock, "apply the stock fix", fix, "", description).await;
        let o = Evaluation {
            revert_method: RevertMethod::None,
            findings: Findings {
                fix_exit_code: Some(0),
                fix_stdout: Some(String::new()),
                fix_stderr: Some(String::new()),
                rule_result: Some(ScanResult::Pass),
                health_ok: Some(true),
                health_output: Some("HEALTHY".into()),
                access_ok: Some(true),
                apply_ms: Some(1200),
                evaluate_ms: Some(21_000),
                ..Findings::default()
            },
            ..outcome(Verdict::Fixed, "the rule passes, the health check is HEALTHY, access works, no regression")
        };
        self.store.record_fix(self.run, id, &o, rule, &format!("temper-r{}-a{id}", self.run)).await.unwrap();
    }

    async fn failed(&self, rule: &str, source: FixSource, fix: &str, revert: &str, o: Evaluation) {
        let id = self.attempt(rule, source, "set the owner, then reload sshd", fix, revert, "chown root the drop-in files").await;
        self.store.finish_attempt(id, &o).await.unwrap();
    }

    async fn lesson(&self, rule: &str, lesson: &str, preferred: &str, distilled: &str) {
        turn(&self.store, self.run, None, rule, TurnRole::Reflector, (1500, 120), 2600).await;
        self.store.add_lesson(self.run, rule, lesson, preferred, distilled).await.unwrap();
    }

    /// The RHEL 9 STIG run: three fixes kept, five rules escalated (still failing then health
    /// broken, lockout, needs reboot, refused, no fix), skips, waivers, deferrals, passes.
    pub async fn rhel9_run() -> Self {
        let c = rhel9();
        let f = Self::open(&new_run(
            "rhel9-stig",
            STIG,
            &ssg("ssg-rhel9-ds.xml").display().to_string(),
            Some(c.version.clone()),
            "libvirt:temper-rhel9",
            "openai:qwen2.5-1.5b-instruct",
        ))
        .await;
        let (s, run) = (&f.store, f.run);
        s.set_scores(run, Some(61.25), None).await.unwrap();
        let fails = [FIXED_ROOT, FIXED_OWNER, FIXED_EMPTY, ESC_DROPIN, ESC_FAILLOCK, ESC_GRUB, ESC_KEEPALIVE, ESC_NOFIX];
        for short in fails {
            let r = c.rule(short).unwrap_or_else(|| panic!("{short} not in the stig profile"));
            s.add_rule(run, &new_rule(&r.id, &r.title, r.severity.as_str(), ScanResult::Fail, RuleStatus::Pending, None)).await.unwrap();
        }
        for (short, initial, _, status, reason) in QUIET {
            let r = c.rule(short).unwrap_or_else(|| panic!("{short} not in the stig profile"));
            s.add_rule(run, &new_rule(&r.id, &r.title, r.severity.as_str(), *initial, *status, *reason)).await.unwrap();
        }

        // Fixed, in this order.
        f.fixed(&full(c, FIXED_ROOT), &format!(
            "#!/bin/bash\n# {NASTY}\nmkdir -p /etc/ssh/sshd_config.d\nprintf '%s\\n' 'PermitRootLogin no' > /etc/ssh/sshd_config.d/01-permitrootlogin.conf\nTEMPER_FIX_1_END\n[ -s /etc/ssh/sshd_config.d/01-permitrootlogin.conf ] && echo \"ok & done\"\n"
        ), "PermitRootLogin no in a drop-in").await;
        f.fixed(&full(c, FIXED_OWNER), "chown 0 /etc/ssh/sshd_config\n", "owner of sshd_config is root").await;
        f.fixed(
            &full(c, FIXED_EMPTY),
            "sed -i 's/^#\\?PermitEmptyPasswords.*/PermitEmptyPasswords no/' /etc/ssh/sshd_config\n",
            "PermitEmptyPasswords no",
        )
        .await;

        // Escalated: still failing, then health broken.
        let dropin = full(c, ESC_DROPIN);
        turn(s, run, None, &dropin, TurnRole::Architect, (1900, 110), 3300).await;
        f.failed(
            &dropin,
            FixSource::Llm,
            &format!("# {NASTY}\nchown root: /etc/ssh/sshd_config.d/*.conf && echo \"<done>\"\n"),
            "chown -R 1000 /etc/ssh/sshd_config.d # undo 'it'\n",
            Evaluation {
                revert_method: RevertMethod::Script,
                findings: Findings {
                    fix_exit_code: Some(0),
                    fix_stdout: Some(format!("{NASTY}\n<done>\n")),
                    fix_stderr: Some("chown: cannot access '/etc/ssh/sshd_config.d/*.conf': No such file or directory\n".into()),
                    rule_result: Some(ScanResult::Fail),
                    health_ok: Some(true),
                    health_output: Some("HEALTHY".into()),
                    access_ok: Some(true),
                    revert_ms: Some(28_000),
                    apply_ms: Some(900),
                    evaluate_ms: Some(24_000),
                    ..Findings::default()
                },
                ..outcome(Verdict::StillFailing, "the rule's result after the fix is fail")
            },
        )
        .await;
        f.lesson(
            &dropin,
            "The glob matched nothing: the drop-in directory holds no .conf file yet",
            "create the file first & then set its owner",
            "attempt 1: still_failing: glob matched nothing <no files>",
        )
        .await;
        f.failed(
            &dropin,
            FixSource::Llm,
            "chown -R root:root /etc/ssh && systemctl restart sshd.service\n",
            "",
            Evaluation {
                revert_method: RevertMethod::Snapshot,
                findings: Findings {
                    fix_exit_code: Some(0),
                    rule_result: None,
                    health_ok: Some(false),
                    health_output: Some("web: nginx.service failed: address already in use\nUNHEALTHY".into()),
                    access_ok: Some(true),
                    revert_ms: Some(9_000),
                    apply_ms: Some(1_100),
                    evaluate_ms: Some(3_000),
                    ..Findings::default()
                },
                ..outcome(Verdict::HealthBroken, "health check: web: nginx.service failed: address already in use")
            },
        )
        .await;
        f.lesson(
            &dropin,
            "Restarting sshd with a recursive chown broke the web service's key permissions",
            "",
            "attempt 2: health_broken: recursive chown hit the web keys",
        )
        .await;
        s.add_ban(run, &dropin, r"chown\s+-R\s+\S+\s+/etc/ssh\b", "recursive chown of /etc/ssh breaks other services' keys").await.unwrap();
        s.set_rule_status(run, &dropin, RuleStatus::Escalated, Some("plateau: the last 2 attempts ended `health_broken` with the same lesson or script, and the Architect offered no new approach")).await.unwrap();

        // Escalated: lockout.
        let faillock = full(c, ESC_FAILLOCK);
        f.failed(
            &faillock,
            FixSource::Stock,
            "authselect enable-feature with-faillock\n",
            "authselect disable-feature with-faillock\n",
            Evaluation {
                revert_method: RevertMethod::Snapshot,
                findings: Findings {
                    fix_exit_code: Some(0),
                    access_ok: Some(false),
                    revert_ms: Some(14_000),
                    apply_ms: Some(2_000),
                    evaluate_ms: Some(60_000),
                    ..Findings::default()
                },
                ..outcome(Verdict::Lockout, "sudo -n true exited Some(1): sudo: account locked")
            },
        )
        .await;
        s.set_rule_status(run, &faillock, RuleStatus::Escalated, Some("the Architect escalated: locking accounts cut the harness's sudo"))
            .await
            .unwrap();

        // Escalated: needs a reboot.
        let grub = full(c, ESC_GRUB);
        f.failed(
            &grub,
            FixSource::Stock,
            "grubby --update-kernel=ALL --args=\"audit=1\"\n",
            "",
            Evaluation {
                revert_method: RevertMethod::ScriptThenSnapshot,
                findings: Findings {
                    fix_exit_code: Some(0),
                    rule_result: Some(ScanResult::Fail),
                    health_ok: Some(true),
                    health_output: Some("HEALTHY".into()),
                    access_ok: Some(true),
                    revert_ms: Some(12_000),
                    apply_ms: Some(1_500),
                    evaluate_ms: Some(22_000),
                    ..Findings::default()
                },
                ..outcome(Verdict::NeedsReboot, "the rule's result after the fix is fail")
            },
        )
        .await;
        s.set_rule_status(run, &grub, RuleStatus::Escalated, Some("the Architect escalated: a kernel argument needs a reboot"))
            .await
            .unwrap();

        // Escalated: refused by the deny-list.
        let keep = full(c, ESC_KEEPALIVE);
        f.failed(&keep, FixSource::Llm, "echo 'ClientAliveCountMax 1' >> /etc/ssh/sshd_config\nsystemctl stop sshd\n", "", Evaluation { revert_method: RevertMethod::None, findings: Findings { diagnostics: Some("refused".into()), ..Findings::default() }, ..outcome(Verdict::Refused, "refused by builtin rule `\\bsystemctl\\s+(--\\S+\\s+)*(stop|disable|mask|kill)\\s+(\\S+\\s+)*(ssh|sshd)\\b` (stops or disables sshd): systemctl stop sshd") }).await;
        let budget = Escalation::new(EscalationCause::AttemptBudget, "attempt budget spent: 1 of 1 attempts failed");
        s.escalate_rule(run, &keep, &budget).await.unwrap();

        // Escalated with nothing to try.
        let nofix = full(c, ESC_NOFIX);
        let why = "no fix to try: the Worker found no safe change for the cron job";
        s.escalate_rule(run, &nofix, &Escalation::new(EscalationCause::NoFix, why)).await.unwrap();

        // Finish: the final scan, then the summary.
        for r in s.rules(run).await.unwrap() {
            let short = temper_scap::short_rule_id(&r.rule_id);
            let after = match QUIET.iter().find(|q| q.0 == short) {
                Some(q) => q.2,
                None if r.status == RuleStatus::Fixed => ScanResult::Pass,
                None => ScanResult::Fail,
            };
            s.set_final_result(run, &r.rule_id, after).await.unwrap();
            if r.status == RuleStatus::Pending {
                s.set_rule_status(run, &r.rule_id, RuleStatus::StillFailing, Some("not attempted in this run")).await.unwrap();
            }
        }
        s.set_scores(run, None, Some(68.5)).await.unwrap();
        let summary = json!({
            "run": run, "exit_code": 2,
            "statuses": {"fixed": 3, "escalated": 5, "skipped": 1, "waived": 1, "deferred": 1, "still_failing": 1, "passing": 6, "error": 1, "notapplicable": 1},
            "before": {"fail": 12, "pass": 6, "error": 1, "notapplicable": 1},
            "after": {"fail": 9, "pass": 9, "error": 1, "notapplicable": 1},
            "score_before": 61.25, "score_after": 68.5, "attempts": 8,
            "reverts": {"script": 1, "snapshot": 2, "script_then_snapshot": 1},
            "prompt_tokens": 30000, "completion_tokens": 2000,
            "wall_secs": 1234.5, "guest_secs": 900.0, "llm_secs": 300.0, "harness_secs": 34.5, "harness_pct": 2.79,
            "failing_after": [],
        });
        let summary: RunSummary = serde_json::from_value(summary).unwrap();
        s.finish_run(run, &summary).await.unwrap();
        f
    }

    /// A Debian 12 ANSSI run (no DISA ids): one fix kept, one rule escalated, passes.
    pub async fn anssi_run() -> Self {
        let c = debian12_anssi();
        let f = Self::open(&new_run(
            "debian12-anssi",
            ANSSI,
            &ssg("ssg-debian12-ds.xml").display().to_string(),
            Some(c.version.clone()),
            "libvirt:temper-debian12",
            "stock",
        ))
        .await;
        let (s, run) = (&f.store, f.run);
        let rules: Vec<&temper_scap::ContentRule> = c.selected_rules.iter().filter(|r| r.stig_ids.is_empty()).take(6).collect();
        assert_eq!(rules.len(), 6, "the ANSSI profile has rules");
        let results = [ScanResult::Fail, ScanResult::Fail, ScanResult::Pass, ScanResult::Pass, ScanResult::NotApplicable, ScanResult::Fail];
        for (r, res) in rules.iter().zip(results) {
            s.add_rule(run, &new_rule(&r.id, &r.title, r.severity.as_str(), res, RuleStatus::of_outcome(res), None)).await.unwrap();
        }
        f.fixed(&rules[0].id, "echo fixed\n", "stock fix").await;
        s.escalate_rule(run, &rules[1].id, &Escalation::new(EscalationCause::NoFix, "no fix to try: nothing safe")).await.unwrap();
        for (r, res) in rules.iter().zip(results) {
            let after = if r.id == rules[0].id { ScanResult::Pass } else { res };
            s.set_final_result(run, &r.id, after).await.unwrap();
        }
        s.set_rule_status(run, &rules[5].id, RuleStatus::StillFailing, Some("not attempted in this run")).await.unwrap();
        s.finish_run(run, &RunSummary { run: Some(run), exit_code: 2, ..Default::default() }).await.unwrap();
        f
    }
}

/// Runs a command; its stdout, or a failed test with stderr.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `tests/report`, with its node_modules installed.
/// Chromium's path (installed by `tests/report/setup.sh`).
pub fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser"] {
        if let Ok(out) = Command::new("which").arg(name).output()
            && out.status.success()
        {
            return PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        }
    }
    panic!("chromium is not installed: run bash tests/report/setup.sh");
}

/// Headless Chromium with a fresh profile and no background network.
pub fn browser(profile: &Path) -> Command {
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

pub fn node_dir() -> PathBuf {
    let dir = repo_root().join("tests/report");
    assert!(
        dir.join("node_modules/@mitre/hdf-converters").is_dir(),
        "tests/report/node_modules is missing: run bash tests/report/setup.sh"
    );
    dir
}

/// Markdown outside code fences: the text a reader's renderer treats as markup.
pub fn prose_only(md: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in md.lines() {
        let ticks: String = line.chars().take_while(|c| *c == '`').collect();
        match &fence {
            Some(f) if line.trim_end() == f => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}
