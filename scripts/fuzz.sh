#!/usr/bin/env bash
# Property-based fuzzing of the /api/v1 REST contract with schemathesis, against a running server.
#
#   scripts/fuzz.sh <openapi-url> [extra `schemathesis run` options...]
#   scripts/fuzz.sh --help | --version
#
# <openapi-url> is the server's document, e.g. http://127.0.0.1:4000/api/v1/openapi.json. Requests
# go to that URL's origin (not to the document's `servers`, which may name the public address).
#
# Environment (all optional):
#   FUZZ_TOKEN          bearer JWT sent only to operations secured by `bearerAuth` (the order endpoint)
#   FUZZ_MAX_EXAMPLES   test cases per operation and phase (default 50)
#   FUZZ_TIMEOUT        hard limit for the whole run in seconds (default 600)
#   FUZZ_SEED           seed for a reproducible run (default: random, printed by schemathesis)
#   FUZZ_REPORT_DIR     where the JUnit and NDJSON reports go (default .venv-fuzz/report/, git-ignored)
#   FUZZ_ALLOW_REMOTE=1 allow a target that is not a loopback address
#
# Schemathesis lives in a project-local virtualenv, .venv-fuzz/ (git-ignored), created on first use.
# Exits non-zero when any check fails, schemathesis errors, or the time limit is hit.
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5
CHECKS=not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv-fuzz"
schemathesis="$venv/bin/schemathesis"

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

ensure_schemathesis() {
  if "$schemathesis" --version 2>/dev/null | grep -qF "version $SCHEMATHESIS_VERSION"; then
    return
  fi
  echo "fuzz: installing schemathesis $SCHEMATHESIS_VERSION into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
}

case "${1:-}" in
  -h | --help)
    usage
    exit 0
    ;;
  --version)
    ensure_schemathesis
    "$schemathesis" --version
    exit 0
    ;;
  '' | -*)
    usage >&2
    exit 2
    ;;
esac

schema_url=$1
shift

if [[ ! $schema_url =~ ^(https?://([^/:]+|\[[^]]+\])(:[0-9]+)?)(/|$) ]]; then
  echo "fuzz: not an http(s) URL: $schema_url" >&2
  exit 2
fi
origin=${BASH_REMATCH[1]}
host=${BASH_REMATCH[2]}
if [[ ${FUZZ_ALLOW_REMOTE:-} != 1 && ! $host =~ ^(127\.[0-9.]+|localhost|\[::1\])$ ]]; then
  echo "fuzz: refusing to fuzz $host, which is not a loopback address (set FUZZ_ALLOW_REMOTE=1)" >&2
  exit 2
fi

ensure_schemathesis

report_dir=${FUZZ_REPORT_DIR:-$venv/report}
mkdir -p "$report_dir"
events="$report_dir/events.ndjson"
rm -f "$events"

# A run-time config file: the replay cache (earlier failures are tried first) stays inside the
# venv folder, and FUZZ_TOKEN, when set, is sent by OpenAPI-aware auth only to the operations
# whose `security` names bearerAuth. The file holds a reference to the variable, not the token.
config=$(mktemp "${TMPDIR:-/tmp}/fuzz-schemathesis.XXXXXX.toml")
trap 'rm -f "$config"' EXIT
printf "[cache]\ndirectory = '%s'\n" "$venv/cache" >"$config"
if [[ -n ${FUZZ_TOKEN:-} ]]; then
  # shellcheck disable=SC2016 # schemathesis expands ${FUZZ_TOKEN} itself
  printf '\n[auth.openapi.bearerAuth]\nbearer = "${FUZZ_TOKEN}"\n' >>"$config"
  export FUZZ_TOKEN
fi

# shellcheck disable=SC2054 # the commas separate values of one option
run_args=(
  run "$schema_url"
  --url "$origin"
  --checks "$CHECKS"
  --max-examples "${FUZZ_MAX_EXAMPLES:-50}"
  --request-timeout 10
  --report junit,ndjson
  --report-dir "$report_dir"
  --report-ndjson-path "$events"
  --no-color
)
[[ -n ${FUZZ_SEED:-} ]] && run_args+=(--seed "$FUZZ_SEED")

echo "fuzz: schemathesis $SCHEMATHESIS_VERSION against $origin (checks: $CHECKS)"
status=0
timeout --signal=INT --kill-after=30 "${FUZZ_TIMEOUT:-600}" \
  "$schemathesis" --config-file "$config" "${run_args[@]}" "$@" || status=$?

# The count of test cases sent, from the NDJSON event stream (the same number as schemathesis's
# "Test cases: N generated"), and how many of their checks failed.
if [[ -s $events ]]; then
  "$venv/bin/python" - "$events" <<'PY'
import json, sys

cases = failed = 0
with open(sys.argv[1], encoding="utf-8") as stream:
    for line in stream:
        scenario = json.loads(line).get("ScenarioFinished")
        if not scenario:
            continue
        recorder = scenario.get("recorder") or {}
        cases += len(recorder.get("cases", {}))
        for checks in recorder.get("checks", {}).values():
            failed += sum(1 for check in checks if check.get("status") == "failure")
print(f"fuzz: {cases} test cases sent, {failed} failed checks")
PY
fi

if ((status == 124)); then
  echo "fuzz: stopped after ${FUZZ_TIMEOUT:-600}s" >&2
fi
exit "$status"
