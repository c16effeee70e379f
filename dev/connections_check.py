"""Many streamed runs at once on Odoo's gevent server hold database
connections only while they work (issue 26 point 2), on a real Odoo server
(``--workers=2`` and its gevent process), the real PostgreSQL of dev/env.sh
(``max_connections`` 100) and the scripted LLM server in this process.

``CHECK_CHATS`` conversations (200) of ``CHECK_USERS`` users (20) are
streamed at once through ``/agentic_ai/chat/stream`` on the gevent port,
the way the README's proxy block sends them. Each run: the model asks for
one ``odoo_search_read`` after ``CHECK_MODEL_DELAY`` seconds (1.0), then
streams a 40-word answer, a word every 50 ms. Meanwhile this process
samples ``pg_stat_activity`` every 0.1 s.

Passes when every run ends ``completed`` with exactly one answer (in the
stream and in the database), no ``error`` event came, and the server's
sessions never exceeded what PostgreSQL allows. Prints first-token and
completion p50/p95, the most sessions the server had open and the most
that were working at once (``active`` or ``idle in transaction``), then
``1 passed, 0 failed`` or the reason and ``0 passed, 1 failed``.

Usage: ``python dev/connections_check.py DB`` with dev/env.sh's environment
(``bash dev/connections_check.sh`` makes the database, a copy of the test
database, and drops it). The server's log is ``.logs/connections-<time>.log``."""
from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import psycopg2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.first_token import sse_events  # noqa: E402 - after the path is set
from dev.odoo_process import OdooServer, odoo_shell  # noqa: E402
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402

CHATS = int(os.environ.get("CHECK_CHATS", "200"))
USERS = int(os.environ.get("CHECK_USERS", "20"))
MODEL_DELAY = float(os.environ.get("CHECK_MODEL_DELAY", "1.0"))
WORDS = 40
CHUNK_DELAY = 0.05
SERVER_OPTIONS = ("--workers=2", f"--db_maxconn_gevent={os.environ.get('CHECK_GEVENT_MAXCONN', '64')}")
STREAM_TIMEOUT = 300.0
SPAWN_GAP = 0.01
ANSWER = " ".join(f"word{n}" for n in range(WORDS))


class CheckFailed(Exception):
    """What the check found wrong."""


def step(text: str) -> None:
    print(f"[connections] {text}", flush=True)


def last_role(role: str):
    return lambda request: (request.get("messages") or [{}])[-1].get("role") == role


def script(scenario: Scenario) -> None:
    """Standing rules: a user's message gets one read; its result gets the streamed answer."""
    scenario.add({"tool_calls": [{"name": "odoo_search_read", "arguments": {
        "model": "res.partner", "fields": ["name"], "limit": 3}}], "delay": MODEL_DELAY},
        last_role("user"), uses=None)
    scenario.add({"content": ANSWER, "chunk_delay": CHUNK_DELAY, "delay": MODEL_DELAY / 2},
                 last_role("tool"), uses=None)


class Sampler:
    """``pg_stat_activity`` of the server's database, every 0.1 s, from a session of this process."""

    def __init__(self, db: str):
        self.db, self.stop = db, threading.Event()
        self.most_open = self.most_working = self.samples = 0
        self.failure = ""
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        try:
            self.sample()
        except Exception as exc:  # noqa: BLE001 - said by the check
            self.failure = f"{type(exc).__name__}: {exc}"

    def sample(self) -> None:
        conn = psycopg2.connect(dbname=self.db)
        conn.autocommit = True
        with conn.cursor() as cur:
            while not self.stop.wait(0.1):
                self.samples += 1
                cur.execute("SELECT count(*), count(*) FILTER (WHERE state IN ('active', 'idle in transaction')) "
                            "FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [self.db])
                opened, working = cur.fetchone()
                self.most_open, self.most_working = max(self.most_open, opened), max(self.most_working, working)
        conn.close()


def stream(url: str, cookies, thread_id: int, out: dict) -> None:
    """One streamed turn; ``out`` gets its first-token and completion seconds, events and end."""
    started = time.monotonic()
    events, tokens = Counter(), []
    try:
        with httpx.Client(base_url=url, cookies=cookies, timeout=STREAM_TIMEOUT) as client, client.stream(
                "POST", "/agentic_ai/chat/stream", json={"thread_id": thread_id, "message": "Which partners?"},
                headers={"Content-Type": "application/json"}) as response:
            if response.status_code != 200:
                out["failure"] = f"HTTP {response.status_code}: {response.read()[:300]!r}"
                return
            for name, data in sse_events(response):
                events[name] += 1
                out.setdefault(f"at_{name}", time.monotonic() - started)
                if name == "token":
                    out.setdefault("first", time.monotonic() - started)
                    tokens.append(json.loads(data).get("text", ""))
                elif name == "error":
                    out["error"] = data[:300]
                elif name == "done":
                    out["done"] = json.loads(data)
    except httpx.HTTPError as exc:
        out["failure"] = f"{type(exc).__name__}: {exc}"
    out["total"] = time.monotonic() - started
    out["events"], out["text"] = events, "".join(tokens)


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def run(db: str) -> None:
    scenario = Scenario()
    script(scenario)
    llm = ScriptedLLMServer(scenario).start()
    server = None
    try:
        prep = json.loads(odoo_shell(db, (ROOT / "dev" / "connections_check_prep.py").read_text(), "PREP", {
            "CHECK_LLM_URL": llm.base_url, "CHECK_USERS": str(USERS), "CHECK_CHATS": str(CHATS)}))
        (ROOT / ".logs").mkdir(exist_ok=True)
        server = OdooServer(db, SERVER_OPTIONS, str(ROOT / ".logs" / f"connections-{time.strftime('%Y%m%d-%H%M%S')}"
                                                    ".log")).start()
        server.wait_for_gevent()
        with psycopg2.connect(dbname=db) as conn, conn.cursor() as cur:
            cur.execute("SELECT current_setting('max_connections')::int")
            max_connections = cur.fetchone()[0]
        jobs = []
        for user in prep["users"]:
            client = server.login(user["login"], user["password"], timeout=60)
            cookies = client.cookies
            client.close()
            jobs += [(thread_id, cookies) for thread_id in user["threads"]]
        warm = {}  # the gevent process loads the database's registry on its first request: not measured
        stream(server.gevent_url, jobs[-1][1], prep["warmup"], warm)
        if (warm.get("done") or {}).get("state") != "completed":
            raise CheckFailed(f"the warm-up chat did not complete: {warm}")
        step(f"server up ({' '.join(SERVER_OPTIONS)}, gevent port {server.gevent_port}); {len(jobs)} chats of "
             f"{len(prep['users'])} users; PostgreSQL max_connections {max_connections}")
        sampler = Sampler(db)
        sampler.thread.start()
        results = [{} for _ in jobs]
        workers = [threading.Thread(target=stream, args=(server.gevent_url, cookies, thread_id, out), daemon=True)
                   for (thread_id, cookies), out in zip(jobs, results, strict=True)]
        started = time.monotonic()
        for worker in workers:  # as a load tool spawns its users: 100 new chats a second
            worker.start()
            time.sleep(SPAWN_GAP)
        for worker in workers:
            worker.join(STREAM_TIMEOUT + 30)
        wall = time.monotonic() - started
        sampler.stop.set()
        sampler.thread.join(5)
        check(db, jobs, results, wall, sampler, max_connections)
    finally:
        if server:
            server.stop()
        llm.stop()


def check(db, jobs, results, wall, sampler, max_connections) -> None:
    failures = [f"conversation {thread_id}: {out.get('failure') or out.get('error')}"
                for (thread_id, _c), out in zip(jobs, results, strict=True) if out.get("failure") or out.get("error")]
    ends = Counter((out.get("done") or {}).get("state") for out in results)
    wrong_text = sum(out.get("text") != ANSWER for out in results)
    with psycopg2.connect(dbname=db) as conn, conn.cursor() as cur:
        cur.execute("SELECT t.state, count(m.id) FILTER (WHERE m.role = 'assistant') FROM agentic_ai_thread t "
                    "LEFT JOIN agentic_ai_thread_message m ON m.thread_id = t.id WHERE t.id = ANY(%s) GROUP BY t.id",
                    [[thread_id for thread_id, _c in jobs]])
        stored = Counter(cur.fetchall())
    firsts = [out["first"] for out in results if "first" in out]
    totals = [out["total"] for out in results if "total" in out]
    step(f"{ends['completed']}/{len(jobs)} completed in {wall:.1f} s; first token p50 {pct(firsts, 50):.2f} s, "
         f"p95 {pct(firsts, 95):.2f} s; completion p50 {pct(totals, 50):.2f} s, p95 {pct(totals, 95):.2f} s")
    marks = ["at_message", "at_tool_call", "at_tool_result", "at_token", "at_done"]
    step("p50 seconds to the first " + ", ".join(
        f"{mark[3:]} {statistics.median([out[mark] for out in results if mark in out] or [0]):.2f}"
        for mark in marks))
    step(f"the server's sessions: at most {sampler.most_open} open, {sampler.most_working} working at once "
         f"({sampler.samples} samples{', ' + sampler.failure if sampler.failure else ''})")
    if failures:
        raise CheckFailed(f"{len(failures)} runs failed, e.g. {failures[:3]}")
    if ends != Counter({"completed": len(jobs)}) or wrong_text:
        raise CheckFailed(f"runs ended {dict(ends)}, {wrong_text} with another answer than the model's")
    if stored != Counter({("completed", 1): len(jobs)}):
        raise CheckFailed(f"in the database (state, answers): {dict(stored)}")
    if sampler.most_open >= max_connections:
        raise CheckFailed(f"{sampler.most_open} sessions: PostgreSQL's max_connections is {max_connections}")


def main() -> int:
    started, failure = time.monotonic(), None
    try:
        run(sys.argv[1])
    except CheckFailed as found:
        failure = str(found)
    except Exception as error:  # noqa: BLE001 - any error of the set-up fails the check, saying why
        failure = f"{type(error).__name__}: {error}"
    step(f"{'FAILED: ' + failure if failure else 'passed'} ({time.monotonic() - started:.1f} s)")
    print("0 passed, 1 failed" if failure else "1 passed, 0 failed", flush=True)
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
