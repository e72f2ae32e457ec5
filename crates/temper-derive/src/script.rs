//! The fix and revert scripts, as text. Every value from the evidence is single-quoted
//! ([`q`]) after its characters were checked; the revert undoes the actions in reverse order,
//! to what the evidence recorded.
use std::fmt::Write;

use crate::DerivedFix;
use crate::action::{Action, FileFix, LineFix, PackageFix, SysctlFix, UnitFix};

/// How every derived fix script begins (a reflection tells it from a stock fix by it).
pub const HEADER: &str = "#!/bin/bash\n# Fix derived by temper";

/// Where a fix keeps the copies of the files it edits, for its revert.
pub const STATE_DIR: &str = "/var/lib/temper/derived";

/// A shell word that is exactly `s`: single-quoted, each `'` closed, escaped and reopened.
pub fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The rule's short id, as a file name.
fn slug(rule: &str) -> String {
    let s: String = rule.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() { "rule".into() } else { s }
}

pub fn render(rule: &str, actions: &[Action]) -> DerivedFix {
    let rule = slug(rule);
    let tail = format!(" for {rule} from its OVAL check and the items found.\nset -euo pipefail\n");
    let (mut fix, mut revert) = (format!("{HEADER}{tail}"), format!("#!/bin/bash\n# Revert of the fix derived by temper{tail}"));
    let mut steps = Vec::new();
    for (n, a) in actions.iter().enumerate() {
        let (f, r, step) = match a {
            Action::File(x) => file(x),
            Action::Sysctl(x) => sysctl(&rule, x),
            Action::Unit(x) => unit(x),
            Action::Line(x) => line(&rule, n, x),
            Action::Package(x) => package(x),
        };
        fix += &f;
        steps.push((r, step));
    }
    for (r, _) in steps.iter().rev() {
        revert += r;
    }
    let mut families = Vec::new();
    for a in actions {
        if !families.contains(&a.family()) {
            families.push(a.family());
        }
    }
    let description = format!(
        "derived fix for {rule} ({}): {}",
        families.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", "),
        steps.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join("; ")
    );
    DerivedFix {
        families,
        fix_script: fix,
        revert_script: revert,
        description,
        touched: actions.iter().map(|a| a.target().to_string()).collect(),
    }
}

fn file(x: &FileFix) -> (String, String, String) {
    let p = q(&x.path);
    let (mut f, mut r) = (String::new(), String::new());
    let owner_changes = (x.want.uid, x.want.gid) != (x.was.uid, x.was.gid);
    if owner_changes {
        writeln!(f, "chown -h {}:{} -- {p}", x.want.uid, x.want.gid).unwrap();
        writeln!(r, "chown -h {}:{} -- {p}", x.was.uid, x.was.gid).unwrap();
    }
    // chown clears setuid and setgid: the mode is set after it, in both directions.
    if x.want.mode != x.was.mode || owner_changes {
        writeln!(f, "chmod {:04o} -- {p}", x.want.mode).unwrap();
    }
    writeln!(r, "chmod {:04o} -- {p}", x.was.mode).unwrap();
    let step = format!("{}: {}:{} {:04o} -> {}:{} {:04o}", x.path, x.was.uid, x.was.gid, x.was.mode, x.want.uid, x.want.gid, x.want.mode);
    (f, r, step)
}

fn sysctl(rule: &str, x: &SysctlFix) -> (String, String, String) {
    let dropin = format!("/etc/sysctl.d/99-temper-{rule}.conf");
    let setting = format!("{} = {}", x.key, x.value);
    let mut f = format!("printf '%s\\n' {} > {}\n", q(&setting), q(&dropin));
    writeln!(f, "sysctl -w {}", q(&format!("{}={}", x.key, x.value))).unwrap();
    let mut r = format!("rm -f -- {}\n", q(&dropin));
    match &x.was {
        Some(was) => writeln!(r, "sysctl -w {}", q(&format!("{}={was}", x.key))).unwrap(),
        None => writeln!(r, "# the runtime value was already {}", x.value).unwrap(),
    }
    (f, r, format!("{setting} at runtime and in {dropin}"))
}

fn unit(x: &UnitFix) -> (String, String, String) {
    let u = q(&x.unit);
    let (mut f, mut r) = (String::new(), String::new());
    let was_active = x.was_active.as_deref() == Some("active");
    let mut did = Vec::new();
    if x.mask {
        writeln!(f, "systemctl mask {u}").unwrap();
        writeln!(r, "systemctl unmask {u}").unwrap();
        did.push("masked");
    }
    if x.stop {
        writeln!(f, "systemctl stop {u}").unwrap();
        if was_active {
            writeln!(r, "systemctl start {u}").unwrap();
        }
        did.push("stopped");
    }
    if x.enable {
        writeln!(f, "systemctl enable {u}").unwrap();
        writeln!(r, "systemctl disable {u}").unwrap();
        did.push("enabled");
    }
    if x.start {
        writeln!(f, "systemctl start {u}").unwrap();
        if !was_active {
            writeln!(r, "systemctl stop {u}").unwrap();
        }
        did.push("started");
    }
    (f, r, format!("{} {}", x.unit, did.join(" and ")))
}

fn line(rule: &str, n: usize, x: &LineFix) -> (String, String, String) {
    let (p, copy) = (q(&x.path), q(&format!("{STATE_DIR}/{rule}/{n}.orig")));
    let setting = if x.equals { format!("{} = {}", x.key, x.value) } else { format!("{} {}", x.key, x.value) };
    let key = x.key.replace('.', "\\.");
    let flags = if x.any_case { "I" } else { "" };
    let matches = format!("^[[:space:]]*{key}([[:space:]]|=|$)");
    let mut f = format!("mkdir -p -- {}\ncp -p -- {p} {copy}\n", q(&format!("{STATE_DIR}/{rule}")));
    let grep_case = if x.any_case { "-i " } else { "" };
    writeln!(f, "if grep -qE {grep_case}{} {p}; then", q(&matches)).unwrap();
    // `#` delimits: neither a key nor a value the family accepts holds one.
    writeln!(f, "  sed -i -E {} {p}", q(&format!("s#{matches}.*#{setting}#{flags}"))).unwrap();
    writeln!(f, "elif [ -s {p} ]; then").unwrap();
    // First in the file: sshd takes the first value it reads, and a Match block may end it.
    writeln!(f, "  sed -i {} {p}", q(&format!("1i {setting}"))).unwrap();
    writeln!(f, "else\n  printf '%s\\n' {} > {p}\nfi", q(&setting)).unwrap();
    let r = format!("cp -p -- {copy} {p}\nrm -f -- {copy}\n");
    (f, r, format!("`{setting}` in {}", x.path))
}

fn package(x: &PackageFix) -> (String, String, String) {
    let name = q(&x.name);
    let apt = "DEBIAN_FRONTEND=noninteractive apt-get -y -q";
    if x.install {
        (format!("{apt} install {name}\n"), format!("{apt} purge {name}\n"), format!("package {} installed", x.name))
    } else {
        let back = match &x.was_version {
            Some(v) => q(&format!("{}={v}", x.name)),
            None => name.clone(),
        };
        (format!("{apt} purge {name}\n"), format!("{apt} install {back}\n"), format!("package {} removed", x.name))
    }
}

#[cfg(test)]
mod tests {
    use super::q;

    #[test]
    fn quoting_keeps_every_character() {
        assert_eq!(q("plain"), "'plain'");
        assert_eq!(q("it's"), r"'it'\''s'");
        assert_eq!(q("$(rm -rf /) `x`"), "'$(rm -rf /) `x`'");
    }
}
