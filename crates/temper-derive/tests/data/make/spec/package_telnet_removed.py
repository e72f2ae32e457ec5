# apt-get install telnet.
TESTS = {'test_package_telnet_removed': {'result': 'false', 'items': [('linux', 'dpkginfo_item', [('name', 'telnet'), ('arch', 'all'), ('epoch', '(none)'), ('release', '3'), ('version', '0.17+2.4'), ('evr', '0:0.17+2.4-3', 'debian_evr_string')], 'true')]}}
