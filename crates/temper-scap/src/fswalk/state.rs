//! A `file_state` and a `file_test`, judged on the host against the walk's items, as oscap
//! judges them: each entity of the state against the item's field (with `var_check` over a
//! variable's values), the entities joined by the state's operator, the items by the test's
//! `check`, and their number by its `check_existence`.
use quick_xml::events::{BytesStart, Event};

use crate::oval::{Check, DefinitionResult, Existence, Flag, Operator};
use crate::text::TextBuilder;
use crate::xml::{Xml, local};

use super::WalkError;
use super::collect::{Collected, ItemNames};
use super::listing::{ListedEntry, Listing};
use super::pattern::Pattern;

/// An item's field that a state can test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateField {
    UserId,
    GroupId,
    Type,
    Filepath,
    /// A mode bit (`suid` is 0o4000, `oexec` 0o1).
    Bit(u32),
}

impl StateField {
    fn from_name(n: &str) -> Option<Self> {
        Some(match n {
            "user_id" => Self::UserId,
            "group_id" => Self::GroupId,
            "type" => Self::Type,
            "filepath" => Self::Filepath,
            "suid" => Self::Bit(0o4000),
            "sgid" => Self::Bit(0o2000),
            "sticky" => Self::Bit(0o1000),
            "uread" => Self::Bit(0o400),
            "uwrite" => Self::Bit(0o200),
            "uexec" => Self::Bit(0o100),
            "gread" => Self::Bit(0o40),
            "gwrite" => Self::Bit(0o20),
            "gexec" => Self::Bit(0o10),
            "oread" => Self::Bit(0o4),
            "owrite" => Self::Bit(0o2),
            "oexec" => Self::Bit(0o1),
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Equals,
    NotEqual,
    Greater,
    GreaterOrEqual,
    Less,
    LessOrEqual,
    PatternMatch,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldCheck {
    pub field: StateField,
    pub cmp: Cmp,
    /// The value written, or a variable's id.
    pub value: String,
    pub var: bool,
    pub var_check: Check,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    pub id: String,
    /// `operator="OR"`; AND otherwise.
    pub or: bool,
    pub checks: Vec<FieldCheck>,
}

/// OVAL's results of a test or a state: true, false, or error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truth {
    True,
    False,
    Error,
}

impl Truth {
    fn of(b: bool) -> Self {
        if b { Self::True } else { Self::False }
    }

    /// `v` joined by OR or AND, by OVAL's truth tables ([`Operator::combine`]); none is true
    /// (a state with no entities matches every item).
    fn join(or: bool, v: &[Truth]) -> Truth {
        if v.is_empty() {
            return Truth::True;
        }
        let op = if or { Operator::Or } else { Operator::And };
        op.combine(&v.iter().map(|&t| t.into()).collect::<Vec<_>>()).into()
    }
}

impl From<Truth> for DefinitionResult {
    fn from(t: Truth) -> Self {
        match t {
            Truth::True => Self::True,
            Truth::False => Self::False,
            Truth::Error => Self::Error,
        }
    }
}

impl From<DefinitionResult> for Truth {
    /// Only true and false are decided here: anything else is an error.
    fn from(r: DefinitionResult) -> Self {
        match r {
            DefinitionResult::True => Self::True,
            DefinitionResult::False => Self::False,
            _ => Self::Error,
        }
    }
}

/// Values of a variable, by id; `None`: not known here (the construct is unsupported).
pub type Vars<'a> = &'a dyn Fn(&str) -> Option<Vec<String>>;

impl FileState {
    pub fn read(xml: &[u8]) -> Result<Self, WalkError> {
        let mut x = Xml::new(xml)?;
        let root = first(&mut x)?;
        let id = x.attr(&root.0, "id")?.unwrap_or_default();
        let unsupported = |why: String| WalkError::Unsupported { object: id.clone(), why };
        if local(&root.0) != "file_state" {
            return Err(unsupported(format!("a {}", local(&root.0))));
        }
        let or = match x.attr(&root.0, "operator")?.as_deref() {
            None | Some("AND") => false,
            Some("OR") => true,
            Some(o) => return Err(unsupported(format!("operator {o}"))),
        };
        let mut checks = Vec::new();
        if !root.1 {
            while let Some((e, empty)) = x.child("file_state")? {
                checks.push(read_check(&mut x, &e, empty).map_err(unsupported)?);
            }
        }
        Ok(Self { id, or, checks })
    }

    /// This state against one item (its names and its entry).
    pub fn judge(&self, item: &ItemNames<'_>, e: &ListedEntry, vars: Vars<'_>) -> Result<Truth, WalkError> {
        let mut out = Vec::with_capacity(self.checks.len());
        for c in &self.checks {
            out.push(self.entity(c, item, e, vars)?);
        }
        Ok(Truth::join(self.or, &out))
    }

    fn entity(&self, c: &FieldCheck, item: &ItemNames<'_>, e: &ListedEntry, vars: Vars<'_>) -> Result<Truth, WalkError> {
        let values = if c.var {
            vars(&c.value)
                .ok_or_else(|| WalkError::Unsupported { object: self.id.clone(), why: format!("variable {} has no value here", c.value) })?
        } else {
            vec![c.value.clone()]
        };
        let mut each = Vec::with_capacity(values.len());
        for v in &values {
            each.push(compare(c, v, item, e).map_err(|why| WalkError::Unsupported { object: self.id.clone(), why })?);
        }
        let t = each.iter().filter(|&&t| t == Truth::True).count();
        if each.contains(&Truth::Error) {
            return Ok(Truth::Error);
        }
        Ok(Truth::of(match c.var_check {
            Check::All => t == each.len(),
            Check::AtLeastOne => t >= 1,
            Check::OnlyOne => t == 1,
            Check::NoneSatisfy => t == 0,
        }))
    }
}

fn compare(c: &FieldCheck, v: &str, item: &ItemNames<'_>, e: &ListedEntry) -> Result<Truth, String> {
    let int = |have: u32| -> Result<Truth, String> {
        let want: i64 = v.trim().parse().map_err(|_| format!("an int {v:?}"))?;
        let have = i64::from(have);
        Ok(Truth::of(match c.cmp {
            Cmp::Equals => have == want,
            Cmp::NotEqual => have != want,
            Cmp::Greater => have > want,
            Cmp::GreaterOrEqual => have >= want,
            Cmp::Less => have < want,
            Cmp::LessOrEqual => have <= want,
            Cmp::PatternMatch => return Err("a pattern on an int".into()),
        }))
    };
    let text = |have: &[u8]| -> Result<Truth, String> {
        Ok(match c.cmp {
            Cmp::Equals => Truth::of(have == v.as_bytes()),
            Cmp::NotEqual => Truth::of(have != v.as_bytes()),
            Cmp::PatternMatch => match Pattern::new(v)?.is_match(have) {
                Ok(b) => Truth::of(b),
                Err(_) => Truth::Error,
            },
            _ => return Err(format!("{:?} on a string", c.cmp)),
        })
    };
    match c.field {
        StateField::UserId => int(e.uid),
        StateField::GroupId => int(e.gid),
        StateField::Type => text(e.kind.oval().as_bytes()),
        StateField::Filepath => match item.filepath() {
            Some(p) => text(&p),
            None => Ok(Truth::Error), // a directory item has no filepath
        },
        StateField::Bit(mask) => {
            let want = match v.trim() {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => return Err(format!("a boolean {v:?}")),
            };
            let set = u32::from(e.mode) & mask != 0;
            match c.cmp {
                Cmp::Equals => Ok(Truth::of(set == want)),
                Cmp::NotEqual => Ok(Truth::of(set != want)),
                _ => Err(format!("{:?} on a boolean", c.cmp)),
            }
        }
    }
}

/// The document's root element: its start tag, and whether it is empty.
pub(crate) fn first<'a>(x: &mut Xml<'a>) -> Result<(BytesStart<'a>, bool), WalkError> {
    loop {
        match x.next()? {
            Event::Start(e) => return Ok((e, false)),
            Event::Empty(e) => return Ok((e, true)),
            Event::Eof => return Err(crate::ScapError::NoRootElement.into()),
            _ => {}
        }
    }
}

fn read_check(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> Result<FieldCheck, String> {
    let name = local(e).to_string();
    let field = StateField::from_name(&name).ok_or_else(|| format!("the state entity <{name}>"))?;
    let (mut cmp, mut var, mut var_check) = (Cmp::Equals, None, Check::All);
    for (k, v) in x.all_attrs(e).map_err(|e| e.to_string())? {
        match k.as_str() {
            "operation" => {
                cmp = match v.as_str() {
                    "equals" => Cmp::Equals,
                    "not equal" => Cmp::NotEqual,
                    "greater than" => Cmp::Greater,
                    "greater than or equal" => Cmp::GreaterOrEqual,
                    "less than" => Cmp::Less,
                    "less than or equal" => Cmp::LessOrEqual,
                    "pattern match" => Cmp::PatternMatch,
                    _ => return Err(format!("{name} operation {v:?}")),
                }
            }
            "var_ref" => var = Some(v),
            "var_check" => var_check = Check::read(&v).map_err(|e| format!("{name} var_{e}"))?,
            "datatype" if matches!(v.as_str(), "int" | "boolean" | "string") => {}
            other => return Err(format!("{name} {other}={v:?}")),
        }
    }
    let text = if empty {
        String::new()
    } else {
        let mut b = TextBuilder::raw(4096);
        x.content(&name, &mut b).map_err(|e| e.to_string())?;
        b.finish().plain()
    };
    Ok(match var {
        Some(id) => FieldCheck { field, cmp, value: id, var: true, var_check },
        None => FieldCheck { field, cmp, value: text, var: false, var_check },
    })
}

/// A `file_test`'s `check` and `check_existence`, and its states' ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTest {
    pub id: String,
    pub object: String,
    pub states: Vec<String>,
    pub check: Check,
    pub existence: Existence,
    /// `state_operator="OR"`; AND otherwise.
    pub states_or: bool,
}

impl FileTest {
    pub fn read(xml: &[u8]) -> Result<Self, WalkError> {
        let mut x = Xml::new(xml)?;
        let (root, empty) = first(&mut x)?;
        let id = x.attr(&root, "id")?.unwrap_or_default();
        let unsupported = |why: String| WalkError::Unsupported { object: id.clone(), why };
        let [check, existence, op] = x.attrs(&root, ["check", "check_existence", "state_operator"])?;
        let check = Check::read(check.as_deref().unwrap_or_default()).map_err(&unsupported)?;
        let existence = Existence::of(existence.as_deref()).map_err(&unsupported)?;
        let states_or = match op.as_deref() {
            None | Some("AND") => false,
            Some("OR") => true,
            Some(o) => return Err(unsupported(format!("state_operator {o}"))),
        };
        let (mut object, mut states) = (String::new(), Vec::new());
        if !empty {
            while let Some((e, empty)) = x.child("file_test")? {
                match local(&e) {
                    "object" => object = x.attr(&e, "object_ref")?.unwrap_or_default(),
                    "state" => states.push(x.attr(&e, "state_ref")?.unwrap_or_default()),
                    _ => {}
                }
                if !empty {
                    x.skip(&e)?;
                }
            }
        }
        Ok(Self { id, object, states, check, existence, states_or })
    }

    /// Whether the object's items (already filtered) meet the test's `check_existence`: only
    /// then are they compared with its states (oscap's items are otherwise `not evaluated`).
    pub fn exists(&self, c: &Collected) -> bool {
        self.existence.holds(c.items.len())
    }

    /// The test's result over the object's items (already filtered).
    pub fn judge(&self, c: &Collected, walk: &Listing, states: &[FileState], vars: Vars<'_>) -> Result<Truth, WalkError> {
        if c.flag == Flag::Error {
            // As oscap: an object in error is an error, but where neither the number of items
            // nor their states are asked about.
            let asks_nothing = self.existence == Existence::AnyExist && states.is_empty();
            return Ok(if asks_nothing { Truth::True } else { Truth::Error });
        }
        let n = c.items.len();
        if !self.exists(c) {
            return Ok(Truth::False);
        }
        if states.is_empty() || n == 0 {
            return Ok(Truth::True);
        }
        let mut each = Vec::with_capacity(n);
        for item in &c.items {
            each.push(self.item(&c.names(walk, item), walk.entry(item.entry), states, vars)?);
        }
        let t = each.iter().filter(|&&t| t == Truth::True).count();
        let f = each.iter().filter(|&&t| t == Truth::False).count();
        Ok(match self.check {
            Check::All if f > 0 => Truth::False,
            Check::All if t == n => Truth::True,
            Check::AtLeastOne if t > 0 => Truth::True,
            Check::AtLeastOne if f == n => Truth::False,
            Check::OnlyOne if t == 1 && f == n - 1 => Truth::True,
            Check::OnlyOne if t > 1 || f == n => Truth::False,
            Check::NoneSatisfy if t > 0 => Truth::False,
            Check::NoneSatisfy if f == n => Truth::True,
            _ => Truth::Error,
        })
    }
}

impl FileTest {
    /// One item against the test's states, joined by its `state_operator`.
    pub fn item(&self, item: &ItemNames<'_>, e: &ListedEntry, states: &[FileState], vars: Vars<'_>) -> Result<Truth, WalkError> {
        let mut per = Vec::with_capacity(states.len());
        for s in states {
            per.push(s.judge(item, e, vars)?);
        }
        Ok(Truth::join(self.states_or, &per))
    }
}

/// The object's filters applied in order: an `include` keeps the items its state holds for,
/// an `exclude` drops them.
pub fn filter(c: &mut Collected, walk: &Listing, filters: &[(bool, &FileState)], vars: Vars<'_>) -> Result<(), WalkError> {
    for (exclude, s) in filters {
        // Kept in place: no second set of items.
        let mut items = std::mem::take(&mut c.items);
        let mut kept = 0;
        for r in 0..items.len() {
            let item = items[r];
            if (s.judge(&c.names(walk, &item), walk.entry(item.entry), vars)? == Truth::True) != *exclude {
                items[kept] = item;
                kept += 1;
            }
        }
        items.truncate(kept);
        c.items = items;
    }
    Ok(())
}
