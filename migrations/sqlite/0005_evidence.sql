-- What the scanner found wrong with a rule (temper_scap::oval::Evidence as JSON: the OVAL
-- objects, expected states and collected items), before an attempt's fix and after it. NULL
-- unless the run scans with the OVAL engine.
ALTER TABLE attempts ADD COLUMN evidence_before TEXT CHECK (evidence_before IS NULL OR json_valid(evidence_before));
ALTER TABLE attempts ADD COLUMN evidence_after TEXT CHECK (evidence_after IS NULL OR json_valid(evidence_after));
