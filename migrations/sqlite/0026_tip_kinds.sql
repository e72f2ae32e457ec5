-- no-transaction
-- A Reflector's tip's kind is a word of its own lookup table (`TipKind`), as every other kind is:
-- tips.kind becomes a foreign key to tip_kinds. A kind stored before (an LLM's word, or none) is
-- read in any case; a word outside the list is `other`, the tip kept. SQLite cannot add a
-- foreign key to a column: tips is rebuilt, foreign keys off, as in 0009: the same columns in the
-- same order, every row kept.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE tip_kinds (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO tip_kinds (name) VALUES ('package'), ('config'), ('service'), ('permission'), ('kernel'), ('other');

CREATE TABLE tips_new (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER REFERENCES runs(id),
    rule_id     TEXT,
    text        TEXT NOT NULL,
    kind        TEXT NOT NULL DEFAULT 'other' REFERENCES tip_kinds(name),
    mechanism   TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    active      INTEGER NOT NULL DEFAULT 1,
    approved_at TEXT,
    approved_by TEXT
);
INSERT INTO tips_new (id, run_id, rule_id, text, kind, mechanism, created_at, active, approved_at, approved_by)
SELECT id, run_id, rule_id, text,
    CASE WHEN lower(trim(kind)) IN (SELECT name FROM tip_kinds) THEN lower(trim(kind)) ELSE 'other' END,
    mechanism, created_at, active, approved_at, approved_by
FROM tips;
DROP TABLE tips;
ALTER TABLE tips_new RENAME TO tips;

COMMIT;
PRAGMA foreign_keys = ON;
