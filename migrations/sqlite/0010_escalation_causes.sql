-- Why a rule was escalated, as a value (the reason stays the text a person reads).
CREATE TABLE escalation_causes (name TEXT NOT NULL PRIMARY KEY);
INSERT INTO escalation_causes (name) VALUES
    ('attempt_budget'), ('wall_clock_budget'), ('plateau'), ('architect'), ('no_fix');
ALTER TABLE rules ADD COLUMN escalation_cause TEXT REFERENCES escalation_causes (name);
