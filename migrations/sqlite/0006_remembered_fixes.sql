-- no-transaction
-- Verified fixes reused across targets (issue 12): an LLM-written fix kept on one target and
-- past its regression check is tried first on other targets with the same skill (attempts of
-- source `memory`). Each counts its tries and keeps; two failures in a row retire it.
-- SQLite cannot change a CHECK: attempts is rebuilt, foreign keys off, as in 0003.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE attempts_new (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(id),
    rule_id         TEXT NOT NULL,
    n               INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('started','applied','done','interrupted')),
    plan            TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL CHECK (source IN ('stock','llm','llm_text','rejected','memory')),
    fix_script      TEXT NOT NULL DEFAULT '',
    revert_script   TEXT NOT NULL DEFAULT '',
    description     TEXT NOT NULL DEFAULT '',
    checkpoint      TEXT NOT NULL,
    fix_exit_code   INTEGER,
    fix_stdout      TEXT,
    fix_stderr      TEXT,
    rule_result     TEXT
                    CHECK (rule_result IN ('pass','fail','error','unknown','notapplicable','notchecked','notselected','informational','fixed','missing')),
    health_ok       INTEGER,
    health_output   TEXT,
    access_ok       INTEGER,
    regressions     TEXT,
    verdict         TEXT
                    CHECK (verdict IN ('fixed','still_failing','apply_failed','health_broken','lockout','regression','refused','needs_reboot','interrupted')),
    verdict_reason  TEXT,
    revert_method   TEXT CHECK (revert_method IN ('none','script','script_then_snapshot','snapshot')),
    revert_ms       INTEGER,
    apply_ms        INTEGER,
    evaluate_ms     INTEGER,
    diagnostics     TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    snapshot        TEXT,
    kept            TEXT CHECK (kept IN ('pending','confirmed','rolled_back')),
    replayed        INTEGER NOT NULL DEFAULT 0,
    evidence_before TEXT CHECK (evidence_before IS NULL OR json_valid(evidence_before)),
    evidence_after  TEXT CHECK (evidence_after IS NULL OR json_valid(evidence_after)),
    UNIQUE (run_id, rule_id, n)
);
INSERT INTO attempts_new (id, run_id, rule_id, n, state, plan, source, fix_script, revert_script, description, checkpoint, fix_exit_code, fix_stdout, fix_stderr, rule_result, health_ok, health_output, access_ok, regressions, verdict, verdict_reason, revert_method, revert_ms, apply_ms, evaluate_ms, diagnostics, started_at, ended_at, snapshot, kept, replayed, evidence_before, evidence_after)
SELECT id, run_id, rule_id, n, state, plan, source, fix_script, revert_script, description, checkpoint, fix_exit_code, fix_stdout, fix_stderr, rule_result, health_ok, health_output, access_ok, regressions, verdict, verdict_reason, revert_method, revert_ms, apply_ms, evaluate_ms, diagnostics, started_at, ended_at, snapshot, kept, replayed, evidence_before, evidence_after FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_new RENAME TO attempts;
CREATE INDEX attempts_by_rule ON attempts (run_id, rule_id);

CREATE TABLE remembered_fixes (
    id              INTEGER PRIMARY KEY,
    skill           TEXT NOT NULL,
    rule_id         TEXT NOT NULL,
    fix_script      TEXT NOT NULL,
    revert_script   TEXT NOT NULL DEFAULT '',
    description     TEXT NOT NULL DEFAULT '',
    run_id          INTEGER NOT NULL REFERENCES runs(id),
    attempt_id      INTEGER NOT NULL REFERENCES attempts(id),
    tried           INTEGER NOT NULL DEFAULT 0 CHECK (tried >= 0),
    kept            INTEGER NOT NULL DEFAULT 0 CHECK (kept >= 0 AND kept <= tried),
    failed_in_row   INTEGER NOT NULL DEFAULT 0 CHECK (failed_in_row >= 0),
    retired_at      TEXT,
    created_at      TEXT NOT NULL,
    UNIQUE (skill, rule_id, fix_script)
);
CREATE INDEX remembered_fixes_by_rule ON remembered_fixes (skill, rule_id);

COMMIT;
PRAGMA foreign_keys = ON;
