#!/usr/bin/env bash
# bash bench/step_overhead.sh: the agent's overhead per ReAct step against a
# bare call_kw (bench/step_overhead.py), on the test database left by `make test`.
source "$(dirname "$0")/../dev/env.sh"
export DATA_DIR
exec "$VENV/bin/python" "$ROOT/bench/step_overhead.py" "$@"
