"""Ollama (spec 000 §6.4): its OpenAI-compatible API (``{host}/v1``), plus
prompt-based tool calling for models without native tool calls and
embeddings through Ollama's own ``/api/embed``.

API: https://github.com/ollama/ollama/blob/main/docs/openai.md and
https://github.com/ollama/ollama/blob/main/docs/api.md#generate-embeddings.
``supports_tool_calling`` on the provider chooses native tools (OpenAI
format) or the ``<tool_call>`` prompt protocol of ``prompt_tools``, as for
any OpenAI-compatible provider (``OpenAIAdapter``).
Usage is OpenAI's ``prompt_tokens``/``completion_tokens`` (streamed on the
last event, ``stream_options.include_usage``); Ollama reports no cache
figures (its KV cache is not billed) and a thinking model's text comes as
``reasoning``, from which the reasoning tokens are estimated
(``OpenAIAdapter``).
"""
from __future__ import annotations

import logging

from .base import LLMError, checked_vectors, embedding_inputs
from .http import post_json
from .openai_adapter import EMBED_BATCH, OpenAIAdapter

_logger = logging.getLogger(__name__)


class EmbeddingsUnavailable(LLMError):
    """The model serves no embeddings: callers fall back to keyword search."""


class OllamaAdapter(OpenAIAdapter):
    """Adapter for ``provider_type`` ollama."""

    _warned_no_embeddings: set[str] = set()

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
