"""``/agentic_ai/chat/stream`` (spec 000 §11.1, §10.2; issue 10 point 2):
a run streamed to the client as server-sent events; ``GET`` follows the
current run of a thread (``chat_stream_follow``, what an EventSource opens,
issue 27 point 3).

The client POSTs JSON (the message never travels in a URL), and the
response is the stream: ``token`` events as the provider writes, then
``message``, ``tool_call``, ``tool_result``, ``confirmation_request`` as
rows are stored, ``error`` when the run fails, and a final ``done`` with
the run's result. ``: ping`` comments come at most every 15 s of silence.
A row's event carries the row's id (``id:``).

Body: ``{"thread_id": int, "message": str}`` to send a message, or
``{"thread_id": int, "approve": bool, "confirmation_id": int, "tool_call_id":
str, "reason": str}`` to answer a waiting confirmation (named by
``confirmation_id`` or ``tool_call_id``, as for ``confirm/approve``). ``Content-Type: application/json`` is
required: a browser cannot send it cross-site without a CORS preflight
that Odoo does not grant, which is what protects this cookie-authenticated
POST from cross-site requests (as for Odoo's JSON-RPC routes).

The run works on a cursor of its own in a thread of its own (the
request's cursor is closed before the body is sent, ODOO19.md §4),
commits each finished step, and stops at its next step boundary when the
client goes away and nobody follows it within the grace (case BR-30,
engine/doors/event_relay.py): its partial answer and usage are kept and
the thread ends ``interrupted``."""
import json
import logging
import queue
import threading
import time

import odoo
from odoo import api, http
from odoo.exceptions import MissingError, UserError
from odoo.http import Response, request
from odoo.service import server as odoo_server  # its ``server``: this process's, set when it started

from ..engine.doors import event_relay
from ..engine.doors.event_relay import HEARTBEAT_SECONDS, EventRelay, sse
from ..engine.durable import step_commit, step_connection
from ..engine.durable.wait_time import Waits
from .chat_controller import AgenticAiChatController as Chat
from .chat_controller import _messages

_logger = logging.getLogger(__name__)

FOLLOW_POLL_SECONDS = 0.5   # between two reads of a followed thread's rows
FOLLOW_SECONDS = 300.0      # a GET stream ends after this; an EventSource reconnects where it was
FOLLOW_BATCH = 200          # rows read at once
FOLLOW_RETRY_MS = 1000      # an EventSource's wait before it reconnects (the SSE "retry:" field)

STREAM_HEADERS = [
    ("Cache-Control", "no-cache"),
    ("X-Accel-Buffering", "no"),  # nginx: do not buffer this response (case BR-15)
    ("Content-Encoding", "identity"),
]


def _status_of(exc):
    """The HTTP status of a refusal, from its kind: Odoo's own (AccessError
    403, MissingError 404, LockError 409), and 400 for bad input (a plain
    UserError or ValidationError, which Odoo answers 422)."""
    return 400 if exc.http_status == UserError.http_status else exc.http_status


def _json_error(status, message, code=None):
    return request.make_json_response({"error": {"message": message, **({"code": code} if code else {})}},
                                      status=status)


WORKER_REFUSAL = ("This Odoo server's HTTP workers do not stream runs (a stream would hold the worker for the "
                  "whole run); send the message with /agentic_ai/chat/send_async and follow it with "
                  "/agentic_ai/chat/poll, or route /agentic_ai/chat/stream to the gevent port (see the README).")


def held_worker() -> bool:
    """Whether this request is served by one of the HTTP workers of Odoo's
    multi-process server (``odoo.service.server.PreforkServer``, which
    serves one request at a time per worker: a stream would hold the worker
    for the whole run, issue 26 point 1), rather than by its gevent process
    (``odoo.evented``) or a threaded server. Nothing has run when this
    answers; the chat then queues the message and polls it (its fallback
    for a stream route that is not available, static/src/core/streaming_handler.js)."""
    return not odoo.evented and isinstance(odoo_server.server, odoo_server.PreforkServer)


class AgenticAiStreamController(http.Controller):

    @http.route("/agentic_ai/chat/stream", type="http", auth="user", methods=["POST"], csrf=False)
    def chat_stream(self, **_query):
        """Stream a run (see the module docstring). Bad input, another
        user's thread or a busy thread answer a JSON error with status 400,
        403, 404 or 409 before anything runs; a multi-process HTTP worker
        answers 503 (``held_worker``) before anything runs."""
        if held_worker():
            return _json_error(503, WORKER_REFUSAL, code="stream_not_on_this_worker")
        if request.httprequest.mimetype != "application/json":
            return _json_error(415, "Send the request as JSON (Content-Type: application/json).")
        try:
            params = json.loads(request.httprequest.get_data() or b"null")
        except (ValueError, RecursionError):
            return _json_error(400, "The body is not valid JSON.")
        if isinstance(params, dict) and isinstance(params.get("params"), dict):  # JSON-RPC style
            params = params["params"]
        if not isinstance(params, dict):
            return _json_error(400, "The body must be a JSON object.")
        try:
            thread, job = self._prepare(params)
        except UserError as exc:  # AccessError 403, MissingError 404, LockError 409: the kind, never the words
            return _json_error(_status_of(exc), str(exc))
        relay = EventRelay(self._heartbeat(), thread_id=thread.id)
        run = _runner(request.env.cr.dbname, request.env.uid, dict(request.env.context), thread.id, job)
        return Response(relay.stream(run, name=f"agentic-ai-thread-{thread.id}"), status=200,
                        mimetype="text/event-stream", headers=STREAM_HEADERS, direct_passthrough=True)

    @http.route("/agentic_ai/chat/stream", type="http", auth="user", methods=["GET"])
    def chat_stream_follow(self, thread_id=None, last_event_id=None, **_query):
        """Follow the current run of thread ``thread_id`` (issue 27 point 3,
        spec §10.2: what an EventSource opens, the chat after a cut): the
        rows stored after ``Last-Event-ID`` (the header an EventSource sends
        when it reconnects; the ``last_event_id`` query parameter on a first
        connection; 0: every row), each with its id, then those the run adds,
        with its tokens when it runs in this process, then ``done`` once the
        thread is neither queued nor executing. Nothing is started: runs
        start by POST, and no message travels in a URL. The rows are read on
        a short connection of its own every ``FOLLOW_POLL_SECONDS``, none
        held in between; after ``FOLLOW_SECONDS`` the response ends without
        ``done`` and an EventSource reconnects where it was. Errors as the
        POST's, before anything is sent."""
        if held_worker():
            return _json_error(503, WORKER_REFUSAL, code="stream_not_on_this_worker")
        header = request.httprequest.headers.get("Last-Event-ID")
        try:
            thread = Chat._get_thread(thread_id)
            after = Chat._int_param("last_event_id", header.strip() if header is not None else (last_event_id or 0))
        except UserError as exc:
            return _json_error(_status_of(exc), str(exc))
        env = request.env
        body = _following(env.cr.dbname, env.uid, dict(env.context), thread.id, after, self._heartbeat())
        return Response(body, status=200, mimetype="text/event-stream", headers=STREAM_HEADERS,
                        direct_passthrough=True)

    @staticmethod
    def _prepare(params):
        """``(thread, job)`` after the model's own checks of the run
        (``agentic.ai.thread._check_can_send``/``_check_can_answer``, the
        same the JSON routes' run goes through), asked here so that a
        refusal is answered at once rather than streamed; ``job`` is
        ``("send", message)`` or ``("answer", approved, tool_call_id,
        confirmation_id, reason)``."""
        thread = Chat._get_thread(params.get("thread_id"))
        if "approve" in params:
            call_id, question = Chat._question_params(params.get("tool_call_id"), params.get("confirmation_id"))
            reason = Chat._text_param("reason", params.get("reason"), required=False)
            thread._check_can_answer(params["approve"], reason, call_id, question)
            return thread, ("answer", params["approve"], call_id, question, reason)
        message = Chat._message_param(params.get("message"))
        thread._check_can_send(message)
        return thread, ("send", message)

    @staticmethod
    def _heartbeat():
        raw = request.env["ir.config_parameter"].sudo().get_param("agentic_ai.stream_heartbeat_seconds")
        try:
            return float(raw) if raw else HEARTBEAT_SECONDS  # EventRelay keeps it within bounds
        except ValueError:
            return HEARTBEAT_SECONDS


def _runner(dbname, uid, context, thread_id, job):
    """The function the relay runs in its thread: the job on a cursor of
    its own, as the requesting user, emitting ``error`` and ``done``."""
    def run(relay):
        threading.current_thread().dbname = dbname  # for Odoo's log lines
        # Through the gate of the runs' connections: a burst of streams waits for one, never fails on a full pool.
        waits = Waits()  # that first wait is the run's too (AgentResult.wait_seconds)
        with step_connection.run_cursor(dbname, waits) as cr:
            env = api.Environment(cr, uid, context)
            thread = env["agentic.ai.thread"].browse(thread_id)
            hooks = {"durable": True, "emit": relay.emit, "should_stop": relay.stopped}

            def open_run():
                if job[0] == "send":  # checked by _prepare in this request: the agent's access is asked again
                    return thread._send_message(job[1], checked=True, **hooks)
                return thread._handle_confirmation(job[1], job[4], tool_call_id=job[2],
                                                   confirmation_id=job[3], **hooks)
            try:
                # A concurrency failure before the run committed anything is retried, as Odoo retries a request.
                result = step_commit.retry_opening(env, thread_id, open_run)
            # Refused under the run lock (another request took the thread after this one's checks): this request
            # ran nothing; the stream is open already, so the refusal's status travels in the error event.
            except UserError as exc:
                relay.emit("error", {"message": str(exc), "status": _status_of(exc)})
                thread.invalidate_recordset()
                relay.emit("done", {"thread_id": thread_id, "state": thread.state, "reply": None, "error": str(exc)})
                return
            if result.state == "error":
                relay.emit("error", {"message": result.error or result.reply})
            relay.emit("done", {**result, "wait_seconds": round(result.wait_seconds + waits.seconds, 4),
                                "wait_core_busy_seconds": round(result.wait_core_busy_seconds + waits.core_busy, 4),
                                "wait_core_queued_seconds": round(result.wait_core_queued_seconds
                                                                  + waits.core_queued, 4)})
    return run


def _caught_up(dbname, uid, context, thread_id, after):
    """``(events, end)`` of thread ``thread_id`` as user ``uid`` sees it,
    on a connection of its own for the length of one read: ``events`` the
    rows after id ``after`` as their stream events (at most
    FOLLOW_BATCH), ``end`` the ``done`` data once the thread is neither
    queued nor executing (else None)."""
    with step_connection.pool_cursor(dbname) as cr:
        env = api.Environment(cr, uid, context)
        thread = env["agentic.ai.thread"].browse(thread_id)
        events = []
        for data in _messages(thread, after, FOLLOW_BATCH):  # the chat routes' rows (chat/poll's)
            if data["role"] == "confirmation_request":  # with the question, as the run's own event has it
                data = {**data, "confirmation": thread.get_pending_confirmation() or None}
            events.append((event_relay.row_event_name(data["role"]), data))
        end = None
        if thread.state not in ("queued", "executing") and len(events) < FOLLOW_BATCH:
            last = env["agentic.ai.thread.message"].search(
                [("thread_id", "=", thread_id), ("role", "in", ("user", "assistant"))], order="id desc", limit=1)
            end = {"thread_id": thread_id, "state": thread.state, "error": thread.last_error or None,
                   "reply": last.content if last.role == "assistant" else None, "followed": True}
        return events, end


def _following(dbname, uid, context, thread_id, after, heartbeat):
    """The body of the GET stream (see ``chat_stream_follow``): a generator
    of server-sent events that holds no database connection between its
    reads. The rows come from the database as they commit, in id order
    (each once: what ``Last-Event-ID`` resumes after); the tokens and plan
    updates of a run of this process come from its relay
    (``event_relay.follow``), whose attachment keeps that run going after
    its own client left (BR-30's grace)."""
    last, end_of_run = after, None
    follower = event_relay.follow(thread_id)
    heartbeat = event_relay.heartbeat_seconds(heartbeat)
    started = silent_since = time.monotonic()
    try:
        yield f"retry: {FOLLOW_RETRY_MS}\n: following\n\n".encode()
        while True:
            try:
                events, end = _caught_up(dbname, uid, context, thread_id, last)
            except (UserError, MissingError) as exc:  # the thread is gone, or no longer the user's
                yield sse("error", {"message": str(exc)})
                yield sse("done", {"thread_id": thread_id, "state": None, "error": str(exc), "followed": True})
                return
            for name, data in events:
                if data["id"] > last:
                    last = data["id"]
                    yield sse(name, data)
            if events:
                silent_since = time.monotonic()
            if end is not None and (follower is None or end_of_run is not None):
                yield sse("done", {**end, **(end_of_run or {}), "followed": True})
                return
            if len(events) == FOLLOW_BATCH:
                continue
            if time.monotonic() - started > FOLLOW_SECONDS:
                return  # an EventSource reconnects with the last id it received
            deadline = time.monotonic() + FOLLOW_POLL_SECONDS
            while follower is not None and end_of_run is None and time.monotonic() < deadline:
                try:
                    item = follower.queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    end_of_run = end_of_run or {}
                    break
                name, data = item
                if name == "done":
                    end_of_run = {key: value for key, value in data.items() if key in ("state", "reply", "error")}
                elif name not in event_relay.ROW_EVENTS:  # tokens, plan updates, errors: as they come
                    yield sse(name, data)
                    silent_since = time.monotonic()
                # Rows come from the database only, as they commit, in id order: a row the run emitted before this
                # GET attached and committed after its last read would be skipped by one taken from the run.
            if follower is None or end_of_run is not None:
                time.sleep(max(0.0, deadline - time.monotonic()))
            if time.monotonic() - silent_since >= heartbeat:
                silent_since = time.monotonic()
                yield b": ping\n\n"
    finally:
        if follower is not None:
            follower.close()
