//! `README.md`: what the plan is, where it came from, and how to apply it each way.
use temper_journal::plan::{Plan, Terms, at_boot};

pub fn readme(plan: &Plan, terms: &Terms) -> String {
    let h = &plan.header;
    let proof = if h.reboot_proven {
        "yes: the run's final state survived a cold reboot, and its final scan was taken after it"
    } else {
        "**no**: the run's final state was not proven across a reboot"
    };
    let tailoring = h.tailoring.as_ref().map_or("none".to_string(), |t| format!("`{}` (sha256 `{}`)", t.path, t.sha256));
    let mut r = format!(
        "# temper plan: run {run}\n\n\
         The fixes temper run {run} kept on `{target}`, in the order it kept them: {n} steps. Each was \
         verified there one at a time (the rule's rescan, the health check, a fresh SSH login with sudo, \
         and the regression set) before the next was tried.\n\n\
         | | |\n|---|---|\n\
         | skill | `{skill}` |\n| profile | `{profile}` |\n| tailoring | {tailoring} |\n\
         | content | `{ds}` {version} (sha256 `{sha}`) |\n| source run | {run}, on `{target}`, {started} to {ended} |\n\
         | reboot proof | {proof} |\n| temper | {tv} |\n| exported | {at} |\n| terms | {terms} |\n\n",
        run = h.source.run,
        target = h.source.target,
        n = plan.steps.len(),
        skill = h.skill,
        profile = h.profile,
        ds = h.content.datastream,
        version = h.content.version,
        sha = h.content.sha256,
        started = h.source.started_at,
        ended = h.source.ended_at.as_deref().unwrap_or("-"),
        tv = h.temper_version,
        at = h.exported_at,
        terms = terms.says(),
    );
    r += "## What is here\n\n\
          - `plan.json`: the plan (schema `schemas/plan.schema.json` in temper's repository). Each step: the rule, \
          where its fix came from, the fix and revert scripts (under `steps/`) with their sha256, the exit code \
          the run saw and whether the checks kept the fix despite a non-zero one, whether it needs a reboot, and \
          the scanner's evidence before and after.\n\
          - `steps/`: each step's fix and revert script, as temper ran them.\n\
          - `replay.sh`: the steps as one self-contained bash script.\n\
          - `playbook.yml`: the steps as an Ansible playbook, one task per step.\n\
          - `SHA256SUMS`: the sha256 of every other file here, and the plan's terms (`# temper-plan expires …`, \
          `# temper-plan for …`); `SHA256SUMS.sig`, where the plan is signed, an SSH signature over it (namespace \
          `temper-plan`).\n\n\
          Nothing else belongs here: `replay.sh` and the playbook refuse a folder that holds anything more \
          (an `ansible.cfg`, a `group_vars/`, a `verify.sh`).\n\n";
    r += "## Checking it: from outside, into a private copy\n\n\
          Whoever handed you this folder can change any file in it, this one too: nothing in the folder can vouch \
          for it. Check it from outside, into a copy only you can write, and apply it only from that copy. With \
          temper:\n\n\
          ```bash\ntemper plan unpack PLAN_DIR -o PRIVATE --allowed-signers ALLOWED_SIGNERS\n```\n\n\
          It copies the folder without following a link, then checks the copy: the signature by a key of your \
          allowed-signers file (the format of git's `gpg.ssh.allowedSignersFile`: `PRINCIPAL KEYTYPE KEY`, one line \
          a key), that no revocation list it names holds the plan, every file against `SHA256SUMS`, that nothing is \
          there that `SHA256SUMS` does not list, and the terms. `temper plan verify PLAN_DIR` checks a folder in \
          place. Without temper, the same by hand:\n\n\
          ```bash\ninstall -d -m 700 PRIVATE && cp -R --no-dereference PLAN_DIR/. PRIVATE/ && cd PRIVATE\n\
          find . -type l -o ! -type f ! -type d                  # must print nothing\n\
          ssh-keygen -Y verify -f ALLOWED_SIGNERS -I PRINCIPAL -n temper-plan -s SHA256SUMS.sig < SHA256SUMS\n\
          sha256sum --check --strict SHA256SUMS\n\
          diff <(find . -type f ! -path ./SHA256SUMS ! -path ./SHA256SUMS.sig -printf '%P\\n' | LC_ALL=C sort) \\\n\
          \x20    <(grep -v '^#' SHA256SUMS | cut -c67- | LC_ALL=C sort)   # must print nothing\n\
          grep '^# temper-plan' SHA256SUMS                        # its expiry and the targets it is for\n```\n\n\
          Sign a plan with `temper plan export --sign KEY [--expires WHEN] [--for TARGETS]`, or export it with its \
          terms and sign it with `ssh-keygen -Y sign -f KEY -n temper-plan SHA256SUMS` (which writes \
          `SHA256SUMS.sig`). Revoke one by adding its manifest's sha256 (`sha256sum SHA256SUMS`) to a list that \
          your allowed-signers file names on a line `# temper-revoked-plans PATH`.\n\n";
    r += "## Applying it\n\n\
          Every way checks each script against its sha256 before the first step runs, and refuses a changed \
          plan with nothing run. A step that exits non-zero stops the rest, unless the run kept that fix with \
          that very exit code. Stock fixes (source `stock`) are idempotent by design; fixes an LLM wrote were \
          verified once, not for idempotence: review them before applying a plan twice.\n\n\
          **With temper, verified again** (it checks the plan itself, from outside, as `temper plan verify` does; \
          the target's content, profile and tailoring must match the plan's; each step is checked as any fix is, \
          and one that fails goes to the normal loop):\n\n\
          ```bash\ntemper run --plan PLAN_DIR --allowed-signers ALLOWED_SIGNERS\n```\n\n\
          **With bash**, on the machine, as root, from the private copy (no temper; rescan afterwards with \
          `oscap xccdf eval`):\n\n\
          ```bash\nsudo bash PRIVATE/replay.sh      # or, from step 5: sudo bash PRIVATE/replay.sh 5\n```\n\n\
          **With Ansible**, from the private copy, on the hosts of an inventory (sudo on each):\n\n\
          ```bash\ncd PRIVATE && ansible-playbook -i INVENTORY playbook.yml               # every step\n\
          cd PRIVATE && ansible-playbook -i INVENTORY playbook.yml --tags RULE   # one rule's\n```\n\n";
    if at_boot(&plan.steps).next().is_some() {
        r += "Some steps need a reboot to take effect (marked below): reboot the machine before you scan it.\n\n";
    }
    let one_way: Vec<String> = plan.steps.iter().filter(|s| s.one_way.is_some()).map(|s| s.n.to_string()).collect();
    if !one_way.is_empty() {
        r += &format!(
            "Steps {} cannot be undone on a running system (the skill says why, below): their revert scripts \
             take effect only after a reboot. Plan the way back before you apply them.\n\n",
            one_way.join(", ")
        );
    }
    let derived: Vec<String> = plan.steps.iter().filter(|s| s.derives_again()).map(|s| s.n.to_string()).collect();
    if !derived.is_empty() {
        r += &format!(
            "Steps {} are derived from the rule's check and the items the scanner found on `{}`: `temper run --plan` \
             derives each again on its target, from that target's own evidence, and never runs these scripts. `replay.sh` \
             and the playbook run them as they are: a file step checks each file first and stops, with nothing changed, \
             where its owner, group or mode is not as the source's scan found it; the others set what the check wants.\n\n",
            derived.join(", "),
            h.source.target
        );
    }
    r += "## Steps\n\n| # | rule | source | exit code | reboot | one way | derived |\n|---|---|---|---|---|---|---|\n";
    for s in &plan.steps {
        let exit = match (s.exit_code, s.accepted_nonzero_exit) {
            (Some(c), true) => format!("{c} (kept: its checks passed)"),
            (Some(c), false) => c.to_string(),
            (None, _) => "-".into(),
        };
        r += &format!(
            "| {} | {} {} | {} | {} | {} | {} | {} |\n",
            s.n,
            crate::text::md_code_id(s.short_rule(), true),
            cell(&s.title),
            s.source,
            exit,
            if s.needs_reboot { "needs one" } else { "" },
            cell(s.one_way.as_deref().unwrap_or("")),
            if s.derives_again() { "again on each target" } else { "" }
        );
    }
    r
}

/// Text for a table cell: one line, no pipes.
fn cell(s: &str) -> String {
    s.replace(['\n', '\r'], " ").replace('|', "\\|")
}
