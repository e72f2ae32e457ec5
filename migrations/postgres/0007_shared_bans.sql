-- Fleets (issue 12): the event `ban_shared`, a ban made by another run of the skill in force
-- in this run from its next attempt.
ALTER TABLE events DROP CONSTRAINT events_kind_check;
ALTER TABLE events ADD CONSTRAINT events_kind_check CHECK (kind IN ('architect_rejected','attempt','attempt_interrupted','ban_invalid','checkpoint',
        'checkpoint_dropped','error','escalate','finish','kept_pending','lease_taken','paused','pick','preflight','reengage',
        'reengage_default','reflect','reflect_failed','regression_check','regression_every','regression_found',
        'regression_unstable','replay','resume','revert','revert_script_failed','rule_applicable','scan','tool_call_capped','verdict',
        'reboot','booted','reboot_blamed','ban_shared'));
