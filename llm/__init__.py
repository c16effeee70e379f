"""LLM adapters (spec 000 §6). Plain Python: this package imports no Odoo.

``ADAPTERS`` maps ``agentic.ai.llm.provider.provider_type`` to the adapter
class; adding a provider is adding a file and a line here.
"""
from .base import (DEFAULT_MAX_TOKENS, BaseLLMAdapter, LLMError, LLMResponse, LLMStreamChunk, ProviderConfig,
                   ToolCall, parse_tool_arguments)
from .anthropic_adapter import AnthropicAdapter
from .gemini_adapter import GeminiAdapter
from .ollama_adapter import EmbeddingsUnavailable, OllamaAdapter
from .openai_adapter import OpenAIAdapter
from .token_tracker import TokenTracker
from .tokenizer import count_tokens
from .usage import Prices, Usage

ADAPTERS: dict[str, type[BaseLLMAdapter]] = {
    "openai": OpenAIAdapter,      # also Azure OpenAI (api_version set)
    "custom": OpenAIAdapter,      # any OpenAI-compatible server
    "ollama": OllamaAdapter,
    "gemini": GeminiAdapter,
    "anthropic": AnthropicAdapter,
}


def get_adapter(config: ProviderConfig) -> BaseLLMAdapter:
    """Instantiate the adapter for ``config.provider_type``.

    Raises LLMError when no adapter exists for that type yet."""
    try:
        cls = ADAPTERS[config.provider_type]
    except KeyError:
        raise LLMError(f"provider type {config.provider_type!r} is not supported yet") from None
    return cls(config)


__all__ = ["ADAPTERS", "DEFAULT_MAX_TOKENS", "AnthropicAdapter", "BaseLLMAdapter", "EmbeddingsUnavailable",
           "GeminiAdapter", "LLMError",
           "LLMResponse", "LLMStreamChunk", "OllamaAdapter", "OpenAIAdapter",
           "Prices", "ProviderConfig", "TokenTracker", "ToolCall", "Usage", "count_tokens", "get_adapter",
           "parse_tool_arguments"]
