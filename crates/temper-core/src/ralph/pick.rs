//! Step 2: the harness offers the open failing rules (skips, waivers, deferrals and
//! ordering constraints enforced here, whatever a prompt says); the Architect picks one.
use serde_json::json;
use temper_store::RuleRow;

use super::{LoopError, LoopResult, Phase, Ralph, RunState};
use crate::agent::{AgentError, ApplyFix, Candidate, FixSource, PickContext};

/// The rule to work on and the Architect's plan for it.
#[derive(Debug, Clone)]
pub struct Pick {
    pub rule_id: String,
    pub plan: String,
    /// A fix rolled back with a regressed batch, to run again as the first attempt.
    pub replay: Option<(ApplyFix, FixSource)>,
}

fn severity_rank(s: &str) -> u8 {
    match s {
        "high" => 0,
        "medium" => 1,
        "low" => 2,
        _ => 3,
    }
}

impl Ralph<'_> {
    #[tracing::instrument(name = "pick", skip_all)]
    pub(super) async fn pick(&self, run: i64, state: &mut RunState) -> LoopResult<Option<Pick>> {
        self.phase(run, Phase::Pick, None, 0).await?;
        // Fixes undone with a regressed batch go first; they were picked once already.
        if let Some(a) = self.store.fixes_to_replay(run).await?.into_iter().find(|a| self.in_scope(&a.rule_id)) {
            self.store.event(run, "replay", Some(&a.rule_id), json!({"attempt": a.n})).await?;
            let source = if a.source == "stock" { FixSource::Stock } else { FixSource::Native };
            let fix = ApplyFix { fix_script: a.fix_script, revert_script: a.revert_script, description: a.description };
            return Ok(Some(Pick { rule_id: a.rule_id, plan: a.plan, replay: Some((fix, source)) }));
        }
        if self.settings.max_rules.is_some_and(|m| state.worked >= m) {
            return Ok(None);
        }
        let candidates = self.candidates(run).await?;
        if candidates.is_empty() {
            return Ok(None);
        }
        let lessons = self.store.lessons(None).await?.into_iter().take(10).map(|l| l.distilled).collect();
        let ctx = PickContext {
            skill: self.skill.name().to_string(),
            profile: self.scanner.profile.clone(),
            candidates,
            lessons,
        };
        let first = &ctx.candidates[0];
        let pick = match self.agents.architect.select(&ctx).await {
            Ok(turn) => {
                self.record_turns(run, None, Some(&turn.value.rule_id), &turn.records).await?;
                Pick { rule_id: turn.value.rule_id, plan: turn.value.plan, replay: None }
            }
            Err(AgentError::Rejected { reason, records }) => {
                self.record_turns(run, None, None, &records).await?;
                let plan = "harness default: the first candidate in risk order".to_string();
                self.store
                    .event(run, "architect_rejected", Some(&first.rule_id), json!({"reason": reason, "default": plan}))
                    .await?;
                Pick { rule_id: first.rule_id.clone(), plan, replay: None }
            }
            Err(AgentError::Unavailable { reason, records, .. }) => {
                self.record_turns(run, None, None, &records).await?;
                return Err(self.pause(run, reason).await);
            }
            Err(AgentError::NoFix(reason)) => {
                // Nothing this agent can try: every open candidate goes to a human.
                for c in &ctx.candidates {
                    self.escalate(run, &c.rule_id, &format!("the Architect has no pick: {reason}")).await?;
                }
                return Ok(None);
            }
        };
        // Never trust the pick: it must be one of the offered ids, exactly.
        let pick = if ctx.candidates.iter().any(|c| c.rule_id == pick.rule_id) {
            pick
        } else {
            let reason = format!("picked `{}`, which was not offered", pick.rule_id);
            self.store.event(run, "architect_rejected", Some(&first.rule_id), json!({"reason": reason})).await?;
            Pick { rule_id: first.rule_id.clone(), plan: "harness default: the first candidate in risk order".into(), replay: None }
        };
        self.store.event(run, "pick", Some(&pick.rule_id), json!({"plan": pick.plan})).await?;
        state.worked += 1;
        Ok(Some(pick))
    }

    /// Open failing rules the harness allows now, in risk order, then severity.
    async fn candidates(&self, run: i64) -> LoopResult<Vec<Candidate>> {
        let rules = self.store.rules(run).await?;
        let open: Vec<&RuleRow> = rules.iter().filter(|r| r.status == "pending" && self.in_scope(&r.rule_id)).collect();
        let shorts: Vec<&str> = open.iter().map(|r| temper_scap::short_rule_id(&r.rule_id)).collect();
        let mut out: Vec<(usize, u8, usize, Candidate)> = Vec::new();
        for (i, r) in open.iter().enumerate() {
            let short = shorts[i];
            if self.skill.held_back(short, &shorts).is_some() {
                continue;
            }
            let content = self.content.rule(&r.rule_id);
            out.push((
                self.skill.risk_rank(short),
                severity_rank(&r.severity),
                i,
                Candidate {
                    rule_id: r.rule_id.clone(),
                    title: r.title.clone(),
                    severity: r.severity.clone(),
                    stig_ids: content.map(|c| c.stig_ids.clone()).unwrap_or_default(),
                    has_stock_fix: content.is_some_and(|c| c.has_fix()),
                    attempts: r.attempts as u32,
                },
            ));
        }
        out.sort_by_key(|(risk, sev, i, _)| (*risk, *sev, *i));
        Ok(out.into_iter().map(|(_, _, _, c)| c).collect())
    }

    /// `--rules` narrows the run; ids may be full or short.
    pub(super) fn in_scope(&self, rule_id: &str) -> bool {
        let rules = &self.settings.rules;
        rules.is_empty() || rules.iter().any(|r| r == rule_id || r == temper_scap::short_rule_id(rule_id))
    }

    pub(super) async fn pause(&self, run: i64, reason: String) -> LoopError {
        if let Err(e) = self.store.set_status(run, "paused", Some(&reason)).await {
            return e.into();
        }
        let _ = self.store.event(run, "paused", None, json!({"reason": reason})).await;
        LoopError::Paused { run, reason }
    }
}
