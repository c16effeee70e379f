"""OpenAI Chat Completions over httpx, for OpenAI, Azure OpenAI and any
OpenAI-compatible server (spec 000 §6.2).

Wire format: https://platform.openai.com/docs/api-reference/chat/create
(``tools`` as ``{"type": "function", "function": {...}}``, ``tool_calls`` with
``arguments`` as a JSON text, streaming as server-sent events ending with
``data: [DONE]``, the last one carrying ``usage`` when the request asks
``stream_options.include_usage``).
Usage (https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage):
``prompt_tokens`` (all input) of which ``prompt_tokens_details.cached_tokens``
were read from the prompt cache, ``completion_tokens`` (all output) of which
``completion_tokens_details.reasoning_tokens`` were reasoning. OpenAI-compatible
servers add: OpenRouter ``prompt_tokens_details.cache_write_tokens``
(https://openrouter.ai/docs/use-cases/usage-accounting), DeepSeek
``prompt_cache_hit_tokens`` (https://api-docs.deepseek.com/guides/kv_cache), and
the reasoning text as ``reasoning_content`` (DeepSeek, vLLM) or ``reasoning``
(Ollama, OpenRouter).
Azure: ``{base_url}/chat/completions?api-version=...`` with an ``api-key``
header, where ``base_url`` is the deployment URL
(https://learn.microsoft.com/azure/ai-services/openai/reference).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import Iterator

from .base import (
    BaseLLMAdapter,
    LLMError,
    LLMResponse,
    LLMStreamChunk,
    ToolCall,
    checked_vectors,
    embedding_inputs,
    parse_tool_arguments,
)
from .http import post_json, stream_lines
from .prompt_tools import hold_calls, parse_tool_calls, prompt_messages

_logger = logging.getLogger(__name__)
REASONING_MODEL_RE = re.compile(r"^(o\d|gpt-5)")
EMBED_BATCH = 100  # texts per embeddings request


class OpenAIAdapter(BaseLLMAdapter):
    """Adapter for ``provider_type`` openai and custom (and Azure when
    ``api_version`` is set); with *Supports Tool Calling* off, tools go
    through the prompt protocol (``prompt_tools``)."""

    # ----------------------------------------------------------------- request
    def _url(self, path: str) -> str:
        url = self.config.base_url.rstrip("/") + path
        if self.config.api_version:
            url += f"?api-version={self.config.api_version}"
        return url

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            if self.config.api_version:
                headers["api-key"] = self.config.api_key
            else:
                headers["Authorization"] = f"Bearer {self.config.api_key}"
        headers.update(self.config.extra_headers)
        return headers

    def _body(self, messages: list[dict], tools: list[dict] | None, stream: bool, **kwargs) -> dict:
        model = kwargs.get("model") or self.config.model
        body = {"model": model, "messages": self._messages_json(messages, self._to_wire, kwargs.get("wire_cache"))}
        max_tokens = kwargs.get("max_tokens", self.config.max_tokens)
        if REASONING_MODEL_RE.match(self.config.tokenizer_model or model):
            # o-series and GPT-5 reject temperature and max_tokens
            # (https://platform.openai.com/docs/guides/reasoning).
            body["max_completion_tokens"] = max_tokens
        else:
            body["temperature"] = kwargs.get("temperature", self.config.temperature)
            body["max_tokens"] = max_tokens
        if tools and self.config.supports_tool_calling:
            body["tools"] = self._tools_json(tools, lambda schemas: [{"type": "function", "function": t}
                                                                     for t in schemas])
            if self.config.tool_choice:
                body["tool_choice"] = self.config.tool_choice
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(self.config.extra_params)
        return body

    @staticmethod
    def _to_wire(message: dict) -> dict:
        """Neutral message → OpenAI message (``arguments`` as JSON text)."""
        wire = {"role": message["role"], "content": message.get("content")}
        if message.get("tool_calls"):
            wire["tool_calls"] = [{
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments") or {})},
            } for call in message["tool_calls"]]
        if message["role"] == "tool":
            wire["tool_call_id"] = message.get("tool_call_id") or ""
            wire["content"] = wire["content"] or ""
            if message.get("name"):
                wire["name"] = message["name"]
        elif wire["content"] is None:
            # An assistant message with tool calls and no text: "" rather than null, which OpenAI accepts
            # ("content" is optional with tool_calls) and strict servers require (llama-cpp-python's server
            # answers null with HTTP 500: ../shared/wire curl-replay-null.txt / curl-replay-empty.txt).
            wire["content"] = ""
        return wire

    # ---------------------------------------------------------------- responses
    @staticmethod
    def _tool_call(index: int, raw: dict) -> ToolCall:
        if not isinstance(raw, dict) or not isinstance(raw.get("function") or {}, dict):
            return ToolCall(id=f"call_{index}", name="", arguments={}, raw_arguments=str(raw)[:500],
                            parse_error="malformed tool call (not a {id, function: {name, arguments}} object)")
        function = raw.get("function") or {}
        arguments, error = parse_tool_arguments(function.get("arguments"))
        raw_args = function.get("arguments")
        return ToolCall(
            id=str(raw.get("id") or f"call_{index}"),
            name=function.get("name") if isinstance(function.get("name"), str) else "",
            arguments=arguments,
            raw_arguments=raw_args if isinstance(raw_args, str) else json.dumps(raw_args),
            parse_error=error,
        )

    @property
    def prompt_tools(self) -> bool:
        """Tools through the ``<tool_call>`` prompt protocol
        (llm/prompt_tools.py) instead of the API's ``tools``: the provider's
        *Supports Tool Calling* is off (a model or server without native
        tool calls; issue 24 point 4)."""
        return not self.config.supports_tool_calling

    def chat_completion(self, messages, tools=None, **kwargs) -> LLMResponse:
        if not self.prompt_tools:
            return self._completion(messages, tools, **kwargs)
        # The prompt protocol's messages are new at each call: nothing of them to keep for the turn.
        response = self._completion(prompt_messages(messages, tools), None, **{**kwargs, "wire_cache": None})
        calls, text = parse_tool_calls(response.content)
        finish_reason = "tool_calls" if calls and response.finish_reason == "stop" else response.finish_reason
        return dataclasses.replace(response, tool_calls=calls, content=text or None, finish_reason=finish_reason)

    def chat_completion_stream(self, messages, tools=None, **kwargs) -> Iterator[LLMStreamChunk]:
        """Yield text deltas as they come; tool calls are assembled from
        their pieces (keyed by ``index``, a new ``id`` at the same index
        starting a new call) and yielded whole on the final chunk. In the
        prompt protocol, text that may be a call is held back
        (``prompt_tools.hold_calls``)."""
        if not self.prompt_tools:
            yield from self._stream(messages, tools, **kwargs)
            return
        yield from hold_calls(self._stream(prompt_messages(messages, tools), None, **{**kwargs, "wire_cache": None}),
                              self.config.model)

    def _completion(self, messages, tools=None, **kwargs) -> LLMResponse:
        data = post_json(self._url("/chat/completions"), self._headers(), self._body(messages, tools, False, **kwargs),
                         kwargs.get("timeout") or self.config.timeout)
        choices = data.get("choices") if isinstance(data, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise LLMError(f"malformed response, no choices[0].message: {str(data)[:200]}", retryable=True)
        content = _text(message.get("content"))
        raw_calls = message.get("tool_calls")
        if raw_calls is not None and not isinstance(raw_calls, list):
            raise LLMError(f"malformed response, tool_calls is not a list: {str(raw_calls)[:200]}", retryable=True)
        calls = [self._tool_call(i, raw) for i, raw in enumerate(raw_calls or [])]
        return LLMResponse(
            content=content,
            tool_calls=calls,
            usage=self.usage(messages, tools, content or "", calls, _reasoning(message),
                             **_reported(data.get("usage"))),
            model=data.get("model") if isinstance(data.get("model"), str) and data.get("model") else self.config.model,
            finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else "stop",
        )

    def _stream(self, messages, tools=None, **kwargs) -> Iterator[LLMStreamChunk]:
        body = self._body(messages, tools, True, **kwargs)
        pending: list[dict] = []  # {"index", "id", "name", "arguments"}
        finish_reason, usage, model, text, reasoning = None, {}, self.config.model, [], []
        done = False
        timeout = kwargs.get("timeout") or self.config.timeout
        for line in stream_lines(self._url("/chat/completions"), self._headers(), body, timeout):
            if not line.startswith("data:"):
                if line.lstrip().startswith("{"):
                    raise LLMError(f"the server answered without streaming: {line[:200]}", retryable=True)
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                done = True
                break
            try:
                event = json.loads(payload)
            except json.JSONDecodeError:
                _logger.warning("skipping malformed stream event: %.200s", payload)
                continue
            if not isinstance(event, dict):
                continue
            if event.get("error"):
                error = event["error"]
                message = error.get("message") if isinstance(error, dict) else error
                raise LLMError(f"stream error: {message}", retryable=True)
            model = event.get("model") if isinstance(event.get("model"), str) and event.get("model") else model
            if isinstance(event.get("usage"), dict):  # the last event; some servers send it on every one
                usage = event["usage"]
            for choice in event.get("choices") if isinstance(event.get("choices"), list) else []:
                delta = choice.get("delta") if isinstance(choice, dict) else None
                if not isinstance(delta, dict):
                    continue
                if thought := _reasoning(delta):
                    reasoning.append(thought)
                piece_text = _text(delta.get("content"))
                if piece_text:
                    text.append(piece_text)
                    yield LLMStreamChunk(content=piece_text, model=model)
                for piece in delta.get("tool_calls") if isinstance(delta.get("tool_calls"), list) else []:
                    if isinstance(piece, dict):
                        _merge_tool_call_delta(pending, piece)
                if isinstance(choice.get("finish_reason"), str):
                    finish_reason = choice["finish_reason"]
        if not done and finish_reason is None:
            raise LLMError("the stream ended before the answer was complete", retryable=True)
        calls = [self._tool_call(i, {"id": p["id"], "function": {"name": p["name"], "arguments": p["arguments"]}})
                 for i, p in enumerate(pending)]
        yield LLMStreamChunk(
            tool_calls=calls,
            finish_reason=finish_reason or ("tool_calls" if calls else "stop"),
            usage=self.usage(messages, tools, "".join(text), calls, "".join(reasoning), **_reported(usage)),
            model=model,
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order, requested EMBED_BATCH texts at a time."""
        texts = embedding_inputs(texts)
        vectors = []
        for start in range(0, len(texts), EMBED_BATCH):
            body = {"model": self.config.embedding_model or self.config.model,
                    "input": list(texts[start:start + EMBED_BATCH])}
            data = post_json(self._url("/embeddings"), self._headers(), body, self.config.timeout)
            try:
                rows = sorted(data["data"], key=lambda row: row.get("index", 0))
                vectors.extend(row["embedding"] for row in rows)
            except (KeyError, TypeError, AttributeError):
                raise LLMError(f"malformed embeddings response: {str(data)[:200]}", retryable=True) from None
        return checked_vectors(vectors, len(texts))


def _text(content) -> str | None:
    """Message content as text: a string, or the text parts of a list of
    content parts (``[{"type": "text", "text": ...}]``) some servers send."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict)) or None
    return str(content)


def _reasoning(message: dict) -> str:
    """The reasoning text of a message or delta, as OpenAI-compatible
    servers send it (``reasoning_content`` or ``reasoning``); "" if none."""
    for key in ("reasoning_content", "reasoning"):
        if isinstance(message.get(key), str):
            return message[key]
    return ""


def _reported(usage) -> dict:
    """``measured_usage`` figures from an OpenAI ``usage`` object (None for
    a figure the server did not send; see the module docstring)."""
    usage = usage if isinstance(usage, dict) else {}
    prompt = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    completion = (usage.get("completion_tokens_details")
                  if isinstance(usage.get("completion_tokens_details"), dict) else {})
    cached = prompt.get("cached_tokens")
    return {"input_tokens": usage.get("prompt_tokens"),
            "cache_read_tokens": cached if cached is not None else usage.get("prompt_cache_hit_tokens"),
            "cache_write_tokens": prompt.get("cache_write_tokens"),
            "output_tokens": usage.get("completion_tokens"),
            "reasoning_tokens": completion.get("reasoning_tokens")}


def _merge_tool_call_delta(pending: list[dict], piece: dict) -> None:
    """Fold one streamed ``tool_calls`` delta into ``pending``.

    A delta continues the last call with the same ``index`` unless it carries
    a different ``id`` (some servers reuse index 0 for every call)."""
    index = piece.get("index") if isinstance(piece.get("index"), int) else None
    function = piece.get("function") if isinstance(piece.get("function"), dict) else {}
    current = next((p for p in reversed(pending) if p["index"] == index), None)
    # A new call: unseen index, a different id, or (no index, no id) a second name.
    if current is None or (piece.get("id") and current["id"] and piece["id"] != current["id"]) or (
            index is None and not piece.get("id") and function.get("name") and current["name"]):
        current = {"index": index, "id": piece.get("id") or "", "name": "", "arguments": ""}
        pending.append(current)
    if piece.get("id"):
        current["id"] = str(piece["id"])
    if isinstance(function.get("name"), str) and not current["name"]:
        current["name"] = function["name"]
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        current["arguments"] = json.dumps(arguments)
    elif isinstance(arguments, str):
        current["arguments"] += arguments

