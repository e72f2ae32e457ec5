//! The report as one self-contained HTML file: inline CSS and JS, no network loads (a
//! Content-Security-Policy forbids them too). minijinja escapes every value for HTML. Also the
//! fleet page, and the progress chart the web view draws too.
mod chart;

use minijinja::value::{Serde, Value};
use minijinja::{Environment, context};

pub use chart::svg;

use crate::error::ReportError;
use crate::text::escape;
use crate::view::{FleetReport, Report};

const TEMPLATE: &str = include_str!("../../templates/report.html");
const CSS: &str = include_str!("../../templates/report.css");
const JS: &str = include_str!("../../templates/report.js");
const FLEET: &str = include_str!("../../templates/fleet.html");
/// The plan's steps as a table (`plan`, a `PlanView`; `rule_href` links rules): the report and
/// the web view include it.
pub const PLAN: &str = include_str!("../../templates/plan.html");

pub fn render(r: &Report) -> Result<String, ReportError> {
    let mut env = Environment::new();
    env.add_filter("ticks", ticks);
    // The `.html` name turns HTML auto-escaping on.
    env.add_template("report.html", TEMPLATE)?;
    env.add_template("plan.html", PLAN)?;
    let out = env.get_template("report.html")?.render(context! {
        r => Value::from(Serde(r)),
        // Built and escaped by `chart::svg`.
        chart => Value::from_safe_string(svg(&r.progress)),
        css => CSS,
        js => JS,
    })?;
    Ok(out)
}

/// The fleet report, with the run report's style.
pub fn render_fleet(r: &FleetReport) -> Result<String, ReportError> {
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
