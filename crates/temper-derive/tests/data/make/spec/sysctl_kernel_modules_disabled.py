# kernel.modules_disabled = 0 at runtime, and set nowhere in the configuration.
TESTS = {
    'test_sysctl_kernel_modules_disabled_runtime': {'result': 'false', 'items': [('unix', 'sysctl_item', [('name', 'kernel.modules_disabled'), ('value', '0', 'int')], 'false')]},
    'test_sysctl_kernel_modules_disabled_static_user': {'result': 'false'},
    'test_sysctl_kernel_modules_disabled_static_user_missing': {'result': 'true'},
    'test_sysctl_kernel_modules_disabled_static_pkg_correct': {'result': 'false'},
}
