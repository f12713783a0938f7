#!/usr/bin/env bash
# Runs check_report.mjs on a report, after making sure what it needs is
# there; a missing browser, Node.js or playwright-core fails the test with
# what to install, never skips it.
#
#   tests/viewer/browser_check.sh REPORT.html [check_report.mjs options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
chromium=${IOTAP_CHROMIUM:-/usr/bin/chromium}

missing=()
command -v node > /dev/null || missing+=("Node.js (node)")
[[ -x "$chromium" ]] || missing+=("Chromium ($chromium)")
[[ -d "$here/node_modules/playwright-core" ]] ||
  missing+=("playwright-core (run 'npm ci' in tests/viewer)")
if (( ${#missing[@]} > 0 )); then
  echo "FAIL: the browser tests need: ${missing[*]}." >&2
  echo "      Install them with: .ci/install-deps --with-browser && (cd tests/viewer && npm ci)" >&2
  echo "      (tests/run-all.sh does both)." >&2
  exit 1
fi
exec node "$here/check_report.mjs" "$@"
