//! A guest that forges its results document cannot choose what a derived fix changes: the check
//! is the host's (SSG 0.1.76's Debian 12 datastream, as the OVAL engine plans the rule's scan),
//! and the guest's document gives only results and items, each item checked against its object.
//!
//! Each case starts from a real `oscap oval eval --results` document of `tests/data` (see
//! `families.rs`), forged as a compromised guest would: a failing test added under an AND (an
//! sshd `AuthorizedKeysCommand`, a setuid bit), a state's value changed, a variable's value
//! changed, an item added outside its object's directories. Then the evidence the engine reads
//! from it (`OvalPlan::evidence`) goes to the real derive code.
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use temper_derive::{DerivedFix, Refusal, derive};
use temper_scap::oval::{OvalContent, OvalPlan, OvalReport};
use temper_scap::{Benchmark, read_benchmark};

const HIGH: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";

fn datastream() -> PathBuf {
    let dir = std::env::var("TEMPER_SSG_DIR").unwrap_or_else(|_| "/var/cache/temper/vm/ssg/usr/share/xml/scap/ssg/content".into());
    let ds = Path::new(&dir).join("ssg-debian12-ds.xml");
    assert!(ds.is_file(), "SSG content missing: {} (run `bash vm/fetch-ssg.sh`, or set TEMPER_SSG_DIR)", ds.display());
    ds
}

/// The host's content, read once.
fn host() -> &'static (OvalContent, Benchmark) {
    static HOST: OnceLock<(OvalContent, Benchmark)> = OnceLock::new();
    HOST.get_or_init(|| (OvalContent::read(datastream()).unwrap(), read_benchmark(datastream(), Some(HIGH)).unwrap()))
}

fn recorded(rule: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(format!("{rule}.xml"))).unwrap()
}

/// `doc` with `add` put in after the first `at`, which must be there.
fn after(doc: &str, at: &str, add: &str) -> String {
    let i = doc.find(at).unwrap_or_else(|| panic!("{at:?} is not in the document")) + at.len();
    format!("{}{add}{}", &doc[..i], &doc[i..])
}

/// The fix the scanner's evidence of `doc` (the guest's results of `rule`'s check) leads to.
fn derived(rule: &str, doc: &str) -> Result<DerivedFix, Refusal> {
    let (content, bench) = host();
    let id = format!("xccdf_org.ssgproject.content_rule_{rule}");
    let plan = OvalPlan::build(content, bench, std::slice::from_ref(&id)).unwrap();
    let doc = platforms_true(&plan, doc);
    let report = OvalReport::parse(doc.as_bytes()).unwrap();
    let outcomes = plan.outcomes(&report.results());
    let evidence = plan.evidence(&report, &outcomes);
    let e = evidence.iter().find(|e| e.rule == id).unwrap_or_else(|| panic!("no evidence for {rule}: {outcomes:?}"));
    println!("{}", e.to_text());
    derive(e)
}

/// `doc` with every definition of the plan's document it has no result for (the rule's CPE
/// platforms) `true`, as the guest's oscap finds them on a Debian 12 machine.
fn platforms_true(plan: &OvalPlan, doc: &str) -> String {
    let cut = String::from_utf8_lossy(plan.document.as_ref().unwrap()).into_owned();
    let ids: Vec<&str> = cut.split(" id=\"").skip(1).filter_map(|s| s.split('"').next()).filter(|id| id.contains(":def:")).collect();
    let lines: String = ids
        .iter()
        .filter(|id| !doc.contains(&format!("definition_id=\"{id}\"")))
        .map(|id| format!("<definition definition_id=\"{id}\" result=\"true\" version=\"1\"/>"))
        .collect();
    let at = doc.find("<results>").unwrap();
    let at = at + doc[at..].find("<definitions>").unwrap() + "<definitions>".len();
    format!("{}{lines}{}", &doc[..at], &doc[at..])
}

/// A failing test added under an AND, in the document's definitions and in its results: its
/// test, object, state, result and item.
struct Forged<'a> {
    /// Where the criterion goes in the definitions, and in the results.
    def_at: &'a str,
    result_at: &'a str,
    test: &'a str,
    object: &'a str,
    state: &'a str,
    item: &'a str,
}

impl Forged<'_> {
    fn put_in(&self, doc: &str) -> String {
        let id = "oval:ssg-forged:tst:1";
        let doc = after(doc, self.def_at, &format!(r#"<oval-def:criterion test_ref="{id}" comment="forged"/>"#));
        let doc = after(&doc, "<oval-def:tests>", self.test);
        let doc = after(&doc, "<oval-def:objects>", self.object);
        let doc = after(&doc, "<oval-def:states>", self.state);
        let doc = after(&doc, self.result_at, &format!(r#"<criterion test_ref="{id}" version="1" result="false"/>"#));
        let doc = after(
            &doc,
            "<tests>",
            &format!(
                r#"<test test_id="{id}" version="1" check_existence="all_exist" check="all" result="false"><tested_item item_id="9001" result="false"/></test>"#
            ),
        );
        let doc = after(
            &doc,
            "<oval-sc:collected_objects>",
            r#"<oval-sc:object id="oval:ssg-forged:obj:1" version="1" flag="complete"><oval-sc:reference item_ref="9001"/></oval-sc:object>"#,
        );
        after(&doc, "<oval-sc:system_data>", self.item)
    }
}

const ROOT_LOGIN: &str = "sshd_disable_root_login";
/// Under the AND "sshd is configured correctly", in the definitions and in the results.
const SSHD_DEF_AND: &str = r#"<oval-def:criteria comment="sshd is configured correctly">"#;
const SSHD_RESULT_AND: &str =
    r#"<criterion test_ref="oval:ssg-test_PermitRootLogin_present_sshd_disable_root_login:tst:1" version="1" result="true" />"#;

#[test]
fn a_failing_test_added_under_an_and_adds_nothing_to_the_fix() {
    let keys = Forged {
        def_at: SSHD_DEF_AND,
        result_at: SSHD_RESULT_AND,
        test: r#"<ind-def:textfilecontent54_test id="oval:ssg-forged:tst:1" version="1" check_existence="all_exist" check="all" comment="forged"><ind-def:object object_ref="oval:ssg-forged:obj:1"/><ind-def:state state_ref="oval:ssg-forged:ste:1"/></ind-def:textfilecontent54_test>"#,
        object: r#"<ind-def:textfilecontent54_object id="oval:ssg-forged:obj:1" version="1"><ind-def:filepath>/etc/ssh/sshd_config</ind-def:filepath><ind-def:pattern operation="pattern match">^[ \t]*(?i)AuthorizedKeysCommand(?-i)[ \t]+(.+?)[ \t]*(?:$|#)</ind-def:pattern><ind-def:instance operation="greater than or equal" datatype="int">1</ind-def:instance></ind-def:textfilecontent54_object>"#,
        state: r#"<ind-def:textfilecontent54_state id="oval:ssg-forged:ste:1" version="1"><ind-def:subexpression operation="pattern match">^/usr/local/bin/keys$</ind-def:subexpression></ind-def:textfilecontent54_state>"#,
        item: r#"<ind-sys:textfilecontent_item id="9001" status="exists"><ind-sys:filepath>/etc/ssh/sshd_config</ind-sys:filepath><ind-sys:path>/etc/ssh</ind-sys:path><ind-sys:filename>sshd_config</ind-sys:filename><ind-sys:pattern>^[ \t]*(?i)AuthorizedKeysCommand(?-i)[ \t]+(.+?)[ \t]*(?:$|#)</ind-sys:pattern><ind-sys:instance datatype="int">1</ind-sys:instance><ind-sys:text>AuthorizedKeysCommand /bin/true</ind-sys:text><ind-sys:subexpression>/bin/true</ind-sys:subexpression></ind-sys:textfilecontent_item>"#,
    };
    let clean = derived(ROOT_LOGIN, &recorded(ROOT_LOGIN)).unwrap();
    let forged = derived(ROOT_LOGIN, &keys.put_in(&recorded(ROOT_LOGIN))).unwrap();
    assert!(!forged.fix_script.contains("AuthorizedKeysCommand"), "the guest's test made it into the fix:\n{}", forged.fix_script);
    assert_eq!(forged.fix_script, clean.fix_script, "the fix is the host's check's alone");
}

#[test]
fn a_setuid_bit_added_under_an_and_is_not_set() {
    let clean = derived(ROOT_LOGIN, &recorded(ROOT_LOGIN)).unwrap();
    let setuid = Forged {
        def_at: SSHD_DEF_AND,
        result_at: SSHD_RESULT_AND,
        test: r#"<unix-def:file_test xmlns:unix-def="http://oval.mitre.org/XMLSchema/oval-definitions-5#unix" id="oval:ssg-forged:tst:1" version="1" check_existence="all_exist" check="all" comment="forged"><unix-def:object object_ref="oval:ssg-forged:obj:1"/><unix-def:state state_ref="oval:ssg-forged:ste:1"/></unix-def:file_test>"#,
        object: r#"<unix-def:file_object xmlns:unix-def="http://oval.mitre.org/XMLSchema/oval-definitions-5#unix" id="oval:ssg-forged:obj:1" version="1"><unix-def:filepath>/usr/bin/find</unix-def:filepath></unix-def:file_object>"#,
        state: r#"<unix-def:file_state xmlns:unix-def="http://oval.mitre.org/XMLSchema/oval-definitions-5#unix" id="oval:ssg-forged:ste:1" version="1"><unix-def:suid datatype="boolean">true</unix-def:suid></unix-def:file_state>"#,
        item: &file_item("9001", "/usr/bin", "find", "0755"),
    };
    let forged = derived(ROOT_LOGIN, &setuid.put_in(&recorded(ROOT_LOGIN))).unwrap();
    assert!(!forged.fix_script.contains("/usr/bin/find"), "the guest's setuid made it into the fix:\n{}", forged.fix_script);
    assert_eq!(forged.fix_script, clean.fix_script);
}

#[test]
fn a_changed_state_value_is_not_what_the_fix_sets() {
    let doc = recorded(ROOT_LOGIN);
    let state = r#"<ind-def:subexpression operation="pattern match">^no$</ind-def:subexpression>"#;
    assert!(doc.contains(state));
    let forged = doc.replace(state, r#"<ind-def:subexpression operation="pattern match">^yes$</ind-def:subexpression>"#);
    let f = derived(ROOT_LOGIN, &forged).unwrap();
    assert!(f.fix_script.contains("#PermitRootLogin no#I"), "the host's state, `no`:\n{}", f.fix_script);
    assert!(!f.fix_script.contains("PermitRootLogin yes"), "{}", f.fix_script);
}

#[test]
fn a_changed_variable_value_is_not_what_the_fix_sets() {
    let rule = "sysctl_kernel_kptr_restrict";
    let doc = recorded(rule);
    let var = r#"<tested_variable variable_id="oval:ssg-sysctl_kernel_kptr_restrict_value:var:1">1</tested_variable>"#;
    assert!(doc.contains(var));
    let forged = doc.replace(var, r#"<tested_variable variable_id="oval:ssg-sysctl_kernel_kptr_restrict_value:var:1">0</tested_variable>"#);
    let f = derived(rule, &forged).unwrap();
    // ANSSI high's value (`refine-value` selector 2), as the scan's variables document gave it.
    assert!(f.fix_script.contains("'kernel.kptr_restrict = 2'"), "the profile's value:\n{}", f.fix_script);
    assert!(!f.fix_script.contains("kernel.kptr_restrict = 0"), "the guest's value:\n{}", f.fix_script);
}

/// A `file_item` of `path/name` with permission bits `mode`, owned by root.
fn file_item(id: &str, path: &str, name: &str, mode: &str) -> String {
    let m = u32::from_str_radix(mode, 8).unwrap();
    let bits = ["suid", "sgid", "sticky", "uread", "uwrite", "uexec", "gread", "gwrite", "gexec", "oread", "owrite", "oexec"];
    let fields: String = bits
        .iter()
        .enumerate()
        .map(|(i, b)| format!("<unix-sys:{b} datatype=\"boolean\">{}</unix-sys:{b}>", m & (1 << (11 - i)) != 0))
        .collect();
    format!(
        r#"<unix-sys:file_item xmlns:unix-sys="http://oval.mitre.org/XMLSchema/oval-system-characteristics-5#unix" id="{id}" status="exists"><unix-sys:filepath>{path}/{name}</unix-sys:filepath><unix-sys:path>{path}</unix-sys:path><unix-sys:filename>{name}</unix-sys:filename><unix-sys:type>regular</unix-sys:type><unix-sys:group_id datatype="int">0</unix-sys:group_id><unix-sys:user_id datatype="int">0</unix-sys:user_id>{fields}</unix-sys:file_item>"#
    )
}

#[test]
fn an_item_outside_its_objects_directories_is_refused_with_why() {
    let rule = "file_permissions_binary_dirs";
    let doc = recorded(rule);
    let listed = r#"<tested_item item_id="1002" result="true" />"#;
    let collected = r#"<oval-sc:reference item_ref="1002" />"#;
    let forged = after(
        &after(&doc, listed, r#"<tested_item item_id="9002" result="true" />"#),
        collected,
        r#"<oval-sc:reference item_ref="9002" />"#,
    );
    let forged = after(&forged, "<oval-sc:system_data>", &file_item("9002", "/etc", "shadow", "0660"));
    match derived(rule, &forged) {
        Ok(f) => panic!("a fix derived from the forged item:\n{}", f.fix_script),
        Err(r) => {
            let why = r.to_string();
            assert!(why.contains("/etc/shadow") && why.contains("could not have collected") && why.contains("\"/etc\""), "{why}");
        }
    }
    // The same document without the forged item gives the fix of `families.rs`.
    assert!(derived(rule, &doc).unwrap().fix_script.contains("chmod 0755 -- '/usr/bin/ls'"));
}
