"""AgentResult: what a run hands back to its caller (spec 000 §4.1)."""
from __future__ import annotations

from ..guard.confirmation import ConfirmationRequest
from ..text.clean_text import clean_text


class AgentResult(dict):
    """What a run produced, for controllers and callers: a dict, so that it
    travels as JSON as it is (``agent.run`` and the confirmation answers
    are called over JSON-RPC), whose keys also read as attributes.

    ``state`` is the thread's state afterwards; ``reply`` the last assistant
    text (or the confirmation question); tokens and cost cover this run;
    ``confirmation`` is the call waiting for the user's answer: as an
    attribute the ``ConfirmationRequest``, as a key its dict with its
    ``summary`` text (as ``agentic.ai.thread.get_pending_confirmation``);
    ``wait_seconds`` the seconds this run waited for database connections
    (the runs' gate and the pool, after its model's answers; a streamed
    run's done event adds the wait at its opening, controllers/stream_controller.py)
    and for its conversation's row lock (each lock statement whole, retries included);
    ``wait_core_busy_seconds`` the part of them during which the server's
    core was busy with other work, ``wait_core_queued_seconds`` the part
    during which it waited for one of the machine's cores
    (engine/durable/wait_time.py): what is left is what a busy server adds
    to a run besides the machine's CPU and its model (issue 26 point 5)."""

    def __init__(self, thread_id: int, state: str, reply: str, iterations: int = 0, tool_calls: int = 0,
                 input_tokens: int = 0, output_tokens: int = 0, cost: float = 0.0, error: str | None = None,
                 confirmation: ConfirmationRequest | None = None, message_ids: list[int] | None = None,
                 wait_seconds: float = 0.0, wait_core_busy_seconds: float = 0.0,
                 wait_core_queued_seconds: float = 0.0):
        # Texts from providers and tools may hold what JSON cannot carry out as UTF-8 (lone surrogates).
        reply, error = clean_text(reply) if reply is not None else None, clean_text(error) if error else error
        super().__init__(thread_id=thread_id, state=state, reply=reply, iterations=iterations, tool_calls=tool_calls,
                         input_tokens=input_tokens, output_tokens=output_tokens, cost=cost, error=error,
                         confirmation={**confirmation.to_dict(), "summary": confirmation.summary()}
                         if confirmation else None,
                         message_ids=list(message_ids or ()), wait_seconds=round(wait_seconds, 4),
                         wait_core_busy_seconds=round(wait_core_busy_seconds, 4),
                         wait_core_queued_seconds=round(wait_core_queued_seconds, 4))
        self.__dict__["confirmation"] = confirmation

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self) -> dict:
        """A plain dict: ``confirmation`` as ``{tool_call_id, tool, arguments, reason, risk_level, ...}``."""
        return dict(self)


class TurnEnd(Exception):
    """How a turn ends, the one way out of the turn loop (issue 25 point
    1): ``state`` (the thread's next state: completed, waiting_confirmation,
    interrupted, error), ``reply`` (what the user reads), ``error`` (kept on
    the thread) and ``confirmation`` (the call that waits). Raised by the
    step that ends the turn, after it stored the turn's last row;
    ``AgentRuntime._finish`` stores the state and builds the AgentResult."""

    def __init__(self, state: str, reply: str, error: str | None = None,
                 confirmation: ConfirmationRequest | None = None):
        super().__init__(state)
        self.state, self.reply, self.error, self.confirmation = state, reply, error, confirmation
