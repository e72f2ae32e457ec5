-- The reboot proof (issue 13): verdicts `not_persistent` and `breaks_boot`, and the events
-- `reboot`, `booted` (a checkpoint proven to boot) and `reboot_blamed`.
ALTER TABLE attempts DROP CONSTRAINT attempts_verdict_check;
ALTER TABLE attempts ADD CONSTRAINT attempts_verdict_check CHECK (verdict IN ('fixed','still_failing','apply_failed',
    'health_broken','lockout','regression','refused','needs_reboot','interrupted','not_persistent','breaks_boot'));
ALTER TABLE events DROP CONSTRAINT events_kind_check;
ALTER TABLE events ADD CONSTRAINT events_kind_check CHECK (kind IN ('architect_rejected','attempt','attempt_interrupted','ban_invalid','checkpoint',
        'checkpoint_dropped','error','escalate','finish','kept_pending','lease_taken','paused','pick','preflight','reengage',
        'reengage_default','reflect','reflect_failed','regression_check','regression_every','regression_found',
        'regression_unstable','replay','resume','revert','revert_script_failed','rule_applicable','scan','tool_call_capped','verdict',
        'reboot','booted','reboot_blamed'));
