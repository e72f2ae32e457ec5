//! Names in the guest that belong to one run of oscap: its results, its inputs (a tailoring
//! copy, or an OVAL document and its variables), its pid file and its working folder
//! (`/var/tmp/temper-<tag>-<n>.xml`, …). Two scanners in one guest never share one, and each
//! is removed once read.
use std::hash::{BuildHasher, Hasher};

/// The files of one oscap run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFiles {
    pub results: String,
    pub tailoring: String,
    /// Holds oscap's PID, so that a stalled run is killed alone.
    pub pid: String,
    /// The OVAL engine's definitions document and its external variables.
    pub document: String,
    pub variables: String,
    /// The folder oscap runs in when it writes documents there (`--oval-results`).
    pub workdir: String,
}

impl ScanFiles {
    pub fn new(dir: &str, tag: &str, n: u32) -> Self {
        let stem = format!("{}/temper-{tag}-{n}", dir.trim_end_matches('/'));
        Self {
            results: format!("{stem}.xml"),
            tailoring: format!("{stem}-tailoring.xml"),
            pid: format!("{stem}.pid"),
            document: format!("{stem}-oval.xml"),
            variables: format!("{stem}-variables.xml"),
            workdir: format!("{stem}-oscap"),
        }
    }

    pub fn all(&self) -> [&str; 6] {
        [&self.results, &self.tailoring, &self.pid, &self.document, &self.variables, &self.workdir]
    }
}

/// 16 hex digits from the standard library's per-process random hasher keys.
pub fn random_tag() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_per_tag_and_number() {
        let f = ScanFiles::new("/var/tmp/", "r7-ab", 3);
        assert_eq!(
            f.all(),
            [
                "/var/tmp/temper-r7-ab-3.xml",
                "/var/tmp/temper-r7-ab-3-tailoring.xml",
                "/var/tmp/temper-r7-ab-3.pid",
                "/var/tmp/temper-r7-ab-3-oval.xml",
                "/var/tmp/temper-r7-ab-3-variables.xml",
                "/var/tmp/temper-r7-ab-3-oscap"
            ]
        );
        assert_ne!(ScanFiles::new("/var/tmp", "a", 1), ScanFiles::new("/var/tmp", "a", 2));
        let (a, b) = (random_tag(), random_tag());
        assert_ne!(a, b, "two scanners get two tags");
        assert!(a.len() == 16 && a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
    }
}
