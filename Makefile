# The two commands of the README. Both are idempotent: a second run reuses
# the virtualenv, the Odoo source cache and the database server.
.PHONY: demo test stop-db verify-log
demo:
	bash dev/demo.sh
test:
	bash dev/test.sh
verify-log:  # make verify-log [DB=name] [HEADS=file]: exit 1 when the execution log chain is broken
	bash dev/verify_log.sh "$(DB)" $(if $(HEADS),--heads $(HEADS))
stop-db:  # pgserver warns when XDG_RUNTIME_DIR is unset (as dev/env.sh, the line is left out)
	bash -c '.venv/bin/python dev/pg.py --stop 2> >(grep -v -e RuntimeDirWarning -e user_runtime_dir >&2)'
