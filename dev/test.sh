#!/usr/bin/env bash
# `make test`: the whole agentic_ai suite in Odoo's test runner, on a fresh
# copy of the template database (Odoo's apps + demo data), then one plain
# summary line `N passed, N failed`. Exits non-zero on any failure, error,
# skipped test, install error, or when no test ran.
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
"$VENV/bin/python" "$ROOT/dev/test_summary.py" "$LOG" "$rc"
