"""LLM adapters (spec 000 §6). Plain Python: this package imports no Odoo.

``ADAPTERS`` maps ``agentic.ai.llm.provider.provider_type`` to the adapter
class; adding a provider is adding a file and a line here.
"""
from .base import (BaseLLMAdapter, LLMError, LLMResponse, LLMStreamChunk, ProviderConfig, ToolCall,
                   parse_tool_arguments)
from .openai_adapter import OpenAIAdapter
from .token_tracker import TokenTracker
from .tokenizer import count_tokens

ADAPTERS: dict[str, type[BaseLLMAdapter]] = {
    "openai": OpenAIAdapter,
    "custom": OpenAIAdapter,
    # Ollama serves the OpenAI API under /v1; its native adapter (prompt-based
    # tool calling for models without it) comes with the providers issue.
    "ollama": OpenAIAdapter,
}


def get_adapter(config: ProviderConfig) -> BaseLLMAdapter:
    """Instantiate the adapter for ``config.provider_type``.

    Raises LLMError when no adapter exists for that type yet."""
    try:
        cls = ADAPTERS[config.provider_type]
    except KeyError:
        raise LLMError(f"provider type {config.provider_type!r} is not supported yet") from None
    return cls(config)


__all__ = ["ADAPTERS", "BaseLLMAdapter", "LLMError", "LLMResponse", "LLMStreamChunk", "OpenAIAdapter",
           "ProviderConfig", "TokenTracker", "ToolCall", "count_tokens", "get_adapter", "parse_tool_arguments"]
