-- A proven plan's steps applied in batches, each checked once (`temper run --plan`).
INSERT INTO phases (name) VALUES ('plan_batch');
INSERT INTO event_kinds (name) VALUES ('plan_batch'), ('plan_bisected');
