#!/usr/bin/env bash
# Idempotent set-up shared by `make demo` and `make test`:
#   1. a virtualenv with Odoo's and our Python dependencies,
#   2. an Odoo 19 source tree ($ODOO_SRC, the cache, else a shallow clone),
#   3. ESLint for the JavaScript lint (npm, pinned in dev/eslint/),
#   4. an addons folder where this checkout is linked as `agentic_ai`.
# Prints nothing on stdout but `export` lines, so callers can `eval` it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/agentic_ai
VENV=${AGENTIC_AI_VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}
log() { echo "[setup] $*" >&2; }
pip_install() { "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$@" 2> >(grep -v "^WARNING: Location .* is ignored" >&2); }

# --- Odoo source -----------------------------------------------------------
if [ -n "${ODOO_SRC:-}" ]; then
    ODOO=$ODOO_SRC
elif [ -f "$CACHE/odoo-19.0/odoo-bin" ]; then
    ODOO=$CACHE/odoo-19.0
else
    log "cloning Odoo 19.0 into $CACHE/odoo-19.0 (shallow, a few minutes)"
    mkdir -p "$CACHE"
    rm -rf "$CACHE/odoo-19.0.partial"
    git clone --depth 1 --branch 19.0 --single-branch \
        https://github.com/odoo/odoo.git "$CACHE/odoo-19.0.partial" >&2
    mv "$CACHE/odoo-19.0.partial" "$CACHE/odoo-19.0"
    ODOO=$CACHE/odoo-19.0
fi
[ -f "$ODOO/odoo-bin" ] || { log "no odoo-bin in $ODOO"; exit 2; }
grep -q "version_info = (19, 0" "$ODOO/odoo/release.py" || { log "$ODOO is not Odoo 19.0"; exit 2; }

# --- virtualenv --------------------------------------------------------------
stamp=$VENV/.agentic_ai_stamp
want=$(cat "$ODOO/requirements.txt" "$ROOT/requirements.txt" "$ROOT/dev/requirements-dev.txt" \
    "$ROOT/dev/requirements-queue-job.txt" | sha1sum | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    log "installing Python dependencies into $VENV"
    if [ ! -x "$VENV/bin/python" ]; then
        "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { log "Python >= 3.10 is required ($PY)"; exit 2; }
        "$PY" -m venv "$VENV" >&2 || { log "cannot create a virtualenv: on Debian/Ubuntu run: apt-get install python3-venv"; exit 2; }
    fi
    pip_install --upgrade pip packaging >&2
    "$VENV/bin/python" "$ROOT/dev/odoo_requirements.py" "$ODOO/requirements.txt" > "$VENV/odoo-requirements.txt"
    pip_install --prefer-binary -r "$VENV/odoo-requirements.txt" >&2
    pip_install -r "$ROOT/requirements.txt" -r "$ROOT/dev/requirements-dev.txt" >&2
    # queue_job's wheel asks for the `odoo` distribution (Odoo from source is not one): its own Python
    # dependencies (requests, openupgradelib) are installed by name, first.
    pip_install requests openupgradelib >&2
    pip_install --no-deps -r "$ROOT/dev/requirements-queue-job.txt" >&2
    echo "$want" > "$stamp"
fi

# --- a browser for Odoo's HttpCase tours (tests/test_chat_tour.py) ----------
# Odoo's tour runner skips browser tests silently without Chrome or Chromium;
# our tests must never be skipped, so a missing browser is installed here
# (Debian's chromium) or the set-up fails saying what to install.
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null \
        && ! command -v google-chrome >/dev/null && ! command -v google-chrome-stable >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing Debian's chromium for the browser tests (apt-get)"
        DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >&2
    else
        log "the browser tests need Chromium: install it as root with: apt-get install chromium"
        exit 2
    fi
fi

# --- ESLint with Odoo's rules, for `make test`'s lint ------------------------
# The versions of Odoo's own addons/web/tooling/_package.json, pinned in
# dev/eslint/package-lock.json, installed with npm into the cache (keyed by the
# lock file); the rules are read from the Odoo tree at lint time.
ESLINT=$CACHE/eslint-$(sha1sum "$ROOT/dev/eslint/package-lock.json" | cut -c1-12)
if [ ! -x "$ESLINT/node_modules/.bin/eslint" ]; then
    command -v npm >/dev/null || { log "the JavaScript lint needs Node.js and npm: apt-get install nodejs npm"; exit 2; }
    log "installing ESLint into $ESLINT (npm ci)"
    rm -rf "$ESLINT.partial" && mkdir -p "$ESLINT.partial"
    cp "$ROOT/dev/eslint/package.json" "$ROOT/dev/eslint/package-lock.json" "$ESLINT.partial/"
    (cd "$ESLINT.partial" && npm ci --no-audit --no-fund --loglevel=error >&2)
    rm -rf "$ESLINT" && mv "$ESLINT.partial" "$ESLINT"
fi

# --- addons path: Odoo needs the addon folder to be named agentic_ai --------
ADDONS=$CACHE/addons-$(echo "$ROOT" | sha1sum | cut -c1-8)
mkdir -p "$ADDONS"
ln -sfn "$ROOT" "$ADDONS/agentic_ai"

# queue_job's addon folder (PyPI's odoo/addons in the virtualenv), added to the addons path by dev/queue_job_check.py.
QUEUE_JOB_ADDONS=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/odoo/addons
echo "export ODOO=$ODOO VENV=$VENV ADDONS=$ADDONS ESLINT=$ESLINT QUEUE_JOB_ADDONS=$QUEUE_JOB_ADDONS"
