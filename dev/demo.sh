#!/usr/bin/env bash
# `make demo`: Odoo 19 with demo data for the ERP apps and agentic_ai, the
# General ERP Assistant configured, served on http://localhost:8069 (admin/admin).
source "$(dirname "$0")/env.sh"
ensure_template_db
DB=${AGENTIC_AI_DEMO_DB:-agentic_demo}
PORT=${AGENTIC_AI_HTTP_PORT:-8069}
if ! db_exists "$DB" || [ ! -d "$DATA_DIR/filestore/$DB" ]; then
    echo "[demo] creating $DB" >&2
    copy_db "$TEMPLATE_DB" "$DB"
    odoo_bin -d "$DB" -i agentic_ai --stop-after-init --log-level=warn --http-port="$(free_port)"
else
    odoo_bin -d "$DB" -u agentic_ai --stop-after-init --log-level=warn --http-port="$(free_port)"
fi

if [ -z "${OPENAI_API_KEY:-}" ] && [ -z "${AGENTIC_AI_LLM_BASE_URL:-}" ]; then
    SCRIPTED_PORT=${AGENTIC_AI_SCRIPTED_PORT:-8901}
    (cd "$ROOT" && exec "$VENV/bin/python" -m dev.scripted_llm --port "$SCRIPTED_PORT" --scenario demo) &
    SCRIPTED_PID=$!
    trap 'kill $SCRIPTED_PID 2>/dev/null' EXIT
    export AGENTIC_AI_SCRIPTED_URL=http://127.0.0.1:$SCRIPTED_PORT/v1
fi
odoo_bin shell -d "$DB" --no-http < "$ROOT/dev/demo_configure.py" 2>&1 | grep '^\[demo\]' >&2 || true
echo "[demo] Odoo on http://localhost:$PORT  (login admin / admin; menu Agentic AI > Configuration > Agents > General ERP Assistant > Chat)" >&2
# A slow local model may need minutes per request: Odoo's default limit_time_real (120 s) restarts the server when
# a request passes it (issue 24 point 3); the agent keeps its own calls below this limit.
odoo_bin -d "$DB" --http-port="$PORT" --log-level=info --limit-time-real="${AGENTIC_AI_LIMIT_TIME_REAL:-600}"
