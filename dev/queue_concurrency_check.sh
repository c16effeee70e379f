#!/usr/bin/env bash
# bash dev/queue_concurrency_check.sh: the async queue with real database
# sessions (dev/queue_concurrency_check.py), on a throwaway copy of the test
# database left by `make test` (AGENTIC_AI_TEST_DB, default agentic_test).
source "$(dirname "$0")/env.sh"
shell_on_copy queue_check "$ROOT/dev/queue_concurrency_check.py"
