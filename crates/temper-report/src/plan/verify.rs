//! `verify.sh`: the plan's seal checked with `ssh-keygen` and `sha256sum` alone, where temper
//! is not installed. `replay.sh` runs it before anything, and the playbook's first task on the
//! controller; `temper run --plan` checks the same seal itself (`temper_journal::plan::seal`).
use temper_journal::plan::{MANIFEST, NAMESPACE, SIGNATURE};

/// The script. Exit 0: the plan is as signed (or `--unsigned` was given, and it says so).
pub fn verify_sh() -> String {
    format!(
        r#"#!/usr/bin/env bash
# Checks this plan's seal before any of it runs: {SIGNATURE}, an SSH signature (SSHSIG, namespace
# {NAMESPACE}) by a key of an allowed-signers file (ssh-keygen(1), ALLOWED SIGNERS; git's
# gpg.ssh.allowedSignersFile), over {MANIFEST}; then every file of the folder against {MANIFEST},
# and no file that it does not list.
# Usage: bash verify.sh --allowed-signers FILE   (or TEMPER_ALLOWED_SIGNERS=FILE bash verify.sh)
#        bash verify.sh --unsigned               (checks nothing, and says so)
set -u
signers="${{TEMPER_ALLOWED_SIGNERS:-}}" unsigned=0
while [ $# -gt 0 ]; do
  case "$1" in
    --allowed-signers) if [ -n "${{2:-}}" ]; then signers="$2"; fi; shift; [ $# -gt 0 ] && shift ;;
    --unsigned) unsigned=1; shift ;;
    '') shift ;;
    *) echo "verify.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
fail() {{ echo "verify.sh: $*; nothing was run" >&2; exit 1; }}
dir="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)" || fail "cannot find the plan's folder"
if [ "$unsigned" = 1 ]; then echo "verify.sh: the plan's signature is not checked (--unsigned)" >&2; exit 0; fi
[ -f "$dir/{SIGNATURE}" ] || fail "the plan is not signed ($dir/{SIGNATURE} is missing): give --unsigned to apply it as it is"
[ -n "$signers" ] || fail "give --allowed-signers FILE (or TEMPER_ALLOWED_SIGNERS) to check the plan's signature"
[ -r "$signers" ] || fail "cannot read the allowed signers $signers"
for tool in ssh-keygen sha256sum find sort cut; do
  command -v "$tool" >/dev/null || fail "$tool is missing"
done
principal="$(ssh-keygen -Y find-principals -s "$dir/{SIGNATURE}" -f "$signers" 2>/dev/null | head -n 1)"
[ -n "$principal" ] || fail "the plan is signed by a key that is not in $signers (or not allowed now)"
ssh-keygen -Y verify -f "$signers" -I "$principal" -n {NAMESPACE} -s "$dir/{SIGNATURE}" <"$dir/{MANIFEST}" >/dev/null 2>&1 ||
  fail "the signature does not match {MANIFEST} for {NAMESPACE}: the plan was changed after it was signed"
[ -z "$(cd "$dir" && find . ! -type f ! -type d)" ] || fail "the plan holds a link or another thing that is not a file"
(cd "$dir" && sha256sum --check --strict --quiet {MANIFEST}) >&2 ||
  fail "a file does not match its sha256 in {MANIFEST}: the plan was changed after it was signed"
listed="$(cut -c67- "$dir/{MANIFEST}" | LC_ALL=C sort)"
present="$(cd "$dir" && find . -type f ! -path ./{MANIFEST} ! -path ./{SIGNATURE} | cut -c3- | LC_ALL=C sort)"
[ "$listed" = "$present" ] || fail "the plan's files are not those {MANIFEST} lists: a file was added or removed after it was signed"
echo "verify.sh: the plan is signed by $principal" >&2
"#
    )
}
