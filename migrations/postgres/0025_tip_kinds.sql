-- A Reflector's tip's kind is a word of its own lookup table (`TipKind`), as every other kind is:
-- tips.kind becomes a foreign key to tip_kinds. A kind stored before (an LLM's word, or none) is
-- read in any case; a word outside the list is `other`, the tip kept. As SQLite's 0026.
CREATE TABLE tip_kinds (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO tip_kinds (name) VALUES ('package'), ('config'), ('service'), ('permission'), ('kernel'), ('other');

UPDATE tips SET kind = CASE WHEN lower(trim(kind)) IN (SELECT name FROM tip_kinds) THEN lower(trim(kind)) ELSE 'other' END;
ALTER TABLE tips ALTER COLUMN kind SET DEFAULT 'other',
    ADD CONSTRAINT tips_kind_fkey FOREIGN KEY (kind) REFERENCES tip_kinds(name);
