"""Webhook endpoints (spec 000 §11.2, issue 10 point 5, case BR-17): an
outside system triggers an agent and reads how its run went.

Both routes take a signed POST (engine/doors/webhook_signature.py describes the
headers and the signature), read the raw body bytes (the signature covers
them exactly, so the body is never parsed before it is verified) and answer
JSON. Every refusal of authentication is the same ``401 {"error":
"unauthorized"}``, whichever check failed; the failed check is logged as a
WARNING with the integration, never the secret or the signature.

Two schemes, told apart by the ``X-Agentic-Webhook`` header:

- with it, an integration's own secret (recommended): the body is the
  event, a JSON object; answers are plain JSON (``202``, errors
  ``{"error", "message"}``);
- without it, the spec's one API key (§11.2, ``agentic_ai.webhook_api_key``,
  issue 27 point 1): the body is a JSON-RPC 2.0 call whose ``params`` are
  the event (``agent``: the code of the agent, when several integrations
  accept the key); answers are JSON-RPC responses (``result``, or ``error``
  ``{code: HTTP status, message, data: {message}}`` with that HTTP status).
  A refusal is the same ``401`` with ``{"jsonrpc": "2.0", "id": null,
  "error": {"code": 401, "message": "unauthorized"}}``.

On a server with several databases, the sender names the database in the
``X-Odoo-Database`` header (Odoo's own routing); with one database nothing
is needed."""
import json
import logging

from odoo import http
from odoo.exceptions import MissingError, UserError
from odoo.http import request

from ..engine.doors import webhook_signature as signature
from ..engine.text.clean_text import is_blank

_logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 100_000
MAX_INT = 2**31 - 1
UNAUTHORIZED = {"error": "unauthorized"}


class BadRequest(Exception):
    """The authentic request's body cannot be used; the text says why."""


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_INT:
        raise BadRequest(f"{name} must be a whole number from 1 to {MAX_INT}.")
    return value


class AgenticAiWebhookController(http.Controller):

    def _authenticate(self, route):
        """``(webhook, body, api_key)`` for a request to ``route``: ``api_key``
        whether it uses the spec's key (no ``X-Agentic-Webhook`` header);
        ``body`` the raw bytes of an authentic request, else None (refused,
        logged here); ``webhook`` the integration (sudo) of an authentic
        request of the integration scheme, an empty recordset otherwise."""
        headers = request.httprequest.headers
        key_id = headers.get(signature.HEADER_WEBHOOK)
        delivery_id = headers.get(signature.HEADER_DELIVERY)
        api_key = key_id is None
        body = self._body()
        Webhook = request.env["agentic.ai.webhook"].sudo()
        webhook = Webhook.browse() if api_key else Webhook._find_by_key(key_id)
        timestamp, signed = headers.get(signature.HEADER_TIMESTAMP), headers.get(signature.HEADER_SIGNATURE)
        if body is None:
            failed = "body too large"
        elif api_key:
            failed = Webhook._api_key_failed_check(timestamp, signed, delivery_id, body, signature.now())
        elif not webhook:
            failed = "unknown or archived integration"
        else:
            failed = webhook._failed_check(timestamp, signed, delivery_id, body, signature.now())
        if not failed:
            return webhook, body, api_key
        sender = ("the webhook API key" if api_key else
                  f"integration {webhook.id} ({webhook.name})" if webhook else f"integration {(key_id or '')[:64]!r}")
        _logger.warning("Webhook request to %s refused (%s): %s, delivery %r, from %s", route, failed, sender,
                        (delivery_id or "")[:64], request.httprequest.remote_addr)
        return webhook, None, api_key

    @staticmethod
    def _body():
        """The raw body (bytes), None when longer than MAX_BODY_BYTES. A body
        sent as a form (``application/x-www-form-urlencoded``) has already
        been parsed by Odoo and reads empty: senders use ``application/json``."""
        length = request.httprequest.content_length
        if length is not None and length > MAX_BODY_BYTES:
            return None
        body = request.httprequest.get_data()
        return body if len(body) <= MAX_BODY_BYTES else None

    @staticmethod
    def _payload(body):
        """The body as a JSON object (dict); BadRequest otherwise."""
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested too deep to parse
            raise BadRequest("The body must be a JSON object.") from None
        if not isinstance(payload, dict):
            raise BadRequest("The body must be a JSON object.")
        return payload

    @classmethod
    def _call(cls, body):
        """``(id, params)`` of a JSON-RPC 2.0 call (the spec's scheme):
        ``params`` a JSON object; BadRequest otherwise. ``id`` is echoed in
        the answer, ``method`` is not read (Odoo's clients send ``call``)."""
        envelope = cls._payload(body)
        if envelope.get("jsonrpc", "2.0") != "2.0" or not isinstance(envelope.get("params"), dict):
            raise BadRequest('The body must be a JSON-RPC 2.0 call: {"jsonrpc": "2.0", "method": "call", '
                             '"params": {...}, "id": ...}.')
        call_id = envelope.get("id")
        return (call_id if isinstance(call_id, (str, int)) and not isinstance(call_id, bool) else None), \
            envelope["params"]

    @staticmethod
    def _answer(api_key, call_id, status, result=None, error=None, message=None):
        """The HTTP answer: plain JSON for the integration scheme, a
        JSON-RPC response (HTTP 200 with ``result``, or ``error`` with
        ``status``) for the API key's."""
        if not api_key:
            payload = result if error is None else {"error": error, **({"message": message} if message else {})}
            return request.make_json_response(payload, status=status)
        if error is None:
            return request.make_json_response({"jsonrpc": "2.0", "id": call_id, "result": result}, status=200)
        return request.make_json_response({"jsonrpc": "2.0", "id": call_id, "error": {
            "code": status, "message": error, **({"data": {"message": message}} if message else {})}},
            status=status)

    @http.route("/agentic_ai/webhook/trigger", type="http", auth="none", methods=["POST"], csrf=False,
                save_session=False, readonly=False)
    def trigger(self):
        """Queue a run of an integration's agent. The event: the body (a JSON
        object) or, with the API key, the call's ``params``: ``{"message":
        optional text, "thread_id": optional id of one of the integration's
        threads, "agent": the agent's code (API key only; needed when
        several integrations accept it), ...}``; the other keys are passed
        to the agent as data. Answers at once with ``{"thread_id",
        "state"}`` (the thread's state): ``202`` (the API key's: a JSON-RPC
        ``result``, HTTP 200); a duplicate delivery is not processed again
        and gets ``"duplicate": true`` with the first delivery's thread.
        Errors: 400 bad body, 401 refused, 404 thread not of this
        integration (API key: no integration accepts the key for that agent),
        409 the agent cannot run or the thread is busy (nothing was
        recorded: the sender may retry)."""
        webhook, body, api_key = self._authenticate("trigger")
        if body is None:
            return self._refused(api_key)
        headers = request.httprequest.headers
        timestamp, delivery_id = headers[signature.HEADER_TIMESTAMP], headers.get(signature.HEADER_DELIVERY)
        digest = signature.content_digest(timestamp, body)
        call_id = None
        try:
            if api_key:
                call_id, payload = self._call(body)
            else:
                payload = self._payload(body)
            message = payload.pop("message", None)
            # Blank as every door judges a message (zero-width and control characters too): bad input, not a retry.
            if message is not None and (not isinstance(message, str) or is_blank(message)):
                raise BadRequest("message must be a non-empty text.")
            thread_id = payload.pop("thread_id", None)
            if thread_id is not None:
                _positive_int(thread_id, "thread_id")
            agent_code = payload.pop("agent", None) if api_key else None
            if agent_code is not None and (not isinstance(agent_code, str) or not agent_code.strip()):
                raise BadRequest("agent must be the code of an agent (a text).")
        except BadRequest as error:
            return self._answer(api_key, call_id, 400, error="bad_request", message=str(error))
        try:
            with request.env.cr.savepoint():
                if api_key:
                    webhook = webhook._for_api_key(agent_code, thread_id)
                # No delivery id: the signed content names it, with a space no sender's id may hold.
                thread, duplicate = webhook._receive(delivery_id or f"signed {digest}", digest, message=message,
                                                     data=payload, thread_id=thread_id)
        except MissingError as error:
            return self._answer(api_key, call_id, 404, error="not_found", message=str(error) if api_key else None)
        except UserError as error:
            _logger.warning("Webhook integration %s (%s): delivery %r not run: %s", webhook.id, webhook.name,
                            delivery_id, error)
            return self._answer(api_key, call_id, 409, error="not_run", message=str(error))
        _logger.info("Webhook integration %s%s: delivery %r %s, thread %s", webhook.id,
                     " (webhook API key)" if api_key else "", delivery_id or digest[:16],
                     "was a duplicate, not processed again" if duplicate else "queued", thread.id)
        answer = {"thread_id": thread.id or None, "state": thread.sudo().state or None}
        if duplicate:
            answer["duplicate"] = True
        return self._answer(api_key, call_id, 202, result=answer)

    @http.route("/agentic_ai/webhook/status", type="http", auth="none", methods=["POST"], csrf=False,
                save_session=False)
    def status(self):
        """State of one of the integration's threads (with the API key: of
        the integrations that accept it). Event ``{"thread_id": N}``, signed
        as for ``trigger`` (the delivery id is checked, not recorded:
        reading a status changes nothing). Answers ``{"thread_id", "state",
        "reply"}`` (200, or a JSON-RPC ``result``), ``reply`` being the
        agent's answer to the last message (null until it has answered).
        Errors: 400 bad body, 401 refused, 404 no such thread of this
        integration (another integration's thread included)."""
        webhook, body, api_key = self._authenticate("status")
        if body is None:
            return self._refused(api_key)
        call_id = None
        try:
            if api_key:
                call_id, payload = self._call(body)
            else:
                payload = self._payload(body)
            thread_id = _positive_int(payload.get("thread_id"), "thread_id")
        except BadRequest as error:
            return self._answer(api_key, call_id, 400, error="bad_request", message=str(error))
        try:
            if api_key:
                webhook = webhook._api_key_thread(thread_id).webhook_id
            return self._answer(api_key, call_id, 200, result=webhook._thread_status(thread_id))
        except MissingError as error:
            return self._answer(api_key, call_id, 404, error="not_found", message=str(error) if api_key else None)

    @staticmethod
    def _refused(api_key):
        """The one answer to every refused request (401)."""
        if api_key:
            return request.make_json_response({"jsonrpc": "2.0", "id": None, "error": {
                "code": 401, "message": "unauthorized"}}, status=401)
        return request.make_json_response(UNAUTHORIZED, status=401)
