//! One module per family: the actions a failing test calls for, or a refusal.
mod file;
mod line;
pub(crate) mod package;
mod sysctl;
mod unit;

use temper_scap::oval::TestEvidence;

use crate::Refusal;
use crate::action::Action;

/// How many exact fixes a failing test has (see `file::choices`); one for most.
pub fn choices(t: &TestEvidence) -> usize {
    if t.kind == "file_test" { file::choices(t) } else { 1 }
}

/// The actions of fix `choice` of a failing test (0: the least disruptive). None from a test with
/// an item the host refused (`TestEvidence::refused`): its evidence is the guest's word alone.
pub fn actions(t: &TestEvidence, choice: usize) -> Result<Vec<Action>, Refusal> {
    if let Some(r) = t.refused.first() {
        return Err(Refusal::ForeignItem { test: t.id.clone(), item: r.item.clone(), why: r.why.clone() });
    }
    match t.kind.as_str() {
        "file_test" => file::actions(t, choice),
        "sysctl_test" => sysctl::runtime(t),
        "textfilecontent54_test" if sysctl::is_static(t) => sysctl::config(t),
        "textfilecontent54_test" => line::actions(t),
        "systemdunitproperty_test" => unit::property(t),
        "systemdunitdependency_test" => unit::dependency(t),
        "dpkginfo_test" => package::actions(t),
        kind => Err(Refusal::UnknownFamily { test: t.id.clone(), kind: kind.to_string() }),
    }
}
