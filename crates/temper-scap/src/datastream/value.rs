//! XCCDF Values: a default and named options (selectors).
use std::collections::BTreeMap;

use quick_xml::events::BytesStart;
use serde::Serialize;

use crate::error::{ScapError, ScapResult};
use crate::xml::{Xml, local};

use super::MAX_TITLE;
use super::profile::{Policy, ValueChoice, raw_value};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Value {
    pub id: String,
    pub title: String,
    /// XCCDF `type`: `string` (default), `number` or `boolean`.
    #[serde(rename = "type")]
    pub value_type: String,
    /// The `<value>` without a selector; empty when there is none.
    pub default: String,
    /// selector -> value.
    pub options: BTreeMap<String, String>,
}

impl Value {
    /// The value a profile picks: `set-value`, else the `refine-value` option
    /// (the default when the selector names no option), else the default.
    pub(crate) fn chosen(&self, policy: &Policy) -> String {
        match policy.choice(&self.id) {
            Some(ValueChoice::Set(v)) => v.clone(),
            Some(ValueChoice::Selector(s)) => self.options.get(s).unwrap_or(&self.default).clone(),
            None => self.default.clone(),
        }
    }
}

pub(crate) fn parse_value(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> ScapResult<Value> {
    let offset = x.pos();
    let [id, value_type] = x.attrs(e, ["id", "type"])?;
    let id = id.ok_or(ScapError::MissingAttr { element: "Value", attr: "id", offset })?;
    let mut v = Value {
        id,
        title: String::new(),
        value_type: value_type.unwrap_or_else(|| "string".into()),
        default: String::new(),
        options: BTreeMap::new(),
    };
    if empty {
        return Ok(v);
    }
    let mut have_default = false;
    loop {
        let Some((c, c_empty)) = x.child("Value")? else {
            return Ok(v);
        };
        match local(&c) {
            "title" if !c_empty => v.title = x.plain("title", MAX_TITLE)?,
            "value" => {
                let selector = x.attr(&c, "selector")?.filter(|s| !s.is_empty());
                let text = if c_empty { String::new() } else { raw_value(x, "value")? };
                match selector {
                    Some(s) => {
                        v.options.entry(s).or_insert(text);
                    }
                    None if !have_default => {
                        v.default = text;
                        have_default = true;
                    }
                    None => {}
                }
            }
            _ if !c_empty => x.skip(&c)?,
            _ => {}
        }
    }
}
