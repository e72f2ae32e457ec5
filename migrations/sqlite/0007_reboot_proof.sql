-- no-transaction
-- The reboot proof (issue 13): verdicts `not_persistent` and `breaks_boot`, and the events
-- `reboot`, `booted` (a checkpoint proven to boot) and `reboot_blamed`.
-- SQLite cannot change a CHECK: attempts and events are rebuilt, foreign keys off, as in 0003.
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
                    CHECK (verdict IN ('fixed','still_failing','apply_failed','health_broken','lockout','regression','refused','needs_reboot','interrupted','not_persistent','breaks_boot')),
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

CREATE TABLE events_new (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    ts        TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('architect_rejected','attempt','attempt_interrupted','ban_invalid','checkpoint',
        'checkpoint_dropped','error','escalate','finish','kept_pending','lease_taken','paused','pick','preflight','reengage',
        'reengage_default','reflect','reflect_failed','regression_check','regression_every','regression_found',
        'regression_unstable','replay','resume','revert','revert_script_failed','rule_applicable','scan','tool_call_capped','verdict',
        'reboot','booted','reboot_blamed')),
    rule_id   TEXT,
    data      TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO events_new SELECT * FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_by_run ON events (run_id, id);

COMMIT;
PRAGMA foreign_keys = ON;
