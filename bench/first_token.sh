#!/usr/bin/env bash
# bash bench/first_token.sh: how long the first streamed token takes to cross
# Odoo (bench/first_token.py), on the test database left by `make test`.
source "$(dirname "$0")/../dev/env.sh"
export DATA_DIR
exec "$VENV/bin/python" "$ROOT/bench/first_token.py" "$@"
