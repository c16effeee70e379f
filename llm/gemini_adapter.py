"""Google Gemini over its REST API (spec 000 §6.3).

Wire format: https://ai.google.dev/api/generate-content —
``POST {base}/models/{model}:generateContent`` (and
``:streamGenerateContent?alt=sse``), ``contents`` with roles ``user`` and
``model``, ``systemInstruction``, ``tools[].functionDeclarations``, parts
``text`` / ``functionCall`` / ``functionResponse``, ``usageMetadata``.
Usage (https://ai.google.dev/api/generate-content#UsageMetadata):
``promptTokenCount`` (all input, cached content included) plus
``toolUsePromptTokenCount``, of which ``cachedContentTokenCount`` came from
the cache; output = ``candidatesTokenCount`` + ``thoughtsTokenCount``
(thinking is not part of the candidates' count). Proto3 JSON leaves out a
count that is 0, so a field missing from a ``usageMetadata`` that has a
``promptTokenCount`` means 0, not "not sent". Streamed, every chunk's ``usageMetadata`` is
cumulative: a later figure replaces an earlier one.
Embeddings: https://ai.google.dev/api/embeddings (``:batchEmbedContents``).
The key travels in the ``x-goog-api-key`` header, never in the URL.
"""
from __future__ import annotations

import json
from collections.abc import Iterator

from .base import (
    BaseLLMAdapter,
    LLMError,
    LLMResponse,
    LLMStreamChunk,
    ToolCall,
    append_turn,
    checked_vectors,
    embedding_inputs,
)
from .gemini_schema import coerce_arguments, to_gemini_parameters
from .http import post_json, sse_json_events, stream_lines
from .usage import merge_reported, token_count

EMBED_BATCH = 100  # texts per batchEmbedContents request (API limit)
FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
                  "PROHIBITED_CONTENT": "content_filter", "BLOCKLIST": "content_filter", "SPII": "content_filter"}


def _deep_merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _reported(metadata, answered: bool) -> dict:
    """``measured_usage`` figures from a ``usageMetadata`` object: all None
    (estimated) when there is none or it has no ``promptTokenCount`` (never
    0 for a real call); else a count missing from it is 0 (see the module
    docstring), except ``candidatesTokenCount`` when the answer has text or
    calls (``answered``): those cost tokens, so a missing count was not
    sent (a stream whose only usageMetadata came before the answer, a proxy
    that drops it), and the output is estimated rather than recorded as 0."""
    if not isinstance(metadata, dict) or token_count(metadata.get("promptTokenCount")) is None:
        return {}
    counts = {key: token_count(metadata.get(key, 0)) for key in (
        "promptTokenCount", "toolUsePromptTokenCount", "cachedContentTokenCount", "candidatesTokenCount",
        "thoughtsTokenCount")}
    if answered and "candidatesTokenCount" not in metadata:
        counts["candidatesTokenCount"] = None

    def total(*keys):
        return None if any(counts[key] is None for key in keys) else sum(counts[key] for key in keys)
    return {"input_tokens": total("promptTokenCount", "toolUsePromptTokenCount"),
            "cache_read_tokens": counts["cachedContentTokenCount"],
            "output_tokens": total("candidatesTokenCount", "thoughtsTokenCount"),
            "reasoning_tokens": counts["thoughtsTokenCount"]}


class GeminiAdapter(BaseLLMAdapter):
    """Adapter for ``provider_type`` gemini."""

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["x-goog-api-key"] = self.config.api_key
        headers.update(self.config.extra_headers)
        return headers

    def _url(self, model: str, method: str) -> str:
        model = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
        return f"{self.config.base_url.rstrip('/')}/{model}:{method}"

    # ------------------------------------------------------------- request
    @staticmethod
    def to_contents(messages: list[dict]) -> tuple[dict | None, list[dict]]:
        """Neutral messages → (``systemInstruction``, ``contents``).

        Assistant turns become ``model`` turns with ``functionCall`` parts;
        tool results become ``functionResponse`` parts of the next ``user``
        turn, in call order, carrying an ``id`` only where Gemini sent one.
        Consecutive turns of one role are merged."""
        system = [m.get("content") or "" for m in messages if m.get("role") == "system"]
        generated, names, contents = set(), {}, []

        def add(role, parts):
            append_turn(contents, role, parts, "parts")

        for message in messages:
            role = message.get("role")
            if role == "user":
                add("user", [{"text": message["content"]}] if (message.get("content") or "").strip() else [])
            elif role == "assistant":
                parts = [{"text": message["content"]}] if (message.get("content") or "").strip() else []
                for call in message.get("tool_calls") or []:
                    names[call.get("id")] = call["name"]
                    function_call = {"name": call["name"], "args": call.get("arguments") or {}}
                    if call.get("id_generated"):
                        generated.add(call["id"])
                    else:
                        function_call["id"] = call["id"]
                    part = {"functionCall": function_call}
                    if (call.get("provider_data") or {}).get("thoughtSignature"):
                        # Gemini 3 refuses a replayed call without the signature it sent with it.
                        part["thoughtSignature"] = call["provider_data"]["thoughtSignature"]
                    parts.append(part)
                add("model", parts)
            elif role == "tool":
                name = message.get("name") or names.get(message.get("tool_call_id")) or "tool"
                response = {"name": name, "response": {"result": message.get("content") or ""}}
                if message.get("tool_call_id") and message["tool_call_id"] not in generated:
                    response["id"] = message["tool_call_id"]
                add("user", [{"functionResponse": response}])
        if not contents or contents[0]["role"] != "user":  # Gemini wants the user to speak first
            contents.insert(0, {"role": "user", "parts": [{"text": "(conversation continues)"}]})
        instruction = {"parts": [{"text": "\n\n".join(s for s in system if s)}]} if any(system) else None
        return instruction, contents

    def _body(self, messages, tools, **kwargs) -> dict:
        instruction, contents = self.to_contents(messages)
        body = {
            "contents": contents,
            "generationConfig": {
                "temperature": kwargs.get("temperature", self.config.temperature),
                "maxOutputTokens": kwargs.get("max_tokens", self.config.max_tokens),
            },
        }
        if instruction:
            body["systemInstruction"] = instruction
        if tools and self.config.supports_tool_calling:
            body["tools"] = self._tools_json(tools, self._declarations)
            mode = {"auto": "AUTO", "required": "ANY", "none": "NONE"}.get(self.config.tool_choice)
            if mode:
                body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
        return _deep_merge(body, self.config.extra_params)

    # ------------------------------------------------------------ response
    @staticmethod
    def _calls(parts: list, schemas: dict) -> list[ToolCall]:
        calls = []
        for part in parts:
            call = part.get("functionCall") if isinstance(part, dict) else None
            if not isinstance(call, dict):
                continue
            args = call.get("args")
            if args is None:
                args = {}
            name = call.get("name") if isinstance(call.get("name"), str) else ""
            if not isinstance(args, dict):
                calls.append(ToolCall(id=str(call.get("id") or ""), name=name, arguments={},
                                      raw_arguments=json.dumps(args), parse_error="arguments must be a JSON object"))
                continue
            signature = part.get("thoughtSignature") or part.get("thought_signature")
            calls.append(ToolCall(id=str(call.get("id") or ""), name=name,
                                  arguments=coerce_arguments(args, schemas.get(name, {})),
                                  raw_arguments=json.dumps(args),
                                  provider_data={"thoughtSignature": signature} if isinstance(signature, str) else {}))
        return calls

    @staticmethod
    def _candidate(data: dict) -> dict:
        candidates = data.get("candidates") if isinstance(data, dict) else None
        if not candidates:
            feedback = (data or {}).get("promptFeedback") or {}
            if feedback.get("blockReason"):
                raise LLMError(f"Gemini blocked the prompt: {feedback['blockReason']}")
            raise LLMError(f"malformed response, no candidates: {str(data)[:200]}", retryable=True)
        candidate = candidates[0] if isinstance(candidates[0], dict) else {}
        if candidate.get("finishReason") == "MALFORMED_FUNCTION_CALL":
            raise LLMError("Gemini answered MALFORMED_FUNCTION_CALL: it produced a tool call it could not encode",
                           retryable=True)
        return candidate

    @staticmethod
    def _parts(candidate: dict) -> list:
        parts = (candidate.get("content") or {}).get("parts")
        return parts if isinstance(parts, list) else []

    @staticmethod
    def _text(parts: list) -> str:
        return "".join(p.get("text") or "" for p in parts if isinstance(p, dict) and not p.get("thought"))

    @staticmethod
    def _thoughts(parts: list) -> str:
        """The thought summaries of ``parts`` (sent with ``includeThoughts``)."""
        return "".join(p.get("text") or "" for p in parts if isinstance(p, dict) and p.get("thought"))

    @staticmethod
    def _finish(candidate: dict, calls: list) -> str:
        reason = FINISH_REASONS.get(candidate.get("finishReason") or "STOP", "stop")
        return "tool_calls" if calls and reason == "stop" else reason

    @staticmethod
    def _declarations(tools) -> list[dict]:
        """Gemini's ``tools`` of the neutral tool schemas."""
        declarations = []
        for tool in tools:
            declaration = {"name": tool["name"], "description": tool.get("description") or ""}
            parameters = to_gemini_parameters(tool.get("parameters") or {})
            if parameters:
                declaration["parameters"] = parameters
            declarations.append(declaration)
        return [{"functionDeclarations": declarations}]

    @staticmethod
    def _schemas(tools) -> dict:
        return {t["name"]: t.get("parameters") or {} for t in tools or []}

    def chat_completion(self, messages, tools=None, **kwargs) -> LLMResponse:
        model = kwargs.get("model") or self.config.model
        data = post_json(self._url(model, "generateContent"), self._headers(), self._body(messages, tools, **kwargs),
                         kwargs.get("timeout") or self.config.timeout)
        candidate = self._candidate(data)
        parts = self._parts(candidate)
        text = self._text(parts)
        calls = self._calls(parts, self._schemas(tools))
        finish = self._finish(candidate, calls)
        if finish == "content_filter" and not text and not calls:
            raise LLMError(f"Gemini stopped the answer: {candidate.get('finishReason')}")
        return LLMResponse(
            content=text or None, tool_calls=calls,
            usage=self.usage(messages, tools, text, calls, self._thoughts(parts),
                             **_reported(data.get("usageMetadata"), bool(text or calls))),
            model=data.get("modelVersion") or model, finish_reason=finish)

    def chat_completion_stream(self, messages, tools=None, **kwargs) -> Iterator[LLMStreamChunk]:
        """Server-sent events of partial responses: text parts are yielded
        as they come; function calls (which Gemini sends whole) on the last
        chunk with usage and the finish reason."""
        model = kwargs.get("model") or self.config.model
        url = self._url(model, "streamGenerateContent") + "?alt=sse"
        calls, usage, text, thoughts, candidate = [], {}, [], [], {}
        schemas = self._schemas(tools)
        lines = stream_lines(url, self._headers(), self._body(messages, tools, **kwargs),
                             kwargs.get("timeout") or self.config.timeout)
        for event in sse_json_events(lines):
            merge_reported(usage, event.get("usageMetadata"))
            if not event.get("candidates"):
                if isinstance(event.get("promptFeedback"), dict) and event["promptFeedback"].get("blockReason"):
                    raise LLMError(f"Gemini blocked the prompt: {event['promptFeedback']['blockReason']}")
                continue
            candidate = self._candidate(event)
            parts = self._parts(candidate)
            piece = self._text(parts)
            if thought := self._thoughts(parts):
                thoughts.append(thought)
            if piece:
                text.append(piece)
                yield LLMStreamChunk(content=piece, model=model)
            calls.extend(self._calls(parts, schemas))
        if not candidate.get("finishReason"):
            raise LLMError("the stream ended before the answer was complete", retryable=True)
        finish = self._finish(candidate, calls)
        if finish == "content_filter" and not text and not calls:
            raise LLMError(f"Gemini stopped the answer: {candidate.get('finishReason')}")
        yield LLMStreamChunk(
            tool_calls=calls, finish_reason=finish,
            usage=self.usage(messages, tools, "".join(text), calls, "".join(thoughts),
                             **_reported(usage, bool(text or calls))),
            model=model)

    def embed(self, texts: list[str]) -> list[list[float]]:
        texts = embedding_inputs(texts)
        model = self.config.embedding_model or "text-embedding-004"
        name = model if model.startswith("models/") else f"models/{model}"
        vectors = []
        for start in range(0, len(texts), EMBED_BATCH):
            batch = texts[start:start + EMBED_BATCH]
            body = {"requests": [{"model": name, "content": {"parts": [{"text": t}]}} for t in batch]}
            data = post_json(self._url(model, "batchEmbedContents"), self._headers(), body, self.config.timeout)
            try:
                vectors.extend(row["values"] for row in data["embeddings"])
            except (KeyError, TypeError):
                raise LLMError(f"malformed embeddings response: {str(data)[:200]}", retryable=True) from None
        return checked_vectors(vectors, len(texts))
