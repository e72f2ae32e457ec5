import xml.etree.ElementTree as ET
O = 'http://oval.mitre.org/XMLSchema/'
for p, u in [('', O + 'oval-results-5'), ('oval', O + 'oval-common-5'), ('oval-def', O + 'oval-definitions-5'),
             ('unix-def', O + 'oval-definitions-5#unix'), ('lin-def', O + 'oval-definitions-5#linux'), ('ind-def', O + 'oval-definitions-5#independent'),
             ('oval-sc', O + 'oval-system-characteristics-5'), ('unix-sys', O + 'oval-system-characteristics-5#unix'),
             ('lin-sys', O + 'oval-system-characteristics-5#linux'), ('ind-sys', O + 'oval-system-characteristics-5#independent'),
             ('xsi', 'http://www.w3.org/2001/XMLSchema-instance')]:
    ET.register_namespace(p, u)
