use async_trait::async_trait;
use temper_journal::RunId;
use temper_journal::{Escalation, JournalResult, NewRule, ReadRules, Rule, RuleLog, RuleStatus, ScanResult};
use temper_scap::oval::Evidence;

use temper_journal::offline::RuleVerdict;

use crate::{BeginWrite, Store, with_db};

#[async_trait]
impl ReadRules for Store {
    async fn rules(&self, run: RunId) -> JournalResult<Vec<Rule>> {
        with_db!(self, p => async { sqlx::query_as("SELECT * FROM rules WHERE run_id = $1 ORDER BY id").bind(run).fetch_all(p).await })
    }

    async fn rule(&self, run: RunId, rule_id: &str) -> JournalResult<Option<Rule>> {
        with_db!(self, p => async {
            sqlx::query_as("SELECT * FROM rules WHERE run_id = $1 AND rule_id = $2").bind(run).bind(rule_id).fetch_optional(p).await
        })
    }
}

#[async_trait]
impl RuleLog for Store {
    async fn add_rule(&self, run: RunId, r: &NewRule) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query(
                "INSERT INTO rules (run_id, rule_id, title, severity, initial_result, status, reason)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run_id, rule_id) DO NOTHING",
            )
            .bind(run)
            .bind(&r.rule_id)
            .bind(&r.title)
            .bind(r.severity.as_str())
            .bind(r.initial_result)
            .bind(r.status)
            .bind(&r.reason)
            .execute(p)
            .await
            .map(drop)
        })
    }

    async fn set_rule_status(&self, run: RunId, rule_id: &str, status: RuleStatus, reason: Option<&str>) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE rules SET status = $1, reason = $2 WHERE run_id = $3 AND rule_id = $4")
                .bind(status).bind(reason).bind(run).bind(rule_id).execute(p).await.map(drop)
        })
    }

    async fn escalate_rule(&self, run: RunId, rule_id: &str, e: &Escalation) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE rules SET status = $1, reason = $2, escalation_cause = $3 WHERE run_id = $4 AND rule_id = $5")
                .bind(RuleStatus::Escalated).bind(&e.reason).bind(e.cause).bind(run).bind(rule_id).execute(p).await.map(drop)
        })
    }

    async fn add_rule_time(&self, run: RunId, rule_id: &str, ms: i64) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE rules SET elapsed_ms = elapsed_ms + $1 WHERE run_id = $2 AND rule_id = $3")
                .bind(ms).bind(run).bind(rule_id).execute(p).await.map(drop)
        })
    }

    async fn set_final_result(&self, run: RunId, rule_id: &str, result: ScanResult) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE rules SET final_result = $1 WHERE run_id = $2 AND rule_id = $3")
                .bind(result).bind(run).bind(rule_id).execute(p).await.map(drop)
        })
    }

    async fn set_final_evidence(&self, run: RunId, rule_id: &str, evidence: &Evidence) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE rules SET final_evidence = $1 WHERE run_id = $2 AND rule_id = $3")
                .bind(sqlx::types::Json(evidence)).bind(run).bind(rule_id).execute(p).await.map(drop)
        })
    }

    async fn set_offline_verdicts(&self, run: RunId, verdicts: &[RuleVerdict]) -> JournalResult<()> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            for v in verdicts {
                sqlx::query("UPDATE rules SET offline_verdict = $1 WHERE run_id = $2 AND rule_id = $3")
                    .bind(sqlx::types::Json(&v.verdict)).bind(run).bind(&v.rule).execute(&mut *tx).await?;
            }
            tx.commit().await
        })
    }
}
