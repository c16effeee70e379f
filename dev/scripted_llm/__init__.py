"""A scripted LLM server for tests and the demo: the network peer, nothing more.

It speaks the OpenAI Chat Completions wire format over real HTTP (plain and
streamed) and embeddings, answers from a ``Scenario`` and records every
request, so tests drive the addon's production adapters and can assert what
they sent. See ``server.py``.
"""
from .scenario import Scenario, Turn, always, last_tool_result, last_user_contains, tool_result_for
from .server import ScriptedLLMServer

__all__ = ["Scenario", "ScriptedLLMServer", "Turn", "always", "last_tool_result", "last_user_contains",
           "tool_result_for"]
