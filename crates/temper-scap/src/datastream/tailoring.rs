//! XCCDF 1.2 tailoring files (as SCAP Workbench and `autotailor` write them): Profiles that
//! extend a Benchmark profile with their own select, refine-value and set-value.
use std::path::Path;

use quick_xml::events::Event;
use serde::Serialize;

use crate::error::{ScapError, ScapResult};
use crate::xml::{Xml, local, read_file};

use super::MAX_TITLE;
use super::profile::{ProfileDef, ProfileInfo, parse_profile};

/// A parsed tailoring document.
#[derive(Debug, Clone)]
pub struct Tailoring {
    pub id: String,
    /// `<benchmark href>`: the content it was made for.
    pub benchmark_href: Option<String>,
    pub version: String,
    pub(crate) defs: Vec<ProfileDef>,
    /// The document as read.
    raw: Vec<u8>,
}

/// What a report or the CLI says about a tailoring.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TailoringInfo {
    pub id: String,
    pub version: String,
    pub benchmark_href: Option<String>,
    pub profiles: Vec<ProfileInfo>,
}

impl Tailoring {
    pub fn read(path: impl AsRef<Path>) -> ScapResult<Self> {
        Self::parse(&read_file(path.as_ref())?)
    }

    pub fn parse(input: &[u8]) -> ScapResult<Self> {
        let mut x = Xml::new(input)?;
        let root = loop {
            match x.next()? {
                Event::Start(e) => break e,
                Event::Empty(e) => return Err(ScapError::NotTailoring(local(&e).to_string())),
                Event::Eof => return Err(ScapError::NoRootElement),
                _ => {}
            }
        };
        if local(&root) != "Tailoring" {
            return Err(ScapError::NotTailoring(local(&root).to_string()));
        }
        let offset = x.pos();
        let id = x.attr(&root, "id")?.ok_or(ScapError::MissingAttr { element: "Tailoring", attr: "id", offset })?;
        let mut t = Tailoring { id, benchmark_href: None, version: String::new(), defs: Vec::new(), raw: input.to_vec() };
        while let Some((c, empty)) = x.child("Tailoring")? {
            match local(&c) {
                "benchmark" => {
                    t.benchmark_href = x.attr(&c, "href")?;
                    if !empty {
                        x.skip(&c)?;
                    }
                }
                "version" if !empty => t.version = x.plain("version", MAX_TITLE)?,
                "Profile" => t.defs.push(parse_profile(&mut x, &c, empty)?),
                _ if !empty => x.skip(&c)?,
                _ => {}
            }
        }
        if t.defs.is_empty() {
            return Err(ScapError::Invalid { what: "tailoring", value: "it has no Profile".into(), offset: x.pos() });
        }
        Ok(t)
    }

    pub fn info(&self) -> TailoringInfo {
        TailoringInfo {
            id: self.id.clone(),
            version: self.version.clone(),
            benchmark_href: self.benchmark_href.clone(),
            profiles: self.defs.iter().map(|d| d.info.clone()).collect(),
        }
    }

    /// The tailored profile to use: the one `requested` names (full id or short name), else the
    /// only one. A request that names a Benchmark profile the tailoring extends picks that
    /// tailoring profile (autotailor keeps the base profile's id unless told otherwise).
    pub fn pick(&self, requested: Option<&str>) -> ScapResult<String> {
        let named = |id: &str, name: &str| id == name || id.ends_with(&format!("_profile_{name}"));
        if let Some(name) = requested {
            let hits: Vec<&ProfileDef> =
                self.defs.iter().filter(|d| named(&d.info.id, name) || d.extends.as_deref().is_some_and(|e| named(e, name))).collect();
            if let [one] = hits.as_slice() {
                return Ok(one.info.id.clone());
            }
            if hits.len() > 1 {
                return Err(ScapError::ProfileAmbiguous {
                    name: name.into(),
                    candidates: hits.iter().map(|d| d.info.id.clone()).collect(),
                });
            }
        }
        match self.defs.as_slice() {
            [one] if requested.is_none() => Ok(one.info.id.clone()),
            _ => Err(ScapError::ProfileNotFound(format!(
                "{} in tailoring {} (it has {})",
                requested.unwrap_or("(none given)"),
                self.id,
                self.defs.iter().map(|d| d.info.id.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// The document as handed to oscap: a line break between a tag and the start tag after it.
    /// oscap 1.3.7 skips every other sibling of a tailoring written with no whitespace between
    /// elements, as autotailor writes it: of three `<select selected="false"/>` in a row the
    /// second stayed selected, and indenting the same file made all three count. Whitespace
    /// between elements means nothing in XCCDF, so this changes nothing else.
    pub fn for_oscap(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len() + self.raw.len() / 16);
        for (i, &b) in self.raw.iter().enumerate() {
            out.push(b);
            if b == b'>' && self.raw.get(i + 1) == Some(&b'<') && self.raw.get(i + 2) != Some(&b'/') {
                out.push(b'\n');
            }
        }
        out
    }

    /// The tailoring's profile with this exact id.
    pub(crate) fn def(&self, id: &str) -> Option<&ProfileDef> {
        self.defs.iter().find(|d| d.info.id == id)
    }
}
