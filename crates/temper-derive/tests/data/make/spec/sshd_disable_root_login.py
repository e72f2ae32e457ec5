# openssh-server installed, and `PermitRootLogin yes` in /etc/ssh/sshd_config (sshd_required unset: 0).
pat = r'^[ \t]*(?i)PermitRootLogin(?-i)[ \t]+(.+?)[ \t]*(?:$|#)'
line = ('ind', 'textfilecontent_item', [('filepath', '/etc/ssh/sshd_config'), ('path', '/etc/ssh'), ('filename', 'sshd_config'), ('pattern', pat), ('instance', '1', 'int'), ('text', 'PermitRootLogin yes'), ('subexpression', 'yes')], 'false')
pkg = ('linux', 'dpkginfo_item', [('name', 'openssh-server'), ('arch', 'amd64'), ('epoch', '1'), ('release', '2~deb12u3'), ('version', '9.2p1'), ('evr', '1:9.2p1-2~deb12u3', 'debian_evr_string')], 'true')
TESTS = {
    'test_package_openssh-server_installed': {'result': 'true', 'items': [pkg]},
    'test_package_openssh-server_removed': {'result': 'false', 'items': [pkg]},
    'test_sshd_disable_root_login': {'result': 'false', 'items': [line]},
    'test_PermitRootLogin_present_sshd_disable_root_login': {'result': 'true', 'items': [line[:3] + ('true',)]},
}
