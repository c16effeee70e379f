#!/usr/bin/env bash
# `make test`: the whole agentic_ai suite in Odoo's test runner, on a fresh
# copy of the template database (Odoo's apps + demo data), then one plain
# summary line `N passed, N failed`. Exits non-zero on any failure, error,
# skipped test, install error, or when no test ran. Unless the run is
# targeted (AGENTIC_AI_TEST_TAGS) or AGENTIC_AI_SKIP_SUBSETS=1, it then runs
# dev/app_subsets.sh and the summary counts each app subset as one test.
# Whatever stops the run early (set-up, database), the last line says so.
trap '[ -n "${SUMMARY_DONE:-}" ] || echo "0 passed, 1 failed"' EXIT
source "$(dirname "$0")/env.sh"
ensure_template_db
DB=${AGENTIC_AI_TEST_DB:-agentic_test}
copy_db "$TEMPLATE_DB" "$DB"
mkdir -p "$ROOT/.logs"
LOG=$ROOT/.logs/test-$(date +%Y%m%d-%H%M%S).log
echo "[test] database $DB (copy of $TEMPLATE_DB); full log: $LOG" >&2
set +e
odoo_bin -d "$DB" -i agentic_ai --test-tags "${AGENTIC_AI_TEST_TAGS:-/agentic_ai}" --stop-after-init \
    --http-port="$(free_port)" --log-level=test --logfile="$LOG"
rc=$?
set -e
SUMMARY_DONE=1
if [ -n "${AGENTIC_AI_TEST_TAGS:-}" ] || [ "${AGENTIC_AI_SKIP_SUBSETS:-}" = 1 ]; then
    exec "$VENV/bin/python" "$ROOT/dev/test_summary.py" "$LOG" "$rc"
fi
# A whole run also checks the module next to subsets of the apps
# (dev/app_subsets.sh); the last line counts tests and subsets together.
set +e
SUITE=${LOG%.log}-suite.out SUBSETS=${LOG%.log}-subsets.out
"$VENV/bin/python" "$ROOT/dev/test_summary.py" "$LOG" "$rc" >"$SUITE"
suite_rc=$?
sed '$s/^/[test] suite: /' "$SUITE"
bash "$ROOT/dev/app_subsets.sh" | tee "$SUBSETS" | sed -u 's/^[0-9]* passed, [0-9]* failed$/[subsets] &/'
subsets_rc=${PIPESTATUS[0]}
counts() { sed -n '$s/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$1" | grep . || echo "0 1"; }
read -r suite_passed suite_failed <<<"$(counts "$SUITE")"
read -r subsets_passed subsets_failed <<<"$(counts "$SUBSETS")"
echo "$((suite_passed + subsets_passed)) passed, $((suite_failed + subsets_failed)) failed"
[ "$suite_rc" = 0 ] && [ "$subsets_rc" = 0 ]
