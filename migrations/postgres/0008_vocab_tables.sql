-- Vocabularies as tables (issue 33): each status, source, verdict and kind the code knows (the
-- Rust enums in temper-core's journal and verdict) is a row of its own lookup table, and each
-- column that holds one is a foreign key to it, not a CHECK list. A new value is one INSERT in a
-- new migration, e.g. `INSERT INTO verdicts (name) VALUES ('new_verdict');`. The same tables as
-- SQLite's 0009, and queue_states for the fleet's queue (PostgreSQL only).
CREATE TABLE run_statuses (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO run_statuses (name) VALUES ('running'), ('paused'), ('interrupted'), ('finished'), ('failed');

CREATE TABLE phases (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO phases (name) VALUES ('preflight'), ('pick'), ('fix'), ('evaluate'), ('revert'), ('reflect'), ('regression'),
    ('finish'), ('done');

CREATE TABLE rule_statuses (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO rule_statuses (name) VALUES ('pending'), ('passing'), ('fixed'), ('escalated'), ('skipped'), ('waived'),
    ('deferred'), ('still_failing'), ('unstable'), ('notapplicable'), ('notchecked'), ('notselected'), ('error'),
    ('unknown'), ('informational');

CREATE TABLE scan_results (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO scan_results (name) VALUES ('pass'), ('fail'), ('error'), ('unknown'), ('notapplicable'), ('notchecked'),
    ('notselected'), ('informational'), ('fixed'), ('missing');

CREATE TABLE attempt_states (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO attempt_states (name) VALUES ('started'), ('applied'), ('done'), ('interrupted');

CREATE TABLE fix_sources (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO fix_sources (name) VALUES ('stock'), ('llm'), ('llm_text'), ('rejected'), ('memory');

CREATE TABLE verdicts (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO verdicts (name) VALUES ('fixed'), ('still_failing'), ('apply_failed'), ('health_broken'), ('lockout'),
    ('regression'), ('refused'), ('needs_reboot'), ('not_persistent'), ('breaks_boot'), ('interrupted');

CREATE TABLE revert_methods (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO revert_methods (name) VALUES ('none'), ('script'), ('script_then_snapshot'), ('snapshot');

CREATE TABLE kept_states (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO kept_states (name) VALUES ('pending'), ('confirmed'), ('rolled_back');

CREATE TABLE turn_roles (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO turn_roles (name) VALUES ('architect'), ('reengage'), ('worker'), ('reflector');

CREATE TABLE turn_modes (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO turn_modes (name) VALUES ('native'), ('text'), ('none');

CREATE TABLE event_kinds (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO event_kinds (name) VALUES ('architect_rejected'), ('attempt'), ('attempt_interrupted'), ('ban_invalid'),
    ('ban_shared'), ('checkpoint'), ('checkpoint_dropped'), ('error'), ('escalate'), ('finish'), ('kept_pending'),
    ('lease_taken'), ('paused'), ('pick'), ('preflight'), ('reboot'), ('booted'), ('reboot_blamed'), ('reengage'),
    ('reengage_default'), ('reflect'), ('reflect_failed'), ('regression_check'), ('regression_every'),
    ('regression_found'), ('regression_unstable'), ('replay'), ('resume'), ('revert'), ('revert_script_failed'),
    ('rule_applicable'), ('scan'), ('tool_call_capped'), ('verdict');

CREATE TABLE queue_states (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO queue_states (name) VALUES ('queued'), ('claimed'), ('done'), ('failed');

ALTER TABLE runs DROP CONSTRAINT runs_status_check,
    ADD CONSTRAINT runs_status_fkey FOREIGN KEY (status) REFERENCES run_statuses(name);
ALTER TABLE runs DROP CONSTRAINT runs_phase_check,
    ADD CONSTRAINT runs_phase_fkey FOREIGN KEY (phase) REFERENCES phases(name);

ALTER TABLE rules DROP CONSTRAINT rules_initial_result_check,
    ADD CONSTRAINT rules_initial_result_fkey FOREIGN KEY (initial_result) REFERENCES scan_results(name);
ALTER TABLE rules DROP CONSTRAINT rules_final_result_check,
    ADD CONSTRAINT rules_final_result_fkey FOREIGN KEY (final_result) REFERENCES scan_results(name);
ALTER TABLE rules DROP CONSTRAINT rules_status_check,
    ADD CONSTRAINT rules_status_fkey FOREIGN KEY (status) REFERENCES rule_statuses(name);

ALTER TABLE attempts DROP CONSTRAINT attempts_state_check,
    ADD CONSTRAINT attempts_state_fkey FOREIGN KEY (state) REFERENCES attempt_states(name);
ALTER TABLE attempts DROP CONSTRAINT attempts_source_check,
    ADD CONSTRAINT attempts_source_fkey FOREIGN KEY (source) REFERENCES fix_sources(name);
ALTER TABLE attempts DROP CONSTRAINT attempts_rule_result_check,
    ADD CONSTRAINT attempts_rule_result_fkey FOREIGN KEY (rule_result) REFERENCES scan_results(name);
ALTER TABLE attempts DROP CONSTRAINT attempts_verdict_check,
    ADD CONSTRAINT attempts_verdict_fkey FOREIGN KEY (verdict) REFERENCES verdicts(name);
ALTER TABLE attempts DROP CONSTRAINT attempts_revert_method_check,
    ADD CONSTRAINT attempts_revert_method_fkey FOREIGN KEY (revert_method) REFERENCES revert_methods(name);
ALTER TABLE attempts DROP CONSTRAINT attempts_kept_check,
    ADD CONSTRAINT attempts_kept_fkey FOREIGN KEY (kept) REFERENCES kept_states(name);

ALTER TABLE turns DROP CONSTRAINT turns_role_check,
    ADD CONSTRAINT turns_role_fkey FOREIGN KEY (role) REFERENCES turn_roles(name);
ALTER TABLE turns DROP CONSTRAINT turns_mode_check,
    ADD CONSTRAINT turns_mode_fkey FOREIGN KEY (mode) REFERENCES turn_modes(name);

ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_fkey FOREIGN KEY (kind) REFERENCES event_kinds(name);

ALTER TABLE queue DROP CONSTRAINT queue_state_check,
    ADD CONSTRAINT queue_state_fkey FOREIGN KEY (state) REFERENCES queue_states(name);
