-- A fix from a proven plan another run exported (`temper run --plan`).
INSERT INTO fix_sources (name) VALUES ('plan');
