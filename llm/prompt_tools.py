"""Tool calling for models without native tool calls (spec 000 §6.4): the
tools are described in the system prompt and the model writes
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` in its text,
which is parsed back into ToolCall objects and removed from the answer.

Any OpenAI-compatible provider (Ollama, llama.cpp, vLLM, LM Studio…) uses
it when its *Supports Tool Calling* is off (llm/openai_adapter.py):
``prompt_messages`` writes the history in the protocol (one user turn for
consecutive tool results, as chat templates that alternate roles need),
and ``hold_calls`` keeps the protocol off the user's screen in a stream,
however the server splits the tokens.

The parser accepts what local models actually produce: one or several
tagged blocks, an unclosed last block whose JSON is complete, a bare JSON
object (or one in a ```json fence) that is the whole answer, with the
parameters under ``arguments`` or ``parameters``. Prose that merely contains
JSON is an answer, not a call.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator

from .base import LLMStreamChunk, ToolCall, fenced_block

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
HOLD_MARKERS = (_OPEN, "```", "{")  # text from one of these on may be a call: not streamed
_NAME_RE = re.compile(r'"name"\s*:\s*"([^"]{1,64})"')


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
    payload = json.dumps({"name": call["name"], "arguments": call.get("arguments") or {}}, ensure_ascii=False)
    return f"<tool_call>{payload}</tool_call>"


def _objects(text: str) -> tuple[list, str]:
    """Every JSON value at the start of ``text`` (objects one after another,
    or an array of them), and what follows them."""
    decoder, values, pos = json.JSONDecoder(), [], 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] not in "{[":
            return values, text[pos:]
        try:
            value, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return values, text[pos:]
        values.extend(value if isinstance(value, list) else [value])


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


def _unparsable(segment: str) -> ToolCall | None:
    """A block whose JSON does not parse: a call that reports the error
    (named when the name can be read), so it is never silently dropped."""
    name = _NAME_RE.search(segment)
    if not name and not segment.strip():
        return None
    preview = segment.strip()[:120]
    return ToolCall(id="", name=name.group(1) if name else "", arguments={}, raw_arguments=segment.strip()[:2000],
                    parse_error=f"the tool call is not valid JSON: {preview}")


def parse_tool_calls(text: str | None, id_prefix: str = "") -> tuple[list[ToolCall], str]:
    """``(calls, remaining_text)`` from a model's text answer. Ids are left
    empty (the runtime assigns unique ones) unless ``id_prefix`` is given.
    Linear in the length of the text."""
    if not text:
        return [], text or ""
    calls, prose = [], []
    if _OPEN in text:
        segments = text.split(_OPEN)
        prose.append(segments[0])
        for segment in segments[1:]:
            values, rest = _objects(segment)
            found = [c for c in (_to_call(v, 0, "") for v in values if isinstance(v, dict)) if c]
            if not found:
                bad = _unparsable(rest.split(_CLOSE, 1)[0])
                found = [bad] if bad else []
            calls.extend(found)
            rest = rest.lstrip()
            if rest.startswith(_CLOSE):
                rest = rest[len(_CLOSE):]
            elif not values:
                rest = rest.split(_CLOSE, 1)[-1]
            prose.append(rest)
    else:
        stripped = text.strip()
        inner = fenced_block(stripped) if stripped.startswith("```") and stripped.endswith("```") else None
        candidate = (inner if inner is not None else stripped).strip()
        if candidate[:1] in "{[":
            values, rest = _objects(candidate)
            if values and not rest.strip() and all(isinstance(v, dict) and (
                    "arguments" in v or "parameters" in v or isinstance(v.get("function"), dict)) for v in values):
                calls = [c for c in (_to_call(v, 0, "") for v in values) if c]
                if calls:
                    prose = []
                else:
                    prose = [text]
            else:
                prose = [text]
        else:
            prose = [text]
    calls = [dataclasses.replace(call, id=f"{id_prefix}{index}" if id_prefix else "")
             for index, call in enumerate(calls)]
    return calls, "".join(prose).strip()


def prompt_messages(messages: list[dict], tools: list[dict] | None) -> list[dict]:
    """Neutral ``messages`` in the prompt protocol: the tools described in
    the system prompt, calls as ``<tool_call>`` text of the assistant,
    results as ``<tool_result>`` text of the user; consecutive turns of one
    role are joined into one (strict chat templates alternate roles)."""
    out: list[dict] = []
    for message in messages:
        role = message["role"]
        if role == "assistant" and message.get("tool_calls"):
            calls = [render_call(c) for c in message["tool_calls"]]
            role, text = "assistant", "\n".join(filter(None, [message.get("content") or "", *calls]))
        elif role == "tool":
            role, text = "user", (f"<tool_result name=\"{message.get('name') or ''}\">\n"
                                  f"{message.get('content') or ''}\n</tool_result>")
        else:
            text = message.get("content") or ""
        if out and out[-1]["role"] == role and role != "system":
            out[-1] = {"role": role, "content": f"{out[-1]['content']}\n\n{text}"}
        else:
            out.append({"role": role, "content": text})
    if tools:
        prompt = render_tools_prompt(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + prompt}
        else:
            out.insert(0, {"role": "system", "content": prompt})
    return out


def _held_from(text: str, start: int) -> int:
    """Where, from ``start``, ``text`` may begin a call: the first marker,
    or a tail that is the start of one ("<tool", "`"); ``len(text)`` when
    nothing needs holding."""
    found = [p for p in (text.find(marker, start) for marker in HOLD_MARKERS) if p >= 0]
    if found:
        return min(found)
    for size in range(min(len(text) - start, max(len(m) for m in HOLD_MARKERS) - 1), 0, -1):
        tail = text[len(text) - size:]
        if any(marker.startswith(tail) for marker in HOLD_MARKERS):
            return len(text) - size
    return len(text)


def hold_calls(chunks: Iterable[LLMStreamChunk], model: str) -> Iterator[LLMStreamChunk]:
    """A prompt-protocol stream as the user may see it: text is relayed
    until it may begin a call (a marker, or the start of one split over
    chunks), then held; at the end the held text is parsed: its calls go on
    the final chunk, prose around them is relayed, and held text that was
    an answer after all is relayed whole."""
    text, streamed, held, final = "", 0, False, None
    for chunk in chunks:
        if chunk.finish_reason is not None:
            final = chunk
            continue
        text += chunk.content
        if held:  # an empty chunk, so that the caller still checks Stop and its time limit between chunks
            yield LLMStreamChunk(content="", model=chunk.model)
            continue
        end = _held_from(text, streamed)
        if end > streamed:
            yield LLMStreamChunk(content=text[streamed:end], model=chunk.model)
            streamed = end
        held = any(text.startswith(marker, end) for marker in HOLD_MARKERS)
    calls, prose = parse_tool_calls(text)
    model = final.model if final and final.model else model
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
