# overflow_action = ignore in /etc/audit/auditd.conf.
pat = r'^[ \t]*(?i)overflow_action(?-i)[ \t]*=[ \t]*(.+?)[ \t]*(?:$|#)'
TESTS = {'test_auditd_overflow_action': {'result': 'false', 'items': [('ind', 'textfilecontent_item', [('filepath', '/etc/audit/auditd.conf'), ('path', '/etc/audit'), ('filename', 'auditd.conf'), ('pattern', pat), ('instance', '1', 'int'), ('text', 'overflow_action = ignore'), ('subexpression', 'ignore')], 'false')]}}
