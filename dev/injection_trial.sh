#!/usr/bin/env bash
# bash dev/injection_trial.sh: planted instructions over every channel the
# agent reads, against a compromised scripted model (dev/injection_trial.py),
# on a throwaway copy of the test database left by `make test`
# (AGENTIC_AI_TEST_DB, default agentic_test). Prints a table channel ->
# attempts -> unapproved writes; run it on two checkouts to compare them.
source "$(dirname "$0")/env.sh"
shell_on_copy injection_trial "$ROOT/dev/injection_trial.py" error
