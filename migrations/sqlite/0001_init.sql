-- temper's state. Every state change a resume needs is committed before the next side effect.

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    -- running | paused | finished | failed
    status          TEXT NOT NULL,
    skill           TEXT NOT NULL,
    profile         TEXT NOT NULL,
    datastream      TEXT NOT NULL,
    content_version TEXT,
    target          TEXT NOT NULL,
    agent           TEXT NOT NULL,
    options_json    TEXT NOT NULL DEFAULT '{}',
    -- preflight | pick | fix | evaluate | revert | reflect | finish
    phase           TEXT NOT NULL DEFAULT 'preflight',
    current_rule    TEXT,
    checkpoint      TEXT NOT NULL DEFAULT 'baseline',
    score_before    REAL,
    score_after     REAL,
    exit_code       INTEGER,
    summary_json    TEXT,
    error           TEXT,
    heartbeat_at    TEXT
);

CREATE TABLE rules (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    rule_id        TEXT NOT NULL,
    title          TEXT NOT NULL DEFAULT '',
    severity       TEXT NOT NULL DEFAULT 'unknown',
    initial_result TEXT NOT NULL,
    final_result   TEXT,
    -- pending | fixed | escalated | skipped | deferred | waived | still_failing | passing
    status         TEXT NOT NULL,
    reason         TEXT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    elapsed_ms     INTEGER NOT NULL DEFAULT 0,
    UNIQUE (run_id, rule_id)
);

CREATE TABLE attempts (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(id),
    rule_id         TEXT NOT NULL,
    n               INTEGER NOT NULL,
    -- started | applied | done | interrupted
    state           TEXT NOT NULL,
    plan            TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL,
    fix_script      TEXT NOT NULL DEFAULT '',
    revert_script   TEXT NOT NULL DEFAULT '',
    description     TEXT NOT NULL DEFAULT '',
    checkpoint      TEXT NOT NULL,
    fix_exit_code   INTEGER,
    fix_stdout      TEXT,
    fix_stderr      TEXT,
    rule_result     TEXT,
    health_ok       INTEGER,
    health_output   TEXT,
    access_ok       INTEGER,
    regressions     TEXT,
    verdict         TEXT,
    verdict_reason  TEXT,
    -- none | script | snapshot
    revert_method   TEXT,
    revert_ms       INTEGER,
    apply_ms        INTEGER,
    evaluate_ms     INTEGER,
    diagnostics     TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    UNIQUE (run_id, rule_id, n)
);

CREATE TABLE turns (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs(id),
    attempt_id         INTEGER REFERENCES attempts(id),
    rule_id            TEXT,
    role               TEXT NOT NULL,
    model              TEXT NOT NULL DEFAULT '',
    prompt_chars       INTEGER NOT NULL DEFAULT 0,
    prompt_tokens_est  INTEGER NOT NULL DEFAULT 0,
    prompt_tokens      INTEGER,
    completion_tokens  INTEGER,
    latency_ms         INTEGER NOT NULL DEFAULT 0,
    retries            INTEGER NOT NULL DEFAULT 0,
    tool_calls_seen    INTEGER NOT NULL DEFAULT 0,
    tool_calls_dropped TEXT NOT NULL DEFAULT '[]',
    mode               TEXT NOT NULL DEFAULT 'none',
    finish_reason      TEXT,
    sections           TEXT NOT NULL DEFAULT '[]',
    error              TEXT,
    created_at         TEXT NOT NULL
);

CREATE TABLE events (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    ts        TEXT NOT NULL,
    kind      TEXT NOT NULL,
    rule_id   TEXT,
    data      TEXT NOT NULL DEFAULT '{}'
);

-- Semantic memory: kept across runs, each item can be forgotten.
CREATE TABLE lessons (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER REFERENCES runs(id),
    rule_id    TEXT,
    lesson     TEXT NOT NULL,
    preferred  TEXT NOT NULL DEFAULT '',
    distilled  TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE bans (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER REFERENCES runs(id),
    rule_id    TEXT,
    pattern    TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE tips (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER REFERENCES runs(id),
    rule_id    TEXT,
    text       TEXT NOT NULL,
    kind       TEXT NOT NULL DEFAULT '',
    mechanism  TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1
);

CREATE INDEX attempts_by_rule ON attempts (run_id, rule_id);
CREATE INDEX turns_by_run ON turns (run_id);
CREATE INDEX events_by_run ON events (run_id, id);
