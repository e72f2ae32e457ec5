# trim.py RESULTS DEFID OUT: an oscap OVAL results document cut to one definition's closure.
import sys, re
import xml.etree.ElementTree as ET
src, defid, out = sys.argv[1:4]
# keep the usual prefixes
exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'ns.py')).read())
tree = ET.parse(src); root = tree.getroot()
def local(t): return t.split('}')[1] if '}' in t else t
defs_root = next(e for e in root if local(e.tag) == 'oval_definitions')
ids = {}
for sec in defs_root:
    for el in sec:
        if el.get('id'): ids[el.get('id')] = el
def refs(el):
    out = []
    for e in el.iter():
        for a in ('test_ref', 'object_ref', 'state_ref', 'var_ref', 'definition_ref'):
            if e.get(a): out.append(e.get(a))
        if local(e.tag) in ('object_reference', 'filter', 'var_ref') and e.text and e.text.strip():
            out.append(e.text.strip())
    return out
keep = set(); todo = [defid]
while todo:
    i = todo.pop()
    if i in keep or i not in ids: continue
    keep.add(i); todo.extend(refs(ids[i]))
for sec in defs_root:
    for el in list(sec):
        if el.get('id') and el.get('id') not in keep: sec.remove(el)
for sec in list(defs_root):
    if local(sec.tag) != 'generator' and len(sec) == 0: defs_root.remove(sec)
items = set()
for system in root.iter():
    if local(system.tag) != 'system': continue
    for sec in system:
        if local(sec.tag) == 'definitions':
            for d in list(sec):
                if d.get('definition_id') not in keep: sec.remove(d)
        if local(sec.tag) == 'tests':
            for t in list(sec):
                if t.get('test_id') not in keep: sec.remove(t)
                else:
                    for ti in t.iter():
                        if ti.get('item_id'): items.add(ti.get('item_id'))
        if local(sec.tag) == 'oval_system_characteristics':
            for part in sec:
                if local(part.tag) == 'system_info':
                    for c in list(part):
                        if local(c.tag) == 'interfaces': part.remove(c)
                if local(part.tag) == 'collected_objects':
                    for o in list(part):
                        if o.get('id') not in keep: part.remove(o)
                        else:
                            for r in o.iter():
                                if r.get('item_ref'): items.add(r.get('item_ref'))
                if local(part.tag) == 'system_data':
                    for it in list(part):
                        if it.get('id') not in items: part.remove(it)
tree.write(out, xml_declaration=True, encoding='UTF-8')
