#!/usr/bin/env bash
# What the plan tests need beyond cargo: Ansible and ansible-lint from Debian's packages, to
# lint, syntax-check and run the playbook `temper plan export` writes. Safe to run again.
set -euo pipefail

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
missing=()
command -v ansible-playbook >/dev/null || missing+=(ansible)
command -v ansible-lint >/dev/null || missing+=(ansible-lint)
if [ "${#missing[@]}" -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "tests/plan: $(ansible-playbook --version | head -n1), $(ansible-lint --nocolor --version 2>/dev/null | head -n1)"
