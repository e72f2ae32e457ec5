-- A run's target, whole (temper_core::target::Target as JSON): `temper resume` rebuilds the
-- hypervisor and SSH ports from it, not from the configuration of the day. NULL for the runs
-- started before targets were stored (resume falls back to the configured target).
ALTER TABLE runs ADD COLUMN target_config JSONB CHECK (target_config IS NULL OR jsonb_typeof(target_config) = 'object');
