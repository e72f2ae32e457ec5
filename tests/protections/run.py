#!/usr/bin/env python3
# Each protection of docs/security.md taken out, one at a time, and the test that covers it run
# against it: each must fail. A row changes the source (one or more exact replacements), builds
# the one test target that holds its test, runs that test, and puts the source back, whatever
# happens. The table at the end has a row per protection: FAILED (the test caught the removal,
# as it must), PASSED (it did not: a gap), or BUILD (the removal did not build: the row is
# stale). Exit 0 when every row FAILED. From the repository root:
#   python3 tests/protections/run.py [ROW...]        e.g. P5a S2
#   python3 tests/protections/run.py --check         each row's text still in the source, once
#   python3 tests/protections/run.py --own-target    every row, built in a target of its own
# It builds as the environment says (under .ci/run, the lints' wrapper too), with incremental
# builds for the crates it changes. With --own-target (tests/run.sh, beside its VM suites) it
# builds in target/protections/target, first a copy of target/debug without its executables
# (removed at the end), and its sshd rows use an sshd of their own: the suite's binaries stay as
# built while they run.
# The VM's rows are tests/protections/revert-vm.py's.
import os, shutil, signal, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = os.path.join(ROOT, "target", "protections")

# Where a row's test lives: (cargo args selecting the test target, the test's name or filter).
def lib(pkg, name):
    return (["-p", pkg, "--lib"], name)
# The temper package with the workspace's one feature, as tests/run.sh builds it: temper-agents
# is then the build's own, not built again without it (crates/temper-deps does the same for the
# third-party crates).
TEMPER = ["-p", "temper", "--features", "temper-agents/real-model"]
def bin_(name):
    return ([*TEMPER, "--bin", "temper"], name)
def itest(pkg, binary, name):
    return ([*TEMPER, "--test", binary] if pkg == "temper" else ["-p", pkg, "--test", binary], name)

SEAL = "crates/temper-core/src/plan/seal.rs"
FOLDER = "crates/temper-journal/src/plan/folder.rs"
TERMS = "crates/temper-journal/src/plan/terms.rs"
REPLAY = "crates/temper-report/src/replay.rs"
PLAYBOOK = "crates/temper-report/src/plan/ansible.rs"
LAST = "crates/temper/src/cmd/last_plan.rs"

# (row, the protection taken out, file, [(text, replaced by)...], (test target, test))
ROWS = [
 ("G1", "a fix reaches the guest in the command, not on stdin", "crates/temper-core/src/script/mod.rs",
  [('let exec = Exec::new(["bash", "-c", LAUNCH, &format!("temper-fix-{tag}")])\n        .stdin(script.as_bytes().to_vec())',
    'let exec = Exec::new(["bash", "-c", script, &format!("temper-fix-{tag}")])\n        .stdin(Vec::new())')],
  lib("temper-core", "script::tests::run_passes_the_script_on_stdin_never_in_the_command")),
 ("G2a", "the deny-list not asked of a fix", "crates/temper-core/src/ralph/attempt/mod.rs",
  [("if let Err(refusal) = deny.check(script) {", "if let Err(refusal) = deny.check(&script[..0]) {")],
  itest("temper", "loop_llm", "a_script_removing_the_harness_sudo_is_refused_before_it_runs")),
 ("G2b", "the deny-list not asked of a plan's step", "crates/temper-core/src/ralph/batch/mod.rs",
  [("if let Err(refusal) = deny.check(script) {", "if let Err(refusal) = deny.check(&script[..0]) {")],
  itest("temper", "loop_plan_seal", "a_plan_step_the_deny_list_refuses_never_runs")),
 ("G3", "the watch never finds a fix stalled", "crates/temper-core/src/script/mod.rs",
  [("if since.elapsed() >= w.stall_after {", "if since.elapsed() >= w.stall_after && s.procs == u32::MAX {")],
  lib("temper-core", "script::tests::a_fix_that_sleeps_with_no_cpu_is_stopped_as_stalled")),
 ("G4", "results for rule ids the content lacks kept", "crates/temper-core/src/scan/mod.rs",
  [("let keep = known.contains(&r.idref);", "let keep = !r.idref.is_empty() || known.contains(&r.idref);")],
  itest("temper", "loop_guest_input", "rule_ids_the_content_lacks_are_dropped_at_the_scanner_and_reach_no_output")),
 ("G5a", "the playbook names a step by its rule id as given (no plain())", PLAYBOOK,
  [('q(&format!("Step {}: {}", s.n, plain(s.short_rule())))', 'q(&format!("Step {}: {}", s.n, s.short_rule()))')],
  lib("temper-report", "plan::tests::no_text_from_a_step_runs_in_bash_or_ansible")),
 ("G5b", "the playbook tags a step with its rule id as given (no plain())", PLAYBOOK,
  [("tags(&[q(&plain(&s.rule)), q(&plain(s.short_rule()))])", "tags(&[q(&s.rule), q(s.short_rule())])")],
  lib("temper-report", "plan::tests::no_text_from_a_step_runs_in_bash_or_ansible")),
 ("G5c", "replay.sh calls a step with its rule id unquoted", REPLAY,
  [('line(&format!("step {} {} {accepted}", st.n, sh_quote(&st.rule)));', 'line(&format!("step {} {} {accepted}", st.n, st.rule));')],
  lib("temper-report", "plan::tests::no_text_from_a_step_runs_in_bash_or_ansible")),
 ("G5d", "replay.sh writes a step's title as it is, newlines and all", REPLAY,
  [('line(&format!("#   {}", one_line(&st.title)));', 'line(&format!("#   {}", st.title));')],
  lib("temper-report", "plan::tests::no_text_from_a_step_runs_in_bash_or_ansible")),
 ("G6", "a rule id that is not plain reaches Markdown unescaped", "crates/temper-report/src/text.rs",
  [("if plain_id(s) { s.to_string() } else { md(s, cell) }", "if plain_id(s) || !s.contains('\\0') { s.to_string() } else { md(s, cell) }")],
  lib("temper-report", "text::tests::a_rule_id_from_the_guest_is_text_never_markup")),
 ("G7", "a fix's output kept with its secrets", "crates/temper-core/src/ralph/attempt/apply.rs",
  [("let s = temper_scap::secret::withhold(s);", "let s = std::borrow::Cow::Borrowed(s);")],
  itest("temper", "loop_guest_input", "secrets_in_a_fixs_output_are_withheld_by_kind")),
 ("P1", "temper: the signature over SHA256SUMS not checked", SEAL,
  [("PublicKey::from(sig.public_key().clone()).verify(NAMESPACE, manifest, &sig).map_err(|_| SealError::BadSignature)?;",
    "let _ = PublicKey::from(sig.public_key().clone()).verify(NAMESPACE, manifest, &sig).map_err(|_| SealError::BadSignature);")],
  lib("temper-core", "plan::seal::tests")),
 ("P2", "temper: any key accepted", SEAL,
  [("    let Some(line) = mine.iter().find(|a| a.allows(NAMESPACE, now).is_ok()) else {",
    "    let mut any = allowed[0].clone();\n    any.key = sig.public_key().clone();\n    let anyone = [&any];\n    let Some(line) = anyone.iter().chain(mine.iter()).find(|a| a.allows(NAMESPACE, now).is_ok()) else {")],
  lib("temper-core", "plan::seal::tests")),
 ("P3", "temper: a plan with no signature taken as signed", SEAL,
  [("    let sig = folder.file(SIGNATURE).ok_or(SealError::NotSigned)?;",
    "    let Some(sig) = folder.file(SIGNATURE) else {\n        let signer = Signer { principals: \"nobody\".into(), fingerprint: \"none\".into() };\n        return Ok(Sealed { signer: Some(signer), terms: Terms::default(), manifest_sha256: None });\n    };")],
  lib("temper-core", "plan::seal::tests")),
 ("P4", "temper: the files not checked against SHA256SUMS", SEAL,
  [("if hashes == Hashes::Checked && sha256_hex(bytes) != sum {", "if hashes == Hashes::Checked && sha256_hex(bytes) != sum && sum.is_empty() {")],
  lib("temper-core", "plan::seal::tests")),
 ("P5a", "temper: a file the manifest does not list let through", SEAL,
  [("if let Some(f) = folder.names().find(|f| !is_seal(f) && !is_listed(f)) {", "if let Some(f) = folder.names().find(|f| !is_seal(f) && !is_listed(f) && f.is_empty()) {")],
  lib("temper-core", "plan::seal::tests")),
 ("P5b", "temper: a folder the manifest does not list let through", SEAL,
  [("if let Some(d) = folder.dirs().find(|d| *d != STEPS_DIR && !listed", "if let Some(d) = folder.dirs().find(|d| d.is_empty() && *d != STEPS_DIR && !listed")],
  lib("temper-core", "plan::seal::tests")),
 ("P6", "the plan's folder read through links", FOLDER,
  [(".custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)", ".custom_flags(libc::O_NONBLOCK)"),
   ("} else if kind.is_file() {", "} else if kind.is_file() || kind.is_symlink() {")],
  lib("temper-journal", "plan::folder::tests")),
 ("P7", "the plan read again from the disk after its check", "crates/temper-core/src/plan/open.rs",
  [("let plan = Plan::from_folder(folder)?;", "let plan = Plan::load(folder.root())?;")],
  lib("temper-core", "plan::open::tests")),
 ("P8", "temper: a plan's expiry not checked", TERMS,
  [("if let Some(t) = self.expires.filter(|t| at.now >= *t) {", "if let Some(t) = self.expires.filter(|t| at.now >= *t && t.timestamp() == i64::MIN) {")],
  lib("temper-journal", "plan::terms::tests")),
 ("P9a", "temper: a plan's targets not checked", TERMS,
  [("!self.targets.is_empty() && !self.targets.iter().any(|n| n == t)", "!self.targets.is_empty() && !self.targets.iter().any(|n| n == t) && t.is_empty()")],
  lib("temper-journal", "plan::terms::tests")),
 ("P9b", "temper: a plan's fleet not checked", TERMS,
  [("if let Some(fleet) = self.fleet.as_deref().filter(|f| at.fleet != Some(*f)) {", "if let Some(fleet) = self.fleet.as_deref().filter(|f| at.fleet != Some(*f) && f.is_empty()) {")],
  lib("temper-journal", "plan::terms::tests")),
 ("P10", "temper: the revocation lists not read", SEAL,
  [("for list in signers::revocation_lists(&text) {", "for list in signers::revocation_lists(&text).into_iter().take(0) {")],
  lib("temper-core", "plan::seal::tests::a_revoked_plan_is_refused")),
 ("P11", "temper plan unpack: a copy others can read and change", FOLDER,
  [("mkdir.mode(0o700);", "mkdir.mode(0o777);"), (".mode(0o600)\n                .custom_flags(libc::O_NOFOLLOW)", ".mode(0o666)\n                .custom_flags(libc::O_NOFOLLOW)")],
  lib("temper-journal", "plan::folder::tests::a_private_copy_holds_the_same_bytes_for_its_owner_alone")),
 ("P12", "replay.sh runs in a folder that holds what the plan does not list", REPLAY,
  [('line("if [ -n \\"$unlisted\\" ]; then");', 'line("if false && [ -n \\"$unlisted\\" ]; then");')],
  lib("temper-report", "plan::tests::replay_refuses_a_folder_that_holds_what_the_plan_does_not_list")),
 ("P13", "the playbook runs in a folder that holds what the plan does not list", PLAYBOOK,
  [('line("          - temper_found | ansible.builtin.difference(temper_plan_listing) | length == 0");', 'line("          - temper_found | length >= 0");')],
  lib("temper-report", "plan::tests::the_playbook_refuses_a_folder_that_holds_what_the_plan_does_not_list")),
 ("P14a", "replay.sh: the expiry not checked", REPLAY,
  [('line(&format!("if [ \\"$(date -u +%s)\\" -ge {} ]; then", t.timestamp()));', 'line(&format!("if [ \\"$(date -u +%s)\\" -ge {} ] && false; then", t.timestamp()));')],
  lib("temper-report", "plan::tests::replay_refuses_a_plan_past_its_expiry_or_for_another_machine")),
 ("P14b", "replay.sh: the machine not checked", REPLAY,
  [('line("  *\\" $machine \\"*|*\\" ${machine%%.*} \\"*) ;;");', 'line("  *) ;;");')],
  lib("temper-report", "plan::tests::replay_refuses_a_plan_past_its_expiry_or_for_another_machine")),
 ("P15a", "the playbook: the expiry not checked", PLAYBOOK,
  [("\"          - lookup('ansible.builtin.pipe', 'date -u +%s') | int < {}\"", "\"          - lookup('ansible.builtin.pipe', 'date -u +%s') | int < {} or true\"")],
  lib("temper-report", "plan::tests::the_playbook_refuses_a_plan_past_its_expiry_or_for_another_host")),
 ("P15b", "the playbook: the host not checked", PLAYBOOK,
  [('None => line("          - inventory_hostname in temper_plan_for or inventory_hostname_short in temper_plan_for"),', 'None => line("          - inventory_hostname in temper_plan_for or true"),')],
  lib("temper-report", "plan::tests::the_playbook_refuses_a_plan_past_its_expiry_or_for_another_host")),
 ("S1", "the default plan from the store not checked against the host's key", LAST,
  [("let trust = Trust::Signers(key.signers.clone());", "let trust = if key.signers.exists() { Trust::Unsigned } else { Trust::Signers(key.signers.clone()) };")],
  bin_("cmd::last_plan::tests")),
 ("S2", "the store's steps not compared with the sealed plan's", LAST,
  [("if let Some(why) = differs(&applied.fixes, &stored) {", "if let Some(why) = differs(&applied.fixes, &stored).filter(|_| stored.is_empty()) {")],
  bin_("cmd::last_plan::tests::a_step_written_into_the_store_by_hand_is_refused")),
 ("S3", "fleet run --plan-from hands the plan on unsigned", "crates/temper/src/cmd/fleet/plan_from.rs",
  [("(Some(dir.into()), false, Some(OwnKey::signers_of(&config.plan_key_file)))", "(Some(dir.into()), !config.plan_key_file.as_os_str().is_empty(), None)")],
  bin_("cmd::fleet::plan_from::tests")),
 ("S4", "the host's plan key used whoever can read it", "crates/temper-core/src/plan/own_key.rs",
  [("guarded(path, 0o077, path)?;", "guarded(path, 0o000, path)?;"), ("guarded(dir, 0o022, path)?;", "guarded(dir, 0o000, path)?;")],
  lib("temper-core", "plan::own_key::tests")),
 ("W1", "temper serve answers any Host", "crates/temper-web/src/host.rs",
  [("Some(h) if hosts.allows(h) => next.run(request).await,", "Some(h) if hosts.allows(h) || !h.is_empty() => next.run(request).await,")],
  itest("temper", "cli", "serve_refuses_a_host_that_is_not_its_own")),
 ("W2", "temper serve lets a request through without its token", "crates/temper-web/src/auth.rs",
  [("if given.is_some_and(|g| token.matches(g.trim())) {", "if given.is_some_and(|g| token.matches(g.trim()) || !g.is_empty()) {")],
  itest("temper", "cli", "serve_with_a_token_answers_no_request_without_it")),
 ("K1", "the LLM's key written out with the settings", "crates/temper/src/config.rs",
  [("    /// Never logged.\n    #[serde(skip_serializing)]\n    pub llm_api_key", "    /// Never logged.\n    pub llm_api_key")],
  bin_("config::tests::api_key_is_never_serialized")),
 ("H1", "any host key accepted", "crates/temper-target/src/ssh.rs",
  [("let verdict = self.verdict(&key);", "let verdict = self.verdict(&key).or(Ok(()));")],
  itest("temper-target", "host_keys", "a_key_not_recorded_or_another_stops_the_connection_before_it_logs_in")),
 ("M1a", "the guest's text reaches a prompt unescaped", "crates/temper-agents/src/prompt.rs",
  [("Self::optional(name, priority, fence::escape(text.trim()))", "Self::optional(name, priority, text.trim().to_string())")],
  itest("temper-agents", "reflector", "the_guests_output_reaches_the_reflector_fenced_and_escaped")),
 ("M1b", "a ban on what every derived fix holds kept", "crates/temper-core/src/ban.rs",
  [("temper_derive::fixed_text().iter().find_map", "temper_derive::fixed_text().iter().take(0).find_map")],
  itest("temper", "loop_llm", "fix_output_that_teaches_a_ban_on_pipefail_is_fenced_and_the_ban_refused")),
 ("M2", "memory made on one target recalled on every target", "crates/temper-store/src/memory.rs",
  [('"AND ($3 IS NULL OR m.approved_at IS NOT NULL OR r.target = $3) ORDER BY m.id "', '"AND ($3 IS NULL OR TRUE OR r.target = $3) ORDER BY m.id "')],
  itest("temper-store", "store", "memory_holds_on_its_target_until_approved_for_the_skill")),
 ("D4a", "a revert record restored onto an item it does not name", "crates/temper-derive/src/script/record.rs",
  [('  if [ "$name" != "$item" ]; then', '  if false; then')],
  lib("temper-derive", "script::tests::a_stale_record_from_an_earlier_fix_restored_onto_another_item_is_refused")),
 ("D4b", "a revert record restored onto a file replaced since", "crates/temper-derive/src/script/record.rs",
  [('  if [ "$was" != "$now" ]; then', '  if false; then')],
  lib("temper-derive", "script::tests::a_record_of_a_file_replaced_since_is_refused")),
]


def sh(args, env, log):
    with open(log, "a") as f:
        f.write("$ " + " ".join(args) + "\n")
        f.flush()
        r = subprocess.run(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        f.write(r.stdout)
    return r


def row(name, what, path, edits, target, env):
    args, test = target
    log = os.path.join(LOGS, name + ".log")
    open(log, "w").close()
    full = os.path.join(ROOT, path)
    original = open(full).read()
    changed = original
    for old, new in edits:
        if changed.count(old) != 1:
            return ("STALE", f"{path}: the text to take out is there {changed.count(old)} times, not once: {old[:70]!r}", 0, 0)
        changed = changed.replace(old, new)
    try:
        open(full, "w").write(changed)
        t = time.time()
        b = sh(["cargo", "test", *args, "--no-run"], env, log)
        built = time.time() - t
        if b.returncode != 0:
            return ("BUILD", "the removal did not build: " + " ".join(l for l in b.stdout.splitlines() if l.startswith("error"))[:300], built, 0)
        t = time.time()
        r = sh(["cargo", "test", *args, "--", test, "--test-threads=1"], env, log)
        ran = time.time() - t
    finally:
        open(full, "w").write(original)
    out = r.stdout
    if r.returncode == 0 and "test result: ok." in out and " 0 passed" not in out:
        return ("PASSED", "no test failed without it", built, ran)
    why = [l.strip() for l in out.splitlines() if "panicked at" in l or l.startswith(("  left", " right", "test ") ) and "FAILED" in l]
    if r.returncode != 0 and ("FAILED" in out or "panicked" in out):
        return ("FAILED", "; ".join(why)[:300], built, ran)
    return ("OTHER", out[-300:].replace("\n", " "), built, ran)


# --own-target's target, its sshd (the rows' host_keys test starts it; the fleet phase uses the
# suite's own) and its port.
OWN_TARGET = os.path.join(LOGS, "target")
OWN_SSHD = ("/var/tmp/temper-sshd-protections", "2201")


def seed(src, dst):
    """`src` (target/debug) copied to `dst` but for the executables that rows link again (the
    test binaries, 4.5 of 7.8 GB): the crates' outputs, fingerprints and build scripts' outputs,
    times kept, so cargo finds them fresh. Returns the bytes copied."""
    copied = 0
    for top, dirs, files in os.walk(src):
        rel = os.path.relpath(top, src)
        if rel == "incremental":
            dirs[:] = []
            continue
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in files:
            path = os.path.join(top, f)
            linked = rel in (".", "deps") and os.access(path, os.X_OK) and not f.endswith(".so")
            if linked or os.path.islink(path):
                continue
            shutil.copy2(path, os.path.join(dst, rel, f))
            copied += os.path.getsize(path)
    return copied


def own_target():
    """The environment for --own-target: a fresh copy of the suite's build, an sshd of its own;
    and the bytes copied."""
    shutil.rmtree(OWN_TARGET, ignore_errors=True)
    copied = seed(os.path.join(ROOT, "target", "debug"), os.path.join(OWN_TARGET, "debug"))
    return {"CARGO_TARGET_DIR": OWN_TARGET, "TEMPER_SSHD_DIR": OWN_SSHD[0], "TEMPER_SSHD_PORT": OWN_SSHD[1]}, copied


def own_target_done(env):
    """Its sshd stopped; its target (4 GB after every row) removed, the logs kept."""
    subprocess.run(["bash", os.path.join(ROOT, "tests/sshd/stop.sh")], env=env, check=False)
    shutil.rmtree(OWN_TARGET, ignore_errors=True)


def check():
    """Each row's text is in its file once: the rows still fit the source (`--check`)."""
    stale = []
    for name, _, path, edits, _ in ROWS:
        src = open(os.path.join(ROOT, path)).read()
        stale += [f"{name}: {path}: {src.count(old)} times: {old[:70]!r}" for old, _ in edits if src.count(old) != 1]
    print("\n".join(stale) or f"protections: the {len(ROWS)} rows fit the source")
    sys.exit(1 if stale else 0)


def main():
    if sys.argv[1:] == ["--check"]:
        check()
    # Stopped (tests/run.sh ending early): the row's `finally` puts its source back.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    own = "--own-target" in sys.argv[1:]
    only = [a for a in sys.argv[1:] if a != "--own-target"]
    unknown = [o for o in only if o not in [r[0] for r in ROWS]]
    if unknown:
        sys.exit(f"no row {unknown}: the rows are {' '.join(r[0] for r in ROWS)}")
    os.makedirs(LOGS, exist_ok=True)
    env = dict(os.environ, CARGO_INCREMENTAL="1", CARGO_TERM_COLOR="never")
    results, t0 = [], time.time()
    if own:
        own_env, copied = own_target()
        env.update(own_env)
        print(f"protections: built in {OWN_TARGET}, seeded with {copied / 1e9:.1f} GB in {time.time() - t0:.0f} s", flush=True)
    try:
        for name, what, path, edits, target in ROWS:
            if only and name not in only:
                continue
            res, why, built, ran = row(name, what, path, edits, target, env)
            results.append((name, what, target[1], res, built, ran))
            print(f"protection {name}: {res} (build {built:.0f} s, test {ran:.0f} s): {what}", flush=True)
            if why:
                print(f"    {why}", flush=True)
    finally:
        # Stopped or not: its sshd stopped, its target removed.
        if own:
            own_target_done(env)
    print()
    print("| row | protection taken out | test | result | build s | test s |")
    print("|---|---|---|---|---|---|")
    for name, what, test, res, built, ran in results:
        print(f"| {name} | {what} | `{test}` | {res} | {built:.0f} | {ran:.0f} |")
    caught = sum(1 for r in results if r[3] == "FAILED")
    print(f"\nprotections: {caught} of {len(results)} caught by their tests in {time.time() - t0:.0f} s (logs: target/protections/)")
    sys.exit(0 if caught == len(results) else 1)


if __name__ == "__main__":
    main()
