//! CPE applicability, as oscap decides it: the Benchmark's platform specification (CPE 2
//! logical tests) and the CPE dictionary, both ending in OVAL definitions of the CPE OVAL
//! component. A platform holds when its checks' definitions are `true`; any other result
//! (false, error, unknown...) means not applicable.
use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

use crate::xml::{Xml, local};

use super::error::OvalResult;

/// A CPE check: an OVAL definition in the component the catalog names `href`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CpeCheck {
    pub href: String,
    pub id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CpeOp {
    And,
    Or,
}

/// A CPE 2 applicability expression.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    Test {
        op: CpeOp,
        negate: bool,
        items: Vec<Expr>,
    },
    /// `fact-ref name`: a CPE name matched against the dictionary.
    Fact(String),
    /// `check-fact-ref`: an OVAL definition.
    Check(CpeCheck),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Cpe {
    /// `platform id` -> its logical test.
    pub platforms: HashMap<String, Expr>,
    /// The dictionary: (CPE name, its OVAL checks).
    pub dictionary: Vec<(String, Vec<CpeCheck>)>,
}

impl Cpe {
    /// Every OVAL check a platform reference (`#id` or a CPE name) may evaluate.
    pub fn checks_of(&self, platform: &str, out: &mut Vec<CpeCheck>) {
        match platform.strip_prefix('#') {
            Some(id) => {
                if let Some(e) = self.platforms.get(id) {
                    self.expr_checks(e, out);
                }
            }
            None => self.name_checks(platform, out),
        }
    }

    fn expr_checks(&self, e: &Expr, out: &mut Vec<CpeCheck>) {
        match e {
            Expr::Test { items, .. } => items.iter().for_each(|i| self.expr_checks(i, out)),
            Expr::Fact(name) => self.name_checks(name, out),
            Expr::Check(c) => push_unique(out, c.clone()),
        }
    }

    fn name_checks(&self, name: &str, out: &mut Vec<CpeCheck>) {
        for (item, checks) in &self.dictionary {
            if cpe_match(name, item) {
                checks.iter().for_each(|c| push_unique(out, c.clone()));
            }
        }
    }

    /// Whether a platform reference holds, given which checks came out `true`.
    pub fn holds(&self, platform: &str, is_true: &impl Fn(&CpeCheck) -> bool) -> bool {
        match platform.strip_prefix('#') {
            Some(id) => self.platforms.get(id).is_some_and(|e| self.eval(e, is_true)),
            None => self.name_holds(platform, is_true),
        }
    }

    fn eval(&self, e: &Expr, is_true: &impl Fn(&CpeCheck) -> bool) -> bool {
        match e {
            Expr::Test { op, negate, items } => {
                let v = match op {
                    CpeOp::And => items.iter().all(|i| self.eval(i, is_true)),
                    CpeOp::Or => items.iter().any(|i| self.eval(i, is_true)),
                };
                v != *negate
            }
            Expr::Fact(name) => self.name_holds(name, is_true),
            Expr::Check(c) => is_true(c),
        }
    }

    fn name_holds(&self, name: &str, is_true: &impl Fn(&CpeCheck) -> bool) -> bool {
        self.dictionary.iter().any(|(item, checks)| cpe_match(name, item) && checks.iter().any(is_true))
    }
}

fn push_unique(out: &mut Vec<CpeCheck>, c: CpeCheck) {
    if !out.contains(&c) {
        out.push(c);
    }
}

/// oscap's CPE 2.2 URI match: every field `name` gives equals `item`'s (case-insensitively);
/// an empty field matches anything.
pub(crate) fn cpe_match(name: &str, item: &str) -> bool {
    let fields = |s: &str| -> Option<Vec<String>> {
        let rest = s.get(..5).filter(|p| p.eq_ignore_ascii_case("cpe:/")).map(|_| &s[5..])?;
        Some(rest.split(':').map(str::to_ascii_lowercase).collect())
    };
    let (Some(n), Some(i)) = (fields(name), fields(item)) else {
        return false;
    };
    n.len() <= i.len() && n.iter().zip(&i).all(|(a, b)| a.is_empty() || a == b)
}

/// Reads a `platform-specification` whose start tag was just read.
pub(crate) fn read_platforms(x: &mut Xml<'_>, cpe: &mut Cpe) -> OvalResult<()> {
    loop {
        match x.next()? {
            Event::Start(e) if local(&e) == "platform" => {
                let id = x.attr(&e, "id")?.unwrap_or_default();
                let mut tests = Vec::new();
                read_tests(x, &mut tests, 0)?;
                if let Some(t) = tests.pop() {
                    cpe.platforms.insert(id, t);
                }
            }
            Event::Start(e) => x.skip(&e)?,
            Event::End(_) => return Ok(()),
            Event::Eof => return Err(x.truncated("platform-specification").into()),
            _ => {}
        }
    }
}

/// Deepest nesting of logical tests read; deeper ones are skipped (never true).
const MAX_DEPTH: usize = 32;

/// The logical tests and fact refs inside the element just opened, up to its end.
fn read_tests(x: &mut Xml<'_>, out: &mut Vec<Expr>, depth: usize) -> OvalResult<()> {
    loop {
        let Some((e, empty)) = x.child("platform")? else {
            return Ok(());
        };
        match local(&e) {
            "logical-test" => {
                let [op, negate] = x.attrs(&e, ["operator", "negate"])?;
                let mut items = Vec::new();
                if !empty && depth < MAX_DEPTH {
                    read_tests(x, &mut items, depth + 1)?;
                } else if !empty {
                    x.skip(&e)?;
                    items.push(Expr::Test { op: CpeOp::Or, negate: false, items: Vec::new() });
                }
                let op = if op.as_deref().is_some_and(|o| o.eq_ignore_ascii_case("OR")) { CpeOp::Or } else { CpeOp::And };
                out.push(Expr::Test { op, negate: matches!(negate.as_deref(), Some("true" | "1")), items });
            }
            "fact-ref" => {
                out.push(Expr::Fact(x.attr(&e, "name")?.unwrap_or_default()));
                skip_rest(x, &e, empty)?;
            }
            "check-fact-ref" => {
                let [href, id] = x.attrs(&e, ["href", "id-ref"])?;
                out.push(Expr::Check(CpeCheck { href: href.unwrap_or_default(), id: id.unwrap_or_default() }));
                skip_rest(x, &e, empty)?;
            }
            _ => skip_rest(x, &e, empty)?,
        }
    }
}

fn skip_rest(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> OvalResult<()> {
    if !empty {
        x.skip(e)?;
    }
    Ok(())
}

/// Reads a `cpe-list` (the dictionary) whose start tag was just read.
pub(crate) fn read_dictionary(x: &mut Xml<'_>, cpe: &mut Cpe) -> OvalResult<()> {
    let mut item: Option<(String, Vec<CpeCheck>)> = None;
    let mut depth = 0usize;
    loop {
        match x.next()? {
            Event::Start(e) if local(&e) == "cpe-item" => {
                item = Some((x.attr(&e, "name")?.unwrap_or_default(), Vec::new()));
                depth += 1;
            }
            Event::Start(e) if local(&e) == "check" => {
                let href = x.attr(&e, "href")?.unwrap_or_default();
                let id = x.plain("check", 512)?;
                if let Some((_, checks)) = item.as_mut() {
                    checks.push(CpeCheck { href, id });
                }
            }
            Event::Start(e) => x.skip(&e)?,
            Event::End(_) if depth == 0 => return Ok(()),
            Event::End(_) => {
                depth -= 1;
                cpe.dictionary.extend(item.take());
            }
            Event::Eof => return Err(x.truncated("cpe-list").into()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpe_names_match_as_oscap_does() {
        assert!(cpe_match("cpe:/o:debian:debian_linux:12", "cpe:/o:debian:debian_linux:12"));
        assert!(cpe_match("cpe:/o:Debian:debian_linux", "cpe:/o:debian:debian_linux:12"));
        assert!(!cpe_match("cpe:/o:debian:debian_linux:12", "cpe:/o:debian:debian_linux"));
        assert!(!cpe_match("cpe:/o:redhat:enterprise_linux:9", "cpe:/o:debian:debian_linux:12"));
        assert!(!cpe_match("#package_sudo", "cpe:/o:debian:debian_linux:12"));
    }

    #[test]
    fn logical_tests_and_negation() {
        let check = |id: &str| Expr::Check(CpeCheck { href: "c.xml".into(), id: id.into() });
        let mut cpe = Cpe::default();
        cpe.platforms.insert("both".into(), Expr::Test { op: CpeOp::And, negate: false, items: vec![check("a"), check("b")] });
        cpe.platforms.insert("not_a".into(), Expr::Test { op: CpeOp::And, negate: true, items: vec![check("a")] });
        cpe.platforms.insert("either".into(), Expr::Test { op: CpeOp::Or, negate: false, items: vec![check("a"), check("b")] });
        let only_a = |c: &CpeCheck| c.id == "a";
        assert!(!cpe.holds("#both", &only_a));
        assert!(cpe.holds("#either", &only_a));
        assert!(!cpe.holds("#not_a", &only_a));
        assert!(!cpe.holds("#missing", &only_a), "an unknown platform is not applicable");
        let mut out = Vec::new();
        cpe.checks_of("#both", &mut out);
        assert_eq!(out.len(), 2);
    }
}
