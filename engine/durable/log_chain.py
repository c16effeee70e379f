"""Hash chain of the execution log (spec 000 §3.7, §7; issue 9, point 7).

Each company's rows form one linear chain: every row gets a ``chain_seq``
(1, 2, 3… per company, so a missing row leaves a gap) and a ``chain_hash`` =
sha256 of the previous row's hash, its own seq and the digest of its content
(``link_hash``). The content digest is computed by PostgreSQL from the
columns in ``HASHED_COLUMNS`` (``content_digest_sql``), the same expression
when sealing and when verifying, so the bytes hashed never depend on how
Python reads a timestamp or an amount back.

When rows are chained ("sealed"), and why not in the inserting transaction:
a run is one long transaction (LLM calls included) and Odoo runs it in
REPEATABLE READ. Chaining at its commit (a precommit hook) would read the
company's chain head from a snapshot taken when the run started, missing
rows that other runs chained meanwhile: the chain would fork, or the unique
index on (company, seq) would fail the whole run at commit. Odoo also runs
precommit hooks at every flushing savepoint (each tool call), so the lock
would be taken mid-run and held to its end. Instead ``log_many`` inserts
rows unsealed and registers a post-commit hook; after the run's commit,
``seal_committed`` opens its own short READ COMMITTED transaction, takes the
company's advisory lock (``LOCK_CLASS``, company id), reads the head (fresh,
after the lock), chains every committed unsealed row of the company in id
order, and commits. The lock is held for that short transaction only; runs
never wait for each other: when another transaction holds the lock (it is
sealing), the run leaves the company to its process's ``sealer``, one
thread that waits for the lock on a connection of its own and chains what
was committed meanwhile. Rows left unsealed (a crash between the two
commits) are chained by the company's next seal; ``verify`` counts them.

Sealing in a transaction that may have an old snapshot (``seal`` called
from the purge cron, a migration or a test) is safe too: it works in a
savepoint and gives up when the unique index reports that the head moved.

Concurrency cannot be exercised in a TransactionCase (one transaction);
the guarantees above rest on the advisory lock, READ COMMITTED and the
unique index ``(chain_company_id, chain_seq)``.

Each seal also records the company's head (seq, hash, row id) in a table
of its own (``HEAD_TABLE``, issue 23 point 6), and a seal goes on only
from that head: rows whose chain fields were cleared (to have them chained
again with edited content) or the newest rows deleted leave the chain
shorter than its recorded head, so the seal refuses to chain anything of
that company and ``verify`` reports it, with the unsealed rows below the
head. The purge verifies what it deletes and records a broken segment in
its checkpoint, which ``verify`` reports from then on.

What the chain proves: a row changed, deleted or re-numbered through SQL,
or its chain fields cleared, is found by ``verify``. Someone able to
rewrite the table, the head table and every later hash is only caught by
comparing the head (seq, hash) that ``verify`` reports with a copy kept
outside the database (``verify(..., expected=...)``; ``make verify-log
HEADS=file``).
"""
from __future__ import annotations

import hashlib
import logging
import threading

import psycopg2.errors

from odoo import api
from odoo.sql_db import Cursor
from odoo.tools import SQL

_logger = logging.getLogger(__name__)

TABLE = "agentic_ai_execution_log"
CHECKPOINT_TABLE = "agentic_ai_execution_log_checkpoint"
HEAD_TABLE = "agentic_ai_execution_log_head"  # per company: the head its last seal left (not an Odoo model)
LOCK_CLASS = 0x41474C47  # first key of pg_advisory_xact_lock(class, company id)
GENESIS = "0" * 64  # the "previous hash" of a company's first row
BATCH = 5000  # rows read per query when verifying
STALE_MINUTES = 10  # an unsealed row older than this is reported by verify

# The content a row's hash covers, in this order; changing it changes every
# digest, so it needs a new chain version (as CHAIN_VERSION below), not an edit. The many2one columns
# (thread_id, agent_id, user_id, provider_id, company_id) are nulled by
# PostgreSQL when their record is deleted: the hash covers their values as
# logged (logged_*_id, chain_company_id), and ``verify`` checks that each
# many2one still holds its logged value, or NULL when that record is gone.
HASHED_COLUMNS = (
    "id", "chain_company_id", "create_date", "action_type", "level",
    "logged_thread_id", "logged_agent_id", "logged_user_id", "logged_provider_id", "logged_run_as_user_id",
    "tool_name", "tool_call_id", "model_name", "record_ids", "llm_model",
    "input_data", "output_data", "before_snapshot", "success", "error_message",
    "duration_ms", "input_tokens", "output_tokens", "cost",
)
# Chain version 2 (issue 14): rows logged with ``chain_version`` 2 also
# cover how their usage splits (cache, reasoning) and whether it was
# estimated. Rows logged before keep their version-1 digest (their
# ``chain_version`` is NULL); changing a row's version changes its digest.
CHAIN_VERSION = 2
HASHED_COLUMNS_V2 = HASHED_COLUMNS + (
    "chain_version", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "usage_estimated",
    "estimated_figures",
)
# many2one column -> (column holding its logged value, table it points to)
REFERENCES = {
    "thread_id": ("logged_thread_id", "agentic_ai_thread"),
    "agent_id": ("logged_agent_id", "agentic_ai_agent"),
    "user_id": ("logged_user_id", "res_users"),
    "provider_id": ("logged_provider_id", "agentic_ai_llm_provider"),
    "run_as_user_id": ("logged_run_as_user_id", "res_users"),
    "company_id": ("chain_company_id", "res_company"),
}


def content_digest_sql() -> SQL:
    """SQL expression: hex sha256 of a row's hashed columns as a JSON array
    (PostgreSQL's own text of each value): ``HASHED_COLUMNS_V2`` for a row
    of ``chain_version`` 2, ``HASHED_COLUMNS`` for an older row."""
    def digest(names):
        columns = SQL(", ").join(SQL.identifier(TABLE, column) for column in names)
        return SQL("encode(sha256(convert_to(json_build_array(%s)::text, 'UTF8')), 'hex')", columns)
    return SQL("CASE WHEN %s IS NOT DISTINCT FROM %s THEN %s ELSE %s END", SQL.identifier(TABLE, "chain_version"),
               CHAIN_VERSION, digest(HASHED_COLUMNS_V2), digest(HASHED_COLUMNS))


def link_hash(previous: str, seq: int, digest: str) -> str:
    """The ``chain_hash`` of row number ``seq`` whose content digest is
    ``digest``, after a row (or checkpoint) of hash ``previous``: hex sha256."""
    return hashlib.sha256(f"{previous}:{seq}:{digest}".encode()).hexdigest()


def lock_company(cr, company_id: int) -> None:
    """Wait for the company's chain lock, held until the transaction ends."""
    cr.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_CLASS, company_id])


def try_lock_company(cr, company_id: int) -> bool:
    """Take the company's chain lock (held until the transaction ends)
    unless another transaction holds it: whether it was taken."""
    cr.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [LOCK_CLASS, company_id])
    return cr.fetchone()[0]


def chain_start(cr, company_id: int) -> tuple[int, str]:
    """``(seq, hash)`` the company's chain starts from: its latest
    checkpoint, or ``(0, GENESIS)``."""
    cr.execute(SQL("SELECT last_seq, last_hash FROM %s WHERE company_id = %s ORDER BY last_seq DESC LIMIT 1",
                   SQL.identifier(CHECKPOINT_TABLE), company_id))
    return cr.fetchone() or (0, GENESIS)


def ensure_head_table(cr) -> None:
    """Create ``HEAD_TABLE`` when missing and record the head of every
    company whose chain has none recorded yet (an upgrade from a version
    without it). Called by the log model's ``init()``."""
    cr.execute(SQL("CREATE TABLE IF NOT EXISTS %s (company_id integer PRIMARY KEY, last_seq integer NOT NULL, "
                   "last_hash varchar NOT NULL, last_id integer, sealed_at timestamp without time zone "
                   "NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'))", SQL.identifier(HEAD_TABLE)))
    cr.execute(SQL("SELECT DISTINCT chain_company_id FROM %s WHERE chain_seq IS NOT NULL AND chain_company_id "
                   "NOT IN (SELECT company_id FROM %s)", SQL.identifier(TABLE), SQL.identifier(HEAD_TABLE)))
    for (company_id,) in cr.fetchall():
        seq, hash_ = chain_head(cr, company_id)
        _record_head(cr, company_id, seq, hash_, None)


def drop_head_table(cr) -> None:
    """At uninstall (hooks.py): ``HEAD_TABLE`` is not an Odoo model's table."""
    cr.execute(SQL("DROP TABLE IF EXISTS %s", SQL.identifier(HEAD_TABLE)))


def recorded_head(cr, company_id: int) -> tuple[int, str] | None:
    """``(seq, hash)`` the company's last seal recorded, or None."""
    cr.execute(SQL("SELECT last_seq, last_hash FROM %s WHERE company_id = %s", SQL.identifier(HEAD_TABLE),
                   company_id))
    return cr.fetchone()


def _record_head(cr, company_id: int, seq: int, hash_: str, row_id: int | None) -> None:
    cr.execute(SQL("INSERT INTO %s (company_id, last_seq, last_hash, last_id) VALUES (%s, %s, %s, %s) "
                   "ON CONFLICT (company_id) DO UPDATE SET last_seq = EXCLUDED.last_seq, last_hash = "
                   "EXCLUDED.last_hash, last_id = EXCLUDED.last_id, sealed_at = now() AT TIME ZONE 'UTC'",
                   SQL.identifier(HEAD_TABLE), company_id, seq, hash_, row_id))


def chain_head(cr, company_id: int) -> tuple[int, str]:
    """``(seq, hash)`` of the company's last sealed row, or where its chain
    starts when no sealed row is left."""
    start = chain_start(cr, company_id)
    cr.execute(SQL("SELECT chain_seq, chain_hash FROM %s WHERE chain_company_id = %s AND chain_seq IS NOT NULL "
                   "ORDER BY chain_seq DESC LIMIT 1", SQL.identifier(TABLE), company_id))
    head = cr.fetchone()
    return head if head and head[0] > start[0] else start


def _cut_short(cr, company_id: int, head: tuple[int, str]) -> str:
    """Why the chain ending at ``head`` is not the one the last seal
    recorded (its end deleted, or its chain fields cleared), or ``""``."""
    recorded = recorded_head(cr, company_id)
    if recorded is None or tuple(recorded) == tuple(head):
        return ""
    if recorded[0] > head[0]:
        return (f"the chain was sealed up to number {recorded[0]} but ends at {head[0]}: rows at its end were "
                "deleted or had their chain fields cleared")
    if recorded[0] == head[0]:
        return f"the chain's last row (number {head[0]}) is not the one its last seal recorded: it was rewritten"
    return ""  # ahead of the record: a seal whose record was rolled back with it cannot happen; a lowered record


def seal(env, company_ids=None, busy: set | None = None) -> int:
    """Chain the unsealed rows of ``company_ids`` (every company with one
    when None) that this transaction sees, in id order, after each
    company's head; returns how many rows were sealed. Takes each company's
    lock (until the transaction ends), waiting for it; with ``busy`` (a
    set), a company whose lock another transaction holds is not waited
    for but added to ``busy``. A company whose head moved since this
    transaction's snapshot (another seal committed meanwhile) is left to
    the next seal."""
    cr = env.cr
    if company_ids is None:
        cr.execute(SQL("SELECT DISTINCT chain_company_id FROM %s WHERE chain_seq IS NULL", SQL.identifier(TABLE)))
        company_ids = [company_id for (company_id,) in cr.fetchall()]
    sealed = 0
    for company_id in sorted(set(company_ids)):  # always the same order: no deadlock between two seals
        if busy is None:
            lock_company(cr, company_id)
        elif not try_lock_company(cr, company_id):
            busy.add(company_id)
            continue
        try:
            with cr.savepoint(flush=False):
                sealed += _seal_company(cr, company_id)
        except (psycopg2.errors.UniqueViolation, psycopg2.errors.SerializationFailure):
            _logger.info("Execution log chain of company %s moved meanwhile; its next seal chains the rows",
                         company_id)
    if sealed:
        env["agentic.ai.execution.log"].invalidate_model(["chain_seq", "chain_hash"])
    return sealed


def _seal_company(cr, company_id: int) -> int:
    cr.execute(SQL("SELECT id, %s FROM %s WHERE chain_company_id = %s AND chain_seq IS NULL ORDER BY id",
                   content_digest_sql(), SQL.identifier(TABLE), company_id))
    rows = cr.fetchall()
    if not rows:
        return 0
    seq, previous = chain_head(cr, company_id)
    short = _cut_short(cr, company_id, (seq, previous))
    if short:  # never re-chain over a cut: the rows stay unsealed and verify reports it
        _logger.warning("Execution log chain of company %s not sealed: %s", company_id, short)
        return 0
    values = []
    for row_id, digest in rows:
        seq += 1
        previous = link_hash(previous, seq, digest)
        values.append(SQL("(%s, %s, %s)", row_id, seq, previous))
    cr.execute(SQL("UPDATE %s SET chain_seq = v.seq, chain_hash = v.hash FROM (VALUES %s) AS v(id, seq, hash) "
                   "WHERE %s.id = v.id", SQL.identifier(TABLE), SQL(", ").join(values), SQL.identifier(TABLE)))
    _record_head(cr, company_id, seq, previous, rows[-1][0])
    return len(rows)


def seal_committed(registry, company_ids, wait: bool = False) -> None:
    """Post-commit hook of ``log_many``: seal ``company_ids`` in a new short
    transaction that sees every committed row (READ COMMITTED, so the head
    is read after the lock is granted). A failure is logged, never raised.

    A company that another transaction is sealing right now is not waited
    for (``wait`` False, on a connection of Odoo's own): this process's
    ``sealer`` chains it as soon as that seal commits, on a connection of
    its own, so that a run's end never queues behind the seals of every run
    that ended with it, holding its connection meanwhile (issue 26 point
    5: 200 runs ending together waited in turn for one lock); a seal that
    failed is handed to the sealer too. What the sealer could not chain (it
    failed, or its process stopped first) is chained by the company's next
    seal, at the latest by the queue's cron (``seal_left``, every minute).
    A test's cursor shares the test's transaction: it seals there and then."""
    if not company_ids:  # withdrawn by a run that seals at its last commit (``_defer_seal``)
        return
    busy, hand_off = set(), False  # hand_off: what is not sealed here goes to the sealer
    try:
        with registry.cursor() as cr:
            if isinstance(cr, Cursor):  # a test cursor shares the test's transaction instead
                cr.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
                hand_off = not wait
            seal(api.Environment(cr, api.SUPERUSER_ID, {}), company_ids, busy=busy if hand_off else None)
    except Exception:
        _logger.exception("Could not seal the execution log chain of companies %s; %s", sorted(company_ids),
                          "this process's sealer tries again" if hand_off else "the next seal will")
        busy = set(company_ids) if hand_off else set()
    if busy:
        sealer.ask(registry, busy)


def seal_left(env, minutes: int = 1) -> None:
    """Seal the companies whose rows were left unsealed for more than
    ``minutes`` (a sealer that failed, a process that stopped before its
    sealer ran, a crash between a run's commit and its seal), each in a
    transaction of its own, waiting for its lock: the queue's cron calls
    this every minute, so a quiet company's chain never stays unsealed
    long enough for ``verify`` to report it (``STALE_MINUTES``). One short
    query on the partial index of unsealed rows when there is nothing to do."""
    env.cr.execute(SQL("SELECT DISTINCT chain_company_id FROM %s WHERE chain_seq IS NULL AND create_date < "
                       "(now() AT TIME ZONE 'UTC') - make_interval(mins => %s)", SQL.identifier(TABLE), minutes))
    for (company_id,) in env.cr.fetchall():
        seal_committed(env.registry, {company_id}, wait=True)


class Sealer:
    """Seals asked for while another transaction held the company's lock,
    chained by one thread of this process (a greenlet on the gevent
    server), one company per transaction, waiting for its lock: at most one
    connection of the process waits for a chain lock, it never holds one
    company's lock while it waits for another's, and the runs that ask for
    the same company while it works are served by its next round. A
    process that stops first leaves the rows to the company's next seal, as
    a crash does (``seal_left``)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, int], object] = {}  # (database name, company id): the database's registry
        self._worker: threading.Thread | None = None

    def ask(self, registry, company_ids) -> None:
        """Have ``company_ids`` of ``registry``'s database sealed soon."""
        with self._lock:
            for company_id in company_ids:
                self._pending[registry.db_name, company_id] = registry
            if self._worker is None or not self._worker.is_alive():  # a worker that died is replaced
                self._worker = threading.Thread(target=self._work, name="agentic_ai.log_chain.sealer", daemon=True)
                self._worker.start()

    def _work(self) -> None:
        me = threading.current_thread()
        try:
            while True:
                with self._lock:
                    if not self._pending:
                        return
                    (dbname, company_id), registry = self._pending.popitem()
                me.dbname = dbname  # for Odoo's log lines
                seal_committed(registry, {company_id}, wait=True)  # logs what fails: seal_left chains it later
        finally:
            with self._lock:
                if self._worker is me:
                    self._worker = None


sealer = Sealer()


def verify(cr, company_id: int, expected: tuple[int, str] | None = None) -> dict:
    """Check the company's chain from its latest checkpoint.

    Returns ``{company_id, ok, rows_checked, unsealed, checkpoint_seq,
    head: {seq, hash}, first_broken}`` where ``first_broken`` is None or
    ``{id, seq, reason}``, the row of lowest seq that is wrong: a gap before
    it (rows missing), a hash that does not match its content and the
    previous row's hash (content changed), or a many2one changed or
    cleared while its record still exists; else (``id`` None) a chain
    shorter than the head its last seal recorded (rows at its end deleted
    or their chain fields cleared), a segment the purge found broken, or a
    chain that no longer holds ``expected`` (a ``(seq, hash)`` kept outside
    the database). ``unsealed`` counts committed rows not chained yet (they
    prove nothing until sealed)."""
    start_seq, start_hash = chain_start(cr, company_id)
    seq, previous = start_seq, start_hash
    checked, broken = 0, None
    while broken is None:
        cr.execute(SQL("SELECT id, chain_seq, chain_hash, %s FROM %s WHERE chain_company_id = %s AND chain_seq > %s "
                       "ORDER BY chain_seq LIMIT %s", content_digest_sql(), SQL.identifier(TABLE), company_id, seq,
                       BATCH))
        rows = cr.fetchall()
        for row_id, row_seq, row_hash, digest in rows:
            checked += 1
            if row_seq != seq + 1:
                reason = (f"rows missing: chain_seq {seq + 1} to {row_seq - 1} not found"
                          if seq != start_seq else
                          f"chain link broken: the chain should go on from seq {seq} "
                          f"({'checkpoint' if start_seq else 'start'}), rows {seq + 1} to {row_seq - 1} not found")
                broken = {"id": row_id, "seq": row_seq, "reason": reason}
            elif link_hash(previous, row_seq, digest) != row_hash:
                broken = {"id": row_id, "seq": row_seq, "reason": (
                    "content changed: the hash does not match the row's content and the previous row's hash")}
            if broken:
                break
            seq, previous = row_seq, row_hash
        if len(rows) < BATCH:
            break
    reference = _first_wrong_reference(cr, company_id, start_seq)
    if reference and (broken is None or reference["seq"] < broken["seq"]):
        broken = reference
    cr.execute(SQL("SELECT count(*) FROM %s WHERE chain_company_id = %s AND chain_seq IS NULL",
                   SQL.identifier(TABLE), company_id))
    unsealed = cr.fetchone()[0]
    purged = _broken_when_purged(cr, company_id)
    if purged:
        broken = purged
    if broken is None:
        short = _cut_short(cr, company_id, (seq, previous))
        if short:
            below = f"; {unsealed} rows are unsealed below that head" if unsealed else ""
            broken = {"id": None, "seq": seq + 1, "reason": short + below}
    if broken is None and expected is not None:
        broken = _outside_head_mismatch(cr, company_id, expected, (seq, previous))
    if broken is None and unsealed:
        broken = _stale_unsealed(cr, company_id)
    return {"company_id": company_id, "ok": broken is None, "rows_checked": checked, "unsealed": unsealed,
            "checkpoint_seq": start_seq, "head": {"seq": seq, "hash": previous}, "first_broken": broken}


def _broken_when_purged(cr, company_id: int) -> dict | None:
    """The break the purge found in a segment it deleted (its checkpoint
    keeps it), the earliest one, or None."""
    cr.execute(SQL("SELECT broken_seq, broken_reason FROM %s WHERE company_id = %s AND broken_reason IS NOT NULL "
                   "ORDER BY last_seq LIMIT 1", SQL.identifier(CHECKPOINT_TABLE), company_id))
    row = cr.fetchone()
    if not row:
        return None
    return {"id": None, "seq": row[0], "reason": f"purged while broken (the purge's checkpoint keeps it): {row[1]}"}


def _outside_head_mismatch(cr, company_id: int, expected: tuple[int, str], head: tuple[int, str]) -> dict | None:
    """Whether the chain still holds ``expected`` (seq, hash), a head kept
    outside the database: the row of that number has that hash (or the
    checkpoint that replaced it), and the chain reaches that far."""
    seq, hash_ = int(expected[0]), str(expected[1])
    if seq > head[0]:
        return {"id": None, "seq": seq, "reason": (
            f"the chain ends at number {head[0]}, before the head kept outside ({seq}): rows were removed")}
    cr.execute(SQL("SELECT id, chain_hash FROM %s WHERE chain_company_id = %s AND chain_seq = %s",
                   SQL.identifier(TABLE), company_id, seq))
    row = cr.fetchone()
    if row is None:  # purged since: only a checkpoint at that very number keeps its hash
        cr.execute(SQL("SELECT last_hash FROM %s WHERE company_id = %s AND last_seq = %s",
                       SQL.identifier(CHECKPOINT_TABLE), company_id, seq))
        checkpoint = cr.fetchone()
        if checkpoint is None:  # a checkpoint is a row of the database too: an old head proves nothing then
            return {"id": None, "seq": seq, "reason": (
                f"row number {seq} of the head kept outside is gone (purged, or deleted with a forged checkpoint): "
                "it cannot be checked; keep a head taken after the last purge")}
        row = (None, checkpoint[0])
    if row[1] != hash_:
        return {"id": row[0], "seq": seq, "reason": (
            f"row number {seq} no longer has the hash kept outside ({hash_[:12]}…): the chain was rewritten")}
    return None


def _stale_unsealed(cr, company_id: int) -> dict | None:
    """The oldest row left unsealed more than STALE_MINUTES after it was
    written: rows are chained within seconds of their commit, so its chain
    fields were cleared (to have it chained again with other content) or
    sealing keeps failing; either way, someone must look."""
    cr.execute(SQL("SELECT id, create_date FROM %s WHERE chain_company_id = %s AND chain_seq IS NULL "
                   "AND create_date < (now() AT TIME ZONE 'UTC') - make_interval(mins => %s) ORDER BY id LIMIT 1",
                   SQL.identifier(TABLE), company_id, STALE_MINUTES))
    row = cr.fetchone()
    if not row:
        return None
    return {"id": row[0], "seq": None, "reason": (
        f"row written at {row[1]} UTC is still not chained after {STALE_MINUTES} minutes: its chain fields were "
        "cleared, or chaining keeps failing (see Odoo's log)")}


def _first_wrong_reference(cr, company_id: int, after_seq: int) -> dict | None:
    """The sealed row of lowest seq (above ``after_seq``) with a many2one
    that is neither its logged value nor NULL because the record is gone."""
    log = SQL.identifier(TABLE)
    found = []
    for column, (logged, target) in REFERENCES.items():
        current, kept = SQL.identifier(TABLE, column), SQL.identifier(TABLE, logged)
        cr.execute(SQL(
            "SELECT id, chain_seq, %s, %s FROM %s WHERE chain_company_id = %s AND chain_seq > %s AND "
            "((%s IS NOT NULL AND %s IS DISTINCT FROM %s) OR "
            " (%s IS NULL AND %s IS NOT NULL AND EXISTS (SELECT 1 FROM %s t WHERE t.id = %s))) "
            "ORDER BY chain_seq LIMIT 1",
            current, kept, log, company_id, after_seq, current, current, kept, current, kept,
            SQL.identifier(target), kept))
        row = cr.fetchone()
        if row:
            row_id, row_seq, value, logged_value = row
            what = "cleared" if value is None else f"changed to {value}"
            found.append({"id": row_id, "seq": row_seq,
                          "reason": f"reference changed: {column} {what}, logged as {logged_value}"})
    return min(found, key=lambda broken: broken["seq"], default=None)
