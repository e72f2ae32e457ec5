-- no-transaction
-- Vocabularies as tables (issue 33): each status, source, verdict and kind the code knows (the
-- Rust enums in temper-core's journal and verdict) is a row of its own lookup table, and each
-- column that holds one is a foreign key to it, not a CHECK list. A new value is one INSERT in a
-- new migration, e.g. `INSERT INTO verdicts (name) VALUES ('new_verdict');`, and no table is
-- rebuilt again. SQLite cannot add a foreign key to a column: runs, rules, attempts, turns and
-- events are rebuilt this one last time, foreign keys off, as in 0003: the same columns in the
-- same order, every row, index and other constraint kept.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE run_statuses (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO run_statuses (name) VALUES ('running'), ('paused'), ('interrupted'), ('finished'), ('failed');

CREATE TABLE phases (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO phases (name) VALUES ('preflight'), ('pick'), ('fix'), ('evaluate'), ('revert'), ('reflect'), ('regression'),
    ('finish'), ('done');

CREATE TABLE rule_statuses (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO rule_statuses (name) VALUES ('pending'), ('passing'), ('fixed'), ('escalated'), ('skipped'), ('waived'),
    ('deferred'), ('still_failing'), ('unstable'), ('notapplicable'), ('notchecked'), ('notselected'), ('error'),
    ('unknown'), ('informational');

CREATE TABLE scan_results (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO scan_results (name) VALUES ('pass'), ('fail'), ('error'), ('unknown'), ('notapplicable'), ('notchecked'),
    ('notselected'), ('informational'), ('fixed'), ('missing');

CREATE TABLE attempt_states (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO attempt_states (name) VALUES ('started'), ('applied'), ('done'), ('interrupted');

CREATE TABLE fix_sources (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO fix_sources (name) VALUES ('stock'), ('llm'), ('llm_text'), ('rejected'), ('memory');

CREATE TABLE verdicts (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO verdicts (name) VALUES ('fixed'), ('still_failing'), ('apply_failed'), ('health_broken'), ('lockout'),
    ('regression'), ('refused'), ('needs_reboot'), ('not_persistent'), ('breaks_boot'), ('interrupted');

CREATE TABLE revert_methods (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO revert_methods (name) VALUES ('none'), ('script'), ('script_then_snapshot'), ('snapshot');

CREATE TABLE kept_states (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO kept_states (name) VALUES ('pending'), ('confirmed'), ('rolled_back');

CREATE TABLE turn_roles (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO turn_roles (name) VALUES ('architect'), ('reengage'), ('worker'), ('reflector');

CREATE TABLE turn_modes (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO turn_modes (name) VALUES ('native'), ('text'), ('none');

CREATE TABLE event_kinds (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO event_kinds (name) VALUES ('architect_rejected'), ('attempt'), ('attempt_interrupted'), ('ban_invalid'),
    ('ban_shared'), ('checkpoint'), ('checkpoint_dropped'), ('error'), ('escalate'), ('finish'), ('kept_pending'),
    ('lease_taken'), ('paused'), ('pick'), ('preflight'), ('reboot'), ('booted'), ('reboot_blamed'), ('reengage'),
    ('reengage_default'), ('reflect'), ('reflect_failed'), ('regression_check'), ('regression_every'),
    ('regression_found'), ('regression_unstable'), ('replay'), ('resume'), ('revert'), ('revert_script_failed'),
    ('rule_applicable'), ('scan'), ('tool_call_capped'), ('verdict');

CREATE TABLE runs_new (
    id              INTEGER PRIMARY KEY,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    status          TEXT NOT NULL REFERENCES run_statuses(name),
    skill           TEXT NOT NULL,
    profile         TEXT NOT NULL,
    datastream      TEXT NOT NULL,
    content_version TEXT,
    target          TEXT NOT NULL,
    agent           TEXT NOT NULL,
    options_json    TEXT NOT NULL DEFAULT '{}',
    phase           TEXT NOT NULL DEFAULT 'preflight' REFERENCES phases(name),
    current_rule    TEXT,
    checkpoint      TEXT NOT NULL DEFAULT 'baseline',
    score_before    REAL,
    score_after     REAL,
    exit_code       INTEGER,
    summary_json    TEXT,
    error           TEXT,
    heartbeat_at    TEXT,
    regression_every INTEGER,
    baseline        TEXT NOT NULL DEFAULT 'baseline',
    driver          TEXT,
    lease_until     INTEGER,
    wall_ms         INTEGER NOT NULL DEFAULT 0,
    guest_ms        INTEGER NOT NULL DEFAULT 0,
    target_config   TEXT CHECK (target_config IS NULL OR json_valid(target_config))
);
INSERT INTO runs_new SELECT * FROM runs;

CREATE TABLE rules_new (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    rule_id        TEXT NOT NULL,
    title          TEXT NOT NULL DEFAULT '',
    severity       TEXT NOT NULL DEFAULT 'unknown',
    initial_result TEXT NOT NULL REFERENCES scan_results(name),
    final_result   TEXT REFERENCES scan_results(name),
    status         TEXT NOT NULL REFERENCES rule_statuses(name),
    reason         TEXT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    elapsed_ms     INTEGER NOT NULL DEFAULT 0,
    UNIQUE (run_id, rule_id)
);
INSERT INTO rules_new SELECT * FROM rules;

CREATE TABLE attempts_new (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(id),
    rule_id         TEXT NOT NULL,
    n               INTEGER NOT NULL,
    state           TEXT NOT NULL REFERENCES attempt_states(name),
    plan            TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL REFERENCES fix_sources(name),
    fix_script      TEXT NOT NULL DEFAULT '',
    revert_script   TEXT NOT NULL DEFAULT '',
    description     TEXT NOT NULL DEFAULT '',
    checkpoint      TEXT NOT NULL,
    fix_exit_code   INTEGER,
    fix_stdout      TEXT,
    fix_stderr      TEXT,
    rule_result     TEXT REFERENCES scan_results(name),
    health_ok       INTEGER,
    health_output   TEXT,
    access_ok       INTEGER,
    regressions     TEXT,
    verdict         TEXT REFERENCES verdicts(name),
    verdict_reason  TEXT,
    revert_method   TEXT REFERENCES revert_methods(name),
    revert_ms       INTEGER,
    apply_ms        INTEGER,
    evaluate_ms     INTEGER,
    diagnostics     TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    snapshot        TEXT,
    kept            TEXT REFERENCES kept_states(name),
    replayed        INTEGER NOT NULL DEFAULT 0,
    evidence_before TEXT CHECK (evidence_before IS NULL OR json_valid(evidence_before)),
    evidence_after  TEXT CHECK (evidence_after IS NULL OR json_valid(evidence_after)),
    UNIQUE (run_id, rule_id, n)
);
INSERT INTO attempts_new SELECT * FROM attempts;

CREATE TABLE turns_new (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs(id),
    attempt_id         INTEGER REFERENCES attempts(id),
    rule_id            TEXT,
    role               TEXT NOT NULL REFERENCES turn_roles(name),
    model              TEXT NOT NULL DEFAULT '',
    prompt_chars       INTEGER NOT NULL DEFAULT 0,
    prompt_tokens_est  INTEGER NOT NULL DEFAULT 0,
    prompt_tokens      INTEGER,
    completion_tokens  INTEGER,
    latency_ms         INTEGER NOT NULL DEFAULT 0,
    retries            INTEGER NOT NULL DEFAULT 0,
    tool_calls_seen    INTEGER NOT NULL DEFAULT 0,
    tool_calls_dropped TEXT NOT NULL DEFAULT '[]',
    mode               TEXT NOT NULL DEFAULT 'none' REFERENCES turn_modes(name),
    finish_reason      TEXT,
    sections           TEXT NOT NULL DEFAULT '[]',
    error              TEXT,
    created_at         TEXT NOT NULL
);
INSERT INTO turns_new SELECT * FROM turns;

CREATE TABLE events_new (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    ts        TEXT NOT NULL,
    kind      TEXT NOT NULL REFERENCES event_kinds(name),
    rule_id   TEXT,
    data      TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO events_new SELECT * FROM events;

DROP TABLE events;
DROP TABLE turns;
DROP TABLE attempts;
DROP TABLE rules;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
ALTER TABLE rules_new RENAME TO rules;
ALTER TABLE attempts_new RENAME TO attempts;
ALTER TABLE turns_new RENAME TO turns;
ALTER TABLE events_new RENAME TO events;

CREATE INDEX attempts_by_rule ON attempts (run_id, rule_id);
CREATE INDEX turns_by_run ON turns (run_id);
CREATE INDEX events_by_run ON events (run_id, id);

COMMIT;
PRAGMA foreign_keys = ON;
