"""Queued messages through OCA queue_job (issue 26 point 4,
models/agent_thread_queue_job.py), on a real multi-process Odoo with
queue_job's job runner, PostgreSQL and the scripted LLM server in this
process.

The copy of the test database gets queue_job (PyPI ``odoo-addon-queue-job``,
installed by dev/setup.sh); the server runs ``--workers=4`` with
``--load=base,web,queue_job`` and ``ODOO_QUEUE_JOB_CHANNELS=root:4,
root.agentic_ai:CAPACITY`` (3), the cron on. ``MESSAGES`` (12) messages are
sent with ``send_async`` by 4 users at once; each run asks the model for one
read (1 s), then answers. It holds when:

- every conversation completed with exactly one user message and one answer;
- each message ran through one queue_job job of the ``root.agentic_ai``
  channel, done (none failed), the processor cron running none itself;
- at most CAPACITY ran at once, and at least 2 (the channel's capacity, not
  one at a time).

Prints what it saw, then ``1 passed, 0 failed`` (or the reason and
``0 passed, 1 failed``). Usage: ``python dev/queue_job_check.py DB`` with
dev/env.sh's environment (``bash dev/queue_job_check.sh`` makes the
database, a copy of the test database, and drops it)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import psycopg2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dev.odoo_process import OdooServer, odoo_command, odoo_shell, rpc  # noqa: E402 - after the path is set
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402
from dev.thread_watch import wait_until_ended  # noqa: E402

MESSAGES = 12
USERS = 4
CAPACITY = 3
MODEL_DELAY = 1.0


def step(text: str) -> None:
    print(f"[queue_job] {text}", flush=True)


def check(db: str) -> None:
    """Raise AssertionError saying what does not hold."""
    os.environ["AGENTIC_AI_EXTRA_ADDONS"] = os.environ["QUEUE_JOB_ADDONS"]
    started = time.monotonic()
    out = subprocess.run(odoo_command("-d", db, "-i", "queue_job", "--stop-after-init", "--no-http"),
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, f"installing queue_job failed:\n{out.stderr[-3000:]}"
    step(f"queue_job installed on {db} ({time.monotonic() - started:.0f} s)")

    scenario = Scenario()
    scenario.add({"tool_calls": [{"name": "odoo_search_read", "arguments": {
        "model": "res.partner", "fields": ["name"], "limit": 3}}], "delay": MODEL_DELAY},
        lambda request: (request.get("messages") or [{}])[-1].get("role") == "user", uses=None)
    scenario.add({"content": "Three partners."},
                 lambda request: (request.get("messages") or [{}])[-1].get("role") == "tool", uses=None)
    llm = ScriptedLLMServer(scenario).start()
    prep = json.loads(odoo_shell(db, (ROOT / "dev" / "connections_check_prep.py").read_text(), "PREP", {
        "CHECK_LLM_URL": llm.base_url, "CHECK_USERS": str(USERS), "CHECK_CHATS": str(MESSAGES)}))
    jobs = [(thread_id, user) for user in prep["users"] for thread_id in user["threads"]]
    ids = [thread_id for thread_id, _user in jobs]
    server = OdooServer(db, ("--workers=4", "--max-cron-threads=1", "--load=base,rpc,web,queue_job"),
                        log_path=str(ROOT / ".logs" / f"queue_job-{time.strftime('%Y%m%d-%H%M%S')}.log"),
                        env={"ODOO_QUEUE_JOB_CHANNELS": f"root:4,root.agentic_ai:{CAPACITY}"})
    try:
        server.start()
        step(f"server up (--workers=4, queue_job's runner, channels root:4,root.agentic_ai:{CAPACITY})")
        sent = time.monotonic()
        for thread_id, user in jobs:
            with httpx.Client(base_url=server.base_url, timeout=60) as client:
                rpc(client, "/web/session/authenticate", {"db": db, "login": user["login"],
                                                          "password": user["password"]})
                rpc(client, "/agentic_ai/chat/send_async", {"thread_id": thread_id, "message": "Which partners?"})
        most, stored = wait_until_ended(db, ids, 240)
        wall = time.monotonic() - sent
        with psycopg2.connect(dbname=db) as conn, conn.cursor() as cur:
            cur.execute("SELECT channel, state, count(*) FROM queue_job WHERE model_name = 'agentic.ai.thread' "
                        "AND method_name = '_queue_job_run' GROUP BY channel, state")
            queue_jobs = {f"{channel} {state}": count for channel, state, count in cur.fetchall()}
    finally:
        server.stop()
        llm.stop()
    step(f"{len(ids)} messages sent with send_async, all ended in {wall:.1f} s (the model alone takes "
         f"{1.5 * MODEL_DELAY:.1f} s a run); at most {most} running at once; (state, answers, user messages): "
         f"{dict(stored)}; queue_job jobs (channel state: count): {queue_jobs}")
    assert stored == Counter({("completed", 1, 1): len(ids)}), f"the conversations ended {dict(stored)}"
    assert queue_jobs == {"root.agentic_ai done": len(ids)}, f"queue_job's jobs: {queue_jobs}"
    assert 2 <= most <= CAPACITY, f"{most} runs at once with a channel capacity of {CAPACITY}"


def main() -> int:
    try:
        check(sys.argv[1])
    except AssertionError as found:
        step(f"FAILED: {found}")
        print("0 passed, 1 failed", flush=True)
        return 1
    except Exception as error:  # noqa: BLE001 - any error of the set-up fails the check, saying why
        step(f"FAILED: {type(error).__name__}: {error}")
        print("0 passed, 1 failed", flush=True)
        return 1
    print("1 passed, 0 failed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
