#!/usr/bin/env bash
# bash bench/run.sh NAME: run bench/NAME.py in `odoo-bin shell` on the test database.
source "$(dirname "$0")/../dev/env.sh"
odoo_bin shell -d "${AGENTIC_AI_TEST_DB:-agentic_test}" --no-http --log-level=warn < "$ROOT/bench/$1.py"
