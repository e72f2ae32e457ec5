//! `/runs/{id}/report.{md,html,json,ckl,cklb,oscal-ar,oscal-poam,hdf}`: the run's report,
//! checklist or assessment file, as `temper report` writes it, as a download.
use std::str::FromStr;

use axum::extract::{Path, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use temper_report::{Format, RunData, load, render};

use crate::WebError;
use crate::state::AppState;
use temper_journal::RunId;

pub async fn download(State(app): State<AppState>, Path((id, ext)): Path<(RunId, String)>) -> Result<Response, WebError> {
    let format = Format::from_str(&ext).map_err(|_| WebError::NotFound)?;
    let run = app.run(id).await?;
    let data = load(&*app.journal, run.id).await?;
    let path = app.datastream(&run);
    // Reading a datastream takes a while: off the async threads.
    let text = tokio::task::spawn_blocking(move || build(&data, &path, format)).await??;
    let disposition = format!("attachment; filename=\"temper-run-{id}.{}\"", format.extension());
    Ok(([(CONTENT_TYPE, content_type(format).to_string()), (CONTENT_DISPOSITION, disposition)], text).into_response())
}

/// The content (titles, DISA ids) makes a report richer; a checklist cannot do without it.
fn build(data: &RunData, path: &std::path::Path, format: Format) -> Result<String, WebError> {
    let content = match temper_journal::controls::RunControls::run_content(&data.run, path) {
        Ok(b) => Some(b),
        Err(e) if matches!(format, Format::Ckl | Format::Cklb) => {
            return Err(WebError::NoContent { format, path: path.display().to_string(), reason: e.to_string() });
        }
        Err(e) => {
            tracing::info!(run = %data.run.id, "report without content details ({}: {e})", path.display());
            None
        }
    };
    Ok(render(data, content.as_ref(), format)?)
}

fn content_type(format: Format) -> &'static str {
    match format {
        Format::Md => "text/markdown; charset=utf-8",
        Format::Html => "text/html; charset=utf-8",
        Format::Json | Format::Cklb | Format::OscalAr | Format::OscalPoam | Format::Hdf => "application/json",
        Format::Ckl => "application/xml; charset=utf-8",
    }
}
