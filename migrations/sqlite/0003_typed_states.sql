-- no-transaction
-- Typed states: every status, source, method and kind is checked against the values the code
-- knows (the Rust enums in temper-core's journal). SQLite cannot add a CHECK to a table, so each
-- table is rebuilt (foreign keys off for the rebuild, as SQLite's ALTER TABLE docs prescribe).
-- Old values are mapped: a `replay` source becomes the replayed fix's own source with the new
-- `replayed` mark, `script+snapshot` becomes `script_then_snapshot`. Runs gain their baseline,
-- their driver's lease and the time of their earlier segments. An interrupted attempt no longer
-- counts as a try on its rule.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE runs_new (
    id              INTEGER PRIMARY KEY,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    status          TEXT NOT NULL CHECK (status IN ('running','paused','interrupted','finished','failed')),
    skill           TEXT NOT NULL,
    profile         TEXT NOT NULL,
    datastream      TEXT NOT NULL,
    content_version TEXT,
    target          TEXT NOT NULL,
    agent           TEXT NOT NULL,
    options_json    TEXT NOT NULL DEFAULT '{}',
    phase           TEXT NOT NULL DEFAULT 'preflight'
                    CHECK (phase IN ('preflight','pick','fix','evaluate','revert','reflect','regression','finish','done')),
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
    guest_ms        INTEGER NOT NULL DEFAULT 0
);
INSERT INTO runs_new (id, started_at, ended_at, status, skill, profile, datastream, content_version, target, agent,
    options_json, phase, current_rule, checkpoint, score_before, score_after, exit_code, summary_json, error,
    heartbeat_at, regression_every)
SELECT id, started_at, ended_at,
    CASE WHEN status IN ('running','paused','interrupted','finished','failed') THEN status ELSE 'interrupted' END,
    skill, profile, datastream, content_version, target, agent, options_json,
    CASE WHEN phase IN ('preflight','pick','fix','evaluate','revert','reflect','regression','finish','done') THEN phase ELSE 'preflight' END,
    current_rule, checkpoint, score_before, score_after, exit_code, summary_json, error, heartbeat_at, regression_every
FROM runs;

CREATE TABLE rules_new (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    rule_id        TEXT NOT NULL,
    title          TEXT NOT NULL DEFAULT '',
    severity       TEXT NOT NULL DEFAULT 'unknown',
    initial_result TEXT NOT NULL
                   CHECK (initial_result IN ('pass','fail','error','unknown','notapplicable','notchecked','notselected','informational','fixed','missing')),
    final_result   TEXT
                   CHECK (final_result IN ('pass','fail','error','unknown','notapplicable','notchecked','notselected','informational','fixed','missing')),
    status         TEXT NOT NULL
                   CHECK (status IN ('pending','passing','fixed','escalated','skipped','waived','deferred','still_failing','unstable',
                                     'notapplicable','notchecked','notselected','error','unknown','informational')),
    reason         TEXT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    elapsed_ms     INTEGER NOT NULL DEFAULT 0,
    UNIQUE (run_id, rule_id)
);
INSERT INTO rules_new SELECT id, run_id, rule_id, title, severity,
    CASE WHEN initial_result IN ('pass','fail','error','unknown','notapplicable','notchecked','notselected','informational','fixed','missing')
         THEN initial_result ELSE 'unknown' END,
    CASE WHEN final_result IS NULL OR final_result IN ('pass','fail','error','unknown','notapplicable','notchecked','notselected','informational','fixed','missing')
         THEN final_result ELSE 'unknown' END,
    CASE WHEN status IN ('pending','passing','fixed','escalated','skipped','waived','deferred','still_failing','unstable',
                         'notapplicable','notchecked','notselected','error','unknown','informational')
         THEN status ELSE 'unknown' END,
    reason,
    (SELECT COUNT(*) FROM attempts a WHERE a.run_id = rules.run_id AND a.rule_id = rules.rule_id AND a.state != 'interrupted'),
    elapsed_ms
FROM rules;

CREATE TABLE attempts_new (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(id),
    rule_id         TEXT NOT NULL,
    n               INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('started','applied','done','interrupted')),
    plan            TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL CHECK (source IN ('stock','llm','llm_text','rejected')),
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
    UNIQUE (run_id, rule_id, n)
);
INSERT INTO attempts_new SELECT a.id, a.run_id, a.rule_id, a.n, a.state, a.plan,
    CASE WHEN a.source = 'replay' THEN COALESCE(
             (SELECT b.source FROM attempts b WHERE b.run_id = a.run_id AND b.rule_id = a.rule_id
                AND b.fix_script = a.fix_script AND b.source IN ('stock','llm','llm_text') ORDER BY b.id LIMIT 1), 'llm')
         WHEN a.source IN ('stock','llm','llm_text','rejected') THEN a.source
         ELSE 'llm' END,
    a.fix_script, a.revert_script, a.description, a.checkpoint, a.fix_exit_code, a.fix_stdout, a.fix_stderr,
    CASE WHEN a.rule_result IS NULL OR a.rule_result IN ('pass','fail','error','unknown','notapplicable','notchecked','notselected','informational','fixed','missing')
         THEN a.rule_result ELSE 'unknown' END,
    a.health_ok, a.health_output, a.access_ok, a.regressions, a.verdict, a.verdict_reason,
    CASE WHEN a.revert_method = 'script+snapshot' THEN 'script_then_snapshot' ELSE a.revert_method END,
    a.revert_ms, a.apply_ms, a.evaluate_ms, a.diagnostics, a.started_at, a.ended_at, a.snapshot, a.kept,
    CASE WHEN a.source = 'replay' THEN 1 ELSE 0 END
FROM attempts a;

CREATE TABLE turns_new (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs(id),
    attempt_id         INTEGER REFERENCES attempts(id),
    rule_id            TEXT,
    role               TEXT NOT NULL CHECK (role IN ('architect','reengage','worker','reflector')),
    model              TEXT NOT NULL DEFAULT '',
    prompt_chars       INTEGER NOT NULL DEFAULT 0,
    prompt_tokens_est  INTEGER NOT NULL DEFAULT 0,
    prompt_tokens      INTEGER,
    completion_tokens  INTEGER,
    latency_ms         INTEGER NOT NULL DEFAULT 0,
    retries            INTEGER NOT NULL DEFAULT 0,
    tool_calls_seen    INTEGER NOT NULL DEFAULT 0,
    tool_calls_dropped TEXT NOT NULL DEFAULT '[]',
    mode               TEXT NOT NULL DEFAULT 'none' CHECK (mode IN ('native','text','none')),
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
    kind      TEXT NOT NULL CHECK (kind IN ('architect_rejected','attempt','attempt_interrupted','ban_invalid','checkpoint',
        'checkpoint_dropped','error','escalate','finish','kept_pending','lease_taken','paused','pick','preflight','reengage',
        'reengage_default','reflect','reflect_failed','regression_check','regression_every','regression_found',
        'regression_unstable','replay','resume','revert','revert_script_failed','rule_applicable','scan','tool_call_capped','verdict')),
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
