# The two commands of the README. Both are idempotent: a second run reuses
# the virtualenv, the Odoo source cache and the database server.
.PHONY: demo test stop-db
demo:
	bash dev/demo.sh
test:
	bash dev/test.sh
stop-db:
	.venv/bin/python dev/pg.py --stop
