//! A hostile guest, on the real VM (issue 56), in a snapshot of its own: folders of commands
//! owned by nobody named `$(touch /tmp/owned)`, `` `touch /tmp/owned` ``, `a b` and `-rf`, a
//! file named with a newline under one of them, and a password hash in `/etc/passwd`.
//!
//! 1. The fix derived for `dir_system_commands_root_owned` from the guest's own evidence, run
//!    after one item was swapped for a link to `/etc/shadow`: it stops before it changes anything
//!    (a listing of owner, group and mode of all of `/` is the same after), `/etc/shadow` keeps
//!    its mode. With the link gone, it fixes exactly the named items and its revert restores
//!    them from the records it made; no name ran as a command.
//! 2. A run whose fix prints 1 GB and `/etc/passwd`, on a guest whose `oscap` adds two forged
//!    rule results to every XCCDF results document (`x{{ lookup('pipe','touch /tmp/owned') }}`
//!    and `<script>`): the host's peak memory stays under [`PEAK_MIB`]; the forged ids are
//!    dropped at the scanner (`rules_unknown`) and reach no report, plan or prompt; no hash
//!    reaches the journal, any report format, the plan, its playbook (checked by
//!    `ansible-playbook --check`) or the LLM's prompts; no `/tmp/owned` anywhere.
//! 3. Someone posing as the guest on the network: another SSH host key stops the run before
//!    anything runs on it, until a person records the new key (`temper target trust`).
mod support;

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use support::*;
use temper_core::ports::{Exec, Guest};
use temper_core::scan::{OvalSide, Scanner};
use temper_journal::RunId;
use temper_scap::oval::{OvalContent, OvalEngine};

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";
const ANSSI: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";
const RULE: &str = "xccdf_org.ssgproject.content_rule_dir_system_commands_root_owned";
const NAMES: [&str; 5] = ["tools", "$(touch /tmp/owned)", "`touch /tmp/owned`", "a b", "-rf"];
/// A SHA-512 crypt hash, as `/etc/passwd` should never hold one.
const HASH: &str = "$6$temperE2E$9sQm4v0S1kXw8yRZb2n7LqP3tJ5cV6dH8fG1aK0eU2iO4pY7rT9wE3qM5nB6xC8zA1sD2fG3hJ4kL5";
/// The host's peak memory bound for a fix that prints 1 GB (temper keeps 256 KiB of each stream).
const PEAK_MIB: u64 = 400;
const FORMATS: [&str; 8] = ["md", "html", "json", "ckl", "cklb", "oscal-ar", "oscal-poam", "hdf"];

fn break_script() -> String {
    let mut s = String::from("set -e\n");
    for n in NAMES {
        s += &format!("mkdir -p -- '/usr/local/bin/{}'\nchown nobody -- '/usr/local/bin/{}'\n", n.replace('\'', ""), n.replace('\'', ""));
    }
    s += "printf x > \"/usr/local/bin/tools/$(printf 'new\\nline')\"\n";
    s += &format!("echo 'temper-e2e-hash:{HASH}:1999:1999::/nonexistent:/usr/sbin/nologin' >> /etc/passwd\n");
    s += FORGER;
    s
}

/// oscap wrapped: every XCCDF results document it writes gains two rule results the content
/// does not have, one id carrying Jinja for the Ansible controller, one `<script>`.
const FORGER: &str = r#"mv /usr/bin/oscap /usr/bin/oscap.real
cat > /usr/bin/oscap <<'EOF'
#!/bin/sh
/usr/bin/oscap.real "$@"
rc=$?
f="" prev=""
for a in "$@"; do if [ "$prev" = --results ]; then f="$a"; fi; prev="$a"; done
if [ -n "$f" ] && [ -f "$f" ]; then
  sed -i 's#</TestResult>#<rule-result idref="xccdf_org.ssgproject.content_rule_x{{ lookup('"'"'pipe'"'"','"'"'touch /tmp/owned'"'"') }}" role="full" severity="high" weight="1.000000"><result>fail</result></rule-result><rule-result idref="xccdf_org.ssgproject.content_rule_\&lt;script\&gt;alert(1)\&lt;/script\&gt;" role="full" severity="high" weight="1.000000"><result>fail</result></rule-result></TestResult>#' "$f"
fi
exit $rc
EOF
chmod 0755 /usr/bin/oscap
"#;

/// Owner, group and mode of every path on the root file system but the volatile trees, sorted.
const LISTING: &str = "find / -xdev \\( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /var/tmp \
                       -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/temper -o -path /home/temper \\) -prune \
                       -o -printf '%u %g %m %p\\n' | LC_ALL=C sort\n";

async fn root(script: &str) -> (Option<u32>, String, String) {
    let g = guest();
    g.reconnect(Duration::from_secs(120)).await.unwrap();
    let out = g.exec(Exec::script(script).timeout(Duration::from_secs(600)).max_output(64 << 20)).await.unwrap();
    (out.exit_code, out.stdout_str(), out.stderr_str())
}

/// Logins the guest's sshd accepted so far (this count's own included).
async fn logins() -> usize {
    let (code, out, err) = root("journalctl -u ssh.service -o cat --no-pager | grep -c 'Accepted publickey' || true").await;
    assert_eq!(code, Some(0), "{err}");
    out.trim().parse().unwrap()
}

/// Someone between the host and the guest, posing as it: the guest's address offers another SSH
/// host key than the one recorded (here the record is another key's, as it would be if the
/// guest's were swapped). `temper run` stops with a clear error naming both fingerprints before
/// anything is recorded or sent to the guest: its sshd accepted no login. `temper target trust`
/// refuses a fingerprint the guest does not offer, and records the one it does once a person
/// names it (`--fingerprint`); then the guest is reached again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_host_key_stops_the_run_before_anything_runs_on_the_guest() {
    require_vm().await;
    let cfg = temper_target::SshConfig::from_env().unwrap();
    let real = temper_target::offered_host_key(&cfg).await.unwrap();
    let impostor = temper_target::parse_key(IMPOSTOR).unwrap();
    let mut w = World::new();
    let known = w.dir.path().join("pinned/known_hosts");
    temper_target::KnownHosts::new(&known).record(&cfg.host, cfg.port, std::slice::from_ref(&impostor), "the other key").unwrap();
    w.env.push(("TEMPER_KNOWN_HOSTS_FILE".into(), known.to_str().unwrap().into()));
    let (fp_real, fp_other) = (temper_target::fingerprint(&real), temper_target::fingerprint(&impostor));

    let before = logins().await;
    let out = w.run(&["run", "--agent", "stock", "--max-rules", "1"]).await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("is not the one recorded") && said.contains(&fp_real) && said.contains(&fp_other), "{said}");
    assert!(said.contains("nothing was run on it"), "{said}");
    assert_eq!(logins().await, before + 1, "the guest's sshd accepted no login but this count's");
    assert!(w.store().await.list_runs(10).await.unwrap().is_empty(), "no run was recorded");

    let wrong = w.run(&["target", "trust", "default", "--fingerprint", &fp_other]).await;
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(!wrong.status.success() && said.contains(&format!("the guest offers {fp_real}, not {fp_other}")), "{said}");
    let right = w.run(&["target", "trust", "default", "--fingerprint", &fp_real]).await;
    let told = String::from_utf8_lossy(&right.stdout);
    assert!(right.status.success() && told.contains(&format!("in place of {fp_other}")), "{told}");
    let g = temper_target::SshGuest::new(cfg.pinned_in(temper_target::KnownHosts::new(&known))).unwrap();
    assert!(g.exec(Exec::new(["true"])).await.unwrap().success(), "the guest is reached again with the key a person named");
}

/// An ed25519 key that is not the guest's.
const IMPOSTOR: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv46ZhVQW205MOZks/v2T+6AgnpQNw9ThoZbXcNuFcD impostor";

/// Lines of `a` not in `b`.
fn minus(a: &str, b: &str) -> Vec<String> {
    let b: std::collections::BTreeSet<&str> = b.lines().collect();
    a.lines().filter(|l| !b.contains(l)).map(String::from).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a hostile guest under TCG: a scan of a tree walker and a whole run, out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn a_hostile_guest_gets_nothing() {
    require_vm().await;
    let snap = broken_snapshot("hostile", &break_script()).await;
    let g = guest();

    // 1. The guest's own evidence, then an item swapped for a link to /etc/shadow.
    let host_ds = temper_journal::target::vm_dir().join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml");
    let benchmark = temper_scap::read_benchmark(&host_ds, Some(ANSSI)).unwrap();
    let oval = OvalSide { engine: Arc::new(OvalEngine::new(OvalContent::read(&host_ds).unwrap())), benchmark: Arc::new(benchmark) };
    let scan = Scanner::new(DS, ANSSI).with_oval(oval).scan(&g, &[RULE.to_string()]).await.unwrap();
    let evidence = scan.evidence_of(RULE).expect("the rule fails, with evidence");
    let fix = temper_derive::derive(evidence).unwrap_or_else(|r| panic!("{r}"));
    for n in NAMES {
        assert!(fix.touched.contains(&format!("/usr/local/bin/{n}")), "{n} is an item: {:?}", fix.touched);
    }
    let (_, shadow_before, _) = root("stat -c '%u %g %a' /etc/shadow").await;
    root("mv /usr/local/bin/tools /usr/local/bin/tools.real && ln -s /etc/shadow /usr/local/bin/tools").await;
    let (_, before, _) = root(LISTING).await;
    let (code, _, said) = root(&fix.fix_script).await;
    assert_eq!(code, Some(3), "{said}");
    assert!(said.contains("/usr/local/bin/tools is a symbolic link: nothing was changed"), "{said}");
    let (_, after, _) = root(LISTING).await;
    assert_eq!((minus(&before, &after), minus(&after, &before)), (vec![], vec![]), "nothing on / changed");
    assert_eq!(root("stat -c '%u %g %a' /etc/shadow").await.1, shadow_before, "/etc/shadow kept its owner and mode");

    // With the link gone, exactly the named items change, and the revert restores the records.
    root("rm /usr/local/bin/tools && mv /usr/local/bin/tools.real /usr/local/bin/tools").await;
    let (_, before, _) = root(LISTING).await;
    let (code, _, said) = root(&fix.fix_script).await;
    assert_eq!(code, Some(0), "{said}");
    let (_, after, _) = root(LISTING).await;
    let changed: Vec<String> = minus(&after, &before);
    let want: Vec<String> = {
        let mut v: Vec<String> = NAMES.iter().map(|n| format!("root root 755 /usr/local/bin/{n}")).collect();
        v.sort();
        v
    };
    let mut got = changed.clone();
    got.sort();
    assert_eq!(got, want, "only the named items changed");
    let (code, _, said) = root(&fix.revert_script).await;
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(minus(&root(LISTING).await.1, &before), Vec::<String>::new(), "the revert restored every item");
    assert_eq!(root("ls /tmp/owned 2>&1; ls -b /usr/local/bin/tools").await.1.matches("No such file").count(), 1, "no name ran");

    // 2. A fix that prints 1 GB and /etc/passwd, in a run; its peak memory and outputs.
    let mut w = World::new();
    w.env.push(("TEMPER_BASELINE".into(), snap));
    // /etc/passwd first: temper keeps the head of each stream (256 KiB) and reads the rest away.
    let loud = format!("cat /etc/passwd\nhead -c 1073741824 /dev/zero | tr '\\0' A\n{SUID_FIX}");
    let llm = mock(vec![select(SUID, "persist fs.suid_dumpable=0"), apply_fix(&loud, SUID_REVERT, "sysctl drop-in, loudly")]).await;
    let peak = peak_of_run(&w, &llm).await;
    println!("e2e_hostile: temper's peak memory with a fix that printed 1 GB: {peak} MiB (bound {PEAK_MIB} MiB)");
    assert!(peak < PEAK_MIB, "{peak} MiB");
    let mut outputs = Vec::new();
    for f in FORMATS {
        outputs.push((f.to_string(), report(&w, f, &format!("hostile.{f}")).await));
    }
    let dump = std::process::Command::new("sqlite3").arg(w.db()).arg(".dump").output().unwrap();
    outputs.push(("journal".into(), String::from_utf8_lossy(&dump.stdout).into_owned()));
    outputs.push(("prompts".into(), serde_json::to_string(&llm.requests()).unwrap()));
    let (plan, signers) = export_signed(&w, "latest").await;
    for entry in std::fs::read_dir(&plan).unwrap().chain(std::fs::read_dir(plan.join("steps")).unwrap()) {
        let p = entry.unwrap().path();
        if p.is_file() {
            outputs.push((p.display().to_string(), String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned()));
        }
    }
    let secret = &HASH[3..];
    for (what, text) in &outputs {
        assert!(!text.contains(secret), "the hash is in the {what}");
        if what != "journal" {
            // The forged ids' own text (the playbook's own checks use `lookup('ansible.builtin.file', …)`).
            assert!(!text.contains("'pipe'") && !text.contains("alert(1)"), "a forged rule id is in the {what}");
        }
    }
    let dropped = w
        .store()
        .await
        .events(RunId::new(1).unwrap(), None)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind.as_str() == "rules_unknown")
        .count();
    assert!(dropped > 0, "the forged rule ids were dropped at the scanner, with an event");
    let private = w.dir.path().join("private");
    let out = w
        .run(&["plan", "unpack", plan.to_str().unwrap(), "-o", private.to_str().unwrap(), "--allowed-signers", signers.to_str().unwrap()])
        .await;
    assert!(out.status.success(), "temper plan unpack: {}", String::from_utf8_lossy(&out.stderr));
    let inv = ansible::inventory(&w.dir.path().join("inventory"), "temper-test");
    let check = std::process::Command::new("ansible-playbook")
        .arg("-i")
        .arg(&inv)
        .args(["playbook.yml", "--check"])
        .current_dir(&private)
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        .output()
        .unwrap();
    assert!(check.status.success(), "ansible-playbook --check: {}", String::from_utf8_lossy(&check.stdout));
    assert!(!std::path::Path::new("/tmp/owned").exists(), "nothing ran on the controller");
    assert!(root("test -e /tmp/owned; echo $?").await.1.trim() == "1", "nothing ran on the guest");
    w.cleanup().await;
}

/// `temper run --agent llm` over SUID with `llm`, its memory polled: the peak (VmHWM), in MiB.
async fn peak_of_run(w: &World, llm: &temper_mockllm::MockLlm) -> u64 {
    let url = llm.url();
    let mut cmd = tokio::process::Command::from(w.temper());
    cmd.args(["run", "--agent", "llm", "--llm", &url, "--model", "scripted", "--profile", STANDARD, "--rules", SUID, "--quiet"]);
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let pid = child.id().unwrap();
    let mut peak = 0;
    loop {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            && let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb / 1024);
        }
        if let Ok(Some(status)) = child.try_wait() {
            assert!(status.success(), "the run fixes SUID: {status}");
            return peak;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// On guest A, `/usr/local/bin/tools` is nobody's (mode 0755): the derived fix makes it root's.
const A_BREAK: &str = "set -e\nmkdir -p /usr/local/bin/tools\nchown nobody /usr/local/bin/tools\nchmod 0755 /usr/local/bin/tools\n";
/// On guest B it is nobody's with mode 0700: neither as A's scan found it nor as the fix wants
/// it, so the plan's step stops there, changing nothing.
const B_BREAK: &str = "set -e\nmkdir -p /usr/local/bin/tools\nchown nobody /usr/local/bin/tools\nchmod 0700 /usr/local/bin/tools\n";

/// A revert on another target (issue 56): a plan made on guest A with a derived file-metadata
/// step, applied to guest B (another snapshot) where that step fails. After its revert, B's item
/// is as B had it: the next attempt's evidence, collected after the revert, says so, and so does
/// the guest once the run is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "two runs under TCG, out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn a_plans_revert_on_another_guest_leaves_it_as_it_was() {
    require_vm().await;
    let a = broken_snapshot("revert-a", A_BREAK).await;
    let mut w = World::new();
    let t = cut_profile(w.dir.path(), ANSSI, "revert", &[RULE.to_string()]);
    let base = |w: &mut World, snap: &str| {
        w.env.retain(|(k, _)| k != "TEMPER_BASELINE");
        w.env.push(("TEMPER_BASELINE".into(), snap.into()));
    };
    base(&mut w, &a);
    let out = w.run(&["run", "--agent", "stock", "--profile", ANSSI, "--tailoring-file", &t, "--rules", RULE, "--quiet"]).await;
    assert_eq!(out.status.code(), Some(0), "A: the derived fix is kept");
    let (plan, signers) = export_signed(&w, "latest").await;

    let b = broken_snapshot("revert-b", B_BREAK).await;
    let before = root("stat -c '%u %g %a' /usr/local/bin/tools").await.1;
    assert_eq!(before.trim(), "65534 0 700");
    base(&mut w, &b);
    let args = ["run", "--agent", "stock", "--profile", ANSSI, "--tailoring-file", &t, "--rules", RULE, "--quiet", "--max-attempts", "1"];
    let out = w.run(&[&args[..], &["--plan", plan.to_str().unwrap(), "--allowed-signers", signers.to_str().unwrap()]].concat()).await;
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap().id;
    let attempts = store.attempts(run).await.unwrap();
    let step = attempts.iter().find(|a| a.spec.source == temper_journal::FixSource::Plan).expect("the plan's step ran");
    assert_eq!(
        step.verdict,
        Some(temper_journal::Verdict::ApplyFailed),
        "{:?}: {}",
        step.verdict,
        step.verdict_reason.clone().unwrap_or_default()
    );
    let said = step.findings.fix_stderr.clone().unwrap_or_default();
    assert!(said.contains("/usr/local/bin/tools is 65534 0 700 now, not 65534 0 755 as the scan found it: nothing was changed"), "{said}");
    if let Some(next) = attempts.iter().find(|a| a.n > step.n) {
        // The loop's own try on B: the evidence it collected after the step's revert is B's.
        let items = next.spec.evidence_before.as_ref().map(|e| serde_json::to_string(e).unwrap()).unwrap_or_default();
        assert!(items.contains("65534") && items.contains("/usr/local/bin/tools"), "{items}");
    } else {
        assert_eq!(root("stat -c '%u %g %a' /usr/local/bin/tools").await.1, before, "B's item as B had it: {out:?}");
    }
    w.cleanup().await;
}
