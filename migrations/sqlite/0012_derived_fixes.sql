-- A fix built by temper from the rule's own OVAL check and the items the scanner found.
INSERT INTO fix_sources (name) VALUES ('derived');
