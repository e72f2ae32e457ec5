//! `/runs/{id}/events`: the run's live view as server-sent events. It polls the journal: an
//! `event` for each new journal event (its `id` is the event's, so a reconnecting browser
//! resumes after the last one it saw), and a `state` whenever the run's phase, rule, status or
//! counts change. The stream ends once the run is finished or failed.
use std::collections::VecDeque;
use std::convert::Infallible;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use serde::Deserialize;

use crate::WebError;
use crate::pages::EventView;
use crate::progress::{self, RunProgress};
use crate::state::AppState;
use temper_journal::{EventId, RunId};

#[derive(Debug, Deserialize)]
pub struct After {
    /// The last journal event the page already shows (0: none).
    #[serde(default, deserialize_with = "temper_journal::zero_is_none::deserialize")]
    after: Option<EventId>,
}

pub async fn events(
    State(app): State<AppState>,
    Path(run): Path<RunId>,
    Query(q): Query<After>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, WebError> {
    app.run(run).await?;
    // A browser that reconnects says where it stopped.
    let last_seen = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let feed = PageFeed { app, run, after: last_seen.or(q.after), last: None, queue: VecDeque::new(), started: false, over: false };
    let stream = futures_util::stream::unfold(feed, |mut feed| async move { feed.next().await.map(|e| (Ok(e), feed)) });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// One page's reading position in the journal.
struct PageFeed {
    app: AppState,
    run: RunId,
    /// The last journal event sent.
    after: Option<EventId>,
    /// The last state sent.
    last: Option<progress::LoopState>,
    queue: VecDeque<Event>,
    started: bool,
    over: bool,
}

impl PageFeed {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(e);
            }
            if self.over {
                return None;
            }
            if self.started {
                tokio::time::sleep(self.app.poll).await;
            }
            self.started = true;
            if let Err(e) = self.poll().await {
                tracing::warn!(run = %self.run, "live view: {e}");
            }
        }
    }

    async fn poll(&mut self) -> Result<(), WebError> {
        for e in self.app.journal.events(self.run, self.after).await? {
            self.after = Some(e.id);
            self.queue.push_back(Event::default().event("event").id(e.id.to_string()).data(json(&EventView::from(&e))));
        }
        let p = RunProgress::load(&self.app, self.run).await?;
        if self.last.as_ref() != Some(&p.state) {
            self.queue.push_back(Event::default().event("state").data(json(&p)));
            self.last = Some(p.state.clone());
        }
        self.over = p.is_over();
        Ok(())
    }
}

fn json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
}
