//! STIG Viewer 2 checklist (CKL, XML), written with quick-xml so every value is escaped.
use std::io;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use super::checklist::{Checklist, Vuln};
use crate::error::ReportError;
use crate::text::xml_chars;

type W = Writer<Vec<u8>>;

/// The target's marking (CKL `MARKING`, CKLB `target_data.classification`).
pub const MARKING: &str = "CUI";

pub fn render(list: &Checklist) -> Result<String, ReportError> {
    let mut w = Writer::new_with_indent(Vec::new(), b'\t', 1);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::Comment(BytesText::from_escaped(" temper report: STIG Viewer 2 checklist ")))?;
    w.create_element("CHECKLIST").write_inner_content(|w| {
        asset(w, list)?;
        w.create_element("STIGS").write_inner_content(|w| {
            w.create_element("iSTIG").write_inner_content(|w| {
                stig_info(w, list)?;
                let stig = StigRef { stig_ref: stig_ref(list), uuid: stig_uuid(list).to_string() };
                for v in &list.vulns {
                    vuln(w, v, &stig)?;
                }
                Ok(())
            })?;
            Ok(())
        })?;
        Ok(())
    })?;
    let mut s = String::from_utf8(w.into_inner()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    s.push('\n');
    Ok(s)
}

/// `<NAME>text</NAME>`, the text escaped (and `\r` kept as a character reference).
fn text(w: &mut W, name: &str, value: &str) -> io::Result<()> {
    let escaped = quick_xml::escape::escape(xml_chars(value)).replace('\r', "&#13;");
    w.create_element(name).write_text_content(BytesText::from_escaped(escaped))?;
    Ok(())
}

fn asset(w: &mut W, list: &Checklist) -> io::Result<()> {
    w.create_element("ASSET").write_inner_content(|w| {
        text(w, "ROLE", "None")?;
        text(w, "ASSET_TYPE", "Computing")?;
        text(w, "MARKING", MARKING)?;
        text(w, "HOST_NAME", &host_name(&list.target))?;
        text(w, "HOST_IP", "")?;
        text(w, "HOST_MAC", "")?;
        text(w, "HOST_FQDN", "")?;
        text(w, "TARGET_COMMENT", &list.target_comment)?;
        text(w, "TECH_AREA", "UNIX OS")?;
        text(w, "TARGET_KEY", "")?;
        text(w, "WEB_OR_DATABASE", "false")?;
        text(w, "WEB_DB_SITE", "")?;
        text(w, "WEB_DB_INSTANCE", "")
    })?;
    Ok(())
}

/// A host name from the target (`libvirt:domain`, `user@host:port`...): letters, digits, `-` and `.`.
pub fn host_name(target: &str) -> String {
    let last = target.rsplit(['@', '/', ':']).find(|s| !s.is_empty() && !s.chars().all(|c| c.is_ascii_digit())).unwrap_or(target);
    last.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.')).collect()
}

/// The STIG's version and release, from a `V2R4`-style mark in the profile, else the content's.
pub fn version_release(list: &Checklist) -> (String, String) {
    let text = format!("{} {}", list.profile_title, list.profile_description);
    let bytes = text.as_bytes();
    for i in 0..bytes.len() {
        if bytes[i] != b'V' || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let v: String = text[i + 1..].chars().take_while(char::is_ascii_digit).collect();
        let rest = &text[i + 1 + v.len()..];
        if v.is_empty() || !rest.starts_with('R') {
            continue;
        }
        let r: String = rest[1..].chars().take_while(char::is_ascii_digit).collect();
        if !r.is_empty() {
            // `Release: N ` then anything: the form STIG Manager's parsers read the release from.
            return (v, format!("Release: {r} (SSG content {})", list.content_version));
        }
    }
    ("1".into(), format!("SSG content {}", list.content_version))
}

/// `TITLE :: Version V, RELEASE`, the STIG reference STIG Viewer writes on every rule.
pub fn stig_ref(list: &Checklist) -> String {
    let (version, release) = version_release(list);
    format!("{} :: Version {version}, {release}", list.profile_title)
}

pub fn stig_uuid(list: &Checklist) -> uuid::Uuid {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, format!("temper:{}:{}", list.benchmark_id, list.profile_id).as_bytes())
}

fn stig_info(w: &mut W, list: &Checklist) -> io::Result<()> {
    let (version, release) = version_release(list);
    let description = if list.disa {
        list.profile_description.clone()
    } else {
        format!(
            "{}\n\nThis profile has no DISA STIG ids: each entry is one SSG rule, its SSG id standing in for the STIG id (Rule_Ver) and the V id (Vuln_Num).",
            list.profile_description
        )
    };
    let uuid = stig_uuid(list).to_string();
    let pairs: [(&str, &str); 11] = [
        ("version", &version),
        ("classification", "UNCLASSIFIED"),
        ("customname", ""),
        ("stigid", &list.benchmark_id),
        ("description", &description),
        ("filename", &list.profile_id),
        ("releaseinfo", &release),
        ("title", &list.profile_title),
        ("uuid", &uuid),
        ("notice", ""),
        ("source", &list.benchmark_title),
    ];
    w.create_element("STIG_INFO").write_inner_content(|w| {
        for (name, data) in pairs {
            w.create_element("SI_DATA").write_inner_content(|w| {
                text(w, "SID_NAME", name)?;
                if !data.is_empty() {
                    text(w, "SID_DATA", data)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    })?;
    Ok(())
}

/// What every VULN repeats about its STIG.
struct StigRef {
    stig_ref: String,
    uuid: String,
}

fn vuln(w: &mut W, v: &Vuln, stig: &StigRef) -> io::Result<()> {
    let mut attrs: Vec<(&str, &str)> = vec![
        ("Vuln_Num", &v.group_id),
        ("Severity", v.severity),
        ("Group_Title", &v.group_title),
        ("Rule_ID", &v.rule_id),
        ("Rule_Ver", &v.rule_ver),
        ("Rule_Title", &v.title),
        ("Vuln_Discuss", &v.discussion),
        ("IA_Controls", ""),
        ("Check_Content", &v.check_content),
        ("Fix_Text", &v.fix_text),
        ("False_Positives", ""),
        ("False_Negatives", ""),
        ("Documentable", "false"),
        ("Mitigations", ""),
        ("Potential_Impact", ""),
        ("Third_Party_Tools", ""),
        ("Mitigation_Control", ""),
        ("Responsibility", ""),
        ("Security_Override_Guidance", ""),
        ("Check_Content_Ref", "M"),
        ("Weight", "10.0"),
        ("Class", "Unclass"),
        ("STIGRef", &stig.stig_ref),
        ("TargetKey", ""),
        ("STIG_UUID", &stig.uuid),
    ];
    for c in &v.ccis {
        attrs.push(("CCI_REF", c));
    }
    w.create_element("VULN").write_inner_content(|w| {
        for (name, data) in &attrs {
            w.create_element("STIG_DATA").write_inner_content(|w| {
                text(w, "VULN_ATTRIBUTE", name)?;
                text(w, "ATTRIBUTE_DATA", data)
            })?;
        }
        text(w, "STATUS", v.status.ckl())?;
        text(w, "FINDING_DETAILS", &v.finding_details)?;
        text(w, "COMMENTS", &v.comments)?;
        text(w, "SEVERITY_OVERRIDE", "")?;
        text(w, "SEVERITY_JUSTIFICATION", "")
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names() {
        assert_eq!(host_name("libvirt:temper-debian12"), "temper-debian12");
        assert_eq!(host_name("admin@10.0.0.5:22"), "10.0.0.5");
        assert_eq!(host_name("vm<1>"), "vm1");
    }

    #[test]
    fn escapes_and_keeps_well_formed() {
        let mut w = Writer::new(Vec::new());
        text(&mut w, "X", "a < b && \"c\" 'd' \u{1b}[0m\r\n").unwrap();
        let s = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(s, "<X>a &lt; b &amp;&amp; &quot;c&quot; &apos;d&apos; \\x1b[0m&#13;\n</X>");
    }
}
