exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'common.py')).read())
# As ComplianceAsCode's scenario: a world-writable directory owned by a user, not root. The check
# finds it and the definition negates that: the state to avoid is written as a negated criteria.
TESTS = {'test_dir_world_writable_uid_gt_zero': {'result': 'true', 'items': [mode('/srv/drop', 1000, 1000, 0o777, 'directory', filepath=False)]}}
