//! Step 6a: on a failure the Reflector distills a lesson; bans, preferred approaches and
//! tips go to semantic memory, the distilled line to the rule's episodic memory.

use temper_scap::Benchmark;

use crate::agent::{AgentError, ReflectContext, Reflector};
use crate::ban::BanScope;
use crate::ralph::books::Books;
use crate::ralph::crew::Crew;
use crate::ralph::error::LoopResult;
use crate::ralph::trial::{Ended, Trial};
use temper_journal::{EventData, Phase};

/// The most a distilled line may hold.
pub const DISTILLED_MAX: usize = 200;

/// Step 6a: the Reflector on a failed fix.
#[derive(Clone, Copy)]
pub(super) struct Reflect<'r> {
    books: &'r Books<'r>,
    reflector: &'r dyn Reflector,
    content: &'r Benchmark,
}

impl<'r> Reflect<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        Self { books: &c.books, reflector: c.agents.reflector, content: c.content }
    }
}

impl Reflect<'_> {
    /// The lesson of a fix that failed, its ban and tips, kept in memory.
    #[tracing::instrument(name = "reflect", skip_all)]
    pub(in crate::ralph) async fn reflect(&self, ended: &Ended) -> LoopResult<()> {
        let Trial { id, n, rule, .. } = &ended.trial;
        let (rule, attempt, n) = (rule.as_str(), Some(*id), *n);
        self.books.enter(Phase::Reflect, Some(rule), n).await?;
        let episodes = self.books.episodes(rule).await?;
        let ctx = ReflectContext {
            rule_id: rule.to_string(),
            title: self.content.rule(rule).map(|r| r.title.clone()).unwrap_or_default(),
            fix_script: ended.fix_script.clone(),
            verdict: ended.verdict.to_string(),
            diagnostics: ended.diagnostics.clone(),
            episodes,
        };
        let which = n.map_or_else(|| "a kept fix".to_string(), |n| format!("attempt {n}"));
        let fallback = || clip(&format!("{which}: {}: {}", ended.verdict, ended.reason), DISTILLED_MAX);
        match self.reflector.reflect(&ctx).await {
            Ok(turn) => {
                self.books.record_turns(attempt, Some(rule), &turn.records).await?;
                let r = turn.value;
                let distilled = if r.distilled.trim().is_empty() { fallback() } else { clip(&r.distilled, DISTILLED_MAX) };
                self.books.journal().add_lesson(rule, &r.lesson, &r.preferred, &distilled).await?;
                // A ban that would forbid every derived or stock fix is refused, with its reason.
                let mut banned = r.banned.clone().filter(|b| !b.trim().is_empty());
                if let Some(ban) = banned.as_deref() {
                    match BanScope::of(self.content).check(ban) {
                        Ok(_) => {
                            self.books.journal().add_ban(rule, ban, &r.lesson).await?;
                        }
                        Err(why) => {
                            tracing::warn!(rule, pattern = ban, %why, "the Reflector's ban is refused");
                            let data = EventData::BanInvalid { pattern: ban.to_string(), reason: why.to_string() };
                            banned = None;
                            self.books.note(Some(rule), data).await?;
                        }
                    }
                }
                for t in &r.tips {
                    self.books.journal().add_tip(rule, t).await?;
                }
                self.books.note(Some(rule), EventData::Reflect { distilled, banned, tips: r.tips.len() }).await?;
            }
            Err(AgentError::Unavailable { reason, records, .. }) => {
                // Keep the episode before pausing, so the next attempt still learns from this one.
                self.books.journal().add_lesson(rule, &ended.reason, "", &fallback()).await?;
                return Err(self.books.paused(Some(rule), reason, &records).await);
            }
            Err(e) => {
                self.books.record_turns(attempt, Some(rule), e.records()).await?;
                self.books.journal().add_lesson(rule, &ended.reason, "", &fallback()).await?;
                self.books.note(Some(rule), EventData::ReflectFailed { reason: e.to_string() }).await?;
            }
        }
        Ok(())
    }
}

/// Cuts to at most `max` bytes, on a char boundary.
pub fn clip(s: &str, max: usize) -> String {
    s[..s.floor_char_boundary(max)].to_string()
}
