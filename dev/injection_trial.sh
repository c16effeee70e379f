#!/usr/bin/env bash
# bash dev/injection_trial.sh: planted instructions over every channel the
# agent reads, against a compromised scripted model (dev/injection_trial.py),
# on a throwaway copy of the test database left by `make test`
# (AGENTIC_AI_TEST_DB, default agentic_test). Prints a table channel ->
# attempts -> unapproved writes; run it on two checkouts to compare them.
source "$(dirname "$0")/env.sh"
SOURCE_DB=${AGENTIC_AI_TEST_DB:-agentic_test}
DB=${SOURCE_DB}_injection_trial
copy_db "$SOURCE_DB" "$DB"
set +e
odoo_bin shell -d "$DB" --no-http --log-level=error <"$ROOT/dev/injection_trial.py"
rc=$?
drop_db "$DB"
exit $rc
