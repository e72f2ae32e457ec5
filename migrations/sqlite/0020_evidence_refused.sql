-- Items the guest gave that their objects, as the host's definitions give them, could not have
-- collected: refused from the evidence an attempt starts from.
INSERT INTO event_kinds (name) VALUES ('evidence_refused');
