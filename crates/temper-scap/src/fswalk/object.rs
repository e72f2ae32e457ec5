//! A walking `file_object`, read from its OVAL XML: what it names (a path and a file name, or
//! a file path), with which operations, and how it recurses. Anything else is a construct the
//! walk does not implement, named in a [`WalkError::Unsupported`], and the rule goes to oscap.
use crate::text::TextBuilder;
use crate::xml::{Xml, local};

use super::WalkError;

/// Largest entity value read (paths and patterns are short).
const CAP: usize = 4096;

/// An entity's operation, among those the walk implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntityOp {
    Equals,
    NotEqual,
    PatternMatch,
}

/// An entity's value: written in the object, or a variable's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntityValue {
    Literal(String),
    Var(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    pub op: EntityOp,
    pub value: EntityValue,
}

/// What the object names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectTarget {
    /// `path` and `filename`; no filename (`xsi:nil`): the directories themselves.
    Dir {
        path: Entity,
        filename: Option<Entity>,
    },
    Filepath(Entity),
}

/// Which file systems a walk may enter (`recurse_file_system`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsScope {
    All,
    /// Local ones only, as `df -l` counts them (oscap's list).
    Local,
    /// The starting directory's own.
    Defined,
}

/// The object's `behaviors`, with OVAL's defaults. Only `recurse="directories"` and the
/// directions `none` and `down` are read; others are unsupported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behaviors {
    /// `-1`: no limit.
    pub max_depth: i64,
    pub down: bool,
    pub fs: FsScope,
}

impl Default for Behaviors {
    fn default() -> Self {
        Self { max_depth: -1, down: false, fs: FsScope::All }
    }
}

/// A filter of the object: a state that keeps or drops items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFilter {
    pub exclude: bool,
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkObject {
    pub id: String,
    pub target: ObjectTarget,
    pub behaviors: Behaviors,
    pub filters: Vec<StateFilter>,
}

impl WalkObject {
    /// Reads one `file_object` element (the object's own bytes, as the datastream holds them).
    pub fn read(xml: &[u8]) -> Result<Self, WalkError> {
        let mut x = Xml::new(xml)?;
        let (root, empty) = super::state::first(&mut x)?;
        let id = x.attr(&root, "id")?.unwrap_or_default();
        let unsupported = |why: String| WalkError::Unsupported { object: id.clone(), why };
        if local(&root) != "file_object" {
            return Err(unsupported(format!("a {} is not a file_object", local(&root))));
        }
        if empty {
            return Err(unsupported("an empty file_object".into()));
        }
        let (mut path, mut filename, mut filepath) = (None, None::<Option<Entity>>, None);
        let mut behaviors = Behaviors::default();
        let mut filters = Vec::new();
        while let Some((e, empty)) = x.child("file_object")? {
            match local(&e) {
                "behaviors" => {
                    behaviors = read_behaviors(&x, &e).map_err(unsupported)?;
                    if !empty {
                        x.skip(&e)?;
                    }
                }
                "path" => path = Some(read_entity(&mut x, &e, empty, "path").map_err(unsupported)?),
                "filepath" => filepath = Some(read_entity(&mut x, &e, empty, "filepath").map_err(unsupported)?),
                "filename" => {
                    let nil = x.all_attrs(&e)?.iter().any(|(k, v)| (k == "nil" || k.ends_with(":nil")) && v == "true");
                    filename = Some(if nil {
                        if !empty {
                            x.skip(&e)?;
                        }
                        None
                    } else {
                        Some(read_entity(&mut x, &e, empty, "filename").map_err(unsupported)?)
                    });
                }
                "filter" => {
                    let exclude = x.attr(&e, "action")?.is_some_and(|a| a == "exclude");
                    let state = if empty { String::new() } else { raw(&mut x, "filter")? };
                    filters.push(StateFilter { exclude, state: state.trim().to_string() });
                }
                other => return Err(unsupported(format!("its <{other}>"))),
            }
        }
        let target = match (path, filename, filepath) {
            (Some(path), Some(filename), None) => ObjectTarget::Dir { path, filename },
            (None, None, Some(fp)) => ObjectTarget::Filepath(fp),
            _ => return Err(unsupported("neither path and filename nor filepath".into())),
        };
        Ok(Self { id, target, behaviors, filters })
    }
}

fn read_behaviors(x: &Xml<'_>, e: &quick_xml::events::BytesStart<'_>) -> Result<Behaviors, String> {
    let mut b = Behaviors::default();
    let mut recurse = "symlinks and directories".to_string();
    for (k, v) in x.all_attrs(e).map_err(|e| e.to_string())? {
        match k.as_str() {
            "max_depth" => b.max_depth = v.parse().map_err(|_| format!("max_depth {v:?}"))?,
            "recurse" => recurse = v,
            "recurse_direction" => {
                b.down = match v.as_str() {
                    "none" => false,
                    "down" => true,
                    _ => return Err(format!("recurse_direction {v:?}")),
                }
            }
            "recurse_file_system" => {
                b.fs = match v.as_str() {
                    "all" => FsScope::All,
                    "local" => FsScope::Local,
                    "defined" => FsScope::Defined,
                    _ => return Err(format!("recurse_file_system {v:?}")),
                }
            }
            other => return Err(format!("the behavior {other}={v:?}")),
        }
    }
    // Following symlinks while walking down is not implemented; without a walk, it never applies.
    if b.down && b.max_depth != 0 && recurse != "directories" {
        return Err(format!("recurse {recurse:?}"));
    }
    Ok(b)
}

fn read_entity(x: &mut Xml<'_>, e: &quick_xml::events::BytesStart<'_>, empty: bool, name: &str) -> Result<Entity, String> {
    let mut op = EntityOp::Equals;
    let mut var = None;
    for (k, v) in x.all_attrs(e).map_err(|e| e.to_string())? {
        match k.as_str() {
            "operation" => {
                op = match v.as_str() {
                    "equals" => EntityOp::Equals,
                    "not equal" => EntityOp::NotEqual,
                    "pattern match" => EntityOp::PatternMatch,
                    _ => return Err(format!("{name} operation {v:?}")),
                }
            }
            "var_ref" => var = Some(v),
            "datatype" if v == "string" => {}
            // An object entity's values are alternatives, whatever var_check says.
            "var_check" => {}
            other => return Err(format!("{name} {other}={v:?}")),
        }
    }
    let text = if empty { String::new() } else { raw(x, name).map_err(|e| e.to_string())? };
    let value = match var {
        Some(v) if text.is_empty() => EntityValue::Var(v),
        Some(_) => return Err(format!("{name} has both a var_ref and a value")),
        None => EntityValue::Literal(text),
    };
    Ok(Entity { op, value })
}

/// The element's text as written (no whitespace folded: patterns keep their spaces).
fn raw(x: &mut Xml<'_>, name: &str) -> crate::error::ScapResult<String> {
    let mut b = TextBuilder::raw(CAP);
    x.content(name, &mut b)?;
    Ok(b.finish().plain())
}
