#!/usr/bin/env bash
# bash dev/stream_resume_check.sh: a chat whose stream is cut mid-answer, in
# a real browser on a real server (dev/stream_resume_check.py), on a copy of
# the test database (dev/check_on_copy.sh). Last line: `N passed, M failed`.
exec bash "$(dirname "$0")/check_on_copy.sh" stream_resume_check
