exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'common.py')).read())
# As ComplianceAsCode's scenario: a world-writable directory without its sticky bit.
TESTS = {'test_dir_perms_world_writable_sticky_bits': {'result': 'false', 'items': [mode('/srv/share', 0, 0, 0o777, 'directory', filepath=False)]}}
