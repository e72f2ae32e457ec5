//! The OVAL variables document for `oscap oval eval --variables`: the profile's values bound
//! to the external variables, as `oscap xccdf eval --export-variables` writes it.
use std::fmt::Write;
use std::sync::LazyLock;

use regex::Regex;

use super::doc::escape;

const VARIABLES_NS: &str = "http://oval.mitre.org/XMLSchema/oval-variables-5";
const COMMON_NS: &str = "http://oval.mitre.org/XMLSchema/oval-common-5";
const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";

static SCHEMA_VERSION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"schema_version[^>]*>\s*([^<\s]+)").unwrap());
static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"timestamp[^>]*>\s*([^<\s]+)").unwrap());

/// One external variable with its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    pub id: String,
    pub datatype: String,
    pub value: String,
}

/// The document, with the schema version and timestamp of the definitions' generator (so the
/// same plan always gives the same bytes). `None` when there is nothing to bind.
pub(crate) fn variables_document(bindings: &[Binding], generator: &str) -> Option<Vec<u8>> {
    if bindings.is_empty() {
        return None;
    }
    let version = SCHEMA_VERSION.captures(generator).map_or("5.11.1", |c| c.get(1).map_or("5.11.1", |m| m.as_str()));
    let stamp = TIMESTAMP.captures(generator).map_or("1970-01-01T00:00:00", |c| c.get(1).map_or("1970-01-01T00:00:00", |m| m.as_str()));
    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    writeln!(out, "<oval_variables xmlns:xsi=\"{XSI_NS}\" xmlns:oval=\"{COMMON_NS}\" xmlns=\"{VARIABLES_NS}\">").unwrap();
    out.push_str("  <generator>\n    <oval:product_name>temper</oval:product_name>\n");
    writeln!(out, "    <oval:schema_version>{}</oval:schema_version>", escape(version)).unwrap();
    writeln!(out, "    <oval:timestamp>{}</oval:timestamp>\n  </generator>\n  <variables>", escape(stamp)).unwrap();
    for b in bindings {
        writeln!(out, "    <variable id=\"{}\" datatype=\"{}\" comment=\"Unknown\">", escape(&b.id), escape(&b.datatype)).unwrap();
        writeln!(out, "      <value>{}</value>\n    </variable>", escape(&b.value)).unwrap();
    }
    out.push_str("  </variables>\n</oval_variables>\n");
    Some(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_bindings_escaped() {
        let b = [Binding { id: "oval:x:var:1".into(), datatype: "string".into(), value: "a<b & \"c\"".into() }];
        let gen_ =
            "<oval-def:generator><oval:schema_version>5.11</oval:schema_version><oval:timestamp>2025-03-01T08:08:00</oval:timestamp>";
        let doc = String::from_utf8(variables_document(&b, gen_).unwrap()).unwrap();
        assert!(doc.contains("<value>a&lt;b &amp; &quot;c&quot;</value>"), "{doc}");
        assert!(doc.contains("<oval:schema_version>5.11</oval:schema_version>"));
        assert!(doc.contains("<oval:timestamp>2025-03-01T08:08:00</oval:timestamp>"));
        assert!(variables_document(&[], gen_).is_none());
    }
}
