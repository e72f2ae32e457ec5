# kernel.kptr_restrict = 1 live and in /etc/sysctl.d/60-kptr.conf, but 0 in /etc/sysctl.conf, which
# Debian's /etc/sysctl.d/99-sysctl.conf links to: the setting holds live and is lost at boot.
# As oscap writes it: the object's own pattern.
pat = r'^[\s]*kernel.kptr_restrict[\s]*=[\s]*(.*\S)[\s]*$'
def conf(path, value, res):
    d, f = path.rsplit('/', 1)
    return ('ind', 'textfilecontent_item', [('filepath', path), ('path', d), ('filename', f), ('pattern', pat), ('instance', '1', 'int'), ('text', 'kernel.kptr_restrict = ' + value), ('subexpression', value)], res)
# The profile's value (var_sysctl_kernel_kptr_restrict: 1).
VAR = [('oval:ssg-sysctl_kernel_kptr_restrict_value:var:1', '1')]
TESTS = {
    'test_sysctl_kernel_kptr_restrict_runtime': {'result': 'true', 'items': [('unix', 'sysctl_item', [('name', 'kernel.kptr_restrict'), ('value', '1', 'int')], 'true')], 'variables': VAR},
    'test_sysctl_kernel_kptr_restrict_static_user': {'result': 'false', 'items': [conf('/etc/sysctl.d/60-kptr.conf', '1', 'true'), conf('/etc/sysctl.conf', '0', 'false'), conf('/etc/sysctl.d/99-sysctl.conf', '0', 'false')], 'variables': VAR},
    'test_sysctl_kernel_kptr_restrict_static_user_missing': {'result': 'false', 'items': [conf('/etc/sysctl.d/60-kptr.conf', '1', 'true')]},
    'test_sysctl_kernel_kptr_restrict_static_pkg_correct': {'result': 'false'},
}
