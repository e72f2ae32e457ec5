//! What a derived fix does, one action per thing it touches, with what the evidence recorded
//! about that thing before (for the revert).
use serde::{Deserialize, Serialize};

/// The kinds of check a fix can be derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    FileMetadata,
    Sysctl,
    Unit,
    KeyValue,
    Package,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FileMetadata => "file metadata",
            Self::Sysctl => "sysctl",
            Self::Unit => "systemd unit",
            Self::KeyValue => "key/value line",
            Self::Package => "package",
        }
    }
}

/// An item's owner, group and mode (the 12 permission bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFix {
    pub path: String,
    pub was: Meta,
    pub want: Meta,
    /// Why this value where the check asks for a range ("group 0: meets `less than 1000`").
    pub chosen: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysctlFix {
    pub key: String,
    pub value: String,
    /// The runtime value the scanner read, when it read one.
    pub was: Option<String>,
    /// Configuration files that set the key to another value: its lines there are commented out.
    pub overrides: Vec<String>,
}

/// What a unit must become. Each flag is a change; `was_active` is its `ActiveState` before.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitFix {
    pub unit: String,
    pub enable: bool,
    pub start: bool,
    pub mask: bool,
    pub stop: bool,
    pub was_active: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineFix {
    pub path: String,
    pub key: String,
    /// `key value` or `key = value`.
    pub equals: bool,
    pub value: String,
    /// The key is matched in any case (`(?i)` in the check's pattern).
    pub any_case: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFix {
    pub name: String,
    pub install: bool,
    /// The version found installed (`apt-get install NAME=VERSION` brings it back).
    pub was_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    File(FileFix),
    Sysctl(SysctlFix),
    Unit(UnitFix),
    Line(LineFix),
    Package(PackageFix),
}

impl Action {
    pub fn family(&self) -> Family {
        match self {
            Self::File(_) => Family::FileMetadata,
            Self::Sysctl(_) => Family::Sysctl,
            Self::Unit(_) => Family::Unit,
            Self::Line(_) => Family::KeyValue,
            Self::Package(_) => Family::Package,
        }
    }

    /// How much it changes, to choose between the alternatives of an OR: a setting first, a
    /// service started or a package installed next, a service stopped or a package removed last.
    pub fn cost(&self) -> u32 {
        match self {
            Self::File(_) | Self::Line(_) | Self::Sysctl(_) => 1,
            Self::Unit(u) if u.mask || u.stop => 4,
            Self::Unit(_) => 2,
            Self::Package(p) if p.install => 3,
            Self::Package(_) => 5,
        }
    }

    /// Whether two actions act on the same thing (a file's key is one thing, another key another).
    fn same(&self, other: &Action) -> bool {
        match (self, other) {
            (Self::Line(a), Self::Line(b)) => a.path == b.path && a.key == b.key,
            _ => self.family() == other.family() && self.target() == other.target(),
        }
    }

    /// What it touches, for the report.
    pub fn target(&self) -> &str {
        match self {
            Self::File(f) => &f.path,
            Self::Sysctl(s) => &s.key,
            Self::Unit(u) => &u.unit,
            Self::Line(l) => &l.path,
            Self::Package(p) => &p.name,
        }
    }
}

/// Actions on the same thing become one (a unit to enable and to start; a sysctl from its
/// runtime and its static test); two that disagree are a refusal.
pub fn merge(actions: Vec<Action>) -> Result<Vec<Action>, crate::Refusal> {
    let mut out: Vec<Action> = Vec::new();
    for a in actions {
        let Some(prev) = out.iter_mut().find(|p| p.same(&a)) else {
            out.push(a);
            continue;
        };
        let conflict = |why: String| crate::Refusal::Unsupported { test: a.target().to_string(), why };
        match (prev, &a) {
            (Action::Unit(p), Action::Unit(u)) => {
                p.enable |= u.enable;
                p.start |= u.start;
                p.mask |= u.mask;
                p.stop |= u.stop;
                p.was_active = p.was_active.take().or_else(|| u.was_active.clone());
                if (p.enable || p.start) && (p.mask || p.stop) {
                    return Err(conflict("the check wants the unit both running and stopped".into()));
                }
            }
            (Action::Sysctl(p), Action::Sysctl(s)) => {
                if p.value != s.value {
                    return Err(conflict(format!("two values asked: {} and {}", p.value, s.value)));
                }
                p.was = p.was.take().or_else(|| s.was.clone());
                for o in &s.overrides {
                    if !p.overrides.contains(o) {
                        p.overrides.push(o.clone());
                    }
                }
            }
            (Action::File(p), Action::File(f)) => {
                // Two tests on one file (owner, then mode): the second starts from the first's.
                p.want.uid = if f.want.uid != f.was.uid { f.want.uid } else { p.want.uid };
                p.want.gid = if f.want.gid != f.was.gid { f.want.gid } else { p.want.gid };
                p.want.mode = (p.want.mode & !(f.was.mode ^ f.want.mode)) | (f.want.mode & (f.was.mode ^ f.want.mode));
                p.chosen = p.chosen.take().or_else(|| f.chosen.clone());
            }
            (Action::Line(p), Action::Line(l)) if p.value.is_empty() || l.value.is_empty() || p.value == l.value => {
                if p.value.is_empty() {
                    p.value = l.value.clone();
                }
            }
            (p, a) if *p == *a => {}
            (_, a) => return Err(conflict(format!("two different {} changes", a.family().as_str()))),
        }
    }
    Ok(out)
}
