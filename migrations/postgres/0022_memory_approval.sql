-- Issue 76: what the Reflector learns from a run (a lesson, a ban, a tip) holds for that run's
-- target alone until a person approves it for the skill (`temper memory approve`): when and by
-- whom. Rows from before stay with the target of the run that made them.
ALTER TABLE lessons ADD COLUMN approved_at TEXT;
ALTER TABLE lessons ADD COLUMN approved_by TEXT;
ALTER TABLE bans ADD COLUMN approved_at TEXT;
ALTER TABLE bans ADD COLUMN approved_by TEXT;
ALTER TABLE tips ADD COLUMN approved_at TEXT;
ALTER TABLE tips ADD COLUMN approved_by TEXT;
