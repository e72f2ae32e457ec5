exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'common.py')).read())
# chmod g+w on two binaries, one of them setuid (its bit must survive the fix).
TESTS = {'test_perms_binary_files': {'result': 'false', 'items': [mode('/usr/bin/ls', 0, 0, 0o775), mode('/usr/bin/su', 0, 0, 0o4777)]}}
