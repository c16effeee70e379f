"""Provider-neutral LLM interface (spec 000 §6.1).

Everything in ``llm/`` is plain Python over httpx: no Odoo import, so the
adapters can be tested against any HTTP peer and reused outside Odoo.

Messages passed to an adapter use the OpenAI Chat Completions shape, which is
the neutral format of this package::

    {"role": "system" | "user" | "assistant" | "tool",
     "content": str | None,
     "tool_calls": [{"id": str, "name": str, "arguments": dict,     # assistant only
                     "id_generated": bool,     # True: the id is ours, not the provider's
                     "provider_data": dict}],  # sent back as the provider gave it
     "tool_call_id": str, "name": str}                              # tool only

Tool schemas are ``{"name", "description", "parameters"}`` dicts as produced by
``agentic.ai.tool.to_llm_schema()``; each adapter converts both to its wire
format.
"""
from __future__ import annotations

import functools
import inspect
import json
import logging
import operator
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field

from .tokenizer import count_tokens
from .usage import Usage, measured_usage

_logger = logging.getLogger(__name__)

# Output tokens one call may write unless the provider says otherwise: it bounds how long one answer runs (a
# local model writing 20 tokens a second takes about 50 s for 1,024; one that never stops cannot run for minutes).
DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True)
class ProviderConfig:
    """Connection settings of one provider, copied from ``agentic.ai.llm.provider``.

    ``timeout`` is in seconds; costs are USD per token; ``extra_headers`` are
    added to every request and ``extra_params`` merged into every request body.
    ``tool_choice`` is sent with the tools in each API's form (OpenAI
    ``tool_choice``, Gemini ``toolConfig.functionCallingConfig.mode``,
    Anthropic ``tool_choice.type``): some servers return tool calls only
    when it is set (llama-cpp-python's ``chatml-function-calling``).
    """
    provider_type: str
    base_url: str
    model: str
    api_key: str = ""
    api_version: str = ""
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.1
    timeout: float = 120.0
    supports_tool_calling: bool = True
    tool_choice: str = ""  # "auto", "required" or "none", sent with the tools; "" leaves it to the server
    supports_streaming: bool = True
    embedding_model: str = ""
    tokenizer_model: str = ""  # model whose tokenizer counts tokens (an Azure deployment's base model)
    extra_headers: dict = field(default_factory=dict)
    extra_params: dict = field(default_factory=dict)

    def __repr__(self):  # never show the key, not even in a traceback
        return (f"ProviderConfig(provider_type={self.provider_type!r}, base_url={self.base_url!r}, "
                f"model={self.model!r}, api_key={'***' if self.api_key else ''!r})")


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model.

    ``arguments`` is the parsed JSON object; ``raw_arguments`` the text the
    model sent (kept for the audit log and for replaying history).
    ``parse_error`` is set, and ``arguments`` is ``{}``, when the text was not a
    JSON object: such a call must never be executed.
    """
    id: str
    name: str
    arguments: dict
    raw_arguments: str = ""
    parse_error: str | None = None
    id_generated: bool = False  # the provider sent no usable id: ours is not replayed to it (Gemini)
    provider_data: dict = field(default_factory=dict)  # opaque, sent back with the call (Gemini thoughtSignature)


@dataclass(frozen=True)
class LLMResponse:
    """A complete (non-streamed) model answer. ``usage`` holds the
    provider's figures, the ones it did not send estimated and flagged
    (``llm/usage.py``)."""
    content: str | None
    tool_calls: list[ToolCall]
    usage: Usage
    model: str
    finish_reason: str

    @property
    def input_tokens(self) -> int:
        return self.usage.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.usage.output_tokens


@dataclass(frozen=True)
class LLMStreamChunk:
    """One piece of a streamed answer: a text delta, or tool calls that are
    complete (never partial JSON), and on the last chunk the finish reason and
    ``usage`` (None on the other chunks)."""
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str = ""

    @property
    def input_tokens(self) -> int:
        return self.usage.input_tokens if self.usage else 0

    @property
    def output_tokens(self) -> int:
        return self.usage.output_tokens if self.usage else 0


# How providers say a request holds more tokens than the model reads (OpenAI and OpenAI-compatible servers
# "context_length_exceeded" / "maximum context length"; llama.cpp "exceed context window" / "n_ctx"; Anthropic
# "prompt is too long"; Gemini "input token count ... exceeds the maximum number of tokens"; vLLM, Ollama).
CONTEXT_OVERFLOW_RE = re.compile(
    r"context_length_exceeded|maximum context length|context length|context window|context size|n_ctx"
    r"|prompt is too long|too many tokens|input token count.*exceeds|exceeds the maximum number of tokens"
    r"|input is too long|reduce the length", re.I)
MAX_TOKENS_RE = re.compile(r"max_(completion_|new_|output_)?tokens", re.I)


class LLMError(Exception):
    """A provider call failed. ``retryable`` is True for timeouts, connection
    errors, HTTP 429 and 5xx; ``status`` is the HTTP status (0 when none).
    ``context_overflow``: the request holds more tokens than the model reads
    (a 4xx naming it, ``CONTEXT_OVERFLOW_RE``): never retried as it is, the
    history must be trimmed first.
    ``usage``: what the failed call consumed when the provider had already
    answered part of it (a stream broken mid-answer), estimated; else None.
    The message never contains the API key."""

    def __init__(self, message: str, *, status: int = 0, retryable: bool = False, retry_after: float | None = None,
                 context_overflow: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.context_overflow = context_overflow
        self.usage: Usage | None = None


def _guarded(method):
    """Make ``method`` raise only LLMError: any other exception from reading
    an odd provider answer becomes a retryable LLMError naming it."""
    def convert(exc):
        _logger.warning("%s.%s failed on the provider's answer", method.__qualname__.split(".")[0], method.__name__,
                        exc_info=exc)
        return LLMError(f"unexpected {type(exc).__name__} reading the provider's answer: {str(exc)[:200]}",
                        retryable=True)

    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def generator(self, *args, **kwargs):
            try:
                yield from method(self, *args, **kwargs)
            except LLMError:
                raise
            except Exception as exc:  # the contract: LLMError only
                raise convert(exc) from exc
        return generator

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except LLMError:
            raise
        except Exception as exc:  # the contract: LLMError only
            raise convert(exc) from exc
    return wrapper


class EncodedJSON(str):
    """A value of a request body that is JSON text already, written into
    the body as it is (``http._payload``): what every call of a run sends
    unchanged (the tool schemas) is encoded once (``encoded``)."""


def encoded(value) -> EncodedJSON:
    """``value`` as JSON text for a request body. Raises LLMError when it
    is not JSON (as ``http._payload`` does)."""
    try:
        return EncodedJSON(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise LLMError(f"the request cannot be sent as JSON: {exc}") from None


TOOLS_KEPT = 64  # tool lists whose request JSON the process keeps (``BaseLLMAdapter._tools_json``)
# (adapter class, ids of the tool schemas) -> (the list, its JSON): the schemas are the run settings' own dicts,
# shared by the runs of an agent (models/agent.py ``_run_settings``), so one entry serves them all.
_TOOLS_JSON: dict[tuple, tuple[list, str]] = {}


class BaseLLMAdapter(ABC):
    """Interface every provider adapter implements (spec 000 §6.1).

    Subclasses' ``chat_completion``, ``chat_completion_stream`` and ``embed``
    are wrapped so that they raise LLMError and nothing else."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("chat_completion", "chat_completion_stream", "embed"):
            if name in cls.__dict__:
                setattr(cls, name, _guarded(cls.__dict__[name]))

    def __init__(self, config: ProviderConfig):
        self.config = config

    def _tools_json(self, tools: list[dict], wire) -> str:
        """``wire(tools)`` (this adapter class's form of the tool schemas) as
        JSON text for the request body (``EncodedJSON``), made once per list
        of the same schema objects in the process: every call of every run of
        an agent sends them unchanged (``RunContext.llm_schemas``), tens of
        kilobytes that would otherwise be converted and encoded each time.
        The last ``TOOLS_KEPT`` are kept, a few MB at most. Raises LLMError
        when they are not JSON."""
        key = (type(self), tuple(map(id, tools)))
        kept = _TOOLS_JSON.get(key)
        if kept is not None and len(kept[0]) == len(tools) and all(map(operator.is_, kept[0], tools)):
            return kept[1]
        text = encoded(wire(tools))
        if len(_TOOLS_JSON) >= TOOLS_KEPT:
            _TOOLS_JSON.clear()
        _TOOLS_JSON[key] = (list(tools), text)  # the schemas kept with their text: their ids are not reused meanwhile
        return text

    def _messages_json(self, messages: list[dict], wire, cache: dict | None) -> list[dict] | EncodedJSON:
        """The request body's list of messages: ``[wire(m) for m in
        messages]`` (this adapter class's form of each neutral message).

        With ``cache`` (a dict kept by the caller for as long as it keeps
        the message objects: one turn, engine/turn/llm_calls.py), the list
        is JSON text (``EncodedJSON``) and each message's text is made once:
        used again while the message is the same object with the same
        content and the same call objects (a transcript only ever appends a
        call to its assistant message; a changed message is a new object).
        A turn's later calls send the messages of the earlier ones
        unchanged; converting and encoding them again at each step was about
        a third of the HTTP client's CPU per call at 200 prior messages
        (issue 26 point 6). The entries keep their message objects, so no id is reused
        while the cache lives. Raises LLMError when a message is not JSON."""
        if cache is None:
            return [wire(message) for message in messages]
        parts = []
        for message in messages:
            calls = tuple(message.get("tool_calls") or ())
            key = (type(self), id(message))
            kept = cache.get(key)
            if (kept is None or kept[0] is not message or kept[1] is not message.get("content")
                    or len(kept[2]) != len(calls) or not all(map(operator.is_, kept[2], calls))):
                kept = cache[key] = (message, message.get("content"), calls, encoded(wire(message)))
            parts.append(kept[3])
        return EncodedJSON("[" + ", ".join(parts) + "]")

    @abstractmethod
    def chat_completion(self, messages: list[dict], tools: list[dict] | None = None, **kwargs) -> LLMResponse:
        """Send the conversation, return the answer. ``kwargs``: ``model``,
        ``max_tokens``, ``temperature`` for this call, ``timeout`` (seconds
        of one network wait, the provider's *Timeout* by default), and
        ``wire_cache``, a dict the caller keeps while it keeps the message
        objects, where an adapter may keep each message's request text
        (``_messages_json``). Raises LLMError."""

    @abstractmethod
    def chat_completion_stream(self, messages: list[dict], tools: list[dict] | None = None,
                               **kwargs) -> Iterator[LLMStreamChunk]:
        """Send the conversation, yield the answer as it arrives. Raises LLMError."""

    @abstractmethod
    def embed(self, texts: list[str]) -> list[list[float]]:
        """One embedding vector per text, in order. Raises LLMError."""

    def embedding_dimension(self) -> int:
        """Length of this adapter's embedding vectors (one probe call, then
        cached on the adapter). Raises LLMError."""
        if not getattr(self, "_dimension", None):
            self._dimension = len(self.embed(["dimension probe"])[0])
        return self._dimension

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for this adapter's model (or its configured
        ``tokenizer_model``); never raises."""
        return count_tokens(text, self.config.tokenizer_model or self.config.model)

    def usage(self, messages: list[dict], tools: list[dict] | None, text: str, calls: list[ToolCall],
              reasoning: str = "", **reported) -> Usage:
        """The call's ``Usage`` from the figures the provider sent
        (``reported``: ``measured_usage``'s keyword arguments, None for a
        figure not sent). A missing input total is estimated from
        ``messages`` and ``tools``, a missing output total from the answer's
        ``text``, ``calls`` and ``reasoning`` text, a missing reasoning
        figure from ``reasoning``: the same estimate for a streamed and a
        non-streamed answer, so that both give the same record."""
        return measured_usage(
            lambda: self.count_tokens(json.dumps([messages, tools or []], default=str)),
            lambda: self.count_tokens(text + "".join(c.name + c.raw_arguments for c in calls) + reasoning),
            estimate_reasoning=(lambda: self.count_tokens(reasoning)) if reasoning else None,
            **reported)


def append_turn(turns: list[dict], role: str, items: list, key: str) -> None:
    """Append ``items`` as a ``{"role": role, key: items}`` turn, merged into
    the previous turn when it has the same role (Gemini and Anthropic want
    alternating roles); nothing is appended for no items."""
    if not items:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1][key].extend(items)
    else:
        turns.append({"role": role, key: list(items)})


def embedding_inputs(texts) -> list[str]:
    """``texts`` as a list of strings (a single string is one text, not
    one text per character; numbers are not token ids)."""
    if isinstance(texts, str):
        return [texts]
    return ["" if t is None else str(t) for t in texts or []]


def checked_vectors(vectors, count: int) -> list[list[float]]:
    """``vectors`` if it is ``count`` lists of numbers, else LLMError."""
    if not isinstance(vectors, list) or len(vectors) != count or not all(
            isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v) for v in vectors):
        raise LLMError(f"the provider returned {len(vectors) if isinstance(vectors, list) else 'no'} valid vectors "
                       f"for {count} texts", retryable=True)
    return vectors


MAX_ARGUMENT_CHARS = 200_000  # longer tool arguments are refused, not parsed


def parse_tool_arguments(raw) -> tuple[dict, str | None]:
    """Turn a tool call's ``arguments`` as a provider sent it into a dict.

    Accepts a dict, a JSON object text, or a text holding a JSON text of an
    object (double-encoded). ``None`` and ``""`` give ``{}`` (the tool's schema
    then decides whether parameters were required). A JSON object inside a
    ```json fence, or followed by prose, is recovered. Anything else returns
    ``({}, error)`` where the error names what was wrong and shows a preview.
    """
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if not isinstance(raw, str):
        return {}, f"arguments must be a JSON object, got {type(raw).__name__}"
    text = raw.strip()
    if not text:
        return {}, None
    if len(text) > MAX_ARGUMENT_CHARS:
        return {}, f"arguments are too long ({len(text)} characters, at most {MAX_ARGUMENT_CHARS})"
    try:
        value = json.loads(text)
    except RecursionError:
        return {}, "arguments are nested too deeply"
    except json.JSONDecodeError as exc:  # a subclass of ValueError: before it
        value, recovered = _recover_json_object(text)
        if not recovered:
            preview = text if len(text) <= 120 else text[:120] + "…"
            return {}, f"arguments are not valid JSON ({exc.msg} at character {exc.pos}): {preview}"
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        return {}, f"arguments hold a value that cannot be read: {exc}"
    if isinstance(value, str):  # double-encoded
        return parse_tool_arguments(value) if value.strip()[:1] == "{" else ({}, "arguments must be a JSON object")
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got a JSON {type(value).__name__}"
    return value, None


def fenced_block(text: str) -> str | None:
    """The inside of the first ```...``` fence (a leading ``json`` tag
    removed), or None. Plain string search: linear in the text's length,
    whatever a model sends."""
    start = text.find("```")
    if start < 0:
        return None
    end = text.find("```", start + 3)
    if end < 0:
        return None
    inner = text[start + 3:end]
    return inner[4:] if inner[:4].lower() == "json" else inner


def _recover_json_object(text: str):
    """A JSON object in a ```json fence, or one followed by trailing prose."""
    inner = fenced_block(text)
    if inner is not None:
        try:
            return json.loads(inner), True
        except (json.JSONDecodeError, RecursionError):
            pass
    start = text.find("{")
    if start >= 0:
        try:
            value, _end = json.JSONDecoder().raw_decode(text[start:])
            return value, True
        except (json.JSONDecodeError, RecursionError):
            pass
    return None, False
