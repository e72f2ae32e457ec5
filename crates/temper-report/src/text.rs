//! Small text helpers shared by the writers.

/// `xccdf_org.ssgproject.content_rule_foo` -> `foo`.
pub fn short(id: &str) -> &str {
    temper_scap::short_rule_id(id)
}

/// Milliseconds as a short human duration: `850 ms`, `12.3 s`, `4 min 05 s`, `1 h 02 min`.
pub fn ms(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 1000 {
        return format!("{ms} ms");
    }
    let s = ms as f64 / 1000.0;
    if s < 60.0 {
        return format!("{s:.1} s");
    }
    let total = ms / 1000;
    if total < 3600 {
        return format!("{} min {:02} s", total / 60, total % 60);
    }
    format!("{} h {:02} min", total / 3600, (total % 3600) / 60)
}

/// Seconds between two RFC 3339 stamps, when both parse.
pub fn span_ms(start: &str, end: Option<&str>) -> Option<i64> {
    let a = chrono::DateTime::parse_from_rfc3339(start).ok()?;
    let b = chrono::DateTime::parse_from_rfc3339(end?).ok()?;
    Some((b - a).num_milliseconds())
}

/// Cuts `s` to at most `max` bytes on a char boundary, saying so.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    format!("{}\n[... cut: {} more bytes]", &s[..i], s.len() - i)
}

/// Writes characters XML 1.0 cannot carry (control characters other than tab, LF and CR,
/// U+FFFE, U+FFFF) as visible escapes (`\x1b`), so command output with ANSI colours stays
/// well-formed and nothing is silently lost.
pub fn xml_chars(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            '\u{FFFE}' | '\u{FFFF}' => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Text for a Markdown paragraph or table cell: HTML-significant characters as entities
/// (a Markdown viewer renders raw HTML), and the characters Markdown would read as markup
/// backslash-escaped. Newlines become `<br>` in cells when `cell` is set.
pub fn md(s: &str, cell: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\r' => {}
            '\n' if cell => out.push_str("<br>"),
            c => out.push(c),
        }
    }
    out
}

/// Like [`md`], but `backticked` parts stay code spans (their text is literal there).
/// A rule id as Markdown text: as it is when it is a plain id (letters, digits, `_.:-`), else
/// escaped as prose ([`md`]). Rule ids come from the guest's results, so one may be anything.
pub fn md_id(s: &str, cell: bool) -> String {
    if plain_id(s) { s.to_string() } else { md(s, cell) }
}

/// A rule id as a code span when it is a plain id; else escaped as prose (a backtick in it
/// would close the span).
pub fn md_code_id(s: &str, cell: bool) -> String {
    if plain_id(s) { format!("`{s}`") } else { md(s, cell) }
}

fn plain_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c))
}

pub fn md_ticks(s: &str) -> String {
    ticks(s, false)
}

/// [`md_ticks`] for a table cell: a `|` is escaped in code spans too, as GFM tables read it.
pub fn md_ticks_cell(s: &str) -> String {
    ticks(s, true)
}

fn ticks(s: &str, cell: bool) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        // An unbalanced last backtick opens nothing: its text is escaped as prose.
        if i % 2 == 1 && i + 1 < parts.len() && !part.contains('\n') {
            out.push('`');
            out.push_str(&if cell { part.replace('|', "\\|") } else { part.to_string() });
            out.push('`');
        } else if i % 2 == 1 {
            out.push_str("\\`");
            out.push_str(&md(part, cell));
            if i + 1 < parts.len() {
                out.push_str("\\`");
            }
        } else {
            out.push_str(&md(part, cell));
        }
    }
    out
}

/// A fenced code block whose fence is longer than any run of backticks inside.
pub fn md_code(s: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let body = s.trim_end_matches('\n');
    format!("{fence}{lang}\n{body}\n{fence}\n")
}

/// Appends `s` with HTML's special characters as entities.
pub fn escape(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(ms(850), "850 ms");
        assert_eq!(ms(12_340), "12.3 s");
        assert_eq!(ms(245_000), "4 min 05 s");
        assert_eq!(ms(3_720_000), "1 h 02 min");
        assert_eq!(span_ms("2026-01-01T00:00:00.000Z", Some("2026-01-01T00:01:00.500Z")), Some(60_500));
        assert_eq!(span_ms("2026-01-01T00:00:00Z", None), None);
    }

    #[test]
    fn markdown_escapes_html_and_markup() {
        assert_eq!(md("a <b> & c | d_e", true), "a &lt;b&gt; &amp; c \\| d\\_e");
        assert_eq!(md("x\ny", true), "x<br>y");
        assert_eq!(md_ticks("run `a <b>` & <c>"), "run `a <b>` &amp; &lt;c&gt;");
        assert_eq!(md_ticks("x ` <y>"), "x \\` &lt;y&gt;");
        assert_eq!(md_ticks("a `b\nc` d"), "a \\`b\nc\\` d");
        let code = md_code("echo ```` done", "bash");
        assert!(code.starts_with("`````bash\n"), "{code}");
        assert!(code.ends_with("\n`````\n"));
    }

    #[test]
    fn xml_control_chars_replaced() {
        assert_eq!(xml_chars("a\u{1b}[31mred\tb\n\u{0}\u{FFFF}"), "a\\x1b[31mred\tb\n\\x00\\u{ffff}");
    }

    #[test]
    fn clip_on_char_boundary() {
        let s = "ééé";
        assert!(clip(s, 3).starts_with("é"));
        assert_eq!(clip("abc", 10), "abc");
    }

    #[test]
    fn a_rule_id_from_the_guest_is_text_never_markup() {
        assert_eq!(md_id("sshd_set_keepalive", false), "sshd_set_keepalive");
        assert_eq!(md_code_id("sshd_set_keepalive", true), "`sshd_set_keepalive`");
        let evil = "x`<script>alert(1)</script>[a](http://e)|";
        for out in [md_id(evil, true), md_code_id(evil, true)] {
            assert!(!out.contains("<script") && !out.contains("[a](") && !out.contains("`<") && !out.contains(")|"), "{out}");
            assert!(out.starts_with("x\\`&lt;script&gt;"), "{out}");
        }
    }
}
