"""HTTP helpers shared by the adapters: one place that turns transport and
HTTP failures into ``LLMError`` with the right ``retryable`` flag and the
provider's own error message, and never leaks the API key."""
from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator

import httpx

try:
    import resource
except ImportError:  # Windows: no file limits to read
    resource = None

from .base import CONTEXT_OVERFLOW_RE, MAX_TOKENS_RE, EncodedJSON, LLMError

_MAX_ERROR_CHARS = 500
_PUBLIC_HEADERS = {"content-type", "accept", "anthropic-version", "user-agent"}
STREAM_TIMEOUT_FACTOR = 10  # a stream may last this many timeouts in all


def _provider_message(text: str, content_type: str, reason: str) -> str:
    """The ``error.message`` a provider sent, else the start of the body
    (an HTML error page is named, not quoted)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        if "html" in content_type or text.lstrip()[:1] == "<":
            return f"{reason or 'error'} (an HTML error page, probably from a proxy or gateway)"
        return text[:_MAX_ERROR_CHARS]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)[:_MAX_ERROR_CHARS]
    if error:
        return str(error)[:_MAX_ERROR_CHARS]
    return json.dumps(data)[:_MAX_ERROR_CHARS]


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header in seconds; None when absent,
    negative, not finite or an HTTP date (then the normal back-off applies)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def redact(text: str, headers: dict) -> str:
    """``text`` with every header value that could be a secret (8+
    characters, stripped or not) replaced by ``***``."""
    for name, value in headers.items():
        if name.lower() in _PUBLIC_HEADERS:
            continue
        for secret in {str(value), str(value).strip(), str(value).removeprefix("Bearer ").strip()}:
            if len(secret) >= 8 and secret in text:
                text = text.replace(secret, "***")
    return text


def raise_for_status(response: httpx.Response, text: str, headers: dict) -> None:
    """Raise LLMError for a non-2xx response whose body is ``text``; 429 and
    5xx are retryable. The provider's message is quoted with any key it
    repeats redacted."""
    status = response.status_code
    if status < 400:
        return
    message = _provider_message(text, response.headers.get("content-type", ""), response.reason_phrase)
    # The provider's own message only (a body may echo the request's text), and not a max_tokens too large for
    # the window ("'max_tokens' is too large … maximum context length is 4096"): that is the provider's setting.
    overflow = status in (400, 413, 422) and bool(CONTEXT_OVERFLOW_RE.search(message)) \
        and not MAX_TOKENS_RE.search(message)
    raise LLMError(
        redact(f"HTTP {status} from {response.request.url.host}: {message}", headers),
        status=status,
        retryable=(status == 429 or status >= 500) and not overflow,
        retry_after=_retry_after(response.headers.get("retry-after")) if status in (429, 503, 529) else None,
        context_overflow=overflow,
    )


def _transport_error(exc: Exception, url: str, headers: dict) -> LLMError:
    try:
        host = httpx.URL(url).host
    except Exception:  # noqa: BLE001 - an unusable URL
        host = "the provider"
    if isinstance(exc, httpx.TimeoutException):
        return LLMError(f"timed out talking to {host}", retryable=True)
    if isinstance(exc, (httpx.LocalProtocolError, httpx.InvalidURL, httpx.UnsupportedProtocol, UnicodeError,
                        TypeError, ValueError)):
        # Our request could not even be built: a configuration error, not retried.
        return LLMError(redact(f"invalid request settings for {host} (check the base URL, API key and extra "
                               f"headers): {type(exc).__name__}: {exc}", headers))
    return LLMError(redact(f"cannot reach {host}: {type(exc).__name__}: {exc}", headers), retryable=True)


def _decode(text: str, host: str):
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise LLMError(f"invalid JSON from {host}: {text[:200]}", retryable=True) from None


_client: httpx.Client | None = None
_client_lock = threading.Lock()


def _connection_bound() -> int:
    """The process's connections to the providers at most: a quarter of the
    files it may open (``RLIMIT_NOFILE``'s soft limit: each streamed chat
    also holds its client's socket, and the process its database
    connections and files), at least 50; 1000 when the limit is unknown."""
    try:
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (AttributeError, OSError, ValueError):  # no ``resource`` module, or no such limit
        return 1000
    return 1000 if soft == resource.RLIM_INFINITY else max(50, soft // 4)


#: The process's connections to the providers: one per call in flight, up to ``_connection_bound`` (the gevent
#: server streams hundreds of runs at once; a bound of 50 made the calls past it queue inside httpcore's pool,
#: unseen, and its assignment of queued requests to connections cost 7 % of that process's CPU at 200 chats:
#: bench/load.py); the idle ones kept for the next calls. A provider's own bound on concurrent calls answers 429,
#: which is retried.
LIMITS = httpx.Limits(max_connections=_connection_bound(), max_keepalive_connections=100)


def client() -> httpx.Client:
    """The process-wide httpx client: connections are pooled and the TLS
    context is built once (a new client per call costs ~40 ms, measured in
    bench/adapter_overhead.py). httpx clients are thread-safe."""
    global _client  # noqa: PLW0603 - one client per process, built on first use
    if _client is None:
        with _client_lock:
            if _client is None:
                _client = httpx.Client(limits=LIMITS)
    return _client


def _payload(body: dict) -> bytes:
    """``body`` as JSON bytes; its ``EncodedJSON`` values written as they
    are (after the other keys). Raises LLMError."""
    ready = {key: value for key, value in body.items() if isinstance(value, EncodedJSON)}
    try:
        text = json.dumps({key: value for key, value in body.items() if key not in ready} if ready else body,
                          allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise LLMError(f"the request cannot be sent as JSON: {exc}") from None
    if ready:
        parts = [text[1:-1]] if text != "{}" else []
        text = "{" + ", ".join([*parts, *(f"{json.dumps(key)}: {value}" for key, value in ready.items())]) + "}"
    return text.encode()


def post_json(url: str, headers: dict, body: dict, timeout: float) -> dict:
    """POST ``body`` as JSON, return the decoded JSON answer. ``timeout``
    (seconds) bounds each network wait and the whole call. Raises LLMError."""
    deadline = time.monotonic() + timeout
    content = _payload(body)
    try:
        with client().stream("POST", url, headers={**headers, "Content-Type": "application/json"}, content=content,
                             timeout=timeout) as response:
            chunks = []
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer took longer than the timeout")
            text = b"".join(chunks).decode(response.encoding or "utf-8", "replace")
    except (httpx.HTTPError, UnicodeError, TypeError, ValueError) as exc:
        raise _transport_error(exc, url, headers) from None
    raise_for_status(response, text, headers)
    return _decode(text, response.request.url.host)


def stream_lines(url: str, headers: dict, body: dict, timeout: float) -> Iterator[str]:
    """POST ``body`` and yield the response's non-empty lines as they arrive
    (server-sent events or newline-delimited JSON). ``timeout`` bounds each
    network wait, and the whole stream at ten times that. Raises LLMError."""
    deadline = time.monotonic() + timeout * STREAM_TIMEOUT_FACTOR
    content = _payload(body)
    try:
        with client().stream("POST", url, headers={**headers, "Content-Type": "application/json"}, content=content,
                             timeout=timeout) as response:
            if response.status_code >= 400:
                raise_for_status(response, response.read().decode("utf-8", "replace"), headers)
            for line in response.iter_lines():
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the stream took longer than its time limit")
                if line.strip():
                    yield line
    except (httpx.HTTPError, UnicodeError, TypeError, ValueError) as exc:
        raise _transport_error(exc, url, headers) from None


def sse_json_events(lines: Iterator[str]) -> Iterator[dict]:
    """The JSON objects of server-sent ``data:`` lines; other lines, and
    data that is not a JSON object, are skipped."""
    for line in lines:
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:])
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict):
            yield event
