//! The checklist model: one entry per DISA STIG id, SSG rules merged, status from the scan.
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use temper_journal::{self as journal, RuleStatus, RunId, ScanResult};
use temper_scap::{Benchmark, ContentRule, Outcome, Severity};

use crate::error::ReportError;
use crate::run::RunData;
use crate::text::{clip, short};
use crate::view::{FixedRule, fixed_rules, next_steps, rule_info, target_comment};

/// A checklist status, as STIG Viewer 2 (CKL) and 3 (CKLB) write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CklStatus {
    NotAFinding,
    Open,
    NotApplicable,
    NotReviewed,
}

impl CklStatus {
    pub fn ckl(self) -> &'static str {
        match self {
            Self::NotAFinding => "NotAFinding",
            Self::Open => "Open",
            Self::NotApplicable => "Not_Applicable",
            Self::NotReviewed => "Not_Reviewed",
        }
    }
    pub fn cklb(self) -> &'static str {
        match self {
            Self::NotAFinding => "not_a_finding",
            Self::Open => "open",
            Self::NotApplicable => "not_applicable",
            Self::NotReviewed => "not_reviewed",
        }
    }
}

/// How bad a result is, for merging: error, then fail, then unknown (and every result that
/// says nothing: notchecked, informational, a rule missing from the scan), then pass, then
/// notapplicable, then notselected.
fn rank(o: Option<Outcome>) -> u8 {
    match o {
        Some(Outcome::Error) => 6,
        Some(Outcome::Fail) => 5,
        Some(Outcome::Unknown | Outcome::NotChecked | Outcome::Informational) | None => 4,
        Some(Outcome::Pass | Outcome::Fixed) => 3,
        Some(Outcome::NotApplicable) => 2,
        Some(Outcome::NotSelected) => 1,
    }
}

/// The worst of several SSG results that share one STIG id: error over fail, fail over
/// unknown, unknown over pass. `None` stands for a result that did not parse (a rule missing
/// from the scan) and counts as unknown. An empty list gives `NotSelected`.
pub fn merge_outcomes(results: &[Option<Outcome>]) -> Option<Outcome> {
    results.iter().copied().max_by_key(|o| rank(*o)).unwrap_or(Some(Outcome::NotSelected))
}

/// The checklist status of an XCCDF result. Error is Open (the check could not show the
/// rule is met, so it is treated as a finding until a human looks); unknown, notchecked,
/// informational and missing are Not_Reviewed.
pub fn status_of(o: Option<Outcome>) -> CklStatus {
    match o {
        Some(Outcome::Pass | Outcome::Fixed) => CklStatus::NotAFinding,
        Some(Outcome::Fail | Outcome::Error) => CklStatus::Open,
        Some(Outcome::NotApplicable | Outcome::NotSelected) => CklStatus::NotApplicable,
        Some(Outcome::Unknown | Outcome::NotChecked | Outcome::Informational) | None => CklStatus::NotReviewed,
    }
}

/// One checklist entry.
#[derive(Debug, Clone)]
pub struct Vuln {
    /// `V-257985`, else the STIG id, else the SSG rule's short id.
    pub group_id: String,
    /// `SV-257985r1045028_rule`, else the SSG rule id.
    pub rule_id: String,
    /// The DISA STIG id (`RHEL-09-255045`), else the SSG rule's short id.
    pub rule_ver: String,
    pub group_title: String,
    pub title: String,
    /// high, medium or low.
    pub severity: &'static str,
    pub discussion: String,
    pub check_content: String,
    pub fix_text: String,
    pub ccis: Vec<String>,
    pub status: CklStatus,
    pub finding_details: String,
    pub comments: String,
}

#[derive(Debug, Clone)]
pub struct Checklist {
    pub run_id: RunId,
    pub target: String,
    /// The run and its tailoring, for the checklist's target comment.
    pub target_comment: String,
    pub benchmark_id: String,
    pub benchmark_title: String,
    pub content_version: String,
    pub profile_id: String,
    pub profile_title: String,
    pub profile_description: String,
    /// False when the profile has no DISA ids and SSG ids stand in.
    pub disa: bool,
    pub created: String,
    pub vulns: Vec<Vuln>,
}

/// Builds the checklist of `data`'s rules that `content` knows.
pub fn checklist(data: &RunData, content: &Benchmark) -> Result<Checklist, ReportError> {
    if data.rules.is_empty() {
        return Err(ReportError::NoRules(data.run.id));
    }
    let known: Vec<(&journal::Rule, &ContentRule)> = data.rules.iter().filter_map(|r| content.rule(&r.rule_id).map(|c| (r, c))).collect();
    let disa = known.iter().any(|(_, c)| !c.stig_ids.is_empty());
    let sv = sv_by_stig(content);
    let mut groups: BTreeMap<String, Vec<(&journal::Rule, &ContentRule)>> = BTreeMap::new();
    for &(r, c) in &known {
        if disa {
            for id in &c.stig_ids {
                groups.entry(id.clone()).or_default().push((r, c));
            }
        } else {
            groups.entry(short(&r.rule_id).to_string()).or_default().push((r, c));
        }
    }
    let fixes = fixed_rules(data, Some(content));
    let final_scan = data.rules.iter().any(|r| r.final_result.is_some());
    let vulns =
        groups.into_iter().map(|(key, members)| vuln(data, &key, &members, disa, final_scan, sv.get(key.as_str()), &fixes)).collect();
    let profile = content.profile.as_ref();
    Ok(Checklist {
        run_id: data.run.id,
        target: data.run.target.clone(),
        target_comment: target_comment(data),
        benchmark_id: content.id.clone(),
        benchmark_title: content.title.clone(),
        content_version: data.run.content_version.clone().unwrap_or_else(|| content.version.clone()),
        profile_id: profile.map(|p| p.id.clone()).unwrap_or_else(|| data.run.profile.clone()),
        profile_title: profile.map(|p| p.title.clone()).unwrap_or_else(|| data.run.profile.clone()),
        profile_description: profile.map(|p| p.description.clone()).unwrap_or_default(),
        disa,
        created: data.run.ended_at.clone().unwrap_or_else(|| data.run.started_at.clone()),
        vulns,
    })
}

/// STIG id -> SV id over the whole profile. The content lists a rule's STIG ids and SV ids
/// apart, so a rule with several of each does not say which goes with which. Rules with one
/// of each settle their pair; a rule with several pairs the ones left over, in order, when as
/// many are left on each side (one left on each side is the common case).
fn sv_by_stig(content: &Benchmark) -> HashMap<&str, &str> {
    let mut map: HashMap<&str, &str> = HashMap::new();
    for r in &content.selected_rules {
        if let ([st], [sv]) = (r.stig_ids.as_slice(), r.sv_ids.as_slice()) {
            map.entry(st.as_str()).or_insert(sv.as_str());
        }
    }
    for r in &content.selected_rules {
        if r.stig_ids.len() < 2 && r.sv_ids.len() < 2 {
            continue;
        }
        let taken: Vec<&str> = map.values().copied().collect();
        let st: Vec<&str> = r.stig_ids.iter().map(String::as_str).filter(|s| !map.contains_key(s)).collect();
        let sv: Vec<&str> = r.sv_ids.iter().map(String::as_str).filter(|s| !taken.contains(s)).collect();
        if st.len() == sv.len() {
            for (a, b) in st.into_iter().zip(sv) {
                map.insert(a, b);
            }
        }
    }
    map
}

fn outcome(s: &str) -> Option<Outcome> {
    s.parse().ok()
}

/// The worst severity of the members, as a checklist writes it.
fn severity(members: &[(&journal::Rule, &ContentRule)]) -> &'static str {
    match members.iter().map(|(_, c)| c.severity).max().unwrap_or_default() {
        Severity::High => "high",
        Severity::Low => "low",
        // SSG's unknown or info, which a checklist cannot carry: CAT II.
        Severity::Medium | Severity::Info | Severity::Unknown => "medium",
    }
}

fn vuln(
    data: &RunData,
    key: &str,
    members: &[(&journal::Rule, &ContentRule)],
    disa: bool,
    final_scan: bool,
    sv: Option<&&str>,
    fixes: &[FixedRule],
) -> Vuln {
    let result_of = |r: &journal::Rule| {
        if final_scan { r.final_result.map_or("missing".into(), |f| f.to_string()) } else { r.initial_result.to_string() }
    };
    let merged = merge_outcomes(&members.iter().map(|(r, _)| outcome(&result_of(r))).collect::<Vec<_>>());
    let (first_row, first) = members[0];
    let v_id = sv.map(|s| v_of(s));
    let mut details = String::new();
    let _ = writeln!(
        details,
        "temper run {} on {}: {}.",
        data.run.id,
        data.run.target,
        if final_scan { "status from the final scan" } else { "status from the first scan (the run has no final scan)" }
    );
    if members.len() > 1 {
        let _ = writeln!(details, "{} SSG rules check this item; the worst result counts (error, fail, unknown, pass).", members.len());
    }
    let mut comments = String::new();
    for (r, c) in members {
        let attempts: Vec<String> =
            data.attempts.iter().filter(|a| a.spec.rule_id == r.rule_id).map(|a| format!("#{} {}", a.n, a.outcome())).collect();
        let _ = write!(
            details,
            "\n{}: first scan {}, final scan {}; temper: {}",
            r.rule_id,
            r.initial_result,
            r.final_result.map_or("none", ScanResult::as_str),
            r.status
        );
        if !attempts.is_empty() {
            let _ = write!(details, " (attempts: {})", attempts.join(", "));
        }
        if let Some(reason) = r.reason.as_deref().filter(|s| !s.is_empty()) {
            let _ = write!(details, "; {reason}");
        }
        details.push('\n');
        if let Some((when, e)) = data.evidence_of(&r.rule_id) {
            let _ = write!(details, "What the scanner found {when}:\n{}", e.brief());
        }
        comment(&mut comments, data, r, c, fixes);
    }
    let info = rule_info(first_row, Some(first));
    let title = if members.len() > 1 { format!("{} (and {} more SSG rules)", info.title, members.len() - 1) } else { info.title.clone() };
    let mut ccis: Vec<String> = Vec::new();
    for (_, c) in members {
        for cci in &c.cci {
            if !ccis.contains(cci) {
                ccis.push(cci.clone());
            }
        }
    }
    Vuln {
        group_id: v_id.clone().unwrap_or_else(|| key.to_string()),
        rule_id: sv.map(|s| s.to_string()).unwrap_or_else(|| if disa { key.to_string() } else { first_row.rule_id.clone() }),
        rule_ver: key.to_string(),
        group_title: first.srg_ids.first().cloned().unwrap_or_else(|| v_id.unwrap_or_else(|| key.to_string())),
        title,
        severity: severity(members),
        discussion: if info.rationale.is_empty() { info.description.clone() } else { info.rationale.clone() },
        check_content: check_content(members, &data.run.profile),
        fix_text: fix_text(members),
        ccis,
        status: status_of(merged),
        finding_details: details,
        comments: comments.trim_end().to_string(),
    }
}

/// `SV-257985r1045028_rule` -> `V-257985`.
fn v_of(sv: &str) -> String {
    let digits: String = sv.trim_start_matches("SV-").chars().take_while(char::is_ascii_digit).collect();
    format!("V-{digits}")
}

fn check_content(members: &[(&journal::Rule, &ContentRule)], profile: &str) -> String {
    let mut s = String::new();
    for (r, c) in members {
        let _ = writeln!(s, "{} ({}):", c.title, r.rule_id);
        if let Some(o) = &c.oval {
            let _ = writeln!(
                s,
                "Automated check: OVAL definition {} in {}, run by `oscap xccdf eval --profile {profile} --rule {}`.",
                o.name, o.href, r.rule_id
            );
        }
        let _ = writeln!(s, "{}\n", c.description.trim());
    }
    s.trim_end().to_string()
}

fn fix_text(members: &[(&journal::Rule, &ContentRule)]) -> String {
    let mut s = String::new();
    for (r, c) in members {
        match &c.fix {
            Some(f) => {
                let _ =
                    writeln!(s, "{} ({}): the content's stock shell fix:\n{}\n", c.title, r.rule_id, clip(f.script.trim_end(), 16 * 1024));
            }
            None => {
                let _ = writeln!(s, "{} ({}): the content has no stock shell fix; see the check.\n", c.title, r.rule_id);
            }
        }
    }
    s.trim_end().to_string()
}

/// COMMENTS: the fix temper applied, or the escalation summary, or the disposition.
fn comment(out: &mut String, data: &RunData, r: &journal::Rule, c: &ContentRule, fixes: &[FixedRule]) {
    let name = &r.rule_id;
    match r.status {
        RuleStatus::Fixed => {
            let Some(f) = fixes.iter().find(|f| &f.info.rule_id == name) else {
                let _ = writeln!(out, "{name}: passes after temper run {}: {}\n", data.run.id, r.reason.as_deref().unwrap_or(""));
                return;
            };
            let _ = writeln!(
                out,
                "{name}: fixed by temper run {} (attempt {}, {} fix): {}\n{}\n",
                data.run.id,
                f.attempt,
                f.source,
                f.description,
                clip(f.fix_script.trim_end(), 16 * 1024)
            );
        }
        RuleStatus::Escalated => {
            let info = rule_info(r, Some(c));
            let attempts: Vec<&journal::Attempt> = data.attempts.iter().filter(|a| &a.spec.rule_id == name).collect();
            let steps = next_steps(&info, r, &attempts, data);
            let _ = writeln!(
                out,
                "{name}: escalated to a human after {} attempts: {}",
                r.attempts,
                r.reason.as_deref().unwrap_or("no reason recorded")
            );
            if let Some(s) = steps.first() {
                let _ = writeln!(out, "Next: {} {}", s.check, s.try_);
            }
            out.push('\n');
        }
        RuleStatus::Skipped | RuleStatus::Waived | RuleStatus::Deferred | RuleStatus::StillFailing => {
            let _ = writeln!(
                out,
                "{name}: {} by temper: {}\n",
                r.status.as_str().replace('_', " "),
                r.reason.as_deref().unwrap_or("no reason recorded")
            );
        }
        RuleStatus::OutOfScope => {
            // The finding stands as scanned: the run was not asked to work on it.
            let _ = writeln!(
                out,
                "{name}: out of the scope of temper run {}, not worked on: {}\n",
                data.run.id,
                r.reason.as_deref().unwrap_or("no reason recorded")
            );
        }
        RuleStatus::Pending
        | RuleStatus::Passing
        | RuleStatus::Unstable
        | RuleStatus::NotApplicable
        | RuleStatus::NotChecked
        | RuleStatus::NotSelected
        | RuleStatus::Error
        | RuleStatus::Unknown
        | RuleStatus::Informational => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Outcome::*;

    #[test]
    fn precedence() {
        assert_eq!(merge_outcomes(&[Some(Pass), Some(Fail)]), Some(Fail));
        assert_eq!(merge_outcomes(&[Some(Fail), Some(Pass)]), Some(Fail));
        assert_eq!(merge_outcomes(&[Some(Fail), Some(Error), Some(Pass)]), Some(Error));
        assert_eq!(merge_outcomes(&[Some(Unknown), Some(Fail)]), Some(Fail));
        assert_eq!(merge_outcomes(&[Some(Pass), Some(Unknown)]), Some(Unknown));
        assert_eq!(merge_outcomes(&[Some(Pass), None]), None);
        assert_eq!(merge_outcomes(&[Some(NotApplicable), Some(Pass)]), Some(Pass));
        assert_eq!(merge_outcomes(&[Some(NotApplicable), Some(NotApplicable)]), Some(NotApplicable));
        assert_eq!(merge_outcomes(&[Some(Pass), Some(Pass)]), Some(Pass));
        assert_eq!(merge_outcomes(&[]), Some(NotSelected));
    }

    #[test]
    fn a_pass_never_hides_a_failure() {
        for bad in [Fail, Error] {
            for others in [[Pass, Pass], [Pass, NotApplicable], [Unknown, Pass], [Fixed, NotChecked]] {
                let mut all: Vec<Option<Outcome>> = others.iter().map(|o| Some(*o)).collect();
                all.insert(1, Some(bad));
                assert_eq!(status_of(merge_outcomes(&all)), CklStatus::Open, "{all:?}");
            }
        }
    }

    #[test]
    fn status_mapping() {
        assert_eq!(status_of(Some(Pass)), CklStatus::NotAFinding);
        assert_eq!(status_of(Some(Fixed)), CklStatus::NotAFinding);
        assert_eq!(status_of(Some(Fail)), CklStatus::Open);
        assert_eq!(status_of(Some(Error)), CklStatus::Open);
        assert_eq!(status_of(Some(NotApplicable)), CklStatus::NotApplicable);
        assert_eq!(status_of(Some(Unknown)), CklStatus::NotReviewed);
        assert_eq!(status_of(Some(NotChecked)), CklStatus::NotReviewed);
        assert_eq!(status_of(None), CklStatus::NotReviewed);
        assert_eq!(CklStatus::NotApplicable.ckl(), "Not_Applicable");
        assert_eq!(CklStatus::NotAFinding.cklb(), "not_a_finding");
    }

    #[test]
    fn v_ids() {
        assert_eq!(v_of("SV-257985r1045028_rule"), "V-257985");
    }
}
