-- A resume that found the run's checkpoint gone and rebuilt it from an older kept state.
INSERT INTO event_kinds (name) VALUES ('checkpoint_lost');
