def mode(path, uid, gid, m, kind='regular', filepath=True):
    bits = ['suid', 'sgid', 'sticky', 'uread', 'uwrite', 'uexec', 'gread', 'gwrite', 'gexec', 'oread', 'owrite', 'oexec']
    d, base = path.rsplit('/', 1)
    f = ([('filepath', path)] if filepath else []) + [('path', d if filepath else path), ('filename', base if filepath else ''), ('type', kind),
         ('group_id', str(gid), 'int'), ('user_id', str(uid), 'int'), ('size', '4096', 'int')]
    for i, b in enumerate(bits):
        f.append((b, 'true' if m & (1 << (11 - i)) else 'false', 'boolean'))
    f.append(('has_extended_acl', 'false', 'boolean'))
    return ('unix', 'file_item', f, 'true')
