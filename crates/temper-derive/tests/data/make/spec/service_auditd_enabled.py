# auditd installed, then `systemctl disable --now auditd`.
deps = ['basic.target', 'cron.service', 'getty.target', 'ssh.service', 'systemd-logind.service']
TESTS = {
    'test_service_auditd_package_auditd_installed': {'result': 'true', 'items': [('linux', 'dpkginfo_item', [('name', 'auditd'), ('arch', 'amd64'), ('epoch', '(none)'), ('release', '1'), ('version', '3.0.9'), ('evr', '0:3.0.9-1', 'debian_evr_string')], 'true')]},
    'test_service_running_auditd': {'result': 'false', 'items': [('linux', 'systemdunitproperty_item', [('unit', 'auditd.service'), ('property', 'ActiveState'), ('value', 'inactive')], 'false')]},
    'test_multi_user_wants_auditd': {'result': 'false', 'items': [('linux', 'systemdunitdependency_item', [('unit', 'multi-user.target')] + [('dependency', d) for d in deps], 'false')]},
    'test_multi_user_wants_auditd_socket': {'result': 'false', 'items': [('linux', 'systemdunitdependency_item', [('unit', 'multi-user.target')] + [('dependency', d) for d in deps], 'false')]},
}
