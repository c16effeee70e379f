"""A whole company at once, measured with Locust (issue 26 point 5), in one
run, on a real Odoo (``--workers=4`` and its gevent process, the cron on)
and the scripted LLM server in this process.

Each chat streams one message through ``/agentic_ai/chat/stream`` on the
gevent port, the way the README's proxy block sends it; the model asks for
one ``odoo_search_read`` after 1 s, then streams a 40-word answer, a word
every 50 ms (0.5 s after the tool's result), as real providers stream.
Locust (bench/locustfile.py, headless) spawns the chats of ``BENCH_USERS``
(20) Odoo users, 100 a second, at each level of ``BENCH_LEVELS``
(``20,50,200``), and reports:

- per level: chats completed with exactly one answer (streamed and stored),
  first token and completion p50/p95, the run's wall time;
- a plain ``res.partner`` ``search_read`` by another user on the HTTP
  workers: its quiet p95, and its p95 during the last level (the baseline
  of the ratio is the quiet p95);
- two Odoo servers on one database (the second ``--workers=2``, its own
  cron) sharing ``BENCH_QUEUED`` (400) messages sent with ``send_async``,
  half to each: every message runs exactly once (one user message and one
  answer per conversation), and the time all took.

Run with ``bash bench/load.sh`` after ``make test`` (it uses, and changes,
the test database, ``AGENTIC_AI_TEST_DB`` or ``agentic_test``); it makes
Locust's virtualenv the first time.

The share of the chats' time spent waiting, per level: the seconds each
run waited for a database connection and for its conversation's row lock
(the ``done`` event's ``wait_seconds``), plus the seconds requests of the
gevent process waited for its pool before their route ran (the server's
warnings of engine/durable/pool_wait.py, logged 10 s after a period's
first wait), against the sum of the chats' completion times. There is no
worker to wait for on the gevent server: a request is a greenlet. Beside
it, the CPU the gevent process used during the level, as a share of one
core over the level's wall time, and the share of the whole machine's CPU
that was busy (Locust and the scripted model run on it too): near 100 %,
the machine is what the runs queue for, and the runs' waits for a
connection (at the gate of engine/durable/step_connection.py, which lets a
quarter of the pool work at once) are that queue. The waits are split as
engine/durable/wait_time.py reads them: with the gevent process's core idle
(the connection, the lock or the database itself: the figure point 5
bounds), with it busy running other work, and with it waiting for one of
the machine's cores (its loop ready to run while the machine ran other
processes).
"""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dev.odoo_process import OdooServer, odoo_shell, rpc, sse_events  # noqa: E402 - after the path is set
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402
from dev.thread_watch import wait_until_ended  # noqa: E402

DB = os.environ.get("AGENTIC_AI_TEST_DB", "agentic_test")
LEVELS = [int(n) for n in os.environ.get("BENCH_LEVELS", "20,50,200").split(",")]
USERS = int(os.environ.get("BENCH_USERS", "20"))
QUEUED = int(os.environ.get("BENCH_QUEUED", "400"))
MODEL_DELAY, WORDS, CHUNK_DELAY = 1.0, 40, 0.05
ANSWER = " ".join(f"word{n}" for n in range(WORDS))
QUEUED_MESSAGE = "Queued: hello?"
READS = 30
POOL_WAITS = re.compile(r"requests waited for a database connection in the last \d+ s \(([\d.]+) s in all, "
                        r"([\d.]+) s of it with this process's core busy with other work, "
                        r"([\d.]+) s waiting for a core")
REPORT_SECONDS = 10.0  # engine/durable/pool_wait.py: the warning comes this long after a period's first wait


def script(scenario: Scenario) -> None:
    """A chat gets one read, then the streamed answer; a queued message an answer at once."""
    def last(role):
        return lambda request: (request.get("messages") or [{}])[-1].get("role") == role

    def queued(request):
        return QUEUED_MESSAGE in str((request.get("messages") or [{}])[-1].get("content"))
    scenario.add({"content": "Hello.", "delay": 0.05}, queued, uses=None)
    scenario.add({"tool_calls": [{"name": "odoo_search_read", "arguments": {
        "model": "res.partner", "fields": ["name"], "limit": 3}}], "delay": MODEL_DELAY}, last("user"), uses=None)
    scenario.add({"content": ANSWER, "chunk_delay": CHUNK_DELAY, "delay": MODEL_DELAY / 2}, last("tool"), uses=None)


def say(line: str) -> None:
    """One line of the bench's table, printed as soon as it is measured."""
    print(line, flush=True)


def pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def pool_waits(server: OdooServer, offset: int) -> tuple[float, float, float, int]:
    """Seconds the server's requests waited for its pools, those of them with the core busy and those waiting for a
    core, as its log has them after byte ``offset``; the log's new size."""
    text = Path(server.log_path).read_bytes()
    found = [[float(figure) for figure in row] for row in POOL_WAITS.findall(text[offset:].decode(errors="replace"))]
    return (sum(row[0] for row in found), sum(row[1] for row in found), sum(row[2] for row in found), len(text))


def gevent_cpu(server: OdooServer) -> float:
    """CPU seconds (user and system) the server's gevent process (``odoo-bin gevent``, started by the
    multi-process server) used so far."""
    for child in psutil.Process(server.process.pid).children(recursive=True):
        if "gevent" in child.cmdline()[2:3]:
            times = child.cpu_times()
            return times.user + times.system
    raise RuntimeError("the server has no gevent process")


def busy_share(before, after) -> float:
    """The share of the machine's CPU time (all cores) not idle between two ``psutil.cpu_times()``."""
    idle = lambda times: times.idle + getattr(times, "iowait", 0.0)  # noqa: E731
    total = sum(after) - sum(before)
    return 1 - (idle(after) - idle(before)) / total if total > 0 else float("nan")


def login_session(server: OdooServer, login: str, password: str) -> str:
    """The ``session_id`` of a new session of ``login`` on ``server``."""
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        rpc(client, "/web/session/authenticate", {"db": DB, "login": login, "password": password})
        return client.cookies["session_id"]


def read_seconds(client: httpx.Client) -> float:
    started = time.monotonic()
    rpc(client, "/web/dataset/call_kw/res.partner/search_read", {
        "model": "res.partner", "method": "search_read", "args": [],
        "kwargs": {"fields": ["name", "email"], "limit": 80}})
    return time.monotonic() - started


def locust(server: OdooServer, chats: list, reader: bool) -> tuple[list[dict], list[float], float]:
    """Run Locust headless with one user per chat (and the reader): ``(chat rows, read seconds, wall)``."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as results:
        path = results.name
    env = {**os.environ, "LOAD_CHATS": json.dumps(chats), "LOAD_RESULTS": path, "LOAD_DB": server.db,
           "LOAD_HTTP_URL": server.base_url, "LOAD_READER": "1" if reader else "0"}
    started = time.monotonic()
    process = subprocess.Popen([os.environ["LOCUST_BIN"], "-f", str(ROOT / "bench" / "locustfile.py"), "--headless",
                                "--users", str(len(chats) + reader), "--spawn-rate", "100", "--host",
                                server.gevent_url, "--run-time", "600s", "--only-summary", "--loglevel", "WARNING"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = None
    while process.poll() is None:  # Locust runs until --run-time: it is stopped once every chat wrote its row
        if sum('"chat"' in line for line in Path(path).read_text(encoding="utf-8").splitlines()) >= len(chats):
            wall = time.monotonic() - started
            process.terminate()
            process.wait(30)
            break
        time.sleep(0.2)
    wall = wall if wall is not None else time.monotonic() - started
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    os.unlink(path)
    return [r for r in rows if "chat" in r], [r["read"] for r in rows if "read" in r], wall


def queued_on_two_servers(first: OdooServer, jobs: list) -> str:
    """Send ``jobs`` with send_async, half to each server; wait; say whether each ran exactly once."""
    second = OdooServer(DB, ("--workers=2", "--max-cron-threads=2"),
                        log_path=str(ROOT / ".logs" / f"load-second-{time.strftime('%Y%m%d-%H%M%S')}.log")).start()
    try:
        started = time.monotonic()
        for index, (session_id, thread_id) in enumerate(jobs):
            server = (first, second)[index % 2]
            with httpx.Client(base_url=server.base_url, cookies={"session_id": session_id}, timeout=60) as client:
                rpc(client, "/agentic_ai/chat/send_async", {"thread_id": thread_id, "message": QUEUED_MESSAGE})
        most, stored = wait_until_ended(DB, [thread_id for _s, thread_id in jobs], 900)
        wall = time.monotonic() - started
    finally:
        second.stop()
    once = stored == Counter({("completed", 1, 1): len(jobs)})
    return (f"two servers, {len(jobs)} messages queued with send_async (half to each): "
            f"{'each ran exactly once' if once else 'NOT each exactly once: ' + str(dict(stored))}, "
            f"all ended {wall:.1f} s after the first was sent, at most {most} running at once")


def main() -> None:
    scenario = Scenario()
    script(scenario)
    llm = ScriptedLLMServer(scenario).start()
    prep = json.loads(odoo_shell(DB, (ROOT / "dev" / "connections_check_prep.py").read_text(), "PREP", {
        "CHECK_LLM_URL": llm.base_url, "CHECK_USERS": str(USERS), "CHECK_CHATS": str(sum(LEVELS) + QUEUED),
        "CHECK_LEASE_SECONDS": "30", "CHECK_QUEUE_CONCURRENCY": "4"}))
    server = OdooServer(DB, ("--workers=4", "--max-cron-threads=2", "--db_maxconn_gevent=40"),
                        log_path=str(ROOT / ".logs" / f"load-{time.strftime('%Y%m%d-%H%M%S')}.log")).start()
    try:
        server.wait_for_gevent(60)
        # Each user logs in once, on the HTTP workers, before the chats: their sessions (in the filestore, which
        # both servers share) carry every chat and queued message of theirs.
        sessions = {user["login"]: login_session(server, user["login"], user["password"]) for user in prep["users"]}
        chats = [[sessions[user["login"]], thread_id] for user in prep["users"] for thread_id in user["threads"]]
        chats.sort(key=lambda chat: chat[1])  # the users' conversations interleaved
        # The quiet read first: the administrator's login sets web.base.url to this run's port, which empties
        # Odoo's caches in every process (a deployment's URL does not move; a bench's port does).
        with server.client() as admin:
            quiet = [read_seconds(admin) for _ in range(READS)]
        last = prep["users"][-1]  # the warm-up conversation's user: the gevent process loads the registry first
        with httpx.Client(base_url=server.base_url, timeout=120) as client:
            rpc(client, "/web/session/authenticate", {"db": DB, "login": last["login"], "password": last["password"]})
            with httpx.Client(base_url=server.gevent_url, cookies=client.cookies, timeout=120) as gevent, \
                    gevent.stream("POST", "/agentic_ai/chat/stream", json={"thread_id": prep["warmup"],
                                                                           "message": "warm up"}) as response:
                for _event in sse_events(response):
                    pass
        say(f"call_kw search_read res.partner (limit 80), another user, quiet: p95 "
                     f"{pct(quiet, 95) * 1000:.0f} ms (baseline)")
        say(f" chats  completed  first token p50 / p95   completion p50 / p95   wall     gevent CPU  "
            f"machine ({psutil.cpu_count()} cores)  waiting: core idle / busy / waiting for a core, all (runs + pool)")
        offset, during = 0, []
        *_, log_offset = pool_waits(server, 0)
        for level in LEVELS:
            batch, offset = chats[offset:offset + level], offset + level
            cpu, machine = gevent_cpu(server), psutil.cpu_times()
            rows, reads, wall = locust(server, batch, reader=level == LEVELS[-1])
            cpu = (gevent_cpu(server) - cpu) / wall  # of one core, over the level's wall time
            machine = busy_share(machine, psutil.cpu_times())
            during = reads or during
            ids = [thread_id for _s, thread_id in batch]
            _most, stored = wait_until_ended(DB, ids, 60)
            time.sleep(REPORT_SECONDS + 1)  # the pool's warning for the level's last waits
            pooled, pooled_busy, pooled_queued, log_offset = pool_waits(server, log_offset)
            waited = sum(r.get("waited") or 0.0 for r in rows)
            busy = sum(r.get("waited_busy") or 0.0 for r in rows) + pooled_busy
            queued = sum(r.get("waited_queued") or 0.0 for r in rows) + pooled_queued
            good = sum(1 for r in rows if r["state"] == "completed" and r["text"] == ANSWER and not r["failure"])
            stored_once = stored.get(("completed", 1, 1), 0)
            firsts = [r["first"] for r in rows if r["first"] is not None]
            totals = [r["total"] for r in rows]
            whole = max(sum(totals), 1e-9)
            share, idle = (waited + pooled) / whole, (waited + pooled - busy - queued) / whole
            say(f"{level:6d}  {min(good, stored_once):4d}/{level:<4d}  {pct(firsts, 50):7.2f} / "
                f"{pct(firsts, 95):5.2f} s       {pct(totals, 50):6.2f} / {pct(totals, 95):5.2f} s    "
                f"{wall:5.1f} s   {cpu:6.0%}      {machine:6.0%}            {idle:6.2%} / {busy / whole:6.2%} / "
                f"{queued / whole:6.2%}, {share:6.2%} ({waited:.1f} + {pooled:.1f} s of {sum(totals):.0f} s)")
        say(f"the same read during the {LEVELS[-1]} chats: p95 {pct(during, 95) * 1000:.0f} ms, "
                     f"{pct(during, 95) / pct(quiet, 95):.2f}x the quiet p95 ({len(during)} reads)")
        say(queued_on_two_servers(server, chats[offset:offset + QUEUED]))
    finally:
        server.stop()
        llm.stop()


if __name__ == "__main__":
    main()
