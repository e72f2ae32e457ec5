-- The ETA's memory (issue 73): each rule's time in each finished run, recalled by the later runs
-- of the run's skill (the newest few, `eta::RECALL_RUNS`).
CREATE TABLE rule_times (
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    rule_id     TEXT NOT NULL,
    secs        REAL NOT NULL CHECK (secs >= 0),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (run_id, rule_id)
);
