"""Scenarios: ordered turns, each matched against the incoming request.

A request is the decoded JSON body an OpenAI-style client sent
(``{"model", "messages", "tools", ...}``). A turn's ``reply`` is a dict, or a
callable taking the request and returning one::

    {"content": "text",                      # assistant text (optional)
     "tool_calls": [{"name": "odoo_search_read",
                     "arguments": {...} | "raw text",   # raw text is sent verbatim
                     "id": "call_1"}],                  # id optional
     "finish_reason": "stop" | "tool_calls" | "length",  # default derived
     "status": 503, "error": "message",      # answer with an HTTP error instead
     "headers": {"Retry-After": "3"},        # extra headers of that error
     "raw": {...} | "text",                  # a malformed 200 answer, sent verbatim
     "raw_stream": [{...} | "text", ...],    # server-sent events' data, sent verbatim
     "gemini_finish": "MALFORMED_FUNCTION_CALL",   # Gemini finishReason to send
     "anthropic_stop": "max_tokens",         # Anthropic stop_reason to send
     "delay": 0.5,                           # seconds to wait before answering
     "chunk_delay": 0.1,                     # streamed: seconds between events (see server._send_events)
     "usage": {"prompt_tokens": 10, "completion_tokens": 5,    # OpenAI's usage, sent as given
               "prompt_tokens_details": {"cached_tokens": 4}},  # (other wires: these two counts)
     "anthropic_usage": {"input_tokens": 2, "cache_read_input_tokens": 8, "output_tokens": 5},  # verbatim
     "gemini_usage": {"promptTokenCount": 10, "thoughtsTokenCount": 3, ...},  # usageMetadata, verbatim
     "no_usage": True,                       # send no usage at all (every wire)
     "reasoning": "text"}                    # reasoning text: OpenAI wire reasoning_content,
                                             # Anthropic thinking block, Gemini thought part

The server takes the first turn, in order, that still has uses left and
whose ``match`` accepts the request. ``uses=None`` makes a turn a standing
rule (the demo); the default, 1, makes the scenario a script (tests).
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field


def always(_request: dict) -> bool:
    return True


def _messages(request: dict) -> list[dict]:
    return request.get("messages") or []


def last_user_contains(text: str) -> Callable[[dict], bool]:
    """Match when the latest user message contains ``text`` (case-insensitive)
    and the model has not answered it yet (no tool result after it)."""
    def match(request):
        messages = _messages(request)
        if not messages or messages[-1].get("role") != "user":
            return False
        return text.lower() in (messages[-1].get("content") or "").lower()
    return match


def tool_result_for(tool_name: str) -> Callable[[dict], bool]:
    """Match when the request ends with the result of a call to ``tool_name``."""
    def match(request):
        result = last_tool_result(request)
        return result is not None and result.get("name") == tool_name
    return match


def last_tool_result(request: dict) -> dict | None:
    """The last message when it is a tool result: ``{"name", "content",
    "tool_call_id"}`` (``name`` looked up from the assistant's call), else None."""
    messages = _messages(request)
    if not messages or messages[-1].get("role") != "tool":
        return None
    last = dict(messages[-1])
    if not last.get("name"):
        for message in reversed(messages):
            for call in message.get("tool_calls") or []:
                if call.get("id") == last.get("tool_call_id"):
                    last["name"] = call["function"]["name"]
    return last


@dataclass
class Turn:
    """One scripted answer; see the module docstring for ``reply``."""
    reply: dict | Callable[[dict], dict]
    match: Callable[[dict], bool] = always
    uses: int | None = 1

    def answer(self, request: dict) -> dict:
        """The reply; a reply function that fails answers HTTP 400 naming the
        error, so the test shows why instead of a dropped connection."""
        if not callable(self.reply):
            return self.reply
        try:
            return self.reply(request)
        except Exception as error:  # noqa: BLE001 - any bug in a test's reply function
            last = (_messages(request) or [{}])[-1]
            return {"status": 400, "error": f"scripted LLM: the reply function failed with {type(error).__name__}: "
                                            f"{error}; the request ended with {json.dumps(last)[:300]}"}


@dataclass
class Scenario:
    """Ordered turns plus the request log. Thread-safe."""
    turns: list[Turn] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    embedding_dim: int = 64
    # dimensions of the next embedding calls, one per call (then embedding_dim): a provider that changes
    # model in the middle of an indexing
    embedding_dims: list[int] = field(default_factory=list)
    embeddings_error: tuple[int, str] | None = None  # (status, message) to answer embedding calls with
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, reply, match=always, uses: int | None = 1) -> Scenario:
        self.turns.append(Turn(reply, match, uses))
        return self

    def next_reply(self, request: dict) -> dict:
        """The reply of the first usable matching turn, or an HTTP 400 reply
        that names the unmatched request (so a test fails saying why)."""
        with self._lock:
            for turn in self.turns:
                if turn.uses == 0:
                    continue
                if turn.match(request):
                    if turn.uses is not None:
                        turn.uses -= 1
                    return turn.answer(request)
        last = (_messages(request) or [{}])[-1]
        return {"status": 400, "error": f"scripted LLM: no turn matches a request ending with {json.dumps(last)[:300]}"}

    def record(self, path: str, headers: dict, body: dict) -> None:
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body})

    def chat_requests(self) -> list[dict]:
        """Chat requests received, in order, in the neutral OpenAI-shaped view."""
        return [r["neutral"] for r in self.requests if "neutral" in r]
