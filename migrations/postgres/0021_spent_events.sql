-- Where the rest of a run's time goes (issue 73): the loop's own measures, as `spent` events.
INSERT INTO event_kinds (name) VALUES ('spent');
