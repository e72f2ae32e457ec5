-- A full scan's results named rules the content does not have: dropped at the scanner.
INSERT INTO event_kinds (name) VALUES ('rules_unknown');
