-- no-transaction
-- Fleets (issue 12): the event `ban_shared`, a ban made by another run of the skill in force
-- in this run from its next attempt. SQLite cannot change a CHECK: events are rebuilt, as in 0007.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE events_new (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    ts        TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('architect_rejected','attempt','attempt_interrupted','ban_invalid','checkpoint',
        'checkpoint_dropped','error','escalate','finish','kept_pending','lease_taken','paused','pick','preflight','reengage',
        'reengage_default','reflect','reflect_failed','regression_check','regression_every','regression_found',
        'regression_unstable','replay','resume','revert','revert_script_failed','rule_applicable','scan','tool_call_capped','verdict',
        'reboot','booted','reboot_blamed','ban_shared')),
    rule_id   TEXT,
    data      TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO events_new SELECT * FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_by_run ON events (run_id, id);

COMMIT;
PRAGMA foreign_keys = ON;
