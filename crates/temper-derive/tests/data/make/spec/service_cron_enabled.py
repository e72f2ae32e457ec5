# cron installed, then `systemctl disable --now cron`.
deps = ['basic.target', 'getty.target', 'ssh.service', 'systemd-logind.service']
TESTS = {
    'test_service_cron_package_cron_installed': {'result': 'true', 'items': [('linux', 'dpkginfo_item', [('name', 'cron'), ('arch', 'amd64'), ('epoch', '(none)'), ("release", "162"), ('version', '3.0pl1'), ('evr', '0:3.0pl1-162', 'debian_evr_string')], 'true')]},
    'test_service_running_cron': {'result': 'false', 'items': [('linux', 'systemdunitproperty_item', [('unit', 'cron.service'), ('property', 'ActiveState'), ('value', 'inactive')], 'false')]},
    'test_multi_user_wants_cron': {'result': 'false', 'items': [('linux', 'systemdunitdependency_item', [('unit', 'multi-user.target')] + [('dependency', d) for d in deps], 'false')]},
    'test_multi_user_wants_cron_socket': {'result': 'false', 'items': [('linux', 'systemdunitdependency_item', [('unit', 'multi-user.target')] + [('dependency', d) for d in deps], 'false')]},
}
