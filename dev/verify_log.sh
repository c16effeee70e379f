#!/usr/bin/env bash
# `make verify-log DB=name`: verify the hash chain of the execution log of
# database DB (default: the demo's) with the addon's Odoo command
# (cli/agentic_ai_verify_log.py); exits 1 when a chain is broken.
source "$(dirname "$0")/env.sh"
# The addons path goes before the command name: Odoo looks for addon commands there.
"$VENV/bin/python" "$ODOO/odoo-bin" --addons-path="$ODOO/addons,$ADDONS" agentic_ai_verify_log \
    --addons-path="$ODOO/addons,$ADDONS" --db_host="$PGHOST" --db_port="$PGPORT" --db_user="$PGUSER" \
    --data-dir="$DATA_DIR" --log-level=warn -d "${1:-${AGENTIC_AI_DEMO_DB:-agentic_demo}}" "${@:2}"
