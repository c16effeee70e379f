#!/usr/bin/env bash
# `make test`: the linters (ruff with ruff.toml; ESLint with Odoo's rules), then the whole agentic_ai suite
# in Odoo's test runner on a fresh copy of the template database (Odoo's
# apps + demo data), then one plain summary line `N passed, N failed`.
# Exits non-zero on any lint finding, failure, error, skipped test, install
# error, or when no test ran. Unless the run is targeted
# (AGENTIC_AI_TEST_TAGS), it then runs dev/durability_check.sh (a real
# worker killed mid-tool; AGENTIC_AI_SKIP_DURABILITY=1 skips it), dev/stream_resume_check.sh (a chat
# whose stream is cut mid-answer, in a real browser; AGENTIC_AI_SKIP_STREAM_RESUME=1 skips it) and, unless
# AGENTIC_AI_SKIP_SUBSETS=1, dev/app_subsets.sh, and unless
# AGENTIC_AI_SKIP_NUMPY=1, dev/numpy_pass.sh (the knowledge test classes,
# AGENTIC_AI_NUMPY_TAGS, again on a copy of the database without pgvector,
# reported as `[numpy] N passed, M failed`); the summary counts each linter,
# the durability check and each app subset as one test each, and the numpy
# pass's tests one each (a targeted run skips them all).
# Whatever stops the run early (set-up, database), the last line says so.
trap '[ -n "${SUMMARY_DONE:-}" ] || echo "0 passed, 1 failed"' EXIT
source "$(dirname "$0")/env.sh"
ensure_template_db
DB=${AGENTIC_AI_TEST_DB:-agentic_test}
copy_db "$TEMPLATE_DB" "$DB"
mkdir -p "$ROOT/.logs"
LOG=$ROOT/.logs/test-$(date +%Y%m%d-%H%M%S).log
LINT=${LOG%.log}-lint.out
if [ -z "${AGENTIC_AI_TEST_TAGS:-}" ]; then
    # Two linters, one test each: ruff (ruff.toml) and ESLint with Odoo's own rules
    # (addons/web/tooling/_eslintrc.json of the Odoo tree) over static/.
    lint_ok=0
    if "$VENV/bin/ruff" check --no-cache "$ROOT" >"$LINT.ruff" 2>&1; then
        lint_ok=$((lint_ok + 1)); echo "[lint] ruff: no finding" >&2
    else
        sed 's/^/[lint] /' "$LINT.ruff" >&2
    fi
    if "$ESLINT/node_modules/.bin/eslint" --no-eslintrc -c "$ODOO/addons/web/tooling/_eslintrc.json" \
            --resolve-plugins-relative-to "$ESLINT" "$ROOT/static" >"$LINT.eslint" 2>&1; then
        lint_ok=$((lint_ok + 1)); echo "[lint] eslint: no finding" >&2
    else
        sed 's/^/[lint] /' "$LINT.eslint" >&2
        echo "[lint] eslint: fix the formatting with: $ESLINT/node_modules/.bin/eslint --fix --no-eslintrc" \
            "-c $ODOO/addons/web/tooling/_eslintrc.json --resolve-plugins-relative-to $ESLINT static" >&2
    fi
    echo "$lint_ok passed, $((2 - lint_ok)) failed" >"$LINT"
fi
echo "[test] database $DB (copy of $TEMPLATE_DB); full log: $LOG" >&2
set +e
odoo_bin -d "$DB" -i agentic_ai --test-tags "${AGENTIC_AI_TEST_TAGS:-/agentic_ai}" --stop-after-init \
    --http-port="$(free_port)" --log-level=test --logfile="$LOG"
rc=$?
set -e
SUMMARY_DONE=1
if [ -n "${AGENTIC_AI_TEST_TAGS:-}" ]; then
    exec "$VENV/bin/python" "$ROOT/dev/test_summary.py" "$LOG" "$rc"
fi
set +e
SUITE=${LOG%.log}-suite.out SUBSETS=${LOG%.log}-subsets.out DURABILITY=${LOG%.log}-durability.out
NUMPY=${LOG%.log}-numpy.out
"$VENV/bin/python" "$ROOT/dev/test_summary.py" "$LOG" "$rc" >"$SUITE"
suite_rc=$?
sed '$s/^/[test] suite: /' "$SUITE"
# check SKIP_VARIABLE OUT LABEL SCRIPT: run dev/SCRIPT on a copy of the suite's database (its output to OUT, its
# summary line shown as "[LABEL] N passed, M failed"), unless SKIP_VARIABLE is 1.
check() {
    if [ "${!1:-}" = 1 ]; then
        echo "0 passed, 0 failed" >"$2"
    else
        AGENTIC_AI_TEST_DB=$DB bash "$ROOT/dev/$4" | tee "$2" | sed -u "s/^[0-9]* passed, [0-9]* failed$/[$3] &/"
    fi
}
CONNECTIONS=${LOG%.log}-connections.out QUEUE_JOB=${LOG%.log}-queue-job.out
REAL_SERVER=${LOG%.log}-real-server.out STREAM_RESUME=${LOG%.log}-stream-resume.out
# The knowledge search again with the pgvector extension really absent.
check AGENTIC_AI_SKIP_NUMPY "$NUMPY" numpy numpy_pass.sh
# A run that survives its worker, checked with a real server process killed mid-tool.
check AGENTIC_AI_SKIP_DURABILITY "$DURABILITY" durability durability_check.sh
# A chat whose stream is cut mid-answer, in a real browser on a real server: followed again, or polled.
check AGENTIC_AI_SKIP_STREAM_RESUME "$STREAM_RESUME" stream-resume stream_resume_check.sh
# 200 streams at once on the gevent server of a real multi-process Odoo, against PostgreSQL's 100 connections.
check AGENTIC_AI_SKIP_CONNECTIONS "$CONNECTIONS" connections connections_check.sh
# Queued messages through OCA queue_job and its job runner, on a real multi-process Odoo.
check AGENTIC_AI_SKIP_QUEUE_JOB "$QUEUE_JOB" queue_job queue_job_check.sh
# Turns against a real OpenAI-compatible server nobody on this project wrote: llama-cpp-python's, with a small
# model from PyPI (built once into the cache, about 10 minutes on 2 cores).
check AGENTIC_AI_SKIP_REAL_SERVER "$REAL_SERVER" real-server real_server_check.sh
# A whole run also checks the module next to subsets of the apps (dev/app_subsets.sh, on databases of its own);
# the last line counts lint, tests and subsets together.
if [ "${AGENTIC_AI_SKIP_SUBSETS:-}" = 1 ]; then
    echo "0 passed, 0 failed" >"$SUBSETS"
else
    bash "$ROOT/dev/app_subsets.sh" | tee "$SUBSETS" | sed -u 's/^[0-9]* passed, [0-9]* failed$/[subsets] &/'
fi
counts() { sed -n '$s/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$1" | grep . || echo "0 1"; }
read -r lint_passed lint_failed <<<"$(counts "$LINT")"
read -r suite_passed suite_failed <<<"$(counts "$SUITE")"
read -r subsets_passed subsets_failed <<<"$(counts "$SUBSETS")"
read -r durability_passed durability_failed <<<"$(counts "$DURABILITY")"
read -r real_passed real_failed <<<"$(counts "$REAL_SERVER")"
read -r connections_passed connections_failed <<<"$(counts "$CONNECTIONS")"
read -r numpy_passed numpy_failed <<<"$(counts "$NUMPY")"
read -r queue_job_passed queue_job_failed <<<"$(counts "$QUEUE_JOB")"
read -r resume_passed resume_failed <<<"$(counts "$STREAM_RESUME")"
# What failed, named just above the summary line (a CI that shows only the output's end still shows it).
failures() {  # failures NAME FILE FAILED: the lines of FILE that say what failed
    [ "$3" = 0 ] && return
    echo "[$1] $3 failed:"
    grep -E "FAIL|ERROR|failed|^[A-Za-z_.]*(Error|Exception): " "$2" | grep -vE "^[0-9]+ passed, [0-9]+ failed$" | cut -c1-300 | head -12 | sed 's/^/    /'
}
failures lint "$LINT" "$lint_failed"
failures suite "$SUITE" "$suite_failed"
failures numpy "$NUMPY" "$numpy_failed"
failures durability "$DURABILITY" "$durability_failed"
failures stream-resume "$STREAM_RESUME" "$resume_failed"
failures connections "$CONNECTIONS" "$connections_failed"
failures queue_job "$QUEUE_JOB" "$queue_job_failed"
failures real-server "$REAL_SERVER" "$real_failed"
failures subsets "$SUBSETS" "$subsets_failed"
echo "$((lint_passed + suite_passed + numpy_passed + durability_passed + resume_passed + connections_passed \
    + queue_job_passed + real_passed + subsets_passed)) passed," "$((lint_failed + suite_failed + numpy_failed \
    + durability_failed + resume_failed + connections_failed + queue_job_failed + real_failed + subsets_failed)) failed"
[ "$suite_rc" = 0 ] && [ "$((lint_failed + numpy_failed + durability_failed + resume_failed + connections_failed \
    + queue_job_failed + real_failed + subsets_failed))" = 0 ]
