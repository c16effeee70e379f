#!/usr/bin/env bash
# bash bench/loop_block.sh: how long a run's own work blocks the gevent
# server's event loop (bench/loop_block.py), on the test database left by `make test`.
source "$(dirname "$0")/../dev/env.sh"
export DATA_DIR
exec "$VENV/bin/python" "$ROOT/bench/loop_block.py" "$@"
