//! A skill is data: `skills/<name>/skill.toml` plus prompts. No skill needs code in the loop.
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use regex::Regex;
use serde::Deserialize;

use temper_journal::waiver::Waiver;

#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    #[error("skill {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("skill {path}: {source}")]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("skill {path}: pattern `{pattern}` does not compile: {source}")]
    Pattern { path: PathBuf, pattern: String, source: regex::Error },
    #[error(
        "skill {path}: `{rule}` is a `disposition = \"waived\"` skip; a waiver needs an approver and an expiry: move it to waivers.toml"
    )]
    WaivedSkip { path: PathBuf, rule: String },
    #[error(transparent)]
    Waivers(#[from] temper_journal::waiver::WaiverError),
    #[error("skill {path}: held rule `{rule}`: {problem}")]
    Held { path: PathBuf, rule: String, problem: String },
    #[error("skill {path}: last rule `{rule}`: {problem}")]
    Last { path: PathBuf, rule: String, problem: String },
}

/// What the harness does with a rule the skill names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Disposition {
    /// Must not be automated.
    Skipped,
    /// Accepted risk, documented.
    Waived,
    /// Left for later (e.g. needs a maintenance window).
    Deferred,
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        self.status().as_str()
    }
    /// The rule's status in a run.
    pub fn status(self) -> temper_journal::RuleStatus {
        use temper_journal::RuleStatus;
        match self {
            Self::Skipped => RuleStatus::Skipped,
            Self::Waived => RuleStatus::Waived,
            Self::Deferred => RuleStatus::Deferred,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct SkipEntry {
    /// Regex, full match against the short rule id (`sshd_disable_root_login`).
    pub rule: String,
    pub reason: String,
    #[serde(default = "skipped")]
    pub disposition: Disposition,
}

fn skipped() -> Disposition {
    Disposition::Skipped
}

/// An ordering constraint: `rule` goes `last` (after every other candidate) or `after` another.
#[derive(Debug, Clone, Deserialize)]
pub struct OrderEntry {
    pub rule: String,
    #[serde(default)]
    pub last: bool,
    /// Regex: the rule waits until no candidate matching this remains.
    pub after: Option<String>,
    pub reason: String,
}

/// A rule whose fix the kernel holds until the next boot: its revert script cannot undo it on a
/// running system (`kernel.modules_disabled`, immutable audit rules).
#[derive(Debug, Clone, Deserialize)]
pub struct OneWayEntry {
    /// Regex, full match against the short rule id.
    pub rule: String,
    pub reason: String,
}

/// How the handover (`temper image export`) settles a rule held back for the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeldApply {
    /// The datastream's own fix, resolved for the run's profile.
    Stock,
    /// The entry's `script`.
    Script,
    /// The harness's own sudo rule is what fails it: the harness removing itself is its fix.
    Removal,
    /// It stays waived, with the entry's reason (its fix would lock the image's admins out).
    Waived,
}

impl HeldApply {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stock => "stock",
            Self::Script => "script",
            Self::Removal => "removal",
            Self::Waived => "waived",
        }
    }
}

/// A rule waived or escalated only because the harness needs it (`[[held]]`): applied at the
/// handover, just before the harness removes itself.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldEntry {
    /// Regex, full match against the short rule id.
    pub rule: String,
    pub apply: HeldApply,
    /// Why the harness holds it back.
    pub reason: String,
    /// For `apply = "script"`: bash, run as root in the handover.
    #[serde(default)]
    pub script: Option<String>,
    /// XCCDF values (short ids, `var_sudo_dedicated_group`) the script reads as shell variables
    /// of that name, resolved for the run's profile.
    #[serde(default)]
    pub values: Vec<String>,
}

/// A rule whose fix records the image itself, as an integrity database does (`[[last]]`): the
/// handover runs its script last, once the image is as it leaves (the harness gone, made ready
/// to be cloned). A database built earlier would list what the handover then takes away.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LastEntry {
    /// Regex, full match against the short rule id.
    pub rule: String,
    /// Why it goes last.
    pub reason: String,
    /// POSIX sh, run as root on the image, with no network; none: the rule's stock fix, from the
    /// host's content for the run's profile.
    #[serde(default)]
    pub script: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DenyEntry {
    pub pattern: String,
    pub reason: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub description: String,
    /// File name of the datastream in the SSG content directory (host and guest).
    pub datastream: String,
    pub profile: String,
    /// Other profiles the skill is tested with (e.g. a quick one).
    #[serde(default)]
    pub profiles: Vec<String>,
    /// Regexes on short rule ids, lowest risk first; unmatched rules come after all of them.
    #[serde(default)]
    pub risk_order: Vec<String>,
    #[serde(default, rename = "order")]
    pub ordering: Vec<OrderEntry>,
    #[serde(default)]
    pub skip: Vec<SkipEntry>,
    #[serde(default)]
    pub deny: Vec<DenyEntry>,
    #[serde(default)]
    pub one_way: Vec<OneWayEntry>,
    /// Rules held back for the harness, settled at the handover.
    #[serde(default)]
    pub held: Vec<HeldEntry>,
    /// Rules whose fix runs last in the handover, on the image as it leaves.
    #[serde(default)]
    pub last: Vec<LastEntry>,
    /// The image's admins: this group's members keep sudo after the handover (`sudo` on
    /// Debian, `wheel` on RHEL).
    #[serde(default = "sudo_group")]
    pub admin_group: String,
}

fn sudo_group() -> String {
    "sudo".into()
}

/// A loaded skill with its patterns compiled.
#[derive(Debug, Clone)]
pub struct Skill {
    pub dir: PathBuf,
    pub manifest: Manifest,
    risk: Vec<Regex>,
    skips: Vec<(Regex, SkipEntry)>,
    order: Vec<(Regex, Option<Regex>, OrderEntry)>,
    one_way: Vec<(Regex, OneWayEntry)>,
    held: Vec<(Regex, HeldEntry)>,
    last: Vec<(Regex, LastEntry)>,
    /// The run's waivers and the day they are judged on.
    waivers: Vec<Waiver>,
    today: NaiveDate,
}

/// A pattern that must match a whole short rule id.
pub(crate) use temper_journal::waiver::full_match;

/// A `[[held]]` entry has a script exactly when it applies one, and names values plainly.
fn held_entry(path: &Path, h: &HeldEntry) -> Result<HeldEntry, SkillError> {
    let bad = |problem: &str| Err(SkillError::Held { path: path.to_path_buf(), rule: h.rule.clone(), problem: problem.into() });
    let script = h.script.as_deref().is_some_and(|s| !s.trim().is_empty());
    match (h.apply, script) {
        (HeldApply::Script, false) => return bad("`apply = \"script\"` needs a `script`"),
        (a, true) if a != HeldApply::Script => return bad("only `apply = \"script\"` takes a `script`"),
        _ => {}
    }
    if let Some(v) = h.values.iter().find(|v| !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || v.is_empty()) {
        return bad(&format!("value `{v}` is not a plain XCCDF value id"));
    }
    if h.reason.trim().is_empty() {
        return bad("`reason` must not be empty");
    }
    Ok(h.clone())
}

/// A `[[last]]` entry says why, and its script, if it has one, is not empty.
fn last_entry(path: &Path, l: &LastEntry) -> Result<LastEntry, SkillError> {
    let bad = |problem: &str| Err(SkillError::Last { path: path.to_path_buf(), rule: l.rule.clone(), problem: problem.into() });
    if l.script.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return bad("an empty `script`: leave it out for the stock fix");
    }
    if l.reason.trim().is_empty() {
        return bad("`reason` must not be empty");
    }
    Ok(l.clone())
}

fn full(path: &Path, p: &str) -> Result<Regex, SkillError> {
    full_match(p).map_err(|source| SkillError::Pattern { path: path.to_path_buf(), pattern: p.to_string(), source })
}

impl Skill {
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, SkillError> {
        let dir = dir.as_ref().to_path_buf();
        let path = dir.join("skill.toml");
        let text = std::fs::read_to_string(&path).map_err(|source| SkillError::Read { path: path.clone(), source })?;
        let manifest: Manifest = toml::from_str(&text).map_err(|source| SkillError::Parse { path: path.clone(), source })?;
        let risk = manifest.risk_order.iter().map(|p| full(&path, p)).collect::<Result<_, _>>()?;
        let skips = manifest.skip.iter().map(|s| Ok((full(&path, &s.rule)?, s.clone()))).collect::<Result<_, SkillError>>()?;
        let order = manifest
            .ordering
            .iter()
            .map(|o| {
                let after = o.after.as_deref().map(|a| full(&path, a)).transpose()?;
                Ok((full(&path, &o.rule)?, after, o.clone()))
            })
            .collect::<Result<_, SkillError>>()?;
        let one_way = manifest.one_way.iter().map(|o| Ok((full(&path, &o.rule)?, o.clone()))).collect::<Result<_, SkillError>>()?;
        let held = manifest.held.iter().map(|h| Ok((full(&path, &h.rule)?, held_entry(&path, h)?))).collect::<Result<_, SkillError>>()?;
        let last = manifest.last.iter().map(|l| Ok((full(&path, &l.rule)?, last_entry(&path, l)?))).collect::<Result<_, SkillError>>()?;
        if !temper_journal::footprint::account_name(&manifest.admin_group) {
            return Err(SkillError::Held {
                path,
                rule: "admin_group".into(),
                problem: format!("`{}` is not a group name", manifest.admin_group),
            });
        }
        if let Some(w) = manifest.skip.iter().find(|s| s.disposition == Disposition::Waived) {
            return Err(SkillError::WaivedSkip { path, rule: w.rule.clone() });
        }
        for d in &manifest.deny {
            Regex::new(&d.pattern).map_err(|source| SkillError::Pattern { path: path.clone(), pattern: d.pattern.clone(), source })?;
        }
        // The skill's own waivers (`waivers.toml` beside `skill.toml`), judged today.
        let own = dir.join("waivers.toml");
        let waivers = if own.exists() { temper_journal::waiver::load(&own)? } else { Vec::new() };
        Ok(Self { dir, manifest, risk, skips, order, one_way, held, last, waivers, today: chrono::Local::now().date_naive() })
    }

    /// Replaces the waivers (the skill's own and a site's, or those stored with a run) and
    /// judges them on `today`: an active one waives its rules, ahead of the skill's skips.
    pub fn with_waivers(mut self, waivers: Vec<Waiver>, today: NaiveDate) -> Self {
        self.waivers = waivers;
        self.today = today;
        self
    }

    pub fn waivers(&self) -> &[Waiver] {
        &self.waivers
    }

    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    pub fn prompts_dir(&self) -> PathBuf {
        self.dir.join("prompts")
    }

    /// The active waiver, skip or deferral for a rule, if there is one.
    pub fn disposition(&self, short_id: &str) -> Option<SkipEntry> {
        if let Some(w) = temper_journal::waiver::active(&self.waivers, short_id, self.today) {
            return Some(SkipEntry { rule: w.rule.clone(), reason: w.justification(), disposition: Disposition::Waived });
        }
        self.skips.iter().find(|(re, _)| re.is_match(short_id)).map(|(_, s)| s.clone())
    }

    /// Why a rule's fix cannot be undone on a running system, when the skill says it cannot.
    pub fn one_way(&self, short_id: &str) -> Option<&str> {
        self.one_way.iter().find(|(re, _)| re.is_match(short_id)).map(|(_, o)| o.reason.as_str())
    }

    /// The `[[held]]` entry for a rule the harness holds back, and its index (one entry's
    /// script runs once for all its rules).
    pub fn held(&self, short_id: &str) -> Option<(usize, &HeldEntry)> {
        self.held.iter().enumerate().find(|(_, (re, _))| re.is_match(short_id)).map(|(i, (_, h))| (i, h))
    }

    /// The `[[last]]` entry for a rule whose fix runs last in the handover, and its index (one
    /// entry's rules share one run of its script).
    pub fn last(&self, short_id: &str) -> Option<(usize, &LastEntry)> {
        self.last.iter().enumerate().find(|(_, (re, _))| re.is_match(short_id)).map(|(i, (_, l))| (i, l))
    }

    /// Position in the risk order (lower is safer); unmatched rules share the last rank.
    pub fn risk_rank(&self, short_id: &str) -> usize {
        self.risk.iter().position(|re| re.is_match(short_id)).unwrap_or(self.risk.len())
    }

    /// Why a rule must wait, given the other open candidates, or None when it may go now.
    pub fn held_back<'a>(&'a self, short_id: &str, others: &[&str]) -> Option<&'a OrderEntry> {
        self.order.iter().find_map(|(re, after, entry)| {
            if !re.is_match(short_id) {
                return None;
            }
            let waits =
                others.iter().any(|o| *o != short_id && (entry.last && !re.is_match(o) || after.as_ref().is_some_and(|a| a.is_match(o))));
            waits.then_some(entry)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(toml: &str) -> Skill {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("skill.toml"), toml).unwrap();
        Skill::load(dir.path()).unwrap()
    }

    const BASE: &str = r#"
name = "t"
description = "d"
datastream = "ds.xml"
profile = "p"
risk_order = ["package_.*_installed", "sshd_.*"]
[[order]]
rule = "audit_rules_immutable"
last = true
reason = "immutable audit rules block later audit changes"
[[order]]
rule = "grub2_audit_argument"
after = "package_audit_installed"
reason = "needs audit"
[[skip]]
rule = "partition_for_.*"
reason = "partitioning"
[[skip]]
rule = "ensure_logrotate_activated"
reason = "later"
disposition = "deferred"
[[one_way]]
rule = "audit_rules_immutable|sysctl_kernel_modules_disabled"
reason = "held until the next boot"
"#;

    #[test]
    fn skips_match_whole_ids_only() {
        let s = skill(BASE);
        assert_eq!(s.disposition("partition_for_tmp").unwrap().disposition, Disposition::Skipped);
        assert_eq!(s.disposition("ensure_logrotate_activated").unwrap().disposition, Disposition::Deferred);
        assert!(s.disposition("xpartition_for_tmp").is_none());
    }

    #[test]
    fn one_way_rules_match_whole_ids_only() {
        let s = skill(BASE);
        assert_eq!(s.one_way("sysctl_kernel_modules_disabled"), Some("held until the next boot"));
        assert_eq!(s.one_way("audit_rules_immutable"), Some("held until the next boot"));
        assert_eq!(s.one_way("sysctl_kernel_modules_disabled_x"), None);
        assert_eq!(s.one_way("sysctl_kernel_kptr_restrict"), None);
    }

    #[test]
    fn risk_rank_orders_and_unmatched_go_last() {
        let s = skill(BASE);
        assert_eq!(s.risk_rank("package_aide_installed"), 0);
        assert_eq!(s.risk_rank("sshd_set_idle_timeout"), 1);
        assert_eq!(s.risk_rank("accounts_tmout"), 2);
    }

    #[test]
    fn last_rule_waits_until_alone_and_after_waits_for_its_prerequisite() {
        let s = skill(BASE);
        assert!(s.held_back("audit_rules_immutable", &["audit_rules_immutable", "sshd_x"]).is_some());
        assert!(s.held_back("audit_rules_immutable", &["audit_rules_immutable"]).is_none());
        assert!(s.held_back("grub2_audit_argument", &["package_audit_installed"]).is_some());
        assert!(s.held_back("grub2_audit_argument", &["sshd_x"]).is_none());
        assert!(s.held_back("sshd_x", &["audit_rules_immutable"]).is_none());
    }

    #[test]
    fn waivers_apply_while_active_and_a_waived_skip_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("skill.toml"), BASE).unwrap();
        std::fs::write(
            dir.path().join("waivers.toml"),
            "[[waiver]]\nrule = \"accounts_tmout\"\nreason = \"kiosk\"\napproved_by = \"ISSO\"\nexpires = 2031-01-01\n",
        )
        .unwrap();
        let s = Skill::load(dir.path()).unwrap();
        assert_eq!(s.disposition("accounts_tmout").unwrap().disposition, Disposition::Waived);
        let day = |d| NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap();
        let own = s.waivers().to_vec();
        let s = s.with_waivers(own, day("2031-01-02"));
        assert!(s.disposition("accounts_tmout").is_none(), "expired: worked on again");
        std::fs::write(dir.path().join("skill.toml"), format!("{BASE}[[skip]]\nrule = \"x\"\nreason = \"r\"\ndisposition = \"waived\"\n"))
            .unwrap();
        assert!(matches!(Skill::load(dir.path()), Err(SkillError::WaivedSkip { .. })));
    }

    #[test]
    fn bad_pattern_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("skill.toml"), BASE.replace("sshd_.*", "sshd_(")).unwrap();
        let err = Skill::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("sshd_("), "{err}");
    }

    #[test]
    fn held_rules_match_whole_ids_and_a_script_goes_with_apply_script_only() {
        let held = "[[held]]\nrule = \"sudo_add_requiretty|sudo_add_noexec\"\napply = \"stock\"\nreason = \"sudo over SSH\"\n\
                    [[held]]\nrule = \"file_permissions_sudo\"\napply = \"script\"\nreason = \"admins\"\nvalues = [\"var_g\"]\nscript = \"chmod 4110 /usr/bin/sudo\"\n";
        let s = skill(&format!("admin_group = \"wheel\"\n{BASE}{held}"));
        let (i, h) = s.held("sudo_add_noexec").unwrap();
        assert_eq!((i, h.apply), (0, HeldApply::Stock));
        assert_eq!(s.held("file_permissions_sudo").map(|(i, h)| (i, h.values.clone())), Some((1, vec!["var_g".to_string()])));
        assert!(s.held("sudo_add_noexec_x").is_none());
        assert_eq!(s.manifest.admin_group, "wheel");
        assert_eq!(skill(BASE).manifest.admin_group, "sudo", "Debian's admins' group by default");
        let dir = tempfile::tempdir().unwrap();
        for (bad, says) in [
            ("[[held]]\nrule = \"a\"\napply = \"script\"\nreason = \"r\"\n", "needs a `script`"),
            ("[[held]]\nrule = \"a\"\napply = \"stock\"\nreason = \"r\"\nscript = \"x\"\n", "only `apply"),
            ("[[held]]\nrule = \"a\"\napply = \"script\"\nreason = \"r\"\nscript = \"x\"\nvalues = [\"a;b\"]\n", "not a plain"),
            ("[[held]]\nrule = \"a\"\napply = \"removal\"\nreason = \" \"\n", "`reason`"),
            ("admin_group = \"Root Group\"\n", "not a group name"),
        ] {
            let toml = if bad.starts_with("admin_group") { format!("{bad}{BASE}") } else { format!("{BASE}{bad}") };
            std::fs::write(dir.path().join("skill.toml"), toml).unwrap();
            let err = Skill::load(dir.path()).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn last_rules_match_whole_ids_say_why_and_run_a_script_or_the_stock_fix() {
        let last = "[[last]]\nrule = \"aide_build_database\"\nreason = \"it records the image\"\n\
                    [[last]]\nrule = \"x\"\nreason = \"r\"\nscript = \"aideinit -y -f\"\n";
        let s = skill(&format!("{BASE}{last}"));
        let (i, l) = s.last("aide_build_database").unwrap();
        assert_eq!((i, l.script.as_deref()), (0, None), "the stock fix");
        assert_eq!(s.last("x").map(|(i, l)| (i, l.script.as_deref())), Some((1, Some("aideinit -y -f"))));
        assert!(s.last("aide_build_database_x").is_none());
        assert!(s.held("aide_build_database").is_none());
        let dir = tempfile::tempdir().unwrap();
        for (bad, says) in [
            ("[[last]]\nrule = \"a\"\nreason = \"r\"\nscript = \" \"\n", "an empty `script`"),
            ("[[last]]\nrule = \"a\"\nreason = \"\"\nscript = \"x\"\n", "`reason`"),
            ("[[last]]\nrule = \"a\"\nreason = \"r\"\nscript = \"x\"\napply = \"stock\"\n", "apply"),
        ] {
            std::fs::write(dir.path().join("skill.toml"), format!("{BASE}{bad}")).unwrap();
            let err = Skill::load(dir.path()).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
