"""HTTP helpers shared by the adapters: one place that turns transport and
HTTP failures into ``LLMError`` with the right ``retryable`` flag and the
provider's own error message, and never leaks the API key."""
from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator

import httpx

from .base import LLMError

_MAX_ERROR_CHARS = 500


def _provider_message(response: httpx.Response) -> str:
    """The ``error.message`` a provider sent, else the start of the body
    (an HTML error page is named, not quoted)."""
    try:
        data = response.json()
    except ValueError:
        if "html" in response.headers.get("content-type", "") or response.text.lstrip()[:1] == "<":
            return f"{response.reason_phrase or 'error'} (an HTML error page, probably from a proxy or gateway)"
        return response.text[:_MAX_ERROR_CHARS]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)[:_MAX_ERROR_CHARS]
    if error:
        return str(error)[:_MAX_ERROR_CHARS]
    return json.dumps(data)[:_MAX_ERROR_CHARS]


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from a ``Retry-After`` header in seconds; None when absent,
    negative, not finite or an HTTP date (then the normal back-off applies)."""
    value = response.headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def raise_for_status(response: httpx.Response) -> None:
    """Raise LLMError for a non-2xx response; 429 and 5xx are retryable."""
    if response.status_code < 400:
        return
    status = response.status_code
    raise LLMError(
        f"HTTP {status} from {response.request.url.host}: {_provider_message(response)}",
        status=status,
        retryable=status == 429 or status >= 500,
        retry_after=_retry_after(response) if status == 429 else None,
    )


def _transport_error(exc: Exception, url: str) -> LLMError:
    host = httpx.URL(url).host
    if isinstance(exc, httpx.TimeoutException):
        return LLMError(f"timed out talking to {host}", retryable=True)
    return LLMError(f"cannot reach {host}: {type(exc).__name__}: {exc}", retryable=True)


_client: httpx.Client | None = None
_client_lock = threading.Lock()


def client() -> httpx.Client:
    """The process-wide httpx client: connections are pooled and the TLS
    context is built once (a new client per call costs ~40 ms, measured in
    bench/adapter_overhead.py). httpx clients are thread-safe."""
    global _client
    if _client is None:
        with _client_lock:
            if _client is None:
                _client = httpx.Client(limits=httpx.Limits(max_connections=50, max_keepalive_connections=10))
    return _client


def post_json(url: str, headers: dict, body: dict, timeout: float) -> dict:
    """POST ``body`` as JSON, return the decoded JSON answer. Raises LLMError."""
    try:
        response = client().post(url, headers=headers, json=body, timeout=timeout)
    except httpx.HTTPError as exc:
        raise _transport_error(exc, url) from None
    raise_for_status(response)
    try:
        return response.json()
    except ValueError:
        raise LLMError(f"invalid JSON from {response.request.url.host}: {response.text[:200]}", retryable=True) from None


def stream_lines(url: str, headers: dict, body: dict, timeout: float) -> Iterator[str]:
    """POST ``body`` and yield the response's non-empty lines as they arrive
    (server-sent events or newline-delimited JSON). Raises LLMError."""
    try:
        with client().stream("POST", url, headers=headers, json=body, timeout=timeout) as response:
            if response.status_code >= 400:
                response.read()
                raise_for_status(response)
            for line in response.iter_lines():
                if line.strip():
                    yield line
    except httpx.HTTPError as exc:
        raise _transport_error(exc, url) from None
