#!/usr/bin/env bash
# The knowledge search without pgvector (issue 13, point 5): copies the test
# database left by the suite, drops the pgvector extension on the copy
# (`DROP EXTENSION IF EXISTS vector CASCADE`) and runs the knowledge test
# classes again there, so the NumPy fallback runs for real. The classes are
# those tagged `agentic_ai_numpy`, or AGENTIC_AI_NUMPY_TAGS (Odoo test tags,
# e.g. /agentic_ai:TestVectorStore), after an upgrade of the module on the
# copy (which must succeed without pgvector, case BR-11).
# Usage: AGENTIC_AI_TEST_DB=<suite db> bash dev/numpy_pass.sh. Prints the
# failures, then `N passed, N failed`; exits non-zero on any failure.
trap '[ -n "${SUMMARY_DONE:-}" ] || echo "0 passed, 1 failed"' EXIT
source "$(dirname "$0")/env.sh"
SOURCE_DB=${AGENTIC_AI_TEST_DB:-agentic_test}
DB=${SOURCE_DB}_numpy
TAGS=${AGENTIC_AI_NUMPY_TAGS:-agentic_ai_numpy/agentic_ai}
copy_db "$SOURCE_DB" "$DB"
"$VENV/bin/python" - "$DB" <<'PY'
import sys, psycopg2
conn = psycopg2.connect(dbname=sys.argv[1])
conn.autocommit = True
conn.cursor().execute("DROP EXTENSION IF EXISTS vector CASCADE")
PY
mkdir -p "$ROOT/.logs"
LOG=$ROOT/.logs/numpy-$(date +%Y%m%d-%H%M%S).log
echo "[numpy] database $DB (copy of $SOURCE_DB without pgvector), tags $TAGS; log: $LOG" >&2
set +e
odoo_bin -d "$DB" -u agentic_ai --test-tags "$TAGS" --stop-after-init \
    --http-port="$(free_port)" --log-level=test --logfile="$LOG"
rc=$?
# The pass means nothing if the upgrade created the extension again
# (ensure_extension runs at install only, from the post_init_hook).
if [ -n "$("$VENV/bin/python" - "$DB" <<'PY'
import sys, psycopg2
cr = psycopg2.connect(dbname=sys.argv[1]).cursor()
cr.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
print("present" if cr.fetchone() else "")
PY
)" ]; then
    echo "[numpy] the upgrade created the vector extension again: the NumPy path was not tested" >&2
    rc=1
fi
SUMMARY_DONE=1
"$VENV/bin/python" "$ROOT/dev/test_summary.py" "$LOG" "$rc"
