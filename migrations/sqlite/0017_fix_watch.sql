-- A fix stopped by its watch: stalled (no progress for fix_stall_secs), or at the hard cap.
INSERT INTO verdicts (name) VALUES ('stalled'), ('timed_out');
