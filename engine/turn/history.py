"""Fitting the history sent to the model into its context budget (issue 12
point 4, cases BR-25b and BR-25c; spec 000 §4.2).

The messages are the neutral ones of ``engine/turn/transcript.py``. When the
system prompt and the messages count more tokens than the budget, the
oldest messages are left out in whole groups — a user or assistant text
message alone, or an assistant message with ``tool_calls`` together with
all its tool results — so that every call sent is followed by its results
and no result is sent without its call. The latest user message and
everything after it are always kept. What was left out is folded into a
short extractive summary appended to the system prompt: what the user
asked, what the agent answered (each cut short), and the tools called
with their status. Text from tool results is never copied into it (it may
quote records, which are data, not instructions), only tool names and
statuses. What is kept starts with a user message."""
from __future__ import annotations

import json
from collections.abc import Callable

ITEM_CHARS = 120        # longest quoted text of one summarised message
SUMMARY_CHARS = 2000    # longest summary; the most recent items are kept
MESSAGE_OVERHEAD = 4    # tokens a provider adds per message (role, separators), roughly
STATUS_WORDS = {"done": "ok", "error": "failed", "rejected": "rejected by the user", "cancelled": "not run"}


class HistoryFitter:
    """Counts the tokens of messages once each (``count(text) -> int``,
    the provider adapter's tokenizer) and cuts the history to a budget.
    One per transcript: the cache is keyed by the message objects, which
    the transcript keeps for the turn (an assistant message that more
    calls join is counted again)."""

    def __init__(self, count: Callable[[str], int]):
        self.count = count
        self._sizes: dict[int, tuple[int, int]] = {}  # id(message) -> (number of calls, tokens)
        self._prompt: tuple[str, int] = ("", 0)  # the last system prompt counted, and its tokens

    def size(self, message: dict) -> int:
        """Tokens of one neutral message (content, calls and their
        arguments, plus a small per-message overhead); cached."""
        calls = message.get("tool_calls") or ()
        cached = self._sizes.get(id(message))
        if cached is not None and cached[0] == len(calls):
            return cached[1]
        text = message.get("content") or ""
        if calls:
            text += json.dumps([[c.get("name"), c.get("arguments")] for c in calls], default=str)
        tokens = self.count(text) + MESSAGE_OVERHEAD
        self._sizes[id(message)] = (len(calls), tokens)
        return tokens

    def _prompt_size(self, prompt: str) -> int:
        """Tokens of ``prompt``, counted again only when it changed: each
        step of a turn sends the same system prompt."""
        if prompt != self._prompt[0]:
            self._prompt = (prompt, self.count(prompt))
        return self._prompt[1]

    def _group_size(self, messages: list[dict], group: tuple[int, int]) -> int:
        return sum(self.size(m) for m in messages[group[0]:group[1]])

    def fit(self, messages: list[dict], system_prompt: str, budget: int,
            statuses: dict[str, str] | None = None) -> tuple[str, list[dict]]:
        """``(system_prompt, kept)``: ``messages`` unchanged when they fit in
        ``budget`` tokens with ``system_prompt``; else the newest messages
        that fit (whole groups, see the module docstring; never less than
        the latest user message and what follows it) and the system prompt
        with the summary of the others appended. ``statuses``: the status
        of each call by id (``done``, ``error``, ``rejected``,
        ``cancelled``), for the summary."""
        total = self._prompt_size(system_prompt or "") + sum(self.size(m) for m in messages)
        if total <= budget:
            return system_prompt, messages
        last_user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), 0)
        groups = list(_groups(messages, last_user))
        dropped = 0
        # First the groups that must go whatever the summary's size (no tokenising), then one at a time
        # while the summary does not fit either: the summary is counted once or a few times per call.
        while dropped < len(groups) and total > budget:
            total -= self._group_size(messages, groups[dropped])
            dropped += 1
        if not dropped:
            return system_prompt, messages
        items = [item for start, end in groups[:dropped] for item in _describe(messages[start:end], statuses or {})]
        while True:
            summary = _render(items, groups[dropped - 1][1])
            if dropped == len(groups) or total + self.count(summary) <= budget:
                break
            start, end = groups[dropped]
            total -= self._group_size(messages, groups[dropped])
            items += _describe(messages[start:end], statuses or {})
            dropped += 1
        # A kept history starts with a user message: chat templates that alternate roles reject one that
        # starts with the assistant (issue 24 point 1).
        while dropped < len(groups) and messages[groups[dropped - 1][1]].get("role") != "user":
            start, end = groups[dropped]
            items += _describe(messages[start:end], statuses or {})
            dropped += 1
            summary = _render(items, groups[dropped - 1][1])
        cut = groups[dropped - 1][1]
        prompt = f"{system_prompt}\n\n{summary}" if system_prompt else summary
        return prompt, messages[cut:]


def _groups(messages: list[dict], stop: int):
    """``(start, end)`` of each group of ``messages[:stop]``, oldest first:
    an assistant message with calls and the tool messages after it are one
    group; a tool message with no call before it joins the group before."""
    start = 0
    index = 0
    while index < stop:
        index += 1
        while index < stop and messages[index].get("role") == "tool":
            index += 1
        yield start, index
        start = index


def _cut(text: str) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= ITEM_CHARS else text[:ITEM_CHARS - 1] + "…"


def _describe(group: list[dict], statuses: dict[str, str]) -> list[str]:
    """The summary items of one group: user and assistant text quoted and
    cut, calls by name and status; tool results contribute nothing."""
    items = []
    for message in group:
        role = message.get("role")
        if role == "user" and (message.get("content") or "").strip():
            items.append(f'the user asked "{_cut(message["content"])}"')
        elif role == "assistant":
            if (message.get("content") or "").strip():
                items.append(f'you answered "{_cut(message["content"])}"')
            calls = message.get("tool_calls") or ()
            if calls:
                names = ", ".join(f"{c.get('name')} ({STATUS_WORDS.get(statuses.get(c.get('id')), 'no result')})"
                                  for c in calls)
                items.append(f"tools called: {names}")
    return items


def _render(items: list[str], left_out: int) -> str:
    """The summary text: a header saying what it is, then the most recent
    items that fit in SUMMARY_CHARS."""
    head = (f"[Summary of the {left_out} earliest messages of this conversation, left out to fit the model's context; "
            "tool results are not repeated: call the tool again if you need one.]\n"
            "Earlier in this conversation (summarised): ")
    body = "; ".join(items)
    room = SUMMARY_CHARS - len(head)
    if len(body) > room:
        body = "…" + body[len(body) - room + 1:]
    return head + body + "."
