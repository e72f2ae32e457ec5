//! The formats a report is written in.
use std::str::FromStr;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Md,
    Html,
    Json,
    /// STIG Viewer 2 checklist (XML).
    Ckl,
    /// STIG Viewer 3 checklist (JSON).
    Cklb,
    /// OSCAL assessment results (JSON).
    OscalAr,
    /// OSCAL plan of action and milestones (JSON).
    OscalPoam,
    /// Heimdall Data Format (JSON).
    Hdf,
}

impl Format {
    pub const ALL: [Format; 8] = [Self::Md, Self::Html, Self::Json, Self::Ckl, Self::Cklb, Self::OscalAr, Self::OscalPoam, Self::Hdf];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Md => "md",
            Self::Html => "html",
            Self::Json => "json",
            Self::Ckl => "ckl",
            Self::Cklb => "cklb",
            Self::OscalAr => "oscal-ar",
            Self::OscalPoam => "oscal-poam",
            Self::Hdf => "hdf",
        }
    }

    /// A file's extension: the name, with `.json` after the JSON formats that are not named so.
    pub fn extension(self) -> &'static str {
        match self {
            Self::OscalAr => "oscal-ar.json",
            Self::OscalPoam => "oscal-poam.json",
            Self::Hdf => "hdf.json",
            Self::Md | Self::Html | Self::Json | Self::Ckl | Self::Cklb => self.as_str(),
        }
    }

    /// Every format's name, for messages: `md, html, json, ckl, cklb, oscal-ar, oscal-poam or hdf`.
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|f| f.as_str()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

/// A `--format` that names no format.
#[derive(Debug, thiserror::Error)]
#[error("unknown format `{0}`: use {names}", names = Format::names())]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, UnknownFormat> {
        Self::ALL.into_iter().find(|f| f.as_str().eq_ignore_ascii_case(s)).ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// The CLI's `--format`: the names above, without help per value.
#[cfg(feature = "clap")]
impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
