"""A server-sent-events client for HttpCase tests: POSTs to the stream
route with the test's session and yields events as they arrive, read
incrementally from the socket (requests with ``stream=True``)."""
import json
import time
from contextlib import contextmanager

import requests


class SSEEvent:
    """One event: ``name`` (``comment`` for ``: ...`` lines), ``data``
    (parsed JSON, or the comment's text), ``id`` (its ``id:`` field, or
    None) and ``received_at`` (``time.monotonic()``)."""

    def __init__(self, name, data, event_id=None):
        self.name, self.data, self.id, self.received_at = name, data, event_id, time.monotonic()

    def __repr__(self):
        return f"SSEEvent({self.name!r}, {str(self.data)[:80]!r})"


def parse_block(block: str) -> SSEEvent:
    name, data, comments, event_id = "message", [], [], None
    for line in block.split("\n"):
        if line.startswith(":"):
            comments.append(line[1:].strip())
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
    if not data:
        return SSEEvent("comment", " ".join(comments))
    return SSEEvent(name, json.loads("\n".join(data)), event_id)


class SSEStream:
    """The open response; ``events()`` yields SSEEvent as they come."""

    def __init__(self, response):
        self.response = response

    def events(self):
        buffer = ""
        for chunk in self.response.iter_content(chunk_size=None):
            buffer += chunk.decode()
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                if block.strip():
                    yield parse_block(block)

    def close(self):
        """Close the socket, as a client that goes away does."""
        self.response.close()


@contextmanager
def open_stream(case, body, path="/agentic_ai/chat/stream", headers=None, timeout=30):
    """POST ``body`` (a dict, sent as JSON; bytes sent as they are) to
    ``path`` as the authenticated test session, and yield the SSEStream.
    Requests are allowed (and the test lock released) while it is open, so
    the run's thread can work."""
    case.env.flush_all()
    case.env.invalidate_all()
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    with case.allow_requests():
        response = requests.Session.request(
            case.opener, "POST", case.base_url() + path, data=data, stream=True, timeout=timeout,
            headers={"Content-Type": "application/json", **(headers or {})})
        try:
            yield SSEStream(response)
        finally:
            response.close()


@contextmanager
def follow_stream(case, thread_id, last_event_id=None, header=None, timeout=30):
    """GET the stream route for ``thread_id`` as an EventSource does (the
    authenticated test session): ``last_event_id`` as the query parameter,
    ``header`` as ``Last-Event-ID``; yields the SSEStream."""
    case.env.flush_all()
    case.env.invalidate_all()
    params = {"thread_id": thread_id, **({"last_event_id": last_event_id} if last_event_id is not None else {})}
    headers = {"Accept": "text/event-stream", **({"Last-Event-ID": str(header)} if header is not None else {})}
    with case.allow_requests():
        response = requests.Session.request(case.opener, "GET", case.base_url() + "/agentic_ai/chat/stream",
                                            params=params, stream=True, timeout=timeout, headers=headers)
        try:
            yield SSEStream(response)
        finally:
            response.close()
