#!/usr/bin/env bash
# bash dev/connections_check.sh: many streams at once on Odoo's gevent server
# hold database connections only while they work (dev/connections_check.py),
# on a copy of the test database (dev/check_on_copy.sh). Last line:
# `N passed, M failed`, one per case (seven).
exec bash "$(dirname "$0")/check_on_copy.sh" connections_check
