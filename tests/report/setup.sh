#!/usr/bin/env bash
# What the temper-report tests need beyond cargo: node with MITRE's hdf-converters (a real
# reader of STIG Viewer checklists), MITRE's saf CLI and inspecjs (readers of HDF) in
# tests/report/node_modules; compliance-trestle (IBM's OSCAL models, reading the OSCAL files) in
# the virtualenv tests/report/.venv; headless Chromium for the HTML report, pdftotext
# (poppler-utils) to read its printed form, and xmllint (libxml2-utils) to check CKL files
# against STIG Viewer's checklist schema. Safe to run again.
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
# npm ci empties node_modules and installs it all again (73 s in a CI run, where .ci/run had
# just done it): skipped while the lock file is the one installed from.
lock=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.temper-lock 2>/dev/null)" != "$lock" ]; then
  npm ci --no-audit --no-fund
  echo "$lock" >node_modules/.temper-lock
fi

# compliance-trestle 3.x holds OSCAL 1.1's models (4.x and later: OSCAL 1.2).
trestle=3.12.4
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  apt_install python3-venv
fi
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('compliance-trestle') != '$trestle')" 2>/dev/null; then
  rm -rf .venv
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check "compliance-trestle==$trestle"
fi

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v pdftotext >/dev/null || missing+=(poppler-utils)
command -v xmllint >/dev/null || missing+=(libxml2-utils)
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}"
fi
echo "tests/report: node $(node --version), $(chromium --version), trestle $trestle"
