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
``event: <name>\\ndata: <JSON>\\n\\n``; comments start with ``:``."""
from __future__ import annotations

import logging
import math
import queue
import threading
from collections.abc import Callable, Iterator

from ...tools.values.json_values import dumps

_logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15.0   # longest silence on the wire (BR-15: proxies' read timeouts are 60 s by default)
MIN_HEARTBEAT_SECONDS = 0.2
JOIN_SECONDS = 2.0         # longest wait for the run to stop once the client is gone
EVENTS = ("token", "message", "tool_call", "tool_result", "plan_update", "confirmation_request", "done", "error")


def sse(event: str, data) -> bytes:
    """One server-sent event as bytes; ``data`` as one line of JSON in the
    addon's one JSON form (tools/values/json_values.py)."""
    return f"event: {event}\ndata: {dumps(data, ensure_ascii=False)}\n\n".encode()


class EventRelay:
    """Carries events from a run (``emit``, any thread) to the response
    body (``stream``); ``stopped()`` tells the run its client is gone."""

    def __init__(self, heartbeat: float = HEARTBEAT_SECONDS):
        """``heartbeat``: seconds of silence before a ping, kept within
        MIN_HEARTBEAT_SECONDS and HEARTBEAT_SECONDS; anything that is not a
        finite number gives HEARTBEAT_SECONDS (NaN would make the wait for
        the next event endless, and no ping would ever be sent)."""
        finite = isinstance(heartbeat, (int, float)) and math.isfinite(heartbeat)
        self.heartbeat = min(max(heartbeat, MIN_HEARTBEAT_SECONDS), HEARTBEAT_SECONDS) if finite else HEARTBEAT_SECONDS
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self.worker: threading.Thread | None = None

    def emit(self, event: str, data) -> None:
        """Queue ``event`` (one of EVENTS) with JSON-able ``data``."""
        self._queue.put((event, data))

    def stopped(self) -> bool:
        return self._stop.is_set()

    def stream(self, run: Callable[[EventRelay], None], name: str = "agentic-ai-run") -> Iterator[bytes]:
        """Start ``run(relay)`` in a thread and yield its events as bytes;
        ``run`` emits ``done`` (and ``error``) itself. Ends after ``done``,
        or when the run's thread ends."""
        self.worker = threading.Thread(target=self._work, args=(run,), name=name, daemon=True)
        self.worker.start()
        try:
            yield b": stream open\n\n"  # sends the headers now
            while True:
                try:
                    item = self._queue.get(timeout=self.heartbeat)
                except queue.Empty:
                    yield b": ping\n\n"
                    continue
                if item is None:
                    return
                yield sse(*item)
        finally:  # the run ended, or the client is gone (GeneratorExit from the server's close())
            self._stop.set()
            self.worker.join(JOIN_SECONDS)

    def _work(self, run) -> None:
        try:
            run(self)
        except Exception:  # a bug of ours: the client still gets an end
            _logger.exception("Streamed run failed")
            self.emit("error", {"message": "internal error; the conversation keeps what was done"})
            self.emit("done", {"state": "error"})
        finally:
            self._queue.put(None)
