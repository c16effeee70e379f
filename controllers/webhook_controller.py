"""Webhook endpoints (spec 000 §11.2, issue 10 point 5, case BR-17): an
outside system triggers an agent and reads how its run went.

Both routes take a signed POST (engine/doors/webhook_signature.py describes the
headers and the signature), read the raw body bytes (the signature covers
them exactly, so the body is never parsed before it is verified) and answer
JSON. Every refusal of authentication is the same ``401 {"error":
"unauthorized"}``, whichever check failed; the failed check is logged as a
WARNING with the integration, never the secret or the signature.

On a server with several databases, the sender names the database in the
``X-Odoo-Database`` header (Odoo's own routing); with one database nothing
is needed."""
import json
import logging

from odoo import http
from odoo.exceptions import MissingError, UserError
from odoo.http import request

from ..engine.doors import webhook_signature as signature

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
        """``(webhook, body)`` for an authentic request to ``route``:
        ``webhook`` as superuser, ``body`` the raw bytes. ``webhook`` is
        None when the request is refused (logged here)."""
        headers = request.httprequest.headers
        key_id = headers.get(signature.HEADER_WEBHOOK)
        delivery_id = headers.get(signature.HEADER_DELIVERY)
        body = self._body()
        webhook = request.env["agentic.ai.webhook"]._find_by_key(key_id)
        if body is None:
            failed = "body too large"
        elif not webhook:
            failed = "unknown or archived integration"
        else:
            failed = webhook._failed_check(headers.get(signature.HEADER_TIMESTAMP),
                                           headers.get(signature.HEADER_SIGNATURE), delivery_id, body,
                                           signature.now())
        if not failed:
            return webhook, body
        _logger.warning("Webhook request to %s refused (%s): integration %s, delivery %r, from %s",
                        route, failed, f"{webhook.id} ({webhook.name})" if webhook else repr((key_id or "")[:64]),
                        (delivery_id or "")[:64], request.httprequest.remote_addr)
        return None, None

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

    @staticmethod
    def _refused():
        return request.make_json_response(UNAUTHORIZED, status=401)

    @staticmethod
    def _error(status, error, message=None):
        return request.make_json_response({"error": error, **({"message": message} if message else {})},
                                          status=status)

    @http.route("/agentic_ai/webhook/trigger", type="http", auth="none", methods=["POST"], csrf=False,
                save_session=False, readonly=False)
    def trigger(self):
        """Queue a run of the integration's agent. Body: a JSON object,
        ``{"message": optional text, "thread_id": optional id of one of the
        integration's threads, ...}``; the keys other than these two are
        passed to the agent as data. Answers ``202 {"thread_id", "state"}``
        at once (the thread's state); a duplicate delivery is not processed
        again and gets ``202 {"thread_id", "state", "duplicate": true}`` with
        the first delivery's thread. Errors: 400 bad body, 401 refused, 404
        thread not of this integration, 409 the agent cannot run or the
        thread is busy (nothing was recorded: the sender may retry)."""
        webhook, body = self._authenticate("trigger")
        if not webhook:
            return self._refused()
        headers = request.httprequest.headers
        timestamp, delivery_id = headers[signature.HEADER_TIMESTAMP], headers[signature.HEADER_DELIVERY]
        try:
            payload = self._payload(body)
            message = payload.pop("message", None)
            if message is not None and (not isinstance(message, str) or not message.strip()):
                raise BadRequest("message must be a non-empty text.")
            thread_id = payload.pop("thread_id", None)
            if thread_id is not None:
                _positive_int(thread_id, "thread_id")
        except BadRequest as error:
            return self._error(400, "bad_request", str(error))
        try:
            with request.env.cr.savepoint():
                thread, duplicate = webhook._receive(delivery_id, signature.content_digest(timestamp, body),
                                                     message=message, data=payload, thread_id=thread_id)
        except MissingError:
            return self._error(404, "not_found")
        except UserError as error:
            _logger.warning("Webhook integration %s (%s): delivery %r not run: %s", webhook.id, webhook.name,
                            delivery_id, error)
            return self._error(409, "not_run", str(error))
        _logger.info("Webhook integration %s: delivery %r %s, thread %s", webhook.id, delivery_id,
                     "was a duplicate, not processed again" if duplicate else "queued", thread.id)
        answer = {"thread_id": thread.id or None, "state": thread.sudo().state or None}
        if duplicate:
            answer["duplicate"] = True
        return request.make_json_response(answer, status=202)

    @http.route("/agentic_ai/webhook/status", type="http", auth="none", methods=["POST"], csrf=False,
                save_session=False)
    def status(self):
        """State of one of the integration's threads. Body ``{"thread_id": N}``,
        signed as for ``trigger`` (the delivery id is checked, not recorded:
        reading a status changes nothing). Answers ``200 {"thread_id",
        "state", "reply"}``, ``reply`` being the agent's answer to the last
        message (null until it has answered). Errors: 400 bad body, 401
        refused, 404 no such thread of this integration (another
        integration's thread included)."""
        webhook, body = self._authenticate("status")
        if not webhook:
            return self._refused()
        try:
            thread_id = _positive_int(self._payload(body).get("thread_id"), "thread_id")
        except BadRequest as error:
            return self._error(400, "bad_request", str(error))
        try:
            return request.make_json_response(webhook._thread_status(thread_id))
        except MissingError:
            return self._error(404, "not_found")
