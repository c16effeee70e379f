#!/usr/bin/env bash
# bash dev/check_on_copy.sh NAME: runs the check dev/NAME.py on a copy of the
# test database (AGENTIC_AI_TEST_DB, default agentic_test) named <it>_NAME,
# dropped afterwards. Last line: `1 passed, 0 failed` or `0 passed, 1 failed`.
NAME=${1:?usage: check_on_copy.sh NAME}
trap '[ -n "${CHECK_DONE:-}" ] || echo "0 passed, 1 failed"' EXIT
source "$(dirname "$0")/env.sh"
SOURCE_DB=${AGENTIC_AI_TEST_DB:-agentic_test}
CHECK_DB=${SOURCE_DB}_${NAME%_check}
export DATA_DIR
copy_db "$SOURCE_DB" "$CHECK_DB"
set +e
"$VENV/bin/python" "$ROOT/dev/$NAME.py" "$CHECK_DB"
rc=$?
drop_db "$CHECK_DB" >&2
CHECK_DONE=1
exit "$rc"
