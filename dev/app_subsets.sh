#!/usr/bin/env bash
# Installs, upgrades, uninstalls and reinstalls agentic_ai next to subsets of
# the six Odoo apps its tools use (issue 4, point 4): `none` (base only),
# `sale` (sale_management only) and `all` (the apps of `make test`). On each,
# dev/subset_admin_edits.py changes tools as an administrator would before
# the upgrade; after it, dev/subset_tools_check.py checks that those values
# were kept and the definitions' own fields restored, that the tools of the
# missing apps are neither offered nor callable and that the others run;
# dev/subset_uninstall_check.py uninstalls the module and checks that nothing
# of it is left; then the module is installed again. A subset fails when a
# step exits non-zero or its Odoo log has an ERROR, a CRITICAL or a WARNING
# about agentic_ai (dev/log_check.py); Odoo's other warnings are shown as
# `ignored:`.
# Usage: dev/app_subsets.sh [none|sale|all]... (default: all three). Prints
# one line per subset, then `N passed, N failed`; exits non-zero on failure.
# Logs: .logs/subsets-<time>/<subset>-<step>.log (Odoo) and .out (output).
source "$(dirname "$0")/env.sh"
set +e  # a failing step fails its subset, not the run
declare -A SUBSET_APPS=([none]=base [sale]=sale_management [all]=$APPS)
RUN_LOGS=$ROOT/.logs/subsets-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN_LOGS"

odoo_step() {  # odoo_step STEP ODOO_BIN_ARGS...: fails on a non-zero exit or a bad log record
    step=$1
    shift
    local log=$RUN_LOGS/$name-$step.log rc=0
    odoo_bin "$@" --logfile="$log" >"${log%.log}.out" 2>&1 || rc=$?
    "$VENV/bin/python" "$ROOT/dev/log_check.py" "$log" || rc=$((rc ? rc : 1))
    if [ "$rc" != 0 ]; then
        tail -n 30 "${log%.log}.out" | sed 's/^/    | /'
    fi
    return "$rc"
}

note() { line+="${line:+, }$*"; }

run_subset() (  # run_subset NAME: prints the subset's line; exits non-zero when a step failed
    set -e
    name=$1 step=template started=$SECONDS line=""
    db=agentic_subset_$name
    # A failing step stops the subset, except the tools check: the uninstall
    # and reinstall are still worth knowing about.
    trap '[ $? = 0 ] || [ "$step" = done ] || note "$step FAILED, see $RUN_LOGS/$name-$step.*"
          echo "[subsets] $name: $line ($((SECONDS - started)) s)"' EXIT
    APPS=${SUBSET_APPS[$name]}
    ensure_template_db >"$RUN_LOGS/$name-template.out" 2>&1
    copy_db "$TEMPLATE_DB" "$db"
    odoo_step install -d "$db" -i agentic_ai --stop-after-init --http-port="$(free_port)"
    note "install ok"
    odoo_step edits shell -d "$db" --no-http <"$ROOT/dev/subset_admin_edits.py"
    odoo_step upgrade -d "$db" -u agentic_ai --stop-after-init --http-port="$(free_port)"
    note "upgrade ok"
    checked=ok
    odoo_step check shell -d "$db" --no-http <"$ROOT/dev/subset_tools_check.py" || checked=FAILED
    tools=$(sed -n 's/^offered=\([0-9]*\) hidden=\([0-9]*\).*/\1 tools offered, \2 hidden/p' "$RUN_LOGS/$name-check.out")
    note "${tools:-tools not counted}"
    [ "$checked" = ok ] || note "tools check FAILED, see $RUN_LOGS/$name-check.*"
    odoo_step uninstall shell -d "$db" --no-http <"$ROOT/dev/subset_uninstall_check.py"
    note "uninstall ok"
    odoo_step reinstall -d "$db" -i agentic_ai --stop-after-init --http-port="$(free_port)"
    note "reinstall ok"
    step=done
    [ "$checked" = ok ] || exit 1
    drop_db "$db"  # kept when something failed, to look into
)

echo "[subsets] logs: $RUN_LOGS" >&2
[ $# -gt 0 ] || set -- none sale all
passed=0 failed=0
for name in "$@"; do
    [ -n "${SUBSET_APPS[$name]:-}" ] || { echo "unknown subset $name (none, sale or all)" >&2; exit 2; }
    # Not inside `if`: bash would ignore run_subset's `set -e` there.
    run_subset "$name"
    if [ $? = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
