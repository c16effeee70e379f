#!/usr/bin/env bash
# bash dev/durability_check.sh: a real worker death mid-tool and the repair
# after a restart (dev/durability_check.py), on a copy of the test database
# (dev/check_on_copy.sh). Last line: `1 passed, 0 failed` or `0 passed, 1 failed`.
exec bash "$(dirname "$0")/check_on_copy.sh" durability_check
