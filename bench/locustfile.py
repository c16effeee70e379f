"""Locust users of bench/load.py (issue 26 point 5), run headless by Locust
(https://locust.io) in a virtualenv of its own (bench/load.sh): Locust's
gevent is newer than the one Odoo pins.

- ``Chatter``: one per chat in ``LOAD_CHATS`` (JSON ``[[session_id,
  thread_id], ...]``). In its Odoo user's session, streams one message through
  ``/agentic_ai/chat/stream`` on the host (Odoo's gevent server), and writes
  a JSON line to ``LOAD_RESULTS``: seconds to the first ``token`` event and
  to the end, the ``done`` event's state, ``wait_seconds``,
  ``wait_core_busy_seconds`` and ``wait_core_queued_seconds``, the answer's
  text. Locust's own statistics get "first token" and "completion"
  entries. bench/load.py stops Locust once every chat wrote its line.
- ``Reader`` (``LOAD_READER=1``): another user (the administrator) doing a
  plain ``res.partner`` ``search_read`` on the HTTP workers
  (``LOAD_HTTP_URL``) again and again while the chats run; each read's
  seconds go to ``LOAD_RESULTS`` as ``{"read": seconds}``.
"""
import itertools
import json
import os
import threading
import time

from locust import HttpUser, constant, events, task
from locust.exception import StopUser

CHATS = json.loads(os.environ.get("LOAD_CHATS", "[]"))
RESULTS = os.environ.get("LOAD_RESULTS", "/dev/null")
MESSAGE = "Which partners?"
_claimed = itertools.count()
_lock = threading.Lock()


def write(row: dict) -> None:
    """Append ``row`` to the results file, a line of JSON."""
    with _lock, open(RESULTS, "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")


def sse(response):
    """``(event name, data)`` of a server-sent event stream, as its lines arrive."""
    name, data = None, []
    for raw in response.iter_lines():
        line = raw.decode() if isinstance(raw, bytes) else raw
        if not line:
            if name or data:
                yield name, "\n".join(data)
            name, data = None, []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


class Chatter(HttpUser):
    """One streamed chat, then stops."""

    wait_time = constant(0)

    def on_start(self):
        index = next(_claimed)
        if index >= len(CHATS):
            raise StopUser()
        # The user's session, opened by bench/load.py before the chats: people are logged in before they chat (a
        # login hashes its password, a few hundred ms of CPU that would block the gevent loop at every chat).
        session_id, self.thread_id = CHATS[index]
        self.client.cookies.set("session_id", session_id)

    @task
    def chat(self):
        started, first, state, text, failure = time.monotonic(), None, None, [], ""
        waited = busy = queued = None
        try:
            with self.client.post("/agentic_ai/chat/stream", json={"thread_id": self.thread_id, "message": MESSAGE},
                                  stream=True, catch_response=True, name="chat/stream", timeout=600) as response:
                if response.status_code != 200:
                    failure = f"HTTP {response.status_code}"
                    response.failure(failure)
                else:
                    for name, data in sse(response):
                        if name == "token":
                            first = first if first is not None else time.monotonic() - started
                            text.append(json.loads(data).get("text", ""))
                        elif name == "error":
                            failure = data[:300]
                        elif name == "done":
                            done = json.loads(data)
                            state, waited = done.get("state"), done.get("wait_seconds")
                            busy = done.get("wait_core_busy_seconds")
                            queued = done.get("wait_core_queued_seconds")
                    response.success()
        except Exception as exc:  # noqa: BLE001 - a failed chat is a result of the bench
            failure = f"{type(exc).__name__}: {exc}"
        total = time.monotonic() - started
        for name, seconds in (("first token", first), ("completion", total)):
            if seconds is not None:
                events.request.fire(request_type="SSE", name=name, response_time=seconds * 1000, response_length=0,
                                    exception=None, context={})
        write({"chat": self.thread_id, "first": first, "total": total, "state": state, "text": "".join(text),
               "failure": failure, "waited": waited, "waited_busy": busy,
               "waited_queued": queued})
        raise StopUser()


class Reader(HttpUser):
    """Plain reads by another user on the HTTP workers while the chats run."""

    # Locust spreads its users over the classes by weight, and a fixed_count of 0 means none is fixed: without
    # the reader the class is abstract, never spawned (a reader among the chatters took the place of chats).
    abstract = os.environ.get("LOAD_READER") != "1"
    fixed_count = 1
    wait_time = constant(0.05)
    # Locust's --host (the gevent port) replaces every user class's own host: the reads name the workers' URL.
    http_url = os.environ.get("LOAD_HTTP_URL", "")

    def on_start(self):
        self.client.post(self.http_url + "/web/session/authenticate", json={
            "jsonrpc": "2.0", "method": "call", "params": {
                "db": os.environ["LOAD_DB"], "login": "admin", "password": "admin"}}, name="login")

    @task
    def read(self):
        started = time.monotonic()
        self.client.post(self.http_url + "/web/dataset/call_kw/res.partner/search_read", json={
            "jsonrpc": "2.0", "method": "call", "params": {
                "model": "res.partner", "method": "search_read", "args": [],
                "kwargs": {"fields": ["name", "email"], "limit": 80}}}, name="read")
        write({"read": time.monotonic() - started})
