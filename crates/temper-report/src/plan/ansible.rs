//! `playbook.yml`: the plan as an Ansible playbook, one task per step, in order, tagged with the
//! rule id, each running the same script as `replay.sh` does. First tasks, on the controller,
//! before any step: the plan's folder holds nothing the plan does not list, the plan has not
//! expired, each host is one the plan names, and every script matches its sha256. It checks no
//! signature: a playbook in the folder cannot vouch for the folder, and Ansible reads what lies
//! beside a playbook (`group_vars/`, plugin folders, an `ansible.cfg` in the working folder)
//! before its first task. The plan is verified from outside and run from that private copy
//! (`temper plan unpack`). Where steps take effect at boot, a last task reboots the host when
//! asked (`-e temper_reboot=true`), tagged with those rules. Filters and lookups are named in
//! full (`ansible.builtin.…`), so a plugin folder beside the playbook cannot stand in for them.
use chrono::SecondsFormat;
use temper_journal::plan::{Plan, Terms, at_boot};

/// The playbook for `plan`, bound by `terms`; its paths are relative to the plan's folder.
pub fn playbook(plan: &Plan, terms: &Terms) -> String {
    let h = &plan.header;
    let mut y = String::new();
    let mut line = |l: &str| {
        y.push_str(l);
        y.push('\n');
    };
    line("---");
    line(&format!("# temper run {}'s proven plan: {} fixes, in the order the run kept them.", h.source.run, plan.steps.len()));
    let from = format!("Profile {}; content {} {}.", h.profile, h.content.datastream, h.content.version);
    comment("", &from).iter().for_each(|l| line(l));
    line("# Verify the plan from outside it first, and run it only from the private copy that makes:");
    line("#   temper plan unpack PLAN_DIR -o PRIVATE --allowed-signers FILE");
    line("#   cd PRIVATE && ansible-playbook -i INVENTORY playbook.yml   (one rule: --tags RULE_ID)");
    line("# This playbook checks no signature: Ansible reads what lies beside it (group_vars/, plugin");
    line("# folders, an ansible.cfg in the working folder) before its first task. Its first tasks, on the");
    line("# controller, refuse a folder that holds anything the plan does not list, a plan past its expiry");
    line("# and a host the plan does not name, and check every step's script against its sha256.");
    line("# A step passes with exit code 0, or with the non-zero code the run kept it with (its checks");
    line("# passed despite it).");
    line(&format!("- name: {}", q(&format!("Apply temper run {}'s proven plan ({})", h.source.run, short(&h.profile)))));
    line("  hosts: all");
    line("  become: true");
    line("  gather_facts: false");
    line("  vars:");
    line("    temper_plan_listing:");
    for l in plan.listing() {
        line(&format!("      - {}", q(&l)));
    }
    if plan.steps.is_empty() {
        line("    temper_plan_scripts: []");
    } else {
        line("    temper_plan_scripts:");
        for s in &plan.steps {
            line(&format!("      - file: {}", q(&s.fix.file)));
            line(&format!("        sha256: {}", q(&s.fix.sha256)));
        }
    }
    line("  tasks:");
    line("    # Once, on the controller, whatever --limit says: strategy free would not wait for it.");
    line("    - name: Check that the plan's folder holds only the plan's files  # noqa: run-once[task]");
    line("      ansible.builtin.assert:");
    line("        that:");
    line("          - temper_found | ansible.builtin.difference(temper_plan_listing) | length == 0");
    line("        fail_msg: >-");
    line("          {{ playbook_dir }} holds what the plan does not list (l: a link, d: a folder, f: a file):");
    line("          {{ temper_found | ansible.builtin.difference(temper_plan_listing) | join(', ') }}. Run the plan only");
    line("          from a private copy it was verified in (temper plan unpack); nothing was run");
    line("        quiet: true");
    line("      vars:");
    line("        temper_found: >-");
    line("          {{ lookup('ansible.builtin.pipe', 'cd ' ~ (playbook_dir | ansible.builtin.quote)");
    line("          ~ ' && find . -mindepth 1 -printf \"%y %P\\n\"').splitlines() }}");
    line("      delegate_to: localhost");
    line("      run_once: true");
    line("      tags: [always]");
    if let Some(t) = terms.expires {
        let at = t.to_rfc3339_opts(SecondsFormat::Secs, true);
        line("    - name: Check that the plan has not expired  # noqa: run-once[task]");
        line("      ansible.builtin.assert:");
        line("        that:");
        line(&format!("          - lookup('ansible.builtin.pipe', 'date -u +%s') | int < {}", t.timestamp()));
        line(&format!("        fail_msg: \"the plan expired at {at} (its signer set it to): nothing was run\""));
        line("        quiet: true");
        line("      delegate_to: localhost");
        line("      run_once: true");
        line("      tags: [always]");
    }
    if !terms.targets.is_empty() || terms.fleet.is_some() {
        line("    - name: Check that the plan is for this host");
        line("      ansible.builtin.assert:");
        line("        that:");
        match &terms.fleet {
            Some(_) => line("          - false"),
            None => line("          - inventory_hostname in temper_plan_for or inventory_hostname_short in temper_plan_for"),
        }
        let why = match &terms.fleet {
            Some(f) => {
                format!("the plan is for the runs of fleet {f}: apply it with temper (temper fleet run or temper worker); nothing was run")
            }
            None => format!("the plan is for the targets {}, not {{{{ inventory_hostname }}}}: nothing was run", terms.targets.join(", ")),
        };
        line(&format!("        fail_msg: {}", q(&why)));
        line("        quiet: true");
        line("      vars:");
        line(&format!("        temper_plan_for: {}", serde_json::to_string(&terms.targets).unwrap_or_default()));
        line("      tags: [always]");
    }
    line("    - name: Check every step's script against its sha256");
    line("      ansible.builtin.assert:");
    line("        that:");
    line("          - lookup('ansible.builtin.file', item.file, rstrip=false) | ansible.builtin.hash('sha256') == item.sha256");
    line("        fail_msg: \"{{ item.file }} does not match its sha256 in plan.json: the plan was changed; nothing was run\"");
    line("        quiet: true");
    line("      loop: \"{{ temper_plan_scripts }}\"");
    line("      tags: [always]");
    for s in &plan.steps {
        let var = format!("temper_step_{}", s.n);
        let codes: Vec<String> = s.accepted_exit_codes().iter().map(i64::to_string).collect();
        line("");
        let mut about = format!("{} (source {}, attempt {}): {}", s.title, s.source, s.attempt, s.description);
        if let Some(note) = s.one_way_note() {
            about += &format!(" One way: {note}.");
        }
        if let Some(note) = s.derived_note() {
            about += &format!(" Derived: {note}.");
        }
        comment("    ", &about).iter().for_each(|l| line(l));
        line(&format!("    - name: {}", q(&format!("Step {}: {}", s.n, plain(s.short_rule())))));
        line("      ansible.builtin.script:");
        line(&format!("        cmd: {}", q(&s.fix.file)));
        line("        executable: /bin/bash");
        line(&format!("      register: {var}"));
        line("      changed_when: true");
        line(&format!("      failed_when: {var}.rc is not defined or {var}.rc not in [{}]", codes.join(", ")));
        tags(&[q(&plain(&s.rule)), q(&plain(s.short_rule()))]).iter().for_each(|l| line(l));
    }
    let at_boot: Vec<_> = at_boot(&plan.steps).collect();
    if !at_boot.is_empty() {
        let ns: Vec<String> = at_boot.iter().map(|s| s.n.to_string()).collect();
        let rules: Vec<String> = at_boot.iter().flat_map(|s| [q(&plain(&s.rule)), q(&plain(s.short_rule()))]).collect();
        line("");
        let why = format!("Steps {} take effect at boot: reboot before you scan (-e temper_reboot=true reboots here).", ns.join(" "));
        comment("    ", &why).iter().for_each(|l| line(l));
        line("    - name: Reboot, for the steps that take effect at boot");
        line("      ansible.builtin.reboot:");
        line("        reboot_timeout: 1800");
        line("      when: temper_reboot | default(false) | ansible.builtin.bool");
        tags(&rules).iter().for_each(|l| line(l));
    }
    y
}

/// ansible-lint's limit is 160 columns; a comment wraps well inside it.
const WIDTH: usize = 120;

/// `text` as comment lines at `indent`, wrapped at `WIDTH`; a longer word is cut.
fn comment(indent: &str, text: &str) -> Vec<String> {
    let room = WIDTH - indent.len() - 2;
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let chars: Vec<char> = word.chars().collect();
        for piece in chars.chunks(room).map(|c| c.iter().collect::<String>()) {
            if !cur.is_empty() && cur.chars().count() + 1 + piece.chars().count() > room {
                lines.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(&piece);
        }
    }
    lines.push(cur);
    lines.into_iter().map(|l| format!("{indent}# {l}").trim_end().to_string()).collect()
}

/// A task's `tags`, one per line (a step's rule id, and every at-boot rule on the reboot task).
fn tags(quoted: &[String]) -> Vec<String> {
    std::iter::once("      tags:".to_string()).chain(quoted.iter().map(|t| format!("        - {t}"))).collect()
}

/// A rule id for a task's `name` and `tags`, where Ansible evaluates Jinja on the controller:
/// letters, digits and `_.:-` only, anything else `_`, so `{{` and `{%` can never appear. Ids
/// are checked against the content when the guest's results are read; this holds even for a
/// plan written by a temper before that check.
fn plain(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || "_.:-".contains(c) { c } else { '_' }).collect()
}

/// A YAML double-quoted scalar (JSON's string syntax is YAML's).
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn short(id: &str) -> &str {
    id.strip_prefix("xccdf_org.ssgproject.content_profile_").unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_jinja_reaches_a_name_or_a_tag() {
        let id = "xccdf_org.ssgproject.content_rule_x{{ lookup('pipe','touch /tmp/owned') }}{% raw %}";
        let p = plain(id);
        assert!(!p.contains("{{") && !p.contains("{%") && !p.contains('\''), "{p}");
        assert_eq!(plain("xccdf_org.ssgproject.content_rule_sshd_set_keepalive"), "xccdf_org.ssgproject.content_rule_sshd_set_keepalive");
    }

    #[test]
    fn a_comment_wraps_inside_the_width_and_keeps_every_word() {
        let text = format!("one two\nthree {} four", "x".repeat(300));
        let lines = comment("    ", &text);
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH && l.starts_with("    # ")), "{lines:#?}");
        let back: String = lines.iter().map(|l| l.trim_start_matches("    # ")).collect::<Vec<_>>().join(" ");
        assert_eq!(back.replace(' ', ""), text.split_whitespace().collect::<String>());
        assert_eq!(lines.len(), 4, "{lines:#?}");
    }
}
