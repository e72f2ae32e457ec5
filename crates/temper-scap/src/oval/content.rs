//! The datastream as the OVAL engine sees it, read in one streaming pass: the catalog (check
//! `href` -> component), the CPE dictionary, the Benchmark's checks and platforms, and each
//! OVAL component indexed by id. The bytes are kept: documents are cut from them.
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use quick_xml::events::{BytesStart, Event};
use sha2::{Digest, Sha256};

use crate::xml::{Xml, local, read_file};

use super::cpe::read_dictionary;
use super::error::{OvalError, OvalResult};
use super::index::{Component, read_component};
use super::xccdf::{Xccdf, walk_benchmark};

/// A SCAP source datastream, indexed for the OVAL engine. Independent of any profile.
#[derive(Debug)]
pub struct OvalContent {
    pub(crate) bytes: Arc<[u8]>,
    sha256: [u8; 32],
    /// Shared with each plan cut from it: the host's definitions its evidence is read against.
    pub(crate) components: Arc<[Component]>,
    /// Catalog name (a check's `href`) -> index in `components`.
    pub(crate) hrefs: HashMap<String, usize>,
    pub(crate) xccdf: Xccdf,
}

impl OvalContent {
    pub fn read(path: impl AsRef<Path>) -> OvalResult<Self> {
        Self::from_bytes(read_file(path.as_ref())?)
    }

    pub fn from_bytes(mut bytes: Vec<u8>) -> OvalResult<Self> {
        if bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes.drain(..3);
        }
        let sha256 = Sha256::digest(&bytes).into();
        let mut components = Vec::new();
        let mut xccdf = Xccdf::default();
        let catalog = walk(&bytes, &mut components, &mut xccdf)?;
        let hrefs = resolve(&components, catalog);
        Ok(OvalContent { bytes: bytes.into(), sha256, components: components.into(), hrefs, xccdf })
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
}

/// Reads the datastream: its OVAL components into `components`, its Benchmark (the first) and
/// CPE dictionary into `xccdf`; returns the catalog.
fn walk(bytes: &[u8], components: &mut Vec<Component>, xccdf: &mut Xccdf) -> OvalResult<Catalog> {
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
                benchmark |= component_body(&mut x, &id, ns, benchmark, components, xccdf)?;
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
fn component_body(
    x: &mut Xml<'_>,
    id: &str,
    ns: Vec<(String, String)>,
    have_benchmark: bool,
    components: &mut Vec<Component>,
    xccdf: &mut Xccdf,
) -> OvalResult<bool> {
    let mut was_benchmark = false;
    loop {
        let Some((e, empty)) = x.child("component")? else {
            return Ok(was_benchmark);
        };
        match local(&e) {
            "oval_definitions" if !empty => {
                let mut ns = ns.clone();
                ns.extend(ns_decls(x, &e)?);
                components.push(read_component(x, &e, id, ns)?);
            }
            "Benchmark" if !empty && !have_benchmark && !was_benchmark => {
                walk_benchmark(x, xccdf)?;
                was_benchmark = true;
            }
            "cpe-list" if !empty => read_dictionary(x, &mut xccdf.cpe)?,
            _ if !empty => x.skip(&e)?,
            _ => {}
        }
    }
}

/// Maps each catalog name to its component: name -> `#cref` -> component-ref -> `#component`.
fn resolve(components: &[Component], catalog: Catalog) -> HashMap<String, usize> {
    let by_id: HashMap<&str, usize> = components.iter().enumerate().map(|(i, c)| (c.id.as_str(), i)).collect();
    let mut hrefs = HashMap::new();
    for (name, uri) in catalog.uris {
        let cref = uri.trim_start_matches('#');
        let Some(target) = catalog.refs.get(cref) else { continue };
        if let Some(&i) = target.strip_prefix('#').and_then(|t| by_id.get(t)) {
            hrefs.insert(name, i);
        }
    }
    hrefs
}

/// The first data-stream's `component-ref`s and catalog entries.
#[derive(Debug, Default)]
struct Catalog {
    /// component-ref id -> its `xlink:href`.
    refs: HashMap<String, String>,
    /// catalog name -> uri.
    uris: Vec<(String, String)>,
}

fn read_catalog(x: &mut Xml<'_>, c: &mut Catalog) -> OvalResult<()> {
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
fn ns_decls(x: &Xml<'_>, e: &BytesStart<'_>) -> OvalResult<Vec<(String, String)>> {
    Ok(x.all_attrs(e)?.into_iter().filter(|(k, _)| k == "xmlns" || k.starts_with("xmlns:")).collect())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
