//! One module per family: the actions a failing test calls for, or a refusal.
mod file;
mod line;
pub(crate) mod package;
mod sysctl;
mod unit;

use temper_scap::oval::TestEvidence;

use crate::Refusal;
use crate::action::Action;

/// The actions that make a failing test pass.
pub fn actions(t: &TestEvidence) -> Result<Vec<Action>, Refusal> {
    match t.kind.as_str() {
        "file_test" => file::actions(t),
        "sysctl_test" => sysctl::runtime(t),
        "textfilecontent54_test" if sysctl::is_static(t) => sysctl::config(t),
        "textfilecontent54_test" => line::actions(t),
        "systemdunitproperty_test" => unit::property(t),
        "systemdunitdependency_test" => unit::dependency(t),
        "dpkginfo_test" => package::actions(t),
        kind => Err(Refusal::UnknownFamily { test: t.id.clone(), kind: kind.to_string() }),
    }
}
