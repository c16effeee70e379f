#!/usr/bin/env bash
# bash dev/durability_check.sh: a real worker death mid-tool and the repair
# after a restart (dev/durability_check.py), on a copy of the test database
# (AGENTIC_AI_TEST_DB, default agentic_test) named <it>_durability, dropped
# afterwards. Last line: `1 passed, 0 failed` or `0 passed, 1 failed`.
trap '[ -n "${CHECK_DONE:-}" ] || echo "0 passed, 1 failed"' EXIT
source "$(dirname "$0")/env.sh"
SOURCE_DB=${AGENTIC_AI_TEST_DB:-agentic_test}
CHECK_DB=${SOURCE_DB}_durability
export DATA_DIR
copy_db "$SOURCE_DB" "$CHECK_DB"
set +e
"$VENV/bin/python" "$ROOT/dev/durability_check.py" "$CHECK_DB"
rc=$?
drop_db "$CHECK_DB" >&2
CHECK_DONE=1
exit "$rc"
