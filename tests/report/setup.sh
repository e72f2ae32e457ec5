#!/usr/bin/env bash
# What the temper-report tests need beyond cargo: node with MITRE's hdf-converters (a real
# reader of STIG Viewer checklists) in tests/report/node_modules, and headless Chromium for
# the HTML report. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_install() {
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi
npm ci --no-audit --no-fund

if ! command -v chromium >/dev/null; then
  apt_install chromium
fi
echo "tests/report: node $(node --version), $(chromium --version)"
