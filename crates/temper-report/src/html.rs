//! The report as one self-contained HTML file: inline CSS and JS, no network loads (a
//! Content-Security-Policy forbids them too). minijinja escapes every value for HTML.
use minijinja::value::{Serde, Value};
use minijinja::{Environment, context};

use crate::ReportError;
use crate::view::Report;

const TEMPLATE: &str = include_str!("../templates/report.html");
const CSS: &str = include_str!("../templates/report.css");
const JS: &str = include_str!("../templates/report.js");

pub fn render(r: &Report) -> Result<String, ReportError> {
    let mut env = Environment::new();
    // The `.html` name turns HTML auto-escaping on.
    env.add_template("report.html", TEMPLATE)?;
    let out = env.get_template("report.html")?.render(context! {
        r => Value::from(Serde(r)),
        css => CSS,
        js => JS,
    })?;
    Ok(out)
}
