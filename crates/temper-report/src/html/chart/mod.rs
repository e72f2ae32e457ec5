//! The chart as inline SVG, drawn here (no script, no library): a step line of the rules
//! fixed (left axis), the scores in percent (right axis), a `<title>` on every point. Colours
//! are presentation attributes, not `style`, so a strict Content-Security-Policy allows them.
use std::fmt::Write;

use temper_journal::ScanKind;

use crate::run::ProgressChart;
use crate::text::{escape, ms, short, xml_chars};

const W: f64 = 640.0;
const H: f64 = 260.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 56.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;
const FIXED: &str = "#2e7d32";
const SCORE: &str = "#1565c0";
const AXIS: &str = "#666";

/// The chart as HTML: an `<svg>`, or a note while there is nothing to draw.
pub fn svg(p: &ProgressChart) -> String {
    if p.is_empty() {
        return "<p class=\"chart-empty\">No progress yet: no rule has been fixed and no scan has scored the run.</p>".into();
    }
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let end = p.fixed.iter().map(|f| f.secs).chain(p.scores.iter().map(|s| s.secs)).fold(p.until, f64::max).max(1.0);
    let most = p.fixed.iter().map(|f| f.fixed).max().unwrap_or(0).max(1);
    let x = |secs: f64| LEFT + secs / end * plot_w;
    let y_fixed = |n: usize| TOP + plot_h - n as f64 / most as f64 * plot_h;
    let y_score = |s: f64| TOP + plot_h - s.clamp(0.0, 100.0) / 100.0 * plot_h;
    let now = p.fixed.last().map_or(0, |f| f.fixed);
    let score = match (p.scores.first(), p.scores.last()) {
        (Some(a), Some(b)) if p.scores.len() > 1 => format!("; score {:.2}% → {:.2}%", a.score, b.score),
        (Some(a), _) => format!("; score {:.2}%", a.score),
        _ => String::new(),
    };

    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"progress-chart\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-labelledby=\"chart-title\">"
    );
    let _ = write!(s, "<title id=\"chart-title\">{}</title>", esc(&format!("Progress: {now} rules fixed{score}")));
    // Axes, with ticks: time along the bottom, rules fixed on the left, score on the right.
    let (x0, x1, y0, y1) = (LEFT, LEFT + plot_w, TOP, TOP + plot_h);
    let _ = write!(
        s,
        "<g class=\"axes\" stroke=\"{AXIS}\" stroke-width=\"1\"><line x1=\"{x0}\" y1=\"{y1}\" x2=\"{x1}\" y2=\"{y1}\"/><line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x0}\" y2=\"{y1}\"/>"
    );
    if !p.scores.is_empty() {
        let _ = write!(s, "<line x1=\"{x1}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y1}\"/>");
    }
    s.push_str("</g><g class=\"ticks\" font-size=\"11\" fill=\"#444\">");
    for i in 0..=4 {
        let secs = end * f64::from(i) / 4.0;
        let anchor = match i {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        text(&mut s, x(secs), y1 + 16.0, anchor, &ms((secs * 1000.0) as i64));
    }
    let step = most.div_ceil(4);
    for n in (0..=most).step_by(step) {
        text(&mut s, x0 - 6.0, y_fixed(n) + 4.0, "end", &n.to_string());
    }
    if !p.scores.is_empty() {
        for pct in [0.0, 25.0, 50.0, 75.0, 100.0] {
            text(&mut s, x1 + 6.0, y_score(pct) + 4.0, "start", &format!("{pct:.0}%"));
        }
    }
    text(&mut s, (x0 + x1) / 2.0, H - 4.0, "middle", "time since the run's first event");
    s.push_str("</g>");
    legend(&mut s, !p.scores.is_empty());

    // Rules fixed: a step line from zero at the start, a point at each change.
    let mut line = format!("{x0:.1},{:.1}", y_fixed(0));
    let mut last = 0;
    for f in &p.fixed {
        let _ = write!(line, " {:.1},{:.1} {:.1},{:.1}", x(f.secs), y_fixed(last), x(f.secs), y_fixed(f.fixed));
        last = f.fixed;
    }
    let _ = write!(line, " {x1:.1},{:.1}", y_fixed(last));
    let _ = write!(s, "<polyline class=\"fixed-line\" fill=\"none\" stroke=\"{FIXED}\" stroke-width=\"2\" points=\"{line}\"/>");
    for f in &p.fixed {
        let what = if f.gained { "fixed" } else { "lost its fix" };
        let title = format!("{} {what} at {}: {} fixed so far", short(&f.rule_id), ms((f.secs * 1000.0) as i64), f.fixed);
        let _ = write!(
            s,
            "<circle class=\"fixed-point\" data-fixed=\"{}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\"><title>{}</title></circle>",
            f.fixed,
            x(f.secs),
            y_fixed(f.fixed),
            if f.gained { FIXED } else { "#c62828" },
            esc(&title)
        );
    }

    // Scores: a line through each scored scan.
    if !p.scores.is_empty() {
        let points: Vec<String> = p.scores.iter().map(|p| format!("{:.1},{:.1}", x(p.secs), y_score(p.score))).collect();
        let _ = write!(
            s,
            "<polyline class=\"score-line\" fill=\"none\" stroke=\"{SCORE}\" stroke-width=\"2\" stroke-dasharray=\"6 3\" points=\"{}\"/>",
            points.join(" ")
        );
        for p in &p.scores {
            let kind = match p.kind {
                ScanKind::Full => "first scan",
                ScanKind::Final => "final scan",
                ScanKind::Before => "rescan before a fix",
            };
            let title = format!("{kind} at {}: score {:.2}%", ms((p.secs * 1000.0) as i64), p.score);
            let _ = write!(
                s,
                "<circle class=\"score-point\" data-score=\"{:.2}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{SCORE}\"><title>{}</title></circle>",
                p.score,
                x(p.secs),
                y_score(p.score),
                esc(&title)
            );
        }
    }
    s.push_str("</svg>");
    s
}

fn legend(s: &mut String, scores: bool) {
    let _ = write!(s, "<g class=\"legend\" font-size=\"12\"><rect x=\"{LEFT}\" y=\"8\" width=\"12\" height=\"4\" fill=\"{FIXED}\"/>");
    text(s, LEFT + 16.0, 14.0, "start", "rules fixed (left)");
    if scores {
        let _ = write!(s, "<rect x=\"{}\" y=\"8\" width=\"12\" height=\"4\" fill=\"{SCORE}\"/>", LEFT + 150.0);
        text(s, LEFT + 166.0, 14.0, "start", "score, % (right)");
    }
    s.push_str("</g>");
}

fn text(s: &mut String, x: f64, y: f64, anchor: &str, body: &str) {
    let _ = write!(s, "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\">{}</text>", esc(body));
}

/// Text for SVG inside HTML or alone: markup escaped, control characters made visible.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape(&mut out, &xml_chars(s));
    out
}

#[cfg(test)]
mod tests;
