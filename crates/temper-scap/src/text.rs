//! XCCDF prose (XHTML) and fix scripts as text. `<sub idref>` placeholders are kept as
//! parts and resolved once the profile's values are known.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TextPart {
    Text(String),
    Sub(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Template {
    parts: Vec<TextPart>,
    /// The source was longer than the cap and was cut.
    pub truncated: bool,
}

impl Template {
    /// Text with each `<sub>` replaced by `lookup(idref)`; misses are pushed to `unresolved`
    /// and replaced by nothing.
    pub fn render<'v>(&self, lookup: impl Fn(&str) -> Option<&'v str>, unresolved: &mut Vec<String>) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                TextPart::Text(t) => out.push_str(t),
                TextPart::Sub(id) => match lookup(id) {
                    Some(v) => out.push_str(v),
                    None => {
                        if !unresolved.contains(id) {
                            unresolved.push(id.clone());
                        }
                    }
                },
            }
        }
        out
    }

    /// Text with placeholders dropped.
    pub fn plain(&self) -> String {
        self.render(|_| None, &mut Vec::new())
    }

    pub fn has_subs(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, TextPart::Sub(_)))
    }
}

/// Marker appended to prose cut at its cap.
pub const TRUNCATED: &str = " … [truncated]";

/// Builds a [`Template`] from text events and tags.
///
/// Prose mode collapses whitespace (a blank line in the source stays a paragraph break),
/// keeps `<pre>` as is, and turns `<br>`, `<p>`, `<li>` into line breaks. Raw mode (fix
/// scripts) keeps every byte.
pub(crate) struct TextBuilder {
    prose: bool,
    parts: Vec<TextPart>,
    cur: String,
    cap: usize,
    used: usize,
    truncated: bool,
    started: bool,
    ws_seen: bool,
    nl_run: u32,
    breaks: u8,
    pre: u32,
}

impl TextBuilder {
    pub fn prose(cap: usize) -> Self {
        Self::new(true, cap)
    }

    pub fn raw(cap: usize) -> Self {
        Self::new(false, cap)
    }

    fn new(prose: bool, cap: usize) -> Self {
        Self {
            prose,
            parts: Vec::new(),
            cur: String::new(),
            cap,
            used: 0,
            truncated: false,
            started: false,
            ws_seen: false,
            nl_run: 0,
            breaks: 0,
            pre: 0,
        }
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Takes up to the remaining room of `s`; marks truncation.
    fn room<'s>(&mut self, s: &'s str) -> &'s str {
        if self.truncated {
            return "";
        }
        let room = self.cap - self.used;
        if s.len() <= room {
            self.used += s.len();
            return s;
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.used = self.cap;
        self.truncated = true;
        &s[..end]
    }

    /// Character data (already unescaped). Line ends are normalised to `\n`.
    pub fn text(&mut self, s: &str) {
        let s = self.room(s);
        if s.is_empty() {
            return;
        }
        if s.contains('\r') {
            let n = s.replace("\r\n", "\n").replace('\r', "\n");
            self.push_text(&n);
        } else {
            self.push_text(s);
        }
    }

    /// Alias of [`text`](Self::text) for a text event's raw (entity-free) content.
    pub fn text_raw(&mut self, s: &str) {
        self.text(s)
    }

    fn push_text(&mut self, s: &str) {
        if !self.prose || self.pre > 0 {
            self.flush();
            self.cur.push_str(s);
            self.started = true;
            return;
        }
        let mut rest = s;
        while !rest.is_empty() {
            let ws = rest.find(|c: char| !c.is_whitespace()).unwrap_or(rest.len());
            if ws > 0 {
                self.ws_seen = true;
                // A blank line inside one text run is a paragraph break; newlines of
                // pretty-printing spread over several runs between tags are not.
                self.nl_run = self.nl_run.max(rest[..ws].matches('\n').count() as u32);
                rest = &rest[ws..];
                continue;
            }
            let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
            self.flush();
            self.cur.push_str(&rest[..word]);
            self.started = true;
            rest = &rest[word..];
        }
    }

    /// Emits the pending space or line breaks before new content.
    fn flush(&mut self) {
        if self.started && self.prose {
            let want = if self.nl_run >= 2 { self.breaks.max(2) } else { self.breaks };
            if want > 0 {
                while self.cur.ends_with([' ', '\t']) {
                    self.cur.pop();
                }
                let have = self.cur.len() - self.cur.trim_end_matches('\n').len();
                for _ in have..want as usize {
                    self.cur.push('\n');
                }
            } else if self.ws_seen && !self.cur.ends_with([' ', '\n']) {
                self.cur.push(' ');
            }
        }
        self.breaks = 0;
        self.ws_seen = false;
        self.nl_run = 0;
    }

    fn want_breaks(&mut self, n: u8) {
        self.breaks = self.breaks.max(n);
    }

    pub fn sub(&mut self, idref: String) {
        if self.room(&idref).len() < idref.len() {
            return;
        }
        self.flush();
        if !self.cur.is_empty() {
            self.parts.push(TextPart::Text(std::mem::take(&mut self.cur)));
        }
        self.parts.push(TextPart::Sub(idref));
        self.started = true;
    }

    /// An XHTML start tag (local name).
    pub fn open(&mut self, tag: &str) {
        if !self.prose {
            return;
        }
        match tag {
            "br" => self.breaks = (self.breaks + 1).min(2),
            "p" | "div" | "table" | "blockquote" => self.want_breaks(2),
            "ul" | "ol" | "tr" | "dt" | "dd" => self.want_breaks(1),
            "li" => {
                self.want_breaks(1);
                self.flush();
                self.cur.push_str("- ");
                self.started = true;
            }
            "pre" => {
                self.want_breaks(1);
                self.pre += 1;
            }
            "td" | "th" => self.ws_seen = true,
            _ => {}
        }
    }

    /// An XHTML end tag (local name).
    pub fn close(&mut self, tag: &str) {
        if !self.prose {
            return;
        }
        match tag {
            "p" | "div" | "table" | "blockquote" => self.want_breaks(2),
            "ul" | "ol" | "li" | "tr" | "dt" | "dd" => self.want_breaks(1),
            "pre" if self.pre > 0 => {
                self.pre -= 1;
                let keep = self.cur.trim_end().len();
                self.cur.truncate(keep);
                self.want_breaks(1);
            }
            "td" | "th" => self.ws_seen = true,
            _ => {}
        }
    }

    pub fn finish(mut self) -> Template {
        if self.prose {
            let keep = self.cur.trim_end().len();
            self.cur.truncate(keep);
            if self.truncated {
                self.cur.push_str(TRUNCATED);
            }
        }
        if !self.cur.is_empty() {
            self.parts.push(TextPart::Text(self.cur));
        }
        Template { parts: self.parts, truncated: self.truncated }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prose(events: &[(&str, &str)]) -> String {
        let mut b = TextBuilder::prose(1 << 20);
        for (kind, v) in events {
            match *kind {
                "t" => b.text(v),
                "o" => b.open(v),
                "c" => b.close(v),
                "s" => b.sub(v.to_string()),
                _ => unreachable!(),
            }
        }
        b.finish().render(|id| (id == "v").then_some("027"), &mut Vec::new())
    }

    #[test]
    fn collapses_whitespace_and_keeps_paragraphs() {
        let s = prose(&[
            ("t", "  The root user\n   should never.\n\n\nTo disable, add "),
            ("o", "code"),
            ("t", "/etc/x"),
            ("c", "code"),
            ("t", ":\n\n"),
        ]);
        assert_eq!(s, "The root user should never.\n\nTo disable, add /etc/x:");
    }

    #[test]
    fn pre_is_verbatim_and_subs_resolve() {
        let s =
            prose(&[("t", "as follows:\n"), ("o", "pre"), ("t", "umask "), ("s", "v"), ("t", "\n   "), ("c", "pre"), ("t", "\n  done")]);
        assert_eq!(s, "as follows:\numask 027\ndone");
    }

    #[test]
    fn lists_and_breaks() {
        let s = prose(&[
            ("t", "Items:"),
            ("o", "ul"),
            ("o", "li"),
            ("t", "one"),
            ("c", "li"),
            ("o", "li"),
            ("t", " two "),
            ("c", "li"),
            ("c", "ul"),
            ("t", "end"),
            ("o", "br"),
            ("c", "br"),
            ("t", "next"),
        ]);
        assert_eq!(s, "Items:\n- one\n- two\nend\nnext");
    }

    #[test]
    fn raw_keeps_bytes_and_normalises_line_ends() {
        let mut b = TextBuilder::raw(1 << 20);
        b.text("a=1\r\n  b='");
        b.sub("v".into());
        b.text("'\r");
        let mut missing = Vec::new();
        assert_eq!(b.finish().render(|_| None, &mut missing), "a=1\n  b=''\n");
        assert_eq!(missing, vec!["v".to_string()]);
    }

    #[test]
    fn cap_truncates_on_char_boundary() {
        let mut b = TextBuilder::prose(5);
        b.text("héllo world");
        assert!(b.truncated());
        let t = b.finish();
        assert!(t.truncated);
        assert_eq!(t.plain(), format!("héll{TRUNCATED}"));
    }
}
