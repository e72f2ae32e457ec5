# scenario.py IN OUT SPEC.py: an oscap results document (cut by trim.py) made to show a broken
# guest: test results, their items and collected objects, then every criteria result recomputed.
import sys, re
import xml.etree.ElementTree as ET
src, out, spec_file = sys.argv[1:4]
spec = {'__file__': spec_file}
exec(open(spec_file).read(), spec)
R = 'http://oval.mitre.org/XMLSchema/oval-results-5'
SC = 'http://oval.mitre.org/XMLSchema/oval-system-characteristics-5'
NS = {'unix': SC + '#unix', 'linux': SC + '#linux', 'ind': SC + '#independent'}
exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'ns.py')).read())
tree = ET.parse(src); root = tree.getroot()
def local(t): return t.split('}')[1] if '}' in t else t
def find(tag):
    return [e for e in root.iter() if local(e.tag) == tag]
results = next(e for e in find('system'))
tests = {t.get('test_id'): t for t in find('test') if t.get('test_id')}
coll = find('collected_objects')[0]
sysdata = find('system_data')
if sysdata: sysdata = sysdata[0]
else:
    sysdata = ET.SubElement(coll.__class__.__new__(coll.__class__) if False else find('oval_system_characteristics')[0], '{%s}system_data' % SC)
defs = {}
for d in find('definition'):
    if d.get('definition_id'): defs[d.get('definition_id')] = d
# test id -> object id, from the definitions
obj_of = {}
for e in root.iter():
    if local(e.tag).endswith('_test') and e.get('id'):
        for c in e:
            if local(c.tag) == 'object': obj_of[e.get('id')] = c.get('object_ref')
n = [1000]
for tid, t in spec['TESTS'].items():
    tid = 'oval:ssg-%s:tst:1' % tid
    te = tests[tid]
    for c in list(te): te.remove(c)
    te.set('result', t['result'])
    oid = obj_of[tid]
    o = next(x for x in coll if x.get('id') == oid)
    for c in list(o): o.remove(c)
    items = t.get('items', [])
    o.set('flag', t.get('flag', 'complete' if items else 'does not exist'))
    for fam, kind, fields, ires in items:
        n[0] += 1; iid = str(n[0])
        ti = ET.SubElement(te, '{%s}tested_item' % R, {'item_id': iid, 'result': ires})
        ET.SubElement(o, '{%s}reference' % SC, {'item_ref': iid})
        it = ET.SubElement(sysdata, '{%s}%s' % (NS[fam], kind), {'id': iid, 'status': 'exists'})
        for f in fields:
            name, value = f[0], f[1]
            attrs = {'datatype': f[2]} if len(f) > 2 else {}
            if kind == 'systemdunitproperty_item' or name.startswith('@'):
                pass
            fe = ET.SubElement(it, '{%s}%s' % (NS[fam], name), attrs); fe.text = value
    for vid, val in t.get('variables', []):
        v = ET.SubElement(te, '{%s}tested_variable' % R, {'variable_id': vid}); v.text = val
# recompute criteria results, bottom up
def node(e):
    tag = local(e.tag)
    if tag == 'criterion':
        r = tests[e.get('test_ref')].get('result')
    elif tag == 'extend_definition':
        r = define(e.get('definition_ref'))
    else:
        rs = [node(c) for c in e if local(c.tag) in ('criteria', 'criterion', 'extend_definition')]
        op = e.get('operator', 'AND')
        if op == 'AND': r = 'false' if 'false' in rs else ('true' if all(x == 'true' for x in rs) else 'unknown')
        else: r = 'true' if 'true' in rs else ('false' if all(x == 'false' for x in rs) else 'unknown')
    if e.get('negate') == 'true' and r in ('true', 'false'): r = {'true': 'false', 'false': 'true'}[r]
    e.set('result', r)
    return r
def define(did):
    d = defs[did]
    crit = next(c for c in d if local(c.tag) == 'criteria')
    r = node(crit); d.set('result', r); return r
for did in list(defs):
    if list(defs[did]) and any(local(c.tag) == 'criteria' for c in defs[did]) and defs[did].get('result') is not None:
        define(did)
# drop the host's timestamps and names
for e in root.iter():
    if local(e.tag) == 'timestamp': e.text = '2026-11-26T00:00:00'
    if local(e.tag) == 'primary_host_name': e.text = 'temper-test'
ET.indent(tree, '  ')
tree.write(out, xml_declaration=True, encoding='UTF-8')
