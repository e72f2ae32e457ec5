-- A failing rule outside the run's scope (`temper run --rules`, a plan's scope): not worked on,
-- counted in no progress, summary or exit code.
INSERT INTO rule_statuses (name) VALUES ('out_of_scope');
-- What the final scan found wrong with a rule still failing (temper_scap::oval::Evidence as
-- JSON), attempted or not. NULL when the scan gave none (the xccdf engine, a rule that passes).
ALTER TABLE rules ADD COLUMN final_evidence TEXT CHECK (final_evidence IS NULL OR json_valid(final_evidence));
