-- Regression checks in batches. On a large profile a verified fix waits, with its own snapshot,
-- for the batch's one regression rescan; only then does its snapshot become the checkpoint.

-- The snapshot taken after this fix was kept.
ALTER TABLE attempts ADD COLUMN snapshot TEXT;
-- For a kept fix: pending (verified, awaiting the regression check) | confirmed (the regression
-- set passed with it in place) | rolled_back (undone with its batch). NULL for other verdicts.
ALTER TABLE attempts ADD COLUMN kept TEXT;
UPDATE attempts SET kept = 'confirmed' WHERE verdict = 'fixed';

-- Fixes per regression check (1: the regression set rides in every rule rescan). NULL until set.
ALTER TABLE runs ADD COLUMN regression_every INTEGER;
