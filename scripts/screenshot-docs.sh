#!/usr/bin/env bash
# Screenshot of the API docs page as a browser renders it, for a look by a person.
#
#   scripts/screenshot-docs.sh <url> <out.png>
#   e.g. scripts/screenshot-docs.sh http://127.0.0.1:4000/docs /tmp/docs.png
#
# Uses headless Chromium (Debian: `apt-get install chromium`). The virtual-time budget lets the
# page's scripts load the document and render before the picture is taken.
# Environment: SCREENSHOT_SIZE (default 1280,900), SCREENSHOT_BUDGET_MS (default 5000).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
fi
url=$1
out=$2

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $browser ]]; then
  echo "screenshot-docs: no chromium binary found (apt-get install chromium)" >&2
  exit 1
fi

profile=$(mktemp -d "${TMPDIR:-/tmp}/screenshot-docs.XXXXXX")
trap 'rm -rf "$profile"' EXIT

rm -f "$out"
# --no-sandbox: Chromium refuses to start as root otherwise (containers, CI).
timeout 90 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$profile" --no-first-run --disable-extensions \
  --window-size="${SCREENSHOT_SIZE:-1280,900}" \
  --virtual-time-budget="${SCREENSHOT_BUDGET_MS:-5000}" \
  --screenshot="$out" "$url" >"$profile/chromium.log" 2>&1 || {
  cat "$profile/chromium.log" >&2
  exit 1
}

if [[ ! -s $out ]]; then
  echo "screenshot-docs: chromium wrote no screenshot" >&2
  cat "$profile/chromium.log" >&2
  exit 1
fi
echo "screenshot-docs: $out"
