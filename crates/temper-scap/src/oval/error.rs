//! Errors of the OVAL engine's host side.
use crate::error::ScapError;

#[derive(Debug, thiserror::Error)]
pub enum OvalError {
    #[error(transparent)]
    Scap(#[from] ScapError),
    #[error("not a SCAP source datastream: the OVAL engine needs one (root element <{0}>)")]
    NotADatastream(String),
    #[error("not OVAL definitions: the root element is <{0}>")]
    NotOvalDefinitions(String),
    #[error("the datastream has no XCCDF Benchmark")]
    NoBenchmark,
    #[error("OVAL id `{id}` is referenced by `{from}` but not defined in {component}")]
    UnknownId { id: String, from: String, component: String },
    #[error("OVAL id `{id}` is defined twice in {component}")]
    DuplicateId { id: String, component: String },
    #[error("rule `{0}` is not in the Benchmark")]
    UnknownRule(String),
    #[error("namespace prefix `{prefix}` means `{first}` in one OVAL component and `{second}` in another")]
    NamespaceClash { prefix: String, first: String, second: String },
    #[error("not OVAL results: the root element is <{0}>")]
    NotOvalResults(String),
    #[error("<{element}> has an invalid {why}")]
    BadAttribute { element: String, why: String },
    #[error("invalid OVAL result `{value}` for `{id}`")]
    BadResult { id: String, value: String },
}

pub type OvalResult<T, E = OvalError> = std::result::Result<T, E>;
