//! temper-derive: a fix derived from a rule's own OVAL check (the state it expects) and the
//! evidence the scanner collected (the items found wrong), for rules the content has no fix for.
//!
//! Pure: from an [`Evidence`] to a [`DerivedFix`] (a fix script and its revert, as text) or a
//! [`Refusal`] that says why not. Never a guess:
//! - only the families below, and only states a fix can meet exactly (a literal, not a regex or
//!   a range);
//! - only the items the evidence names (never a walk of a tree), none in a protected path;
//! - of an OR, the alternative that changes least (a package removal or a unit masked last);
//! - every value reaches the script single-quoted, after a check of its characters.
//!
//! | family | OVAL test | fix | revert, to the record the fix made on the target |
//! |---|---|---|---|
//! | file metadata | `file_test`: `user_id`, `group_id`, mode bits | `chown`/`chmod` each item | each item's owner, group, mode |
//! | sysctl | `sysctl_test` (+ its static configuration tests) | runtime value + `/etc/sysctl.d` drop-in | drop-in removed, runtime value |
//! | systemd unit | `systemdunitproperty_test`, `systemdunitdependency_test` | enable/start, or mask/stop | the unit's state |
//! | key/value line | `textfilecontent54_test` on one file, `key value` or `key = value` | the line set | the file's copy |
//! | package | `dpkginfo_test` installed or removed | `apt-get install` / `purge` | purged, or its version |
mod action;
mod family;
mod refusal;
mod script;
mod solve;
mod value;

use serde::{Deserialize, Serialize};
use temper_scap::oval::Evidence;

pub use action::Family;
pub use refusal::{Class, Refusal};
pub use script::{HEADER, fixed_text, record_file_name, samples};

/// A fix derived from the check: scripts as text, checked and verified like any other fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DerivedFix {
    /// The families of its actions, in order, each once.
    pub families: Vec<Family>,
    pub fix_script: String,
    pub revert_script: String,
    pub description: String,
    /// What it touches: paths, sysctl keys, units, packages.
    pub touched: Vec<String>,
}

/// What the fix the evidence calls for would do that `script` already does, when that is all
/// it would do: "install aide". Only packages are compared; `None` for anything else.
pub fn repeats(evidence: &Evidence, script: &str) -> Option<String> {
    let actions = solve::actions(evidence, 0).ok()?;
    let packages: Vec<&action::PackageFix> =
        actions.iter().map(|a| if let action::Action::Package(p) = a { Some(p) } else { None }).collect::<Option<_>>()?;
    let all = !packages.is_empty() && packages.iter().all(|p| family::package::done_by(script, p));
    let what = |p: &&action::PackageFix| format!("{} {}", if p.install { "install" } else { "remove" }, p.name);
    all.then(|| packages.iter().map(what).collect::<Vec<_>>().join(" and "))
}

/// The fix the check and its evidence call for (the least disruptive, where there are
/// several), or why there is none.
pub fn derive(evidence: &Evidence) -> Result<DerivedFix, Refusal> {
    candidates(evidence)?.into_iter().next().ok_or(Refusal::NothingFailing)
}

/// Every exact fix the check and its evidence call for, least disruptive first (several where
/// an item escapes a state to avoid by any one of its fields: the sticky bit added, before a
/// permission removed, before an owner changed), each once; or why there is none. The agent
/// offers them in order, each verified like any fix, a rejected one reverted before the next.
pub fn candidates(evidence: &Evidence) -> Result<Vec<DerivedFix>, Refusal> {
    let rule = temper_scap::short_rule_id(&evidence.rule);
    let mut out: Vec<DerivedFix> = Vec::new();
    for choice in 0..solve::choices(evidence) {
        let actions = solve::actions(evidence, choice)?;
        if actions.is_empty() {
            return Err(Refusal::NothingFailing);
        }
        let fix = script::render(rule, &actions);
        if !out.iter().any(|f| f.fix_script == fix.fix_script) {
            out.push(fix);
        }
    }
    Ok(out)
}
