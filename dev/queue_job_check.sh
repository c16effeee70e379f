#!/usr/bin/env bash
# bash dev/queue_job_check.sh: queued messages through OCA queue_job and its job runner on a real multi-process
# Odoo (dev/queue_job_check.py), on a copy of the test database (dev/check_on_copy.sh). Last line:
# `1 passed, 0 failed` or `0 passed, 1 failed`.
exec bash "$(dirname "$0")/check_on_copy.sh" queue_job_check
