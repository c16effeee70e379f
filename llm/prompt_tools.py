"""Tool calling for models without native tool calls (spec 000 §6.4): the
tools are described in the system prompt and the model writes
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` in its text,
which is parsed back into ToolCall objects and removed from the answer.

The parser accepts what local models actually produce: one or several
tagged blocks, an unclosed last block whose JSON is complete, a bare JSON
object (or one in a ```json fence) that is the whole answer, with the
parameters under ``arguments`` or ``parameters``. Prose that merely contains
JSON is an answer, not a call.
"""
from __future__ import annotations

import json
import re

from .base import ToolCall

_BLOCK_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE_RE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def render_tools_prompt(tools: list[dict]) -> str:
    """The system-prompt section that teaches the model the call format."""
    lines = ["You can call these tools. To call one, answer with only:",
             '<tool_call>{"name": "<tool name>", "arguments": {<parameters as JSON>}}</tool_call>',
             "You may write several such blocks to call several tools. After the results come back, "
             "continue; when you have the final answer, reply with plain text and no tool call.", "", "Tools:"]
    for tool in tools:
        lines.append(f"- {tool['name']}: {tool.get('description') or ''}")
        lines.append(f"  parameters (JSON Schema): {json.dumps(tool.get('parameters') or {}, ensure_ascii=False)}")
    return "\n".join(lines)


def render_call(call: dict) -> str:
    """A stored tool call written back in the format the model was taught."""
    return f"<tool_call>{json.dumps({'name': call['name'], 'arguments': call.get('arguments') or {}}, ensure_ascii=False)}</tool_call>"


def _first_object(text: str):
    start = text.find("{")
    if start < 0:
        return None
    try:
        value, _end = json.JSONDecoder().raw_decode(text[start:])
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _to_call(obj: dict, index: int, prefix: str) -> ToolCall | None:
    if isinstance(obj.get("function"), dict):  # {"function": {"name", "arguments"}}, OpenAI's shape
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = obj.get("arguments", obj.get("parameters", {}))
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return ToolCall(id=f"{prefix}{index}", name=name, arguments={}, raw_arguments=raw,
                            parse_error="arguments are not valid JSON")
    if not isinstance(arguments, dict):
        return ToolCall(id=f"{prefix}{index}", name=name, arguments={}, raw_arguments=raw,
                        parse_error="arguments must be a JSON object")
    return ToolCall(id=f"{prefix}{index}", name=name, arguments=arguments, raw_arguments=raw)


def parse_tool_calls(text: str | None, id_prefix: str = "") -> tuple[list[ToolCall], str]:
    """``(calls, remaining_text)`` from a model's text answer. Ids are left
    empty unless ``id_prefix`` is given (the runtime assigns unique ones)."""
    if not text:
        return [], text or ""
    calls = []
    if "<tool_call>" in text:
        for index, block in enumerate(_BLOCK_RE.findall(text)):
            obj = _first_object(block)
            call = _to_call(obj, index, id_prefix) if obj else None
            if call:
                if not id_prefix:
                    call.id = ""
                calls.append(call)
        remaining = _BLOCK_RE.sub("", text).strip()
        return calls, remaining
    stripped = text.strip()
    fenced = _FENCE_RE.match(stripped)
    candidate = fenced.group(1) if fenced else stripped
    if candidate.startswith("{") and candidate.endswith("}"):
        try:
            obj = json.loads(candidate)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict) and ("arguments" in obj or "parameters" in obj):
            call = _to_call(obj, 0, id_prefix)
            if call:
                if not id_prefix:
                    call.id = ""
                return [call], ""
    return [], text
