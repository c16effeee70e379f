#!/usr/bin/env bash
# bash dev/connections_check.sh: many streams at once on Odoo's gevent server
# hold database connections only while they work (dev/connections_check.py),
# on a copy of the test database (dev/check_on_copy.sh). Last line:
# `1 passed, 0 failed` or `0 passed, 1 failed`.
exec bash "$(dirname "$0")/check_on_copy.sh" connections_check
