exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'common.py')).read())
# As ComplianceAsCode's wrong-group scenario: a command in /usr/bin whose group is a user's (1000).
TESTS = {'test_groupownership_system_commands_dirs': {'result': 'false', 'items': [mode('/usr/bin/tool', 0, 1000, 0o755)]}}
