exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'common.py')).read())
# As ComplianceAsCode's scenario: a world-writable directory without its sticky bit.
# The local file systems' mount points (the object's path), as the guest's probes computed them.
MOUNTS = [('oval:ssg-var_dir_perms_world_writable_sticky_bits_local_mountpoints:var:1', '/')]
TESTS = {'test_dir_perms_world_writable_sticky_bits': {'result': 'false', 'items': [mode('/srv/share', 0, 0, 0o777, 'directory', filepath=False)], 'variables': MOUNTS}}
