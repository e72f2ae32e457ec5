-- What the scanner found wrong with a rule (temper_scap::oval::Evidence as JSON: the OVAL
-- objects, expected states and collected items), before an attempt's fix and after it. NULL
-- unless the run scans with the OVAL engine.
ALTER TABLE attempts ADD COLUMN evidence_before JSONB CHECK (evidence_before IS NULL OR jsonb_typeof(evidence_before) = 'object');
ALTER TABLE attempts ADD COLUMN evidence_after JSONB CHECK (evidence_after IS NULL OR jsonb_typeof(evidence_after) = 'object');
