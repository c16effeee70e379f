#!/usr/bin/env bash
# bash bench/first_token_browser.sh: how long the first streamed token takes
# from the provider to the chat painted in headless Chromium
# (bench/first_token_browser.py), on the test database left by `make test`.
source "$(dirname "$0")/../dev/env.sh"
export DATA_DIR
exec "$VENV/bin/python" "$ROOT/bench/first_token_browser.py" "$@"
