"""Bounds of one turn (one user message), in every execution mode (issue
12 point 4, case BR-10): the same call repeated, the number of LLM calls
and the wall-clock time. The ReAct loop (engine/runtime.py) and the
Plan-and-Execute loop catch ``TurnLimitReached`` and end the turn
``completed`` with its ``reply`` and an ``error`` log row."""
from __future__ import annotations

from ..guard.confirmation import call_key

MAX_TOOL_CALLS_PER_TURN = 10  # calls run from one model answer; the rest are refused ("call again")
REPEAT_REFUSED_FROM = 3   # the 3rd identical call of a turn is not run
REPEAT_STOPS_AT = 5       # the 5th ends the turn


class TurnLimitReached(Exception):
    """A bound of the turn was reached. ``reply`` is what the user reads
    (the turn's last assistant message); ``reason`` a short technical
    account for the log (``error_message`` of the ``error`` row)."""

    def __init__(self, reply: str, reason: str):
        super().__init__(reason)
        self.reply = reply
        self.reason = reason


class RepeatGuard:
    """Counts the calls of one turn by tool name and canonical arguments
    (``call_key`` of the sanitized arguments; arguments that do not
    validate are keyed as sent). One per runtime instance, i.e. per turn."""

    def __init__(self, tools):
        self.tools = tools  # RunContext.tools: name -> ToolSpec
        self.counts: dict[str, int] = {}

    def key(self, call) -> str:
        """The canonical key of ``call`` (an ``llm.ToolCall``)."""
        spec = self.tools.get(call.name)
        arguments = call.arguments
        if spec is not None and isinstance(arguments, dict) and not call.parse_error:
            try:
                if not spec.validate(arguments):
                    arguments = spec.sanitize(arguments)
            except Exception:  # noqa: BLE001 - keyed as sent; the executor reports the problem
                arguments = call.arguments
        return call_key(call.name, call.raw_arguments if call.parse_error else arguments)

    def see(self, call) -> str | None:
        """Count ``call``; ``None`` when it may run, else the ``[NOT RUN]``
        observation it gets instead. Raises nothing: the caller stops the
        turn when ``stops(call)`` after this."""
        key = self.key(call)
        count = self.counts[key] = self.counts.get(key, 0) + 1
        if count < REPEAT_REFUSED_FROM:
            return None
        if count >= REPEAT_STOPS_AT:
            return (f"[NOT RUN] This exact call of {call.name} was asked for {count} times in this request; it was "
                    "not run and the request is stopped.")
        return (f"[NOT RUN] This exact call of {call.name} (same arguments) already ran twice in this request; "
                "its result is above. Use that result, or change the arguments if you need something else. "
                f"Repeating it again ends the request (at the {REPEAT_STOPS_AT}th identical call).")

    def stop(self, call) -> TurnLimitReached:
        """The exception that ends the turn on ``call`` (see ``stops``)."""
        return TurnLimitReached(
            f"I stopped: I was repeating the same step ({call.name} with the same arguments) without making "
            "progress. What I did so far is above; tell me how to continue, or rephrase the request.",
            f"repeated call: {call.name} asked for {REPEAT_STOPS_AT} times with the same arguments in one request")

    def stops(self, call) -> bool:
        """Whether ``call``, already counted by ``see``, ends the turn."""
        return self.counts.get(self.key(call), 0) >= REPEAT_STOPS_AT
