# A kernel built with CONFIG_ACPI_CUSTOM_METHOD=m: only another kernel meets the rule.
pat = r'^CONFIG_ACPI_CUSTOM_METHOD="?(.*?)"?$'
conf = '/boot/config-6.1.0-57-amd64'
line = ('ind', 'textfilecontent_item', [('filepath', conf), ('path', '/boot'), ('filename', 'config-6.1.0-57-amd64'), ('pattern', pat), ('instance', '1', 'int'), ('text', 'CONFIG_ACPI_CUSTOM_METHOD=m'), ('subexpression', 'm')], 'false')
TESTS = {
    'test_kernel_config_acpi_custom_method': {'result': 'false', 'items': [line]},
    'test_kernel_config_acpi_custom_method_absence': {'result': 'false', 'items': [line[:3] + ('true',)]},
}
