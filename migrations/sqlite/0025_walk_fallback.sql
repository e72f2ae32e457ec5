-- A scan's one walk could not complete some objects (a directory it could not read, an entry that
-- vanished, a file system it leaves out, a path past PATH_MAX): oscap walked for them.
INSERT INTO event_kinds (name) VALUES ('walk_fallback');
