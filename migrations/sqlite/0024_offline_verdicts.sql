-- The verdict from outside the guest: each rule's verdict on the run's final state, judged from
-- its disk on the host (temper_journal::offline::OfflineVerdict as JSON; NULL when the disk was
-- not judged), and the event that holds the guest's final scan against it.
ALTER TABLE rules ADD COLUMN offline_verdict TEXT CHECK (offline_verdict IS NULL OR json_valid(offline_verdict));
INSERT INTO event_kinds (name) VALUES ('cross_examined');
