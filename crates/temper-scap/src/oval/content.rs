//! The datastream as the OVAL engine sees it, read in one streaming pass: the catalog (check
//! `href` -> component), the CPE dictionary, the Benchmark's checks and platforms, and each
//! OVAL component indexed by id. The bytes are kept: documents are cut from them.
use std::collections::HashMap;
use std::path::Path;

use quick_xml::events::{BytesStart, Event};
use sha2::{Digest, Sha256};

use crate::xml::{Xml, local, read_file};

use super::cpe::read_dictionary;
use super::error::{OvalError, Result};
use super::index::{Component, read_component};
use super::xccdf::{Xccdf, walk_benchmark};

/// A SCAP source datastream, indexed for the OVAL engine. Independent of any profile.
#[derive(Debug)]
pub struct OvalContent {
    pub(crate) bytes: Vec<u8>,
    sha256: [u8; 32],
    pub(crate) components: Vec<Component>,
    /// Catalog name (a check's `href`) -> index in `components`.
    pub(crate) hrefs: HashMap<String, usize>,
    pub(crate) xccdf: Xccdf,
}

impl OvalContent {
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_bytes(read_file(path.as_ref())?)
    }

    pub fn from_bytes(mut bytes: Vec<u8>) -> Result<Self> {
        if bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes.drain(..3);
        }
        let sha256 = Sha256::digest(&bytes).into();
        let mut c = OvalContent { bytes: Vec::new(), sha256, components: Vec::new(), hrefs: HashMap::new(), xccdf: Xccdf::default() };
        let catalog = c.walk(&bytes)?;
        c.resolve(catalog);
        c.bytes = bytes;
        Ok(c)
    }

    /// The datastream's SHA-256, hex.
    pub fn sha256_hex(&self) -> String {
        hex(&self.sha256)
    }

    pub(crate) fn sha256(&self) -> &[u8; 32] {
        &self.sha256
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The OVAL component a check's `href` names.
    pub(crate) fn component(&self, href: &str) -> Option<&Component> {
        self.hrefs.get(href).map(|&i| &self.components[i])
    }

    fn walk(&mut self, bytes: &[u8]) -> Result<Catalog> {
        let mut x = Xml::new(bytes)?;
        let root = loop {
            match x.next()? {
                Event::Start(e) => break e,
                Event::Empty(e) => return Err(OvalError::NotADatastream(local(&e).to_string())),
                Event::Eof => return Err(crate::ScapError::NoRootElement.into()),
                _ => {}
            }
        };
        if local(&root) != "data-stream-collection" {
            return Err(OvalError::NotADatastream(local(&root).to_string()));
        }
        let root_ns = ns_decls(&x, &root)?;
        let mut catalog = Catalog::default();
        let mut benchmark = false;
        while let Some((e, empty)) = x.child("data-stream-collection")? {
            match local(&e) {
                "data-stream" if !empty && catalog.refs.is_empty() => read_catalog(&mut x, &mut catalog)?,
                "component" if !empty => {
                    let id = x.attr(&e, "id")?.unwrap_or_default();
                    let mut ns = root_ns.clone();
                    ns.extend(ns_decls(&x, &e)?);
                    benchmark |= self.component_body(&mut x, &id, ns, benchmark)?;
                }
                _ if !empty => x.skip(&e)?,
                _ => {}
            }
        }
        if !benchmark {
            return Err(OvalError::NoBenchmark);
        }
        Ok(catalog)
    }

    /// Reads one component's content up to its end; true when it was the (first) Benchmark.
    fn component_body(&mut self, x: &mut Xml<'_>, id: &str, ns: Vec<(String, String)>, have_benchmark: bool) -> Result<bool> {
        let mut was_benchmark = false;
        loop {
            let Some((e, empty)) = x.child("component")? else {
                return Ok(was_benchmark);
            };
            match local(&e) {
                "oval_definitions" if !empty => {
                    let mut ns = ns.clone();
                    ns.extend(ns_decls(x, &e)?);
                    self.components.push(read_component(x, &e, id, ns)?);
                }
                "Benchmark" if !empty && !have_benchmark && !was_benchmark => {
                    walk_benchmark(x, &mut self.xccdf)?;
                    was_benchmark = true;
                }
                "cpe-list" if !empty => read_dictionary(x, &mut self.xccdf.cpe)?,
                _ if !empty => x.skip(&e)?,
                _ => {}
            }
        }
    }

    /// Maps each catalog name to its component: name -> `#cref` -> component-ref -> `#component`.
    fn resolve(&mut self, catalog: Catalog) {
        let by_id: HashMap<&str, usize> = self.components.iter().enumerate().map(|(i, c)| (c.id.as_str(), i)).collect();
        for (name, uri) in catalog.uris {
            let cref = uri.trim_start_matches('#');
            let Some(target) = catalog.refs.get(cref) else { continue };
            if let Some(&i) = target.strip_prefix('#').and_then(|t| by_id.get(t)) {
                self.hrefs.insert(name, i);
            }
        }
    }
}

/// The first data-stream's `component-ref`s and catalog entries.
#[derive(Debug, Default)]
struct Catalog {
    /// component-ref id -> its `xlink:href`.
    refs: HashMap<String, String>,
    /// catalog name -> uri.
    uris: Vec<(String, String)>,
}

fn read_catalog(x: &mut Xml<'_>, c: &mut Catalog) -> Result<()> {
    let mut depth = 0usize;
    loop {
        let (e, empty) = match x.next()? {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) if depth == 0 => return Ok(()),
            Event::End(_) => {
                depth -= 1;
                continue;
            }
            Event::Eof => return Err(x.truncated("data-stream").into()),
            _ => continue,
        };
        let attrs = x.all_attrs(&e)?;
        let get = |name: &str| attrs.iter().find(|(k, _)| k.rsplit(':').next() == Some(name)).map(|(_, v)| v.clone());
        match local(&e) {
            "component-ref" => {
                if let (Some(id), Some(href)) = (get("id"), get("href")) {
                    c.refs.insert(id, href);
                }
            }
            "uri" => {
                if let (Some(name), Some(uri)) = (get("name"), get("uri")) {
                    c.uris.push((name, uri));
                }
            }
            _ => {}
        }
        if !empty {
            depth += 1;
        }
    }
}

/// The `xmlns` and `xmlns:p` attributes of a start tag.
fn ns_decls(x: &Xml<'_>, e: &BytesStart<'_>) -> Result<Vec<(String, String)>> {
    Ok(x.all_attrs(e)?.into_iter().filter(|(k, _)| k == "xmlns" || k.starts_with("xmlns:")).collect())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
