"""The four wire formats the scripted server speaks: how an incoming request
is read into one neutral, OpenAI-shaped view (for scenario matching), and
how a neutral reply is written back as each provider would.

* OpenAI Chat Completions: https://platform.openai.com/docs/api-reference/chat
* Gemini generateContent: https://ai.google.dev/api/generate-content
* Anthropic Messages: https://docs.anthropic.com/en/api/messages
* Ollama: the OpenAI format under /v1, plus /api/embed
"""
from __future__ import annotations

import json
import time

ARG_PIECE = 12  # characters of tool-call arguments per streamed delta
GEMINI_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def words(text: str) -> list[str]:
    parts, current = [], ""
    for char in text:
        current += char
        if char == " ":
            parts.append(current)
            current = ""
    return parts + ([current] if current else [])


def _args_text(arguments) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _args_object(arguments):
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


# ----------------------------------------------------------------- requests
def neutral_request(wire: str, body: dict) -> dict:
    """``{"messages", "tools", "stream", "wire"}`` in OpenAI's shape."""
    if wire == "gemini":
        return _from_gemini(body)
    if wire == "anthropic":
        return _from_anthropic(body)
    return {**body, "wire": wire}


def _from_gemini(body: dict) -> dict:
    messages = []
    system = body.get("systemInstruction") or {}
    if system.get("parts"):
        messages.append({"role": "system", "content": "".join(p.get("text", "") for p in system["parts"])})
    for content in body.get("contents") or []:
        role = "assistant" if content.get("role") == "model" else "user"
        texts, calls = [], []
        for part in content.get("parts") or []:
            if "text" in part:
                texts.append(part["text"])
            elif "functionCall" in part:
                call = part["functionCall"]
                calls.append({"id": call.get("id", ""), "type": "function",
                              "function": {"name": call.get("name"), "arguments": json.dumps(call.get("args") or {})}})
            elif "functionResponse" in part:
                response = part["functionResponse"]
                result = (response.get("response") or {}).get("result", response.get("response"))
                messages.append({"role": "tool", "name": response.get("name"), "tool_call_id": response.get("id", ""),
                                 "content": result if isinstance(result, str) else json.dumps(result)})
        if texts or calls:
            message = {"role": role, "content": "".join(texts) or None}
            if calls:
                message["tool_calls"] = calls
            messages.append(message)
    tools = [{"type": "function", "function": d}
             for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
    return {"messages": messages, "tools": tools, "wire": "gemini"}


def _from_anthropic(body: dict) -> dict:
    messages = [{"role": "system", "content": body["system"]}] if body.get("system") else []
    for message in body.get("messages") or []:
        blocks = message.get("content")
        if isinstance(blocks, str):
            messages.append({"role": message["role"], "content": blocks})
            continue
        texts, calls = [], []
        for block in blocks or []:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "tool_use":
                calls.append({"id": block.get("id"), "type": "function",
                              "function": {"name": block.get("name"),
                                           "arguments": json.dumps(block.get("input") or {})}})
            elif block.get("type") == "tool_result":
                content = block.get("content")
                messages.append({"role": "tool", "tool_call_id": block.get("tool_use_id"),
                                 "content": content if isinstance(content, str) else json.dumps(content)})
        if texts or calls:
            entry = {"role": message["role"], "content": "".join(texts) or None}
            if calls:
                entry["tool_calls"] = calls
            messages.append(entry)
    tools = [{"type": "function", "function": {"name": t.get("name"), "description": t.get("description"),
                                               "parameters": t.get("input_schema")}} for t in body.get("tools") or []]
    return {"messages": messages, "tools": tools, "stream": bool(body.get("stream")), "wire": "anthropic"}


# ------------------------------------------------------------------ replies
def usage_of(request: dict, reply: dict) -> tuple[int, int]:
    usage = reply.get("usage") or {}
    prompt = usage.get("prompt_tokens", sum(len(json.dumps(m)) for m in request.get("messages") or []) // 4)
    completion = usage.get("completion_tokens", max(1, len(json.dumps(reply)) // 4))
    return prompt, completion


def openai_usage(request: dict, reply: dict) -> dict | None:
    """OpenAI's ``usage``: the reply's ``usage`` as given (its
    ``prompt_tokens_details``/``completion_tokens_details`` included) with
    the counts filled in; None when the reply says ``no_usage``."""
    if reply.get("no_usage"):
        return None
    prompt, completion = usage_of(request, reply)
    usage = {**(reply.get("usage") or {}), "prompt_tokens": prompt, "completion_tokens": completion}
    if all(isinstance(count, int) for count in (prompt, completion)):  # a test may send nonsense on purpose
        usage.setdefault("total_tokens", prompt + completion)
    return usage


def anthropic_usage(request: dict, reply: dict) -> dict | None:
    """Anthropic's ``usage``: the reply's ``anthropic_usage`` verbatim, else
    input and output counts; None when the reply says ``no_usage``."""
    if reply.get("no_usage"):
        return None
    if "anthropic_usage" in reply:
        return dict(reply["anthropic_usage"])
    prompt, completion = usage_of(request, reply)
    return {"input_tokens": prompt, "output_tokens": completion}


def gemini_usage(request: dict, reply: dict) -> dict | None:
    """Gemini's ``usageMetadata``: the reply's ``gemini_usage`` verbatim,
    else prompt and candidates counts; None when the reply says ``no_usage``."""
    if reply.get("no_usage"):
        return None
    if "gemini_usage" in reply:
        return dict(reply["gemini_usage"])
    prompt, completion = usage_of(request, reply)
    return {"promptTokenCount": prompt, "candidatesTokenCount": completion, "totalTokenCount": prompt + completion}


def openai_calls(reply: dict) -> list[dict]:
    return [{"id": call.get("id", f"call_{int(time.time() * 1000) % 100000}_{i}"), "type": "function",
             "function": {"name": call["name"], "arguments": _args_text(call.get("arguments", {}))}}
            for i, call in enumerate(reply.get("tool_calls") or [])]


def gemini_response(request: dict, reply: dict, model: str) -> dict:
    parts = [{"text": reply["reasoning"], "thought": True}] if reply.get("reasoning") else []
    parts += [{"text": reply["content"]}] if reply.get("content") else []
    for call in reply.get("tool_calls") or []:
        function_call = {"name": call["name"], "args": _args_object(call.get("arguments", {}))}
        if call.get("id"):
            function_call["id"] = call["id"]
        parts.append({"functionCall": function_call})
    finish = reply.get("gemini_finish") or GEMINI_FINISH.get(reply.get("finish_reason") or "stop", "STOP")
    response = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
                "modelVersion": model}
    usage = gemini_usage(request, reply)
    if usage is not None:
        response["usageMetadata"] = usage
    return response


def gemini_stream(request: dict, reply: dict, model: str) -> list[dict]:
    """Partial responses: text in word pieces, function calls whole, the
    finish reason on the last one. Each carries ``usageMetadata`` as Gemini
    sends it, cumulative: the prompt and thinking counts from the first
    chunk, the candidates' count growing to its final value."""
    pieces = words(reply.get("content") or "")
    usage = gemini_usage(request, reply)
    events = []
    for index, piece in enumerate(pieces):
        event = {"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}],
                 "modelVersion": model}
        if usage is not None:
            so_far = dict(usage)
            if "candidatesTokenCount" in usage:
                so_far["candidatesTokenCount"] = usage["candidatesTokenCount"] * index // max(1, len(pieces))
            event["usageMetadata"] = so_far
        events.append(event)
    events.append(gemini_response(request, {**reply, "content": None, "reasoning": None}, model))
    if reply.get("reasoning"):  # the thought summary comes first
        events.insert(0, {"candidates": [{"content": {"role": "model", "parts": [
            {"text": reply["reasoning"], "thought": True}]}, "index": 0}], "modelVersion": model})
    return events


def anthropic_response(request: dict, reply: dict, model: str) -> dict:
    content = [{"type": "thinking", "thinking": reply["reasoning"], "signature": "scripted"}] \
        if reply.get("reasoning") else []
    content += [{"type": "text", "text": reply["content"]}] if reply.get("content") else []
    for i, call in enumerate(reply.get("tool_calls") or []):
        content.append({"type": "tool_use", "id": call.get("id", f"toolu_{int(time.time() * 1000) % 100000}_{i}"),
                        "name": call["name"], "input": _args_object(call.get("arguments", {}))})
    calls = bool(reply.get("tool_calls"))
    stop = reply.get("anthropic_stop") or ANTHROPIC_STOP.get(
        reply.get("finish_reason") or ("tool_calls" if calls else "stop"))
    message = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": content,
               "stop_reason": stop, "stop_sequence": None}
    usage = anthropic_usage(request, reply)
    if usage is not None:
        message["usage"] = usage
    return message


def anthropic_stream(request: dict, reply: dict, model: str) -> list[tuple[str, dict]]:
    """``(event, data)`` pairs as the Messages streaming API sends them:
    ``message_start`` carries the input counts and an output count of 1,
    ``message_delta`` the cumulative output count."""
    message = anthropic_response(request, reply, model)
    usage = message.pop("usage", None)
    start = {**message, "content": [], "stop_reason": None}
    if usage is not None:
        start["usage"] = {**usage, "output_tokens": 1}
    events = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind in ("text", "thinking"):  # streamed word by word as text_delta / thinking_delta
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": kind, kind: ""}}))
            for piece in words(block[kind]):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": f"{kind}_delta", kind: piece}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            args = _args_text(block["input"])
            for start in range(0, len(args), ARG_PIECE):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": args[start:start + ARG_PIECE]}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"]}}
    if usage is not None and "output_tokens" in usage:
        delta["usage"] = {"output_tokens": usage["output_tokens"]}
    events.append(("message_delta", delta))
    events.append(("message_stop", {"type": "message_stop"}))
    return events
