"""Signed webhook requests (spec 000 §11.2, issue 10 point 5, case BR-17).

A sender signs each request with its integration's secret::

    signed  = timestamp + "." + body      # bytes: ASCII unix seconds, ".", the raw HTTP body
    header  = "sha256=" + hex(HMAC-SHA256(secret as UTF-8, signed))

and sends, next to the body as is (never re-serialised):

    X-Agentic-Webhook:   the integration's public id (whk_...)
    X-Agentic-Timestamp: unix seconds, as ASCII digits
    X-Agentic-Delivery:  the sender's id of this delivery, unique per integration
    X-Agentic-Signature: sha256=<64 hex digits>

The spec's scheme (§11.2: one key, ``agentic_ai.webhook_api_key`` in
``ir.config_parameter``) signs the same way with that key, and leaves out
``X-Agentic-Webhook`` (the body, a JSON-RPC 2.0 call, names the agent);
``X-Agentic-Delivery`` is optional there (a delivery is then known by what
it signed). Both share the timestamp window and the replay guard.

Plain Python (no Odoo): the controller passes the headers, the raw body and
the server's clock (``now()``, the one place the time is read), so the checks
run the same in a unit test with any ``now``. Nothing here logs: the caller
logs the name of the failed check, never the secret or the signature."""
from __future__ import annotations

import hashlib
import hmac
import re
import time

HEADER_WEBHOOK = "X-Agentic-Webhook"
HEADER_TIMESTAMP = "X-Agentic-Timestamp"
HEADER_DELIVERY = "X-Agentic-Delivery"
HEADER_SIGNATURE = "X-Agentic-Signature"

TOLERANCE_SECONDS = 300  # a timestamp this far from the server's clock, either way, is refused
SECRET_PREFIX = "whsec_"
API_KEY_PREFIX = "whkey_"  # the spec's one key (agentic_ai.webhook_api_key)
KEY_ID_PREFIX = "whk_"

_TIMESTAMP_RE = re.compile(r"[0-9]{1,12}")
_SIGNATURE_RE = re.compile(r"sha256=([0-9a-fA-F]{64})")
_DELIVERY_RE = re.compile(r"[\x21-\x7e]{1,200}")  # printable ASCII, no spaces
_KEY_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def now() -> float:
    """The server's clock, unix seconds: what timestamps are checked against."""
    return time.time()


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    """The ``X-Agentic-Signature`` value of ``body`` sent at ``timestamp``."""
    signed = str(timestamp).encode("ascii") + b"." + body
    return "sha256=" + hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()


def valid_key_id(value: str | None) -> bool:
    """Whether ``value`` may be an integration's public id (checked before any lookup)."""
    return bool(value) and bool(_KEY_ID_RE.fullmatch(value))


def valid_delivery(value: str | None) -> bool:
    """Whether ``value`` is a usable delivery id: 1 to 200 printable ASCII characters, no spaces."""
    return bool(value) and bool(_DELIVERY_RE.fullmatch(value))


def failed_check(secret: str, timestamp: str | None, signature: str | None, body: bytes,
                 at: float) -> str | None:
    """The name of the first check the request fails, or None when it passes.

    ``timestamp`` and ``signature`` are the header values as received (None
    when absent), ``body`` the raw bytes, ``at`` the server's clock in unix
    seconds. Checks: ``timestamp`` (ASCII digits, within TOLERANCE_SECONDS of
    ``at``), then ``signature`` (``sha256=`` and 64 hex digits, equal to the
    HMAC of ``timestamp + "." + body``, compared in constant time). Never
    raises on malformed input."""
    if not timestamp or not _TIMESTAMP_RE.fullmatch(timestamp):
        return "timestamp malformed"
    if abs(at - int(timestamp)) > TOLERANCE_SECONDS:
        return "timestamp outside the window"
    match = _SIGNATURE_RE.fullmatch(signature or "")
    if not match:
        return "signature malformed"
    expected = sign(secret, timestamp, body).removeprefix("sha256=")
    if not hmac.compare_digest(expected.encode("ascii"), match.group(1).lower().encode("ascii")):
        return "signature mismatch"
    return None


def content_digest(timestamp: str, body: bytes) -> str:
    """sha256 hex of exactly what is signed: a request replayed under a new
    delivery id has the same digest (the delivery id is not signed)."""
    return hashlib.sha256(timestamp.encode("ascii") + b"." + body).hexdigest()
