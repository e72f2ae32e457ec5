//! The report as one self-contained HTML file: inline CSS and JS, no network loads (a
//! Content-Security-Policy forbids them too). minijinja escapes every value for HTML.
use minijinja::value::{Serde, Value};
use minijinja::{Environment, context};

use crate::ReportError;
use crate::view::Report;

const TEMPLATE: &str = include_str!("../templates/report.html");
const CSS: &str = include_str!("../templates/report.css");
const JS: &str = include_str!("../templates/report.js");
const FLEET: &str = include_str!("../templates/fleet.html");

pub fn render(r: &Report) -> Result<String, ReportError> {
    let mut env = Environment::new();
    env.add_filter("ticks", ticks);
    // The `.html` name turns HTML auto-escaping on.
    env.add_template("report.html", TEMPLATE)?;
    let out = env.get_template("report.html")?.render(context! {
        r => Value::from(Serde(r)),
        // Built and escaped by `chart::svg`.
        chart => Value::from_safe_string(crate::chart::svg(&r.progress)),
        css => CSS,
        js => JS,
    })?;
    Ok(out)
}

/// The fleet report, with the run report's style.
pub fn render_fleet(r: &crate::FleetReport) -> Result<String, ReportError> {
    let mut env = Environment::new();
    env.add_filter("ticks", ticks);
    env.add_template("fleet.html", FLEET)?;
    Ok(env.get_template("fleet.html")?.render(context! { r => Value::from(Serde(r)), css => CSS })?)
}

/// Escapes `s` and shows its `backticked` parts as code.
fn ticks(s: String) -> Value {
    let mut out = String::with_capacity(s.len() + 16);
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str("<code>");
            escape(&mut out, part);
            out.push_str("</code>");
        } else {
            escape(&mut out, part);
        }
    }
    Value::from_safe_string(out)
}

/// Appends `s` with HTML's special characters as entities.
pub(crate) fn escape(out: &mut String, s: &str) {
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
    fn ticks_escape_and_mark_code() {
        assert_eq!(ticks("run `a <b>` & \"c\"".into()).to_string(), "run <code>a &lt;b&gt;</code> &amp; &quot;c&quot;");
        // An unbalanced backtick still escapes everything.
        assert_eq!(ticks("x ` <script>".into()).to_string(), "x <code> &lt;script&gt;</code>");
    }
}
