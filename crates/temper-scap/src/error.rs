//! Errors of the readers. Offsets are byte offsets into the input.
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ScapError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("malformed XML at byte {offset}: {source}")]
    Xml {
        offset: u64,
        #[source]
        source: quick_xml::Error,
    },
    #[error("input is not valid UTF-8 (first bad byte at {offset})")]
    NotUtf8 { offset: usize },
    #[error("input ends at byte {offset} inside <{element}>: truncated?")]
    Truncated { offset: u64, element: String },
    #[error("<{element}> at byte {offset} is nested deeper than {limit} elements: refused (no SCAP document needs that many)")]
    TooDeep { limit: usize, element: String, offset: u64 },
    #[error("input is empty")]
    Empty,
    #[error("no XML element found: not XML?")]
    NoRootElement,
    #[error("DTDs are refused (byte {offset}): SCAP content never needs one")]
    Dtd { offset: u64 },
    #[error("unknown entity `&{name};` at byte {offset}: only the five XML entities and character references are read")]
    UnknownEntity { name: String, offset: u64 },
    #[error("not a SCAP source datastream or XCCDF benchmark: the root element is <{0}>")]
    NotADatastream(String),
    #[error("not an XCCDF 1.2 tailoring file: the root element is <{0}>")]
    NotTailoring(String),
    #[error("not an XCCDF results or ARF file: the root element is <{0}>")]
    NotResults(String),
    #[error("no XCCDF Benchmark in the datastream")]
    NoBenchmark,
    #[error("no XCCDF TestResult in the input")]
    NoTestResult,
    #[error("profile `{0}` not found")]
    ProfileNotFound(String),
    #[error("profile name `{name}` is ambiguous: {candidates:?}")]
    ProfileAmbiguous { name: String, candidates: Vec<String> },
    #[error("profile `{0}` extends itself through a cycle")]
    ProfileCycle(String),
    #[error("{what} is larger than the limit of {limit} bytes (at byte {offset})")]
    TooLarge { what: String, limit: u64, offset: u64 },
    #[error("invalid {what} `{value}` at byte {offset}")]
    Invalid { what: &'static str, value: String, offset: u64 },
    #[error("<{element}> at byte {offset} lacks the `{attr}` attribute")]
    MissingAttr { element: &'static str, attr: &'static str, offset: u64 },
}

pub type ScapResult<T, E = ScapError> = std::result::Result<T, E>;

impl ScapError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io { path: path.to_path_buf(), source }
    }
}
