-- A fix after which the rule's check could not run; an open rule seen passing before its own fix.
INSERT INTO verdicts (name) VALUES ('scan_broken');
INSERT INTO event_kinds (name) VALUES ('rule_passes');
