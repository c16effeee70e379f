# Sourced by the dev scripts: runs the set-up and the database server, then
# defines `odoo_bin` and `ensure_template_db`.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
eval "$(bash "$ROOT/dev/setup.sh")"
# The virtualenv first on the path: when Odoo restarts itself (a request past limit_time_real, an upgrade), it
# re-executes "python" by name, which must be this virtualenv's (issue 24 point 3).
export PATH="$VENV/bin:$PATH"
eval "$("$VENV/bin/python" "$ROOT/dev/pg.py" 2> >(grep -v -e RuntimeDirWarning -e user_runtime_dir >&2))"
export PGHOST PGPORT PGUSER
# Odoo's filestore (attachments, asset bundles), kept with the checkout.
DATA_DIR=${AGENTIC_AI_DATA_DIR:-$ROOT/.odoo-data}
# Odoo's ERP apps the demo and the tests run on (issue 2, point 2).
APPS=${AGENTIC_AI_APPS:-sale_management,purchase,stock,account,hr,hr_holidays,hr_attendance,mrp,crm}

odoo_bin() {  # odoo_bin [SUBCOMMAND] OPTIONS...
    local sub=()
    if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then sub=("$1"); shift; fi
    "$VENV/bin/python" "$ODOO/odoo-bin" "${sub[@]}" \
        --addons-path="$ODOO/addons,$ADDONS" \
        --db_host="$PGHOST" --db_port="$PGPORT" --db_user="$PGUSER" --http-interface="${AGENTIC_AI_HTTP_INTERFACE:-127.0.0.1}" \
        --data-dir="$DATA_DIR" \
        "$@"
}

psql_q() { "$VENV/bin/python" - "$@" <<'PY'
import sys, psycopg2
conn = psycopg2.connect(dbname="postgres")
conn.autocommit = True
cur = conn.cursor()
cur.execute(sys.argv[1], sys.argv[2:] or None)
if cur.description:
    for row in cur.fetchall():
        print(*row)
PY
}

db_exists() { [ -n "$(psql_q "SELECT 1 FROM pg_database WHERE datname = %s" "$1")" ]; }

# A database with Odoo's apps and their demo data but without agentic_ai,
# built once per Odoo tree and app list, with its asset bundles generated;
# copies of it (and of its filestore) make each test run's fresh database in
# seconds instead of minutes.
ensure_template_db() {
    local key
    key=$( (echo "$APPS"; cat "$ODOO/odoo/release.py") | sha1sum | cut -c1-10)
    TEMPLATE_DB=agentic_tmpl_$key
    if db_exists "$TEMPLATE_DB" && [ -d "$DATA_DIR/filestore/$TEMPLATE_DB" ]; then
        return
    fi
    echo "[db] building $TEMPLATE_DB with demo data for $APPS (a few minutes, once)" >&2
    local tmp=${TEMPLATE_DB}_building
    drop_db "$TEMPLATE_DB"
    drop_db "$tmp"
    odoo_bin -d "$tmp" -i "$APPS" --with-demo --stop-after-init \
        --log-level=warn --http-port="$(free_port)" >&2
    echo "env['ir.qweb']._pregenerate_assets_bundles(); env.cr.commit()" \
        | odoo_bin shell -d "$tmp" --no-http --log-level=warn >/dev/null
    psql_q "ALTER DATABASE \"$tmp\" RENAME TO \"$TEMPLATE_DB\""
    mkdir -p "$DATA_DIR/filestore"
    mv "$DATA_DIR/filestore/$tmp" "$DATA_DIR/filestore/$TEMPLATE_DB"
}

drop_db() {  # drop_db NAME: the database and its filestore, if present
    if db_exists "$1"; then psql_q "DROP DATABASE \"$1\" WITH (FORCE)"; fi
    rm -rf "${DATA_DIR:?}/filestore/$1"
}

copy_db() {  # copy_db TEMPLATE NEW: drop NEW if present, then clone it and its filestore
    drop_db "$2"
    psql_q "CREATE DATABASE \"$2\" TEMPLATE \"$1\""
    mkdir -p "$DATA_DIR/filestore"
    if [ -d "$DATA_DIR/filestore/$1" ]; then cp -a "$DATA_DIR/filestore/$1" "$DATA_DIR/filestore/$2"; fi
}

free_port() { "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# shell_on_copy SUFFIX SCRIPT [LOG_LEVEL]: feed SCRIPT to `odoo-bin shell` on a
# throwaway copy (named with SUFFIX) of the test database left by `make test`
# (AGENTIC_AI_TEST_DB, default agentic_test), drop the copy, return the
# shell's exit code.
shell_on_copy() {
    local source_db=${AGENTIC_AI_TEST_DB:-agentic_test} rc
    local db=${source_db}_$1
    copy_db "$source_db" "$db"
    set +e
    odoo_bin shell -d "$db" --no-http --log-level="${3:-warn}" <"$2"
    rc=$?
    set -e
    drop_db "$db"
    return $rc
}
