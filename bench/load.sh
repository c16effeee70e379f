#!/usr/bin/env bash
# bash bench/load.sh: a whole company at once, measured with Locust (bench/load.py), on the test database left by
# `make test`. Locust lives in a virtualenv of its own in the cache (made the first time, from
# bench/requirements-locust.txt): its gevent is newer than the one Odoo pins.
source "$(dirname "$0")/../dev/env.sh"
LOCUST_VENV=${XDG_CACHE_HOME:-$HOME/.cache}/agentic_ai/locust-$(sha1sum "$ROOT/bench/requirements-locust.txt" | cut -c1-12)
if [ ! -f "$LOCUST_VENV/.ready" ]; then  # a virtualenv cannot be moved: made in place, marked ready at the end
    echo "[bench] installing Locust into $LOCUST_VENV" >&2
    rm -rf "$LOCUST_VENV"
    python3 -m venv "$LOCUST_VENV"
    "$LOCUST_VENV/bin/python" -m pip install -q --disable-pip-version-check \
        -r "$ROOT/bench/requirements-locust.txt" 2> >(grep -v "^WARNING: Location .* is ignored" >&2)
    touch "$LOCUST_VENV/.ready"
fi
export LOCUST_BIN=$LOCUST_VENV/bin/locust DATA_DIR
exec "$VENV/bin/python" "$ROOT/bench/load.py" "$@"
