#!/usr/bin/env bash
# The verdict from outside, measured (docs/benchmarks.md, "The verdict from outside"): a stock run
# of 36 ANSSI high rules on a fresh temper-test (27 of a README run's fixed rules and the nine the
# skill holds for the harness), then `temper image verdict` of its final checkpoint, the export
# with its handover and boot proof, the image judged, and the guest's own `oscap xccdf eval` of
# the profile at the same state, for the verdict's time against it. About 40 minutes under TCG.
#   bash tests/bench/verdict-run.sh [OUT]      OUT: target/bench-verdict by default
# It removes .temper/ (the store) and recreates temper-test: run it on a machine of its own.
set -uo pipefail
cd "$(dirname "$0")/../.."
M=${1:-target/bench-verdict}
mkdir -p "$M"
T=target/release/temper
ts() { date +%s.%N; }
since() { echo "$(echo "$(ts) - $1" | bc) s"; }
rules="accounts_password_pam_dcredit,accounts_password_pam_retry,accounts_passwords_pam_faillock_deny,accounts_umask_etc_login_defs,aide_verify_acls,audit_rules_dac_modification_fchmod,audit_rules_dac_modification_fsetxattr,audit_rules_dac_modification_setxattr,audit_rules_file_deletion_events_unlink,audit_rules_kernel_module_loading_init,audit_rules_privileged_commands,audit_rules_privileged_commands_sudo,audit_rules_time_watch_localtime,audit_rules_unsuccessful_file_modification_truncate,audit_rules_usergroup_modification_shadow,file_permissions_sshd_config,package_audit_installed,package_rsyslog-gnutls_installed,set_password_hashing_algorithm_logindefs,sysctl_fs_suid_dumpable,sysctl_kernel_perf_cpu_time_max_percent,sysctl_kernel_sysrq,sysctl_net_ipv4_conf_all_accept_redirects,sysctl_net_ipv4_conf_all_route_localnet,sysctl_net_ipv4_conf_default_accept_redirects,sysctl_net_ipv4_conf_default_shared_media,sysctl_net_ipv4_tcp_syncookies,sudo_add_requiretty,sudo_add_noexec,file_permissions_sudo,sudo_dedicated_group,sudo_remove_nopasswd,sudo_require_authentication,sudo_require_reauthentication,sudoers_explicit_command_args,sudoers_no_root_target"
rm -rf .temper
a=$(ts); TEMPER_VM_RECREATE=1 bash vm/setup.sh; echo "setup: $(since "$a")"
a=$(ts); $T run --agent stock --rules "$rules"; echo "run: exit $? in $(since "$a")"
$T report latest --format md -o "$M/report.md"
a=$(ts); $T image verdict latest; echo "verdict: exit $? in $(since "$a")"
a=$(ts); $T image export latest -o "$M/hardened.qcow2"; echo "export: exit $? in $(since "$a")"
# The guest's own oscap over the same profile at the run's final checkpoint (the domain is back
# there after the export).
K=${TEMPER_VM_DIR:-/var/cache/temper/vm}/keys/id_ed25519
a=$(ts); ssh -i "$K" -p 2222 -o UserKnownHostsFile=/etc/temper/known_hosts -o BatchMode=yes temper@127.0.0.1 \
  "sudo oscap xccdf eval --profile xccdf_org.ssgproject.content_profile_anssi_bp28_high --results /tmp/guest-eval.xml /usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml >/dev/null 2>&1; echo oscap exit \$?"
echo "guest oscap xccdf eval: $(since "$a")"
