exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'common.py')).read())
# As ComplianceAsCode's wrong-owner scenario: a directory under /usr/local/bin owned by nobody.
t = lambda d: 'test_ownership_system_commands_directory_' + d
TESTS = {t(d): {'result': 'true'} for d in ['bin', 'sbin', 'usr_bin', 'usr_sbin', 'usr_local_sbin']}
TESTS[t('usr_local_bin')] = {'result': 'false', 'items': [mode('/usr/local/bin/tools', 65534, 0, 0o755, 'directory', filepath=False)]}
