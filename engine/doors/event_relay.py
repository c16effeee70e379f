"""Relay a run's events to an HTTP client as server-sent events (issue 10
point 2, spec 000 §10.2; case BR-15 and BR-30).

The run works in a thread of its own and puts events on a queue; the HTTP
response body is a generator that takes them off and writes each as soon
as it is produced. While nothing comes (a slow tool, a provider that has
not answered yet) it writes a ``: ping`` comment every ``heartbeat``
seconds, which keeps proxies from cutting the stream and makes a dead
client show: the server (werkzeug) raises on the write and closes the
generator, which sets the stop flag the run reads at its next step
boundary (and between streamed chunks). The response generator then waits
at most ``JOIN_SECONDS`` for the run to stop, so the worker is free even
when a tool still runs.

Wire format (https://html.spec.whatwg.org/multipage/server-sent-events.html):
``event: <name>\\ndata: <JSON>\\n\\n``; comments start with ``:``. A
transcript row's event (ROW_EVENTS) carries the row's id as its ``id:``:
what an EventSource sends back as ``Last-Event-ID`` when it reconnects, and
what ``GET /agentic_ai/chat/stream`` resumes after (issue 27 point 3).

A client that goes away does not stop the run at once: the run goes on
for ``STOP_GRACE_SECONDS``, and to its end if a follower attached meanwhile
(``follow``: the GET route of this process, which an EventSource opens
after a cut); with none, it stops at its next step boundary (BR-30)."""
from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Iterator

from ...tools.values.json_values import dumps

_logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15.0   # longest silence on the wire (BR-15: proxies' read timeouts are 60 s by default)
MIN_HEARTBEAT_SECONDS = 0.2
JOIN_SECONDS = 2.0         # longest wait for the run to stop once the client is gone
STOP_GRACE_SECONDS = 3.0   # a run whose client left goes on this long, waiting for a follower
EVENTS = ("token", "message", "tool_call", "tool_result", "plan_update", "confirmation_request", "done", "error")
ROW_EVENTS = frozenset({"message", "tool_call", "tool_result", "confirmation_request"})  # a row's: numbered


def row_event_name(role: str) -> str:
    """The §10.2 event a transcript row of ``role`` is sent as: its role for
    a tool call, a tool result or a confirmation's question, ``message`` for
    a user's or an assistant's row."""
    return role if role in ("tool_call", "tool_result", "confirmation_request") else "message"

_RELAYS: dict[int, EventRelay] = {}  # thread id -> the relay of its run in this process
_RELAYS_LOCK = threading.Lock()


def sse(event: str, data) -> bytes:
    """One server-sent event as bytes; ``data`` as one line of JSON in the
    addon's one JSON form (tools/values/json_values.py); a row's event
    (ROW_EVENTS) with the row's id as its ``id:``."""
    numbered = event in ROW_EVENTS and isinstance(data, dict) and isinstance(data.get("id"), int)
    head = f"id: {data['id']}\n" if numbered else ""
    return f"{head}event: {event}\ndata: {dumps(data, ensure_ascii=False)}\n\n".encode()


def heartbeat_seconds(value) -> float:
    """``value`` (seconds of silence before a ping) kept within
    MIN_HEARTBEAT_SECONDS and HEARTBEAT_SECONDS; anything that is not a
    finite number gives HEARTBEAT_SECONDS (NaN would make the wait for the
    next event endless, and no ping would ever be sent)."""
    finite = isinstance(value, (int, float)) and math.isfinite(value)
    return min(max(value, MIN_HEARTBEAT_SECONDS), HEARTBEAT_SECONDS) if finite else HEARTBEAT_SECONDS


def follow(thread_id: int) -> Follower | None:
    """A follower of the run of thread ``thread_id`` in this process (its
    events from now on), or None when no run of that thread streams here."""
    with _RELAYS_LOCK:
        relay = _RELAYS.get(thread_id)
        return relay._attach() if relay is not None else None


class Follower:
    """The events of a run relayed to another client (``queue``: ``(event,
    data)`` pairs, None once the run ended); ``close()`` when it leaves."""

    def __init__(self, relay: EventRelay):
        self.relay = relay
        self.queue: queue.Queue = queue.Queue()

    def close(self) -> None:
        self.relay._detach(self)


class EventRelay:
    """Carries events from a run (``emit``, any thread) to the response
    body (``stream``); ``stopped()`` tells the run its client is gone."""

    def __init__(self, heartbeat: float = HEARTBEAT_SECONDS, thread_id: int | None = None):
        """``heartbeat``: seconds of silence before a ping
        (``heartbeat_seconds`` keeps it within bounds). ``thread_id``: the conversation the run is of, which ``follow``
        finds it by while it runs."""
        self.heartbeat = heartbeat_seconds(heartbeat)
        self.thread_id = thread_id
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._left_at: float | None = None  # when the last client left (the one who started it, or a follower)
        self._followers: list[Follower] = []
        self.worker: threading.Thread | None = None

    def emit(self, event: str, data) -> None:
        """Queue ``event`` (one of EVENTS) with JSON-able ``data``, for the
        client and each follower."""
        self._queue.put((event, data))
        for follower in list(self._followers):
            follower.queue.put((event, data))

    def stopped(self) -> bool:
        """Whether the run should stop: its client left ``STOP_GRACE_SECONDS``
        ago or more and no follower is attached (asked by the run between
        chunks and at its step boundaries)."""
        left = self._left_at
        if not self._stop.is_set() and left is not None and not self._followers \
                and time.monotonic() - left >= STOP_GRACE_SECONDS:
            self._stop.set()
        return self._stop.is_set()

    def stream(self, run: Callable[[EventRelay], None], name: str = "agentic-ai-run") -> Iterator[bytes]:
        """Start ``run(relay)`` in a thread and yield its events as bytes;
        ``run`` emits ``done`` (and ``error``) itself. Ends after ``done``,
        or when the run's thread ends. While it runs, ``follow`` finds it."""
        if self.thread_id is not None:
            with _RELAYS_LOCK:
                _RELAYS[self.thread_id] = self
        self.worker = threading.Thread(target=self._work, args=(run,), name=name, daemon=True)
        self.worker.start()
        finished = False
        try:
            yield b": stream open\n\n"  # sends the headers now
            while True:
                try:
                    item = self._queue.get(timeout=self.heartbeat)
                except queue.Empty:
                    yield b": ping\n\n"
                    continue
                if item is None:
                    finished = True
                    return
                yield sse(*item)
        finally:  # the run ended, or the client is gone (GeneratorExit from the server's close())
            if not finished:
                self._left_at = time.monotonic()
                self.worker.join(JOIN_SECONDS)

    def _attach(self) -> Follower:
        follower = Follower(self)
        self._followers.append(follower)
        if self.worker is not None and not self.worker.is_alive():
            follower.queue.put(None)
        return follower

    def _detach(self, follower: Follower) -> None:
        if follower in self._followers:
            self._followers.remove(follower)
            if not self._followers and self._left_at is not None:
                self._left_at = time.monotonic()  # the grace again, from the last follower's leaving

    def _work(self, run) -> None:
        try:
            run(self)
        except Exception:  # a bug of ours: the client still gets an end
            _logger.exception("Streamed run failed")
            self.emit("error", {"message": "internal error; the conversation keeps what was done"})
            self.emit("done", {"state": "error"})
        finally:
            if self.thread_id is not None:
                with _RELAYS_LOCK:
                    if _RELAYS.get(self.thread_id) is self:
                        del _RELAYS[self.thread_id]
            self._queue.put(None)
            for follower in list(self._followers):
                follower.queue.put(None)
