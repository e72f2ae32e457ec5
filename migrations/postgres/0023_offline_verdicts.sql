-- The verdict from outside the guest: each rule's verdict on the run's final state, judged from
-- its disk on the host (temper_journal::offline::OfflineVerdict as JSON; NULL when the disk was
-- not judged), and the event that holds the guest's final scan against it.
ALTER TABLE rules ADD COLUMN offline_verdict JSONB CHECK (offline_verdict IS NULL OR jsonb_typeof(offline_verdict) = 'object');
INSERT INTO event_kinds (name) VALUES ('cross_examined');
