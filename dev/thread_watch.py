"""What the real-server checks read of conversations straight from PostgreSQL
(dev/connections_check.py, dev/queue_job_check.py)."""
from __future__ import annotations

import time
from collections import Counter

import psycopg2


def wait_until_ended(db: str, ids: list[int], timeout: float) -> tuple[int, Counter]:
    """Sample the threads ``ids`` of ``db`` every 0.1 s until each one ended
    (``completed``, ``error`` or ``interrupted``, nothing left queued) or
    ``timeout`` seconds passed. Returns the most of them ``executing`` at
    once, and a Counter of ``(state, assistant rows, user rows)`` per thread."""
    most, deadline = 0, time.monotonic() + timeout
    with psycopg2.connect(dbname=db) as conn:
        conn.autocommit = True
        with conn.cursor() as cur:
            while time.monotonic() < deadline:
                cur.execute("SELECT count(*) FILTER (WHERE state = 'executing'), count(*) FILTER (WHERE state IN "
                            "('completed', 'error', 'interrupted') AND pending_message IS NULL) FROM "
                            "agentic_ai_thread WHERE id = ANY(%s)", [ids])
                executing, ended = cur.fetchone()
                most = max(most, executing)
                if ended == len(ids):
                    break
                time.sleep(0.1)
            cur.execute("SELECT t.state, count(m.id) FILTER (WHERE m.role = 'assistant'), count(m.id) FILTER "
                        "(WHERE m.role = 'user') FROM agentic_ai_thread t LEFT JOIN agentic_ai_thread_message m "
                        "ON m.thread_id = t.id WHERE t.id = ANY(%s) GROUP BY t.id", [ids])
            return most, Counter(cur.fetchall())
