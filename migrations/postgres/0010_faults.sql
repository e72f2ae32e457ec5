-- The verdict on a fix during whose checks the guest stopped running (a crash, a power-off).
INSERT INTO verdicts (name) VALUES ('guest_down');
-- The store's own identity: a run's claim on its VM names it, whatever path or URL reaches it.
CREATE TABLE store_identity (id TEXT NOT NULL PRIMARY KEY);
INSERT INTO store_identity (id) VALUES (md5(random()::text || clock_timestamp()::text));
