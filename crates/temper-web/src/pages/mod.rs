//! The HTML pages: minijinja templates under `templates/`, auto-escaped (their names end in
//! `.html`), so every value from the store is text, never markup.
mod format;
mod view;

use axum::response::Html;
use minijinja::Environment;
use minijinja::value::{Serde, Value};
use serde::Serialize;

use crate::WebError;
pub use view::{EventView, LabeledAttempt, RunRow};

const TEMPLATES: [(&str, &str); 4] = [
    ("base.html", include_str!("../../templates/base.html")),
    ("index.html", include_str!("../../templates/index.html")),
    ("run.html", include_str!("../../templates/run.html")),
    ("rule.html", include_str!("../../templates/rule.html")),
];

/// The templates, compiled once.
pub struct Pages {
    env: Environment<'static>,
}

impl Pages {
    pub fn new() -> Result<Self, WebError> {
        let mut env = Environment::new();
        env.add_filter("short", |id: String| format::short_id(&id).to_string());
        env.add_filter("ms", |ms: Option<i64>| ms.map(temper_report::human_duration).unwrap_or_default());
        env.add_filter("pct", |v: Option<f64>| format::percent(v));
        env.add_template("plan.html", temper_report::PLAN_TEMPLATE)?;
        for (name, source) in TEMPLATES {
            env.add_template(name, source)?;
        }
        Ok(Self { env })
    }

    pub fn render(&self, name: &str, context: impl Serialize) -> Result<Html<String>, WebError> {
        Ok(Html(self.env.get_template(name)?.render(Value::from(Serde(context)))?))
    }
}
