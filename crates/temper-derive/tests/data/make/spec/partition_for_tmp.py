# /tmp on the root filesystem.
TESTS = {'testtmp_partition': {'result': 'false'}}
