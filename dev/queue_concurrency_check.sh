#!/usr/bin/env bash
# bash dev/queue_concurrency_check.sh: the async queue with real database
# sessions (dev/queue_concurrency_check.py), on a throwaway copy of the test
# database left by `make test` (AGENTIC_AI_TEST_DB, default agentic_test).
source "$(dirname "$0")/env.sh"
SOURCE_DB=${AGENTIC_AI_TEST_DB:-agentic_test}
DB=${SOURCE_DB}_queue_check
copy_db "$SOURCE_DB" "$DB"
set +e
odoo_bin shell -d "$DB" --no-http --log-level=warn <"$ROOT/dev/queue_concurrency_check.py"
rc=$?
drop_db "$DB"
exit $rc
