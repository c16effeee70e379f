"""Anthropic Messages API over httpx.

Wire format: https://docs.anthropic.com/en/api/messages — ``POST
{base}/messages`` with ``x-api-key`` and ``anthropic-version`` headers,
top-level ``system``, ``max_tokens`` required, content blocks ``text`` /
``tool_use`` / ``tool_result`` (tool results travel inside the next ``user``
turn), ``tools[].input_schema``, ``stop_reason``, ``usage``. Streaming:
https://docs.anthropic.com/en/api/messages-streaming (``message_start``,
``content_block_start/delta/stop`` with ``text_delta`` and
``input_json_delta``, ``message_delta``, ``message_stop``, ``error``).
Usage: ``usage.input_tokens`` counts only the input after the last cache
breakpoint; ``cache_read_input_tokens`` and ``cache_creation_input_tokens``
come on top (total input = the three,
https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching);
``output_tokens`` includes extended thinking, which has no count of its own
(https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking): it
is estimated from the ``thinking`` text. Streamed, ``message_start`` carries
the input figures (its ``output_tokens`` is only the count so far) and the
``message_delta`` usage is cumulative (a later figure replaces an earlier
one; since 2025 it may repeat the input figures, null when unknown).
Anthropic has no embeddings API.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator

from .base import (
    DEFAULT_MAX_TOKENS,
    BaseLLMAdapter,
    LLMError,
    LLMResponse,
    LLMStreamChunk,
    ToolCall,
    append_turn,
    parse_tool_arguments,
)
from .http import post_json, sse_json_events, stream_lines
from .usage import merge_reported, token_count

API_VERSION = "2023-06-01"
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                "pause_turn": "stop", "refusal": "content_filter"}
# Markup an empty rich-text field leaves behind (Odoo's HTML editor: <p><br></p>).
_EMPTY_HTML_RE = re.compile(r"</?(?:p|br|div|span)\s*/?>|&nbsp;", re.I)
_ID_RE = re.compile(r"[^a-zA-Z0-9_-]")


def _blank(text) -> bool:
    """True for text that is empty once spaces and empty-paragraph markup
    are removed (Anthropic rejects blank text blocks)."""
    return not isinstance(text, str) or not _EMPTY_HTML_RE.sub("", text).strip()


def _tool_id(value) -> str:
    """A tool id in the form Anthropic requires (^[a-zA-Z0-9_-]+$): ids other
    providers made (``functions.t:0``) are rewritten the same way each time."""
    return _ID_RE.sub("_", str(value or "")) or "tool"


def _reported(usage) -> dict:
    """``measured_usage`` figures from an Anthropic ``usage`` object (None
    for a figure not sent): the input total is the uncached input plus the
    cache reads and writes."""
    usage = usage if isinstance(usage, dict) else {}
    uncached = token_count(usage.get("input_tokens"))
    cache_read = token_count(usage.get("cache_read_input_tokens"))
    cache_write = token_count(usage.get("cache_creation_input_tokens"))
    return {"input_tokens": None if uncached is None else uncached + (cache_read or 0) + (cache_write or 0),
            "cache_read_tokens": cache_read, "cache_write_tokens": cache_write,
            "output_tokens": usage.get("output_tokens")}


class AnthropicAdapter(BaseLLMAdapter):
    """Adapter for ``provider_type`` anthropic."""

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
        if self.config.api_key:
            headers["x-api-key"] = self.config.api_key
        headers.update(self.config.extra_headers)
        return headers

    @staticmethod
    def to_messages(messages: list[dict]) -> tuple[str, list[dict]]:
        """Neutral messages → (``system``, ``messages``): no blank text block
        anywhere, tool results as ``tool_result`` blocks of a user turn,
        consecutive turns of one role merged, the first turn a user one."""
        system = "\n\n".join(m.get("content") or "" for m in messages
                             if m.get("role") == "system" and not _blank(m.get("content")))
        out: list[dict] = []

        def add(role, blocks):
            append_turn(out, role, blocks, "content")

        for message in messages:
            role = message.get("role")
            if role == "user":
                add("user", [] if _blank(message.get("content")) else [{"type": "text", "text": message["content"]}])
            elif role == "assistant":
                blocks = [] if _blank(message.get("content")) else [{"type": "text", "text": message["content"]}]
                blocks += [{"type": "tool_use", "id": _tool_id(call.get("id")), "name": call["name"],
                            "input": call.get("arguments") or {}} for call in message.get("tool_calls") or []]
                add("assistant", blocks)
            elif role == "tool":
                content = message.get("content") or ""
                add("user", [{"type": "tool_result", "tool_use_id": _tool_id(message.get("tool_call_id")),
                              "content": content if not _blank(content) else "(empty result)"}])
        for turn in out:  # tool results must open their user turn
            if turn["role"] == "user":
                turn["content"].sort(key=lambda block: block["type"] != "tool_result")
        if not out or out[0]["role"] != "user":
            out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(conversation continues)"}]})
        return system, out

    def _body(self, messages, tools, stream: bool, **kwargs) -> dict:
        system, wire = self.to_messages(messages)
        body = {
            "model": kwargs.get("model") or self.config.model,
            "max_tokens": kwargs.get("max_tokens", self.config.max_tokens) or DEFAULT_MAX_TOKENS,
            "messages": wire,
            "temperature": kwargs.get("temperature", self.config.temperature),
        }
        if system:
            body["system"] = system
        if tools and self.config.supports_tool_calling:
            body["tools"] = self._tools_json(tools, lambda schemas: [
                {"name": t["name"], "description": t.get("description") or "",
                 "input_schema": t.get("parameters") or {"type": "object", "properties": {}}} for t in schemas])
            choice = {"auto": "auto", "required": "any", "none": "none"}.get(self.config.tool_choice)
            if choice:
                body["tool_choice"] = {"type": choice}
        if stream:
            body["stream"] = True
        body.update(self.config.extra_params)
        return body

    def _url(self) -> str:
        return self.config.base_url.rstrip("/") + "/messages"

    @staticmethod
    def _tool_call(block: dict) -> ToolCall:
        arguments = block.get("input")
        if isinstance(arguments, dict):
            return ToolCall(id=str(block.get("id") or ""), name=str(block.get("name") or ""), arguments=arguments,
                            raw_arguments=json.dumps(arguments))
        parsed, error = parse_tool_arguments(arguments)
        return ToolCall(id=str(block.get("id") or ""), name=str(block.get("name") or ""), arguments=parsed,
                        raw_arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
                        parse_error=error)

    def chat_completion(self, messages, tools=None, **kwargs) -> LLMResponse:
        data = post_json(self._url(), self._headers(), self._body(messages, tools, False, **kwargs),
                         kwargs.get("timeout") or self.config.timeout)
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise LLMError(f"malformed response, no content blocks: {str(data)[:200]}", retryable=True)
        text = "".join(b.get("text") or "" for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        calls = [self._tool_call(b) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        thinking = "".join(b["thinking"] for b in blocks if isinstance(b, dict) and b.get("type") == "thinking"
                           and isinstance(b.get("thinking"), str))
        return LLMResponse(
            content=text or None, tool_calls=calls,
            usage=self.usage(messages, tools, text, calls, thinking, **_reported(data.get("usage"))),
            model=data.get("model") or self.config.model,
            finish_reason=STOP_REASONS.get(data.get("stop_reason"), "stop"))

    def chat_completion_stream(self, messages, tools=None, **kwargs) -> Iterator[LLMStreamChunk]:
        """Yield text deltas; ``tool_use`` blocks are assembled from their
        ``input_json_delta`` pieces and yielded whole on the last chunk."""
        body = self._body(messages, tools, True, **kwargs)
        blocks: dict[int, dict] = {}
        usage, stop_reason, model, stopped, text, thinking = {}, None, self.config.model, False, [], []
        timeout = kwargs.get("timeout") or self.config.timeout
        for event in sse_json_events(stream_lines(self._url(), self._headers(), body, timeout)):
            kind = event.get("type")
            if kind == "error":
                error = event.get("error")
                if not isinstance(error, dict):
                    error = {"type": "error", "message": error}
                raise LLMError(f"stream error: {error.get('type')}: {error.get('message')}",
                               retryable=error.get("type") in ("overloaded_error", "api_error"))
            if kind == "message_start":
                message = event.get("message") or {}
                model = message.get("model") or model
                start = message.get("usage") if isinstance(message.get("usage"), dict) else {}
                # Its output_tokens is the count at the start (1), not the answer's: only message_delta's
                # is; a stream whose message_delta has none never said it, so it is estimated.
                merge_reported(usage, {k: v for k, v in start.items() if k != "output_tokens"})
            elif kind == "content_block_start":
                block = dict(event.get("content_block") or {})
                block["partial_json"] = ""
                blocks[event.get("index", len(blocks))] = block
            elif kind == "content_block_delta":
                delta = event.get("delta") or {}
                block = blocks.setdefault(event.get("index", 0), {"type": "text", "partial_json": ""})
                if delta.get("type") == "text_delta" and delta.get("text"):
                    text.append(delta["text"])
                    yield LLMStreamChunk(content=delta["text"], model=model)
                elif delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str):
                    thinking.append(delta["thinking"])
                elif delta.get("type") == "input_json_delta":
                    block["partial_json"] += delta.get("partial_json") or ""
            elif kind == "message_stop":
                stopped = True
            elif kind == "message_delta":
                stop_reason = (event.get("delta") or {}).get("stop_reason") or stop_reason
                merge_reported(usage, event.get("usage"))  # cumulative, nulls for figures it does not know
        if not stopped and stop_reason is None:
            raise LLMError("the stream ended before the answer was complete", retryable=True)
        calls = []
        for _index, block in sorted(blocks.items(), key=lambda item: str(item[0])):
            if block.get("type") == "tool_use":
                raw = block["partial_json"] or block.get("input") or {}
                calls.append(self._tool_call({**block, "input": raw}))
        yield LLMStreamChunk(
            tool_calls=calls, finish_reason=STOP_REASONS.get(stop_reason, "tool_calls" if calls else "stop"),
            usage=self.usage(messages, tools, "".join(text), calls, "".join(thinking), **_reported(usage)),
            model=model)

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise LLMError("Anthropic offers no embeddings API: configure an embedding provider for knowledge search")
