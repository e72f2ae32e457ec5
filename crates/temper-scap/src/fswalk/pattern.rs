//! OVAL's `pattern match`, as oscap matches it: PCRE in UTF-8 mode without Unicode classes
//! (`\w` is ASCII), and `$` also before a final newline. A name that is not UTF-8 cannot be
//! matched at all: oscap reports an error for the object, and so does the walk.
use regex::bytes::{Regex, RegexBuilder};

#[derive(Debug, Clone)]
pub struct Pattern(Regex);

/// Why a name could not be matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8;

impl Pattern {
    pub fn new(pcre: &str) -> Result<Self, String> {
        RegexBuilder::new(&translate(pcre))
            .unicode(false)
            .size_limit(1 << 22)
            .build()
            .map(Self)
            .map_err(|e| format!("pattern {pcre:?}: {e}"))
    }

    pub fn is_match(&self, s: &[u8]) -> Result<bool, NotUtf8> {
        if std::str::from_utf8(s).is_err() {
            return Err(NotUtf8);
        }
        Ok(self.0.is_match(s))
    }
}

/// PCRE's `$` and `\Z` in Rust's syntax: end of text, or before a newline that ends it.
fn translate(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 8);
    let mut chars = p.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('Z') if !in_class => out.push_str(r"(?:\n?\z)"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` first in a class (or after `^`) is a literal.
                let rest = chars.as_str();
                let skip = if rest.starts_with("^]") { 2 } else { usize::from(rest.starts_with(']')) };
                for _ in 0..skip {
                    let n = chars.next().expect("peeked");
                    if n == ']' {
                        out.push('\\');
                    }
                    out.push(n);
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '$' if !in_class => out.push_str(r"(?:\n?\z)"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollar_also_matches_before_a_final_newline_as_in_pcre() {
        let p = Pattern::new("^.*$").unwrap();
        assert_eq!(p.is_match(b"abc\n"), Ok(true));
        assert_eq!(p.is_match(b"a\nb"), Ok(false));
        assert_eq!(Pattern::new("^[$]x$").unwrap().is_match(b"$x"), Ok(true));
    }

    #[test]
    fn word_classes_are_ascii_and_bad_utf8_is_an_error() {
        let w = Pattern::new(r"^\w+$").unwrap();
        assert_eq!(w.is_match("é".as_bytes()), Ok(false));
        assert_eq!(w.is_match(b"su_do"), Ok(true));
        assert_eq!(w.is_match(b"bad\xffbyte"), Err(NotUtf8));
        assert_eq!(Pattern::new(r"^[]a]$").unwrap().is_match(b"]"), Ok(true));
    }
}
