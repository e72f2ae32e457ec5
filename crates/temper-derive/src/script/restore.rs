//! Each family's revert: the item back to its record on this machine, the record then removed;
//! with no record, nothing changed, and a line that says so (and what the scan had seen on the
//! machine the fix was made for, where it saw anything).
use std::fmt::Write;

use super::q;
use crate::action::{PackageFix, UnitFix};

/// `if [ -f REC ]; then BODY rm -f -- REC; else echo NONE; fi`.
fn from_record(rec: &str, body: &str, none: &str) -> String {
    format!("if [ -f {rec} ]; then\n{body}  rm -f -- {rec}\nelse\n  echo {}\nfi\n", q(&format!("temper: {none}: left as it is")))
}

pub fn file(p: &str, rec: &str) -> String {
    let mut body = format!("  temper_path {p}\n  read -r u g m < {rec}\n");
    body += "  case \"$u:$g:$m\" in *[!0-9:]*|:*|*::*|*:) temper_stop \"the record of the item is not 'uid gid mode'\" ;; esac\n";
    writeln!(body, "  chown -h \"$u:$g\" -- {p}\n  chmod \"$m\" -- {p}").unwrap();
    from_record(rec, &body, &format!("no record of {}'s owner, group and mode on this machine", unquote(p)))
}

pub fn sysctl(dropin: &str, key: &str, was: Option<&str>, rec: &str) -> String {
    let body = format!("  sysctl -w {key}\"=$(cat {rec})\"\n");
    let seen = was.map(|v| format!(" (the scan of the machine the fix was made for read {v})")).unwrap_or_default();
    let none = format!("no record of {}'s runtime value on this machine{seen}", unquote(key));
    format!("rm -f -- {dropin}\n{}", from_record(rec, &body, &none))
}

pub fn unit(x: &UnitFix, u: &str, rec: &str) -> String {
    let mut body = format!("  read -r enabled active < {rec} || true\n");
    // In reverse of the fix's order: start, enable, stop, mask.
    if x.start {
        writeln!(body, "  if [ \"$active\" != active ]; then systemctl stop {u}; fi").unwrap();
    }
    if x.enable {
        writeln!(
            body,
            "  case \"$enabled\" in enabled|enabled-runtime|static|alias|indirect|generated) ;; *) systemctl disable {u} ;; esac"
        )
        .unwrap();
    }
    if x.stop {
        writeln!(body, "  if [ \"$active\" = active ]; then systemctl start {u}; fi").unwrap();
    }
    if x.mask {
        writeln!(body, "  case \"$enabled\" in masked|masked-runtime) ;; *) systemctl unmask {u} ;; esac").unwrap();
    }
    let seen = x.was_active.as_deref().map(|a| format!(" (the scan of the machine the fix was made for saw it {a})")).unwrap_or_default();
    from_record(rec, &body, &format!("no record of {}'s state on this machine{seen}", x.unit))
}

/// `p` (a shell word) back from its copy `rec`; `named` says which file it is, in words.
pub fn line(p: &str, rec: &str, named: &str) -> String {
    let body = format!("  temper_path {p}\n  cp -p -- {rec} {p}\n");
    from_record(rec, &body, &format!("no copy of {named} from before the fix on this machine"))
}

pub fn package(x: &PackageFix, name: &str, apt: &str, rec: &str) -> String {
    let mut body = format!("  read -r status version < {rec} || true\n");
    if x.install {
        writeln!(body, "  if [ \"$status\" != installed ]; then {apt} purge {name}; fi").unwrap();
    } else {
        writeln!(body, "  if [ \"$status\" = installed ]; then {apt} install {}\"=$version\"; fi", name).unwrap();
    }
    let seen =
        x.was_version.as_deref().map(|v| format!(" (the scan of the machine the fix was made for found version {v})")).unwrap_or_default();
    from_record(rec, &body, &format!("no record of package {} on this machine{seen}", x.name))
}

/// A single-quoted word's text, for a message (itself quoted again by [`from_record`]).
fn unquote(w: &str) -> String {
    w.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')).unwrap_or(w).replace(r"'\''", "'")
}
