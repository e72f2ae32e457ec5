//! A thin pull reader over a byte slice: quick-xml events with offsets in errors,
//! DTDs refused, entities limited to the five XML ones and character references.
use std::path::Path;

use quick_xml::errors::IllFormedError;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use crate::error::{ScapError, ScapResult};
use crate::text::TextBuilder;

/// Largest input read (1 GiB); SSG datastreams are about 25 MB.
pub const MAX_INPUT: u64 = 1 << 30;

/// Deepest nesting of elements read: SSG 0.1.76's Debian 12 datastream nests 12 deep, an XCCDF
/// results file 10. Every reader goes through [`Xml`], so no recursion over a document (criteria,
/// sets, Groups, logical tests) can go deeper than this, whatever the input.
pub const MAX_DEPTH: usize = 256;

pub(crate) fn read_file(path: &Path) -> ScapResult<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| ScapError::io(path, e))?;
    if meta.len() > MAX_INPUT {
        return Err(ScapError::TooLarge { what: format!("file {}", path.display()), limit: MAX_INPUT, offset: 0 });
    }
    std::fs::read(path).map_err(|e| ScapError::io(path, e))
}

pub(crate) struct Xml<'a> {
    r: Reader<&'a [u8]>,
    /// Elements open now.
    depth: usize,
}

/// The local name (no prefix) of a start tag.
pub(crate) fn local<'e>(e: &'e BytesStart<'_>) -> &'e str {
    e.local_name().into_inner()
}

impl<'a> Xml<'a> {
    pub fn new(input: &'a [u8]) -> ScapResult<Self> {
        if input.len() as u64 > MAX_INPUT {
            return Err(ScapError::TooLarge { what: "input".into(), limit: MAX_INPUT, offset: 0 });
        }
        let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
        if input.iter().all(u8::is_ascii_whitespace) {
            return Err(ScapError::Empty);
        }
        let s = std::str::from_utf8(input).map_err(|e| ScapError::NotUtf8 { offset: e.valid_up_to() })?;
        Ok(Self { r: Reader::from_str(s), depth: 0 })
    }

    pub fn pos(&self) -> u64 {
        self.r.buffer_position()
    }

    fn xml_err(&self, e: quick_xml::Error) -> ScapError {
        match e {
            quick_xml::Error::IllFormed(IllFormedError::MissingEndTag(element)) => ScapError::Truncated { offset: self.pos(), element },
            source => ScapError::Xml { offset: self.r.error_position(), source },
        }
    }

    /// The next event; an element opened deeper than [`MAX_DEPTH`] is an error.
    pub fn next(&mut self) -> ScapResult<Event<'a>> {
        match self.r.read_event() {
            Ok(Event::DocType(_)) => Err(ScapError::Dtd { offset: self.pos() }),
            Ok(Event::Start(e)) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(ScapError::TooDeep { limit: MAX_DEPTH, element: local(&e).to_string(), offset: self.pos() });
                }
                Ok(Event::Start(e))
            }
            Ok(Event::End(e)) => {
                self.depth = self.depth.saturating_sub(1);
                Ok(Event::End(e))
            }
            Ok(ev) => Ok(ev),
            Err(e) => Err(self.xml_err(e)),
        }
    }

    /// Skips the element whose start tag was just read, event by event: its nesting counts
    /// against [`MAX_DEPTH`] too.
    pub fn skip(&mut self, e: &BytesStart<'_>) -> ScapResult<()> {
        let outside = self.depth.saturating_sub(1);
        loop {
            match self.next()? {
                Event::End(_) if self.depth == outside => return Ok(()),
                Event::Eof => return Err(self.truncated(local(e))),
                _ => {}
            }
        }
    }

    /// The next child element (its start tag, and whether it is empty) of the element whose
    /// start tag was just read; `None` at that element's end. Text, comments and the like are
    /// passed over; the input ending first is a truncation of `parent`.
    pub fn child(&mut self, parent: &str) -> ScapResult<Option<(BytesStart<'a>, bool)>> {
        loop {
            match self.next()? {
                Event::Start(e) => return Ok(Some((e, false))),
                Event::Empty(e) => return Ok(Some((e, true))),
                Event::End(_) => return Ok(None),
                Event::Eof => return Err(self.truncated(parent)),
                _ => {}
            }
        }
    }

    /// Walks down from the root through the container elements named in `inside`, and hands
    /// each element named `wanted` to `found` (its start tag, and whether it is empty), which
    /// reads it whole and may end the walk with a value; every other element is skipped. `root`
    /// checks the root element's name. `None`: the root ended and `found` gave no value. The
    /// datastream reader and the results reader both find their element so.
    pub fn descend<T>(
        &mut self,
        inside: &[&'static str],
        wanted: &str,
        root: impl Fn(&str) -> ScapResult<()>,
        mut found: impl FnMut(&mut Self, BytesStart<'a>, bool) -> ScapResult<Option<T>>,
    ) -> ScapResult<Option<T>> {
        let mut open: Vec<&'static str> = Vec::new();
        let mut root_seen = false;
        loop {
            let (e, empty) = match self.next()? {
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::End(_) => {
                    open.pop();
                    if open.is_empty() {
                        return Ok(None);
                    }
                    continue;
                }
                Event::Eof => {
                    return match open.last() {
                        Some(name) => Err(self.truncated(name)),
                        None if root_seen => Ok(None),
                        None => Err(ScapError::NoRootElement),
                    };
                }
                _ => continue,
            };
            let name = local(&e);
            if !root_seen {
                root_seen = true;
                root(name)?;
            }
            if let Some(w) = inside.iter().find(|w| **w == name).filter(|_| !empty) {
                open.push(w);
            } else if name == wanted {
                if let Some(t) = found(self, e, empty)? {
                    return Ok(Some(t));
                }
            } else if !empty {
                self.skip(&e)?;
            }
        }
    }

    pub fn truncated(&self, element: &str) -> ScapError {
        ScapError::Truncated { offset: self.pos(), element: element.to_string() }
    }

    /// Values of the named (unprefixed) attributes, unescaped.
    pub fn attrs<const N: usize>(&self, e: &BytesStart<'_>, names: [&str; N]) -> ScapResult<[Option<String>; N]> {
        let mut out: [Option<String>; N] = std::array::from_fn(|_| None);
        for a in e.attributes() {
            let a = a.map_err(|err| self.xml_err(err.into()))?;
            let key: &str = a.key.into_inner();
            if let Some(i) = names.iter().position(|n| *n == key) {
                let v = a.normalized_value(XmlVersion::Implicit1_0).map_err(|err| self.xml_err(err))?;
                out[i] = Some(v.into_owned());
            }
        }
        Ok(out)
    }

    /// Every attribute as (qualified name, unescaped value), in document order.
    pub fn all_attrs(&self, e: &BytesStart<'_>) -> ScapResult<Vec<(String, String)>> {
        let mut out = Vec::new();
        for a in e.attributes() {
            let a = a.map_err(|err| self.xml_err(err.into()))?;
            let v = a.normalized_value(XmlVersion::Implicit1_0).map_err(|err| self.xml_err(err))?;
            out.push((a.key.into_inner().to_string(), v.into_owned()));
        }
        Ok(out)
    }

    pub fn attr(&self, e: &BytesStart<'_>, name: &str) -> ScapResult<Option<String>> {
        let [v] = self.attrs(e, [name])?;
        Ok(v)
    }

    /// Resolves `&name;`: character references and the five XML entities only.
    pub fn entity(&self, r: &BytesRef<'_>, out: &mut TextBuilder) -> ScapResult<()> {
        if let Some(c) = r.resolve_char_ref().map_err(|e| self.xml_err(e))? {
            let mut buf = [0u8; 4];
            out.text(c.encode_utf8(&mut buf));
            return Ok(());
        }
        match quick_xml::escape::resolve_predefined_entity(r) {
            Some(s) => {
                out.text(s);
                Ok(())
            }
            None => Err(ScapError::UnknownEntity { name: r.to_string(), offset: self.pos() }),
        }
    }

    /// Reads the content of the element just opened into `out`: text, entities and
    /// (for prose) XHTML structure; `<sub idref>` becomes a placeholder.
    pub fn content(&mut self, name: &str, out: &mut TextBuilder) -> ScapResult<()> {
        let mut depth = 0usize;
        loop {
            match self.next()? {
                Event::Start(e) => {
                    depth += 1;
                    self.open(&e, out)?;
                }
                Event::Empty(e) => {
                    self.open(&e, out)?;
                    out.close(local(&e));
                }
                Event::End(e) => {
                    if depth == 0 {
                        return Ok(());
                    }
                    depth -= 1;
                    out.close(e.local_name().into_inner());
                }
                Event::Text(t) => out.text_raw(&t),
                Event::CData(t) => out.text(&t),
                Event::GeneralRef(r) => self.entity(&r, out)?,
                Event::Eof => return Err(self.truncated(name)),
                Event::Comment(_) | Event::PI(_) | Event::Decl(_) | Event::DocType(_) => {}
            }
        }
    }

    fn open(&self, e: &BytesStart<'_>, out: &mut TextBuilder) -> ScapResult<()> {
        let tag = local(e);
        if tag == "sub" {
            if let Some(idref) = self.attr(e, "idref")? {
                out.sub(idref);
            }
        } else {
            out.open(tag);
        }
        Ok(())
    }

    /// Text of the element just opened, whitespace collapsed, at most `cap` bytes.
    pub fn plain(&mut self, name: &str, cap: usize) -> ScapResult<String> {
        let mut b = TextBuilder::prose(cap);
        self.content(name, &mut b)?;
        Ok(b.finish().plain())
    }
}

/// XCCDF booleans: `true`, `false`, `1`, `0`.
pub(crate) fn parse_bool(v: &str, what: &'static str, offset: u64) -> ScapResult<bool> {
    match v.trim() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        other => Err(ScapError::Invalid { what, value: clip(other), offset }),
    }
}

/// A value quoted in an error, cut to a readable length.
pub(crate) fn clip(s: &str) -> String {
    const MAX: usize = 80;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
