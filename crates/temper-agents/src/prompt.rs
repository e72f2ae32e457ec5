//! Prompt assembly under a token budget.
//!
//! Sections carry a priority (0 first). They are placed in priority order; one that no longer fits
//! is cut (when it may be) or dropped, and every fate is recorded. The assembled prompt keeps the
//! sections' original order. Token counts are estimates: [`estimate_tokens`]. A section of
//! text temper does not vouch for is fenced ([`PromptSection::data`], [`fence`]); a cut keeps its fence.
use temper_journal::turn::Fate;
use temper_journal::turn::SectionFate;

use crate::text::clip_bytes;

pub mod fence;

pub use fence::Fence;

/// Estimated tokens of `s`: bytes / 2.5, rounded up.
///
/// Measured with Qwen2.5's tokenizer (llama.cpp `/tokenize`): English prose runs ~4.6 bytes per
/// token, JSON ~3.6, bash ~2.6 and SCAP rule ids ~2.75. The common chars/4 rule undercounts bash
/// by a third, so this uses 2.5 to stay on the safe side of the context window.
pub fn estimate_tokens(s: &str) -> u32 {
    u32::try_from((s.len() * 2).div_ceil(5)).unwrap_or(u32::MAX)
}

/// Tokens the separator between two sections costs.
const SEP_TOKENS: u32 = 1;
/// A cut shorter than this is not worth keeping: the section is dropped instead.
const MIN_CUT_TOKENS: u32 = 24;
const CUT_MARK_HEAD: &str = "\n[... cut to fit the prompt budget]";
const CUT_MARK_TAIL: &str = "[... earlier part cut to fit the prompt budget]\n";

/// Which end of a section survives a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Head,
    Tail,
}

#[derive(Debug, Clone)]
pub struct PromptSection {
    pub name: String,
    pub text: String,
    /// 0 is placed first.
    pub priority: u8,
    /// A required section that cannot be placed fails the assembly.
    pub required: bool,
    /// Whether it may be shortened; otherwise it is kept whole or dropped.
    pub cuttable: bool,
    pub keep: Keep,
    /// Text around `text`, never cut: a data section's heading and fence.
    pub frame: Option<(String, String)>,
}

impl PromptSection {
    /// A section kept whole or not at all; required.
    pub fn fixed(name: &str, text: String) -> Self {
        Self { name: name.into(), text, priority: 0, required: true, cuttable: false, keep: Keep::Head, frame: None }
    }

    /// An optional section that may be cut, keeping its head.
    pub fn optional(name: &str, priority: u8, text: String) -> Self {
        Self { name: name.into(), text, priority, required: false, cuttable: true, keep: Keep::Head, frame: None }
    }

    /// An optional section of data from `source` (in words) under `heading`: escaped and fenced
    /// with `fence`, the fence kept whole however the text is cut.
    pub fn data(fence: &Fence, name: &str, priority: u8, heading: &str, source: &str, text: &str) -> Self {
        let frame = Some((format!("{heading}\n{}", fence.open(source)), fence.close()));
        Self { frame, ..Self::optional(name, priority, fence::escape(text.trim())) }
    }

    /// Whether the section is fenced data.
    pub fn is_data(&self) -> bool {
        self.frame.is_some()
    }

    /// The text as placed whole: framed, when it has a frame.
    fn whole(&self, text: &str) -> String {
        match &self.frame {
            Some((before, after)) => format!("{before}{text}{after}"),
            None => text.to_string(),
        }
    }

    /// What the frame costs.
    fn frame_tokens(&self) -> u32 {
        self.frame.as_ref().map_or(0, |(b, a)| estimate_tokens(b) + estimate_tokens(a))
    }

    pub fn keep_tail(mut self) -> Self {
        self.keep = Keep::Tail;
        self
    }

    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
}

#[derive(Debug, Clone)]
pub struct Assembled {
    /// Kept sections (whole or cut), in their original order: (name, text).
    pub parts: Vec<(String, String)>,
    pub fates: Vec<SectionFate>,
    pub tokens: u32,
}

impl Assembled {
    /// The text of one kept section.
    pub fn part(&self, name: &str) -> Option<&str> {
        self.parts.iter().find(|(n, _)| n == name).map(|(_, t)| t.as_str())
    }

    /// Kept sections other than those named in `except`, joined by blank lines.
    pub fn join_except(&self, except: &[&str]) -> String {
        let texts: Vec<&str> = self.parts.iter().filter(|(n, _)| !except.contains(&n.as_str())).map(|(_, t)| t.as_str()).collect();
        texts.join("\n\n")
    }
}

#[derive(Debug, thiserror::Error)]
#[error("prompt budget of {budget} tokens cannot hold the required section `{name}` (~{needed} tokens)")]
pub struct BudgetError {
    pub name: String,
    pub needed: u32,
    pub budget: u32,
}

pub fn assemble(sections: Vec<PromptSection>, budget: u32) -> Result<Assembled, BudgetError> {
    let mut order: Vec<usize> = (0..sections.len()).collect();
    order.sort_by_key(|&i| (sections[i].priority, i));
    let mut placed: Vec<Option<(String, Fate)>> = vec![None; sections.len()];
    let mut left = budget;
    for i in order {
        let s = &sections[i];
        let whole = s.whole(&s.text);
        let cost = estimate_tokens(&whole) + SEP_TOKENS;
        let frame = s.frame_tokens();
        if cost <= left {
            left -= cost;
            placed[i] = Some((whole, Fate::Kept));
        } else if s.cuttable && left >= MIN_CUT_TOKENS + SEP_TOKENS + frame {
            let cut = s.whole(&cut_to(&s.text, left - SEP_TOKENS - frame, s.keep));
            left = left.saturating_sub(estimate_tokens(&cut) + SEP_TOKENS);
            placed[i] = Some((cut, Fate::Cut));
        } else if s.required {
            return Err(BudgetError { name: s.name.clone(), needed: cost, budget });
        }
    }
    let mut parts = Vec::new();
    let mut fates = Vec::new();
    for (s, p) in sections.iter().zip(placed) {
        match p {
            Some((text, fate)) => {
                fates.push(SectionFate { name: s.name.clone(), fate, chars: text.chars().count() });
                parts.push((s.name.clone(), text));
            }
            None => fates.push(SectionFate { name: s.name.clone(), fate: Fate::Dropped, chars: 0 }),
        }
    }
    Ok(Assembled { parts, fates, tokens: budget - left })
}

/// The largest piece of `text` (plus a cut mark) whose estimate fits `tokens`.
fn cut_to(text: &str, tokens: u32, keep: Keep) -> String {
    let mark = match keep {
        Keep::Head => CUT_MARK_HEAD,
        Keep::Tail => CUT_MARK_TAIL,
    };
    // estimate_tokens(x) <= tokens  <=>  2 * len(x) <= 5 * tokens.
    let max_bytes = (tokens as usize * 5 / 2).saturating_sub(mark.len());
    match keep {
        Keep::Head => {
            let mut head = clip_bytes(text, max_bytes);
            // Prefer a line boundary when it keeps most of the room.
            if let Some(nl) = head.rfind('\n').filter(|&nl| nl >= head.len() / 2) {
                head = &head[..nl];
            }
            format!("{head}{mark}")
        }
        Keep::Tail => {
            let mut start = text.len().saturating_sub(max_bytes);
            while !text.is_char_boundary(start) {
                start += 1;
            }
            let mut tail = &text[start..];
            if let Some(nl) = tail.find('\n').filter(|&nl| nl <= tail.len() / 2) {
                tail = &tail[nl + 1..];
            }
            format!("{mark}{tail}")
        }
    }
}

#[cfg(test)]
mod tests;
