# Sourced by the dev scripts: runs the set-up and the database server, then
# defines `odoo_bin` and `ensure_template_db`.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
eval "$(bash "$ROOT/dev/setup.sh")"
eval "$("$VENV/bin/python" "$ROOT/dev/pg.py" 2> >(grep -v -e RuntimeDirWarning -e user_runtime_dir >&2))"
export PGHOST PGPORT PGUSER
# Odoo's ERP apps the demo and the tests run on (issue 2, point 2).
APPS=${AGENTIC_AI_APPS:-sale_management,purchase,stock,account,hr,hr_holidays,hr_attendance,mrp,crm}

odoo_bin() {  # odoo_bin [SUBCOMMAND] OPTIONS...
    local sub=()
    if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then sub=("$1"); shift; fi
    "$VENV/bin/python" "$ODOO/odoo-bin" "${sub[@]}" \
        --addons-path="$ODOO/addons,$ADDONS" \
        --db_host="$PGHOST" --db_port="$PGPORT" --db_user="$PGUSER" --http-interface=127.0.0.1 \
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
# built once per Odoo tree and app list; copies of it make each test run's
# fresh database in seconds instead of minutes.
ensure_template_db() {
    local key
    key=$( (echo "$APPS"; cat "$ODOO/odoo/release.py") | sha1sum | cut -c1-10)
    TEMPLATE_DB=agentic_tmpl_$key
    if ! db_exists "$TEMPLATE_DB"; then
        echo "[db] building $TEMPLATE_DB with demo data for $APPS (a few minutes, once)" >&2
        local tmp=${TEMPLATE_DB}_building
        db_exists "$tmp" && psql_q "DROP DATABASE \"$tmp\""
        odoo_bin -d "$tmp" -i "$APPS" --with-demo --stop-after-init \
            --log-level=warn --http-port="$(free_port)" >&2
        psql_q "ALTER DATABASE \"$tmp\" RENAME TO \"$TEMPLATE_DB\""
    fi
}

copy_db() {  # copy_db TEMPLATE NEW: drop NEW if present, then clone
    db_exists "$2" && psql_q "DROP DATABASE \"$2\" WITH (FORCE)"
    psql_q "CREATE DATABASE \"$2\" TEMPLATE \"$1\""
}

free_port() { "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
