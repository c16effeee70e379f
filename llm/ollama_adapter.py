"""Ollama (spec 000 §6.4): its OpenAI-compatible API (``{host}/v1``), plus
prompt-based tool calling for models without native tool calls and
embeddings through Ollama's own ``/api/embed``.

API: https://github.com/ollama/ollama/blob/main/docs/openai.md and
https://github.com/ollama/ollama/blob/main/docs/api.md#generate-embeddings.
``supports_tool_calling`` on the provider chooses native tools (OpenAI
format) or the ``<tool_call>`` prompt protocol of ``prompt_tools``.
Usage is OpenAI's ``prompt_tokens``/``completion_tokens`` (streamed on the
last event, ``stream_options.include_usage``); Ollama reports no cache
figures (its KV cache is not billed) and a thinking model's text comes as
``reasoning``, from which the reasoning tokens are estimated
(``OpenAIAdapter``).
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator

from .base import LLMError, LLMResponse, LLMStreamChunk, checked_vectors, embedding_inputs
from .http import post_json
from .openai_adapter import EMBED_BATCH, OpenAIAdapter
from .prompt_tools import parse_tool_calls, render_call, render_tools_prompt

_logger = logging.getLogger(__name__)
_HOLD_MARKERS = ("<tool_call", "```", "{")  # text from here on may be a call: not streamed


class EmbeddingsUnavailable(LLMError):
    """The model serves no embeddings: callers fall back to keyword search."""


class OllamaAdapter(OpenAIAdapter):
    """Adapter for ``provider_type`` ollama."""

    _warned_no_embeddings: set[str] = set()

    @property
    def prompt_tools(self) -> bool:
        return not self.config.supports_tool_calling

    def _prompt_messages(self, messages: list[dict], tools: list[dict] | None) -> list[dict]:
        """History in the prompt protocol: tools described in the system
        prompt, calls as ``<tool_call>`` text, results as user turns."""
        out = []
        for message in messages:
            role = message["role"]
            if role == "assistant" and message.get("tool_calls"):
                calls = [render_call(c) for c in message["tool_calls"]]
                text = "\n".join(filter(None, [message.get("content") or "", *calls]))
                out.append({"role": "assistant", "content": text})
            elif role == "tool":
                out.append({"role": "user", "content": f"<tool_result name=\"{message.get('name') or ''}\">\n"
                                                       f"{message.get('content') or ''}\n</tool_result>"})
            else:
                out.append({"role": role, "content": message.get("content") or ""})
        if tools:
            prompt = render_tools_prompt(tools)
            if out and out[0]["role"] == "system":
                out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + prompt}
            else:
                out.insert(0, {"role": "system", "content": prompt})
        return out

    def chat_completion(self, messages, tools=None, **kwargs) -> LLMResponse:
        if not self.prompt_tools:
            return super().chat_completion(messages, tools, **kwargs)
        response = super().chat_completion(self._prompt_messages(messages, tools), None, **kwargs)
        calls, text = parse_tool_calls(response.content)
        finish_reason = "tool_calls" if calls and response.finish_reason == "stop" else response.finish_reason
        return dataclasses.replace(response, tool_calls=calls, content=text or None, finish_reason=finish_reason)

    def chat_completion_stream(self, messages, tools=None, **kwargs) -> Iterator[LLMStreamChunk]:
        if not self.prompt_tools:
            yield from super().chat_completion_stream(messages, tools, **kwargs)
            return
        text, streamed, held = "", 0, False
        final = None
        for chunk in super().chat_completion_stream(self._prompt_messages(messages, tools), None, **kwargs):
            if chunk.finish_reason is not None:
                final = chunk
                continue
            text += chunk.content
            if not held:
                positions = [text.find(m, streamed) for m in _HOLD_MARKERS]
                cut = min((p for p in positions if p >= 0), default=-1)
                end = cut if cut >= 0 else len(text)
                if end > streamed:
                    yield LLMStreamChunk(content=text[streamed:end], model=chunk.model)
                    streamed = end
                held = cut >= 0
        calls, prose = parse_tool_calls(text)
        model = final.model if final else self.config.model
        if not calls and len(text) > streamed:  # held back, but it was an answer after all
            yield LLMStreamChunk(content=text[streamed:], model=model)
        elif calls:  # the prose around the calls that was held back
            sent = text[:streamed].lstrip()
            tail = prose[len(sent):] if prose.startswith(sent) else ""
            if tail.strip():
                yield LLMStreamChunk(content=tail, model=model)
        final = final or LLMStreamChunk(finish_reason="stop")
        finish_reason = "tool_calls" if calls and final.finish_reason == "stop" else final.finish_reason
        yield dataclasses.replace(final, tool_calls=calls, finish_reason=finish_reason)

    def _native_root(self) -> str:
        base = self.config.base_url.rstrip("/")
        return base[:-3] if base.endswith("/v1") else base

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors from ``/api/embed``. Raises EmbeddingsUnavailable (logged
        once per model) when the model has none, LLMError otherwise."""
        texts = embedding_inputs(texts)
        model = self.config.embedding_model or self.config.model
        vectors = []
        for start in range(0, len(texts), EMBED_BATCH):
            vectors.extend(self._embed_batch(model, texts[start:start + EMBED_BATCH]))
        return vectors

    def _embed_batch(self, model: str, texts: list[str]) -> list[list[float]]:
        try:
            data = post_json(self._native_root() + "/api/embed", self._headers(),
                             {"model": model, "input": list(texts)}, self.config.timeout)
        except LLMError as exc:
            if exc.status in (400, 404, 501) or ("embed" in str(exc).lower() and not exc.retryable):
                if model not in self._warned_no_embeddings:
                    self._warned_no_embeddings.add(model)
                    _logger.warning("Ollama model %s serves no embeddings (%s): knowledge search falls back to "
                                    "keywords", model, exc)
                raise EmbeddingsUnavailable(f"{model} serves no embeddings: {exc}", status=exc.status) from None
            raise
        return checked_vectors(data.get("embeddings") if isinstance(data, dict) else None, len(texts))
