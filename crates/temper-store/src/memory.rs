//! Semantic memory: lessons, bans, tips and verified fixes, kept across runs until forgotten.
use async_trait::async_trait;
use temper_journal::turn::NewTip;
use temper_journal::{
    Ban, JournalError, JournalResult, Lesson, MemoryKind, MemoryLog, NewRememberedFix, RECALL_RUNS, RETIRE_AFTER, ReadMemory, Recall,
    RememberedFix, RuleTime, Tip,
};
use temper_journal::{MemoryId, RunId};

use crate::{BeginWrite, Store, now, with_db};

/// The active rows of a memory table a [`Recall`] selects: `$1` the rule, `$2` the skill (of the
/// run that made the row; a row made outside a run belongs to every skill), `$3` the target on
/// which it holds (a row made by a run on it, or one a person approved).
macro_rules! recalled {
    ($table:literal, $order:literal) => {
        concat!(
            "SELECT m.* FROM ",
            $table,
            " m LEFT JOIN runs r ON r.id = m.run_id WHERE m.active = TRUE AND ($1 IS NULL OR m.rule_id = $1) ",
            "AND ($2 IS NULL OR m.run_id IS NULL OR r.skill = $2) ",
            "AND ($3 IS NULL OR m.approved_at IS NOT NULL OR r.target = $3) ORDER BY m.id ",
            $order
        )
    };
}

#[async_trait]
impl ReadMemory for Store {
    async fn lessons(&self, recall: Recall<'_>) -> JournalResult<Vec<Lesson>> {
        with_db!(self, p => async { sqlx::query_as(recalled!("lessons", "DESC")).bind(recall.rule).bind(recall.skill).bind(recall.target).fetch_all(p).await })
    }

    async fn bans(&self, recall: Recall<'_>) -> JournalResult<Vec<Ban>> {
        with_db!(self, p => async { sqlx::query_as(recalled!("bans", "ASC")).bind(recall.rule).bind(recall.skill).bind(recall.target).fetch_all(p).await })
    }

    async fn tips(&self, recall: Recall<'_>) -> JournalResult<Vec<Tip>> {
        with_db!(self, p => async { sqlx::query_as(recalled!("tips", "DESC")).bind(recall.rule).bind(recall.skill).bind(recall.target).fetch_all(p).await })
    }

    async fn remembered_fix(&self, skill: &str, rule: &str) -> JournalResult<Option<RememberedFix>> {
        with_db!(self, p => async {
            sqlx::query_as(
                "SELECT * FROM remembered_fixes WHERE skill = $1 AND rule_id = $2 AND retired_at IS NULL
                 ORDER BY kept DESC, failed_in_row, id LIMIT 1",
            )
            .bind(skill)
            .bind(rule)
            .fetch_optional(p)
            .await
        })
    }

    async fn remembered_fixes(&self) -> JournalResult<Vec<RememberedFix>> {
        with_db!(self, p => async { sqlx::query_as("SELECT * FROM remembered_fixes ORDER BY id DESC").fetch_all(p).await })
    }

    async fn remembered_rules(&self, skill: &str) -> JournalResult<Vec<String>> {
        with_db!(self, p => async {
            sqlx::query_scalar("SELECT DISTINCT rule_id FROM remembered_fixes WHERE skill = $1 AND retired_at IS NULL ORDER BY rule_id")
                .bind(skill)
                .fetch_all(p)
                .await
        })
    }

    async fn recalled_times(&self, skill: &str) -> JournalResult<Vec<RuleTime>> {
        with_db!(self, p => async {
            sqlx::query_as(
                "SELECT t.run_id, t.rule_id, t.secs FROM rule_times t WHERE t.run_id IN (
                   SELECT r.id FROM runs r WHERE r.skill = $1 AND EXISTS (SELECT 1 FROM rule_times x WHERE x.run_id = r.id)
                   ORDER BY r.id DESC LIMIT $2)
                 ORDER BY t.run_id, t.rule_id",
            )
            .bind(skill)
            .bind(RECALL_RUNS)
            .fetch_all(p)
            .await
        })
    }
}

#[async_trait]
impl MemoryLog for Store {
    async fn add_lesson(&self, run: RunId, rule: &str, lesson: &str, preferred: &str, distilled: &str) -> JournalResult<MemoryId> {
        with_db!(self, p => async {
            let (id,): (MemoryId,) = sqlx::query_as(
                "INSERT INTO lessons (run_id, rule_id, lesson, preferred, distilled, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            )
            .bind(run)
            .bind(rule)
            .bind(lesson)
            .bind(preferred)
            .bind(distilled)
            .bind(now())
            .fetch_one(p)
            .await?;
            Ok(id)
        })
    }

    async fn add_ban(&self, run: RunId, rule: &str, pattern: &str, reason: &str) -> JournalResult<MemoryId> {
        with_db!(self, p => async {
            let (id,): (MemoryId,) =
                sqlx::query_as("INSERT INTO bans (run_id, rule_id, pattern, reason, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id")
                    .bind(run)
                    .bind(rule)
                    .bind(pattern)
                    .bind(reason)
                    .bind(now())
                    .fetch_one(p)
                    .await?;
            Ok(id)
        })
    }

    async fn add_tip(&self, run: RunId, rule: &str, t: &NewTip) -> JournalResult<MemoryId> {
        with_db!(self, p => async {
            let (id,): (MemoryId,) = sqlx::query_as(
                "INSERT INTO tips (run_id, rule_id, text, kind, mechanism, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            )
            .bind(run)
            .bind(rule)
            .bind(&t.text)
            .bind(t.kind)
            .bind(&t.mechanism)
            .bind(now())
            .fetch_one(p)
            .await?;
            Ok(id)
        })
    }

    async fn forget(&self, kind: MemoryKind, id: MemoryId) -> JournalResult<()> {
        let sql = match kind {
            MemoryKind::Lessons => "UPDATE lessons SET active = FALSE WHERE id = $1 AND active = TRUE",
            MemoryKind::Bans => "UPDATE bans SET active = FALSE WHERE id = $1 AND active = TRUE",
            MemoryKind::Tips => "UPDATE tips SET active = FALSE WHERE id = $1 AND active = TRUE",
            MemoryKind::Fixes => "UPDATE remembered_fixes SET retired_at = $2 WHERE id = $1 AND retired_at IS NULL",
        };
        // A retired fix records when: the one statement with a second parameter.
        let done = with_db!(self, p => async {
            let q = sqlx::query(sql).bind(id);
            let q = if kind == MemoryKind::Fixes { q.bind(now()) } else { q };
            q.execute(p).await.map(|r| r.rows_affected())
        })?;
        if done == 0 {
            return Err(JournalError::NotFound(format!("{kind} {id}")));
        }
        Ok(())
    }

    async fn approve(&self, kind: MemoryKind, id: MemoryId, by: &str) -> JournalResult<()> {
        let sql = match kind {
            MemoryKind::Lessons => {
                "UPDATE lessons SET approved_at = $2, approved_by = $3 WHERE id = $1 AND active = TRUE AND approved_at IS NULL"
            }
            MemoryKind::Bans => {
                "UPDATE bans SET approved_at = $2, approved_by = $3 WHERE id = $1 AND active = TRUE AND approved_at IS NULL"
            }
            MemoryKind::Tips => {
                "UPDATE tips SET approved_at = $2, approved_by = $3 WHERE id = $1 AND active = TRUE AND approved_at IS NULL"
            }
            MemoryKind::Fixes => {
                return Err(JournalError::Unsupported(
                    "a remembered fix needs no approval: every target verifies it again (rescan, guard, regression set) before it is kept"
                        .into(),
                ));
            }
        };
        let done = with_db!(self, p => async {
            sqlx::query(sql).bind(id).bind(now()).bind(by).execute(p).await.map(|r| r.rows_affected())
        })?;
        if done == 0 {
            return Err(JournalError::NotFound(format!("{kind} {id} in force and not yet approved")));
        }
        Ok(())
    }

    async fn remember_fix(&self, f: &NewRememberedFix) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query(
                "INSERT INTO remembered_fixes (skill, rule_id, fix_script, revert_script, description, run_id, attempt_id, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (skill, rule_id, fix_script) DO NOTHING",
            )
            .bind(&f.skill)
            .bind(&f.rule_id)
            .bind(&f.fix_script)
            .bind(&f.revert_script)
            .bind(&f.description)
            .bind(f.run_id)
            .bind(f.attempt_id)
            .bind(now())
            .execute(p)
            .await
            .map(drop)
        })
    }

    async fn count_remembered(&self, id: MemoryId, kept: bool) -> JournalResult<RememberedFix> {
        with_db!(self, p => async {
            sqlx::query_as(
                "UPDATE remembered_fixes SET tried = tried + 1,
                   kept = kept + CASE WHEN $2 THEN 1 ELSE 0 END,
                   failed_in_row = CASE WHEN $2 THEN 0 ELSE failed_in_row + 1 END,
                   retired_at = CASE WHEN retired_at IS NULL AND NOT $2 AND failed_in_row + 1 >= $3 THEN $4 ELSE retired_at END
                 WHERE id = $1 RETURNING *",
            )
            .bind(id)
            .bind(kept)
            .bind(RETIRE_AFTER)
            .bind(now())
            .fetch_one(p)
            .await
        })
    }

    async fn remember_times(&self, run: RunId, times: &[RuleTime]) -> JournalResult<()> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            sqlx::query("DELETE FROM rule_times WHERE run_id = $1").bind(run).execute(&mut *tx).await?;
            let at = now();
            for t in times {
                sqlx::query("INSERT INTO rule_times (run_id, rule_id, secs, created_at) VALUES ($1, $2, $3, $4)")
                    .bind(run)
                    .bind(&t.rule_id)
                    .bind(t.secs.max(0.0))
                    .bind(&at)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        })
    }
}
