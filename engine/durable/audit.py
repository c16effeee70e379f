"""The audit rows of one run (spec 000 §3.7, §4.6), written step by step.

Inside ``step()`` the rows of an LLM call and of the tool calls it asked
for are kept and inserted together when the step ends, in one statement and
in the order they happened; outside a step each row is written at once.
Rows live in the run's transaction either way, so they are committed, or
rolled back, with the step's business effect."""
from __future__ import annotations

from contextlib import contextmanager


class AuditTrail:
    """Writes ``agentic.ai.execution.log`` rows of ``thread``'s run."""

    def __init__(self, thread):
        self.thread = thread
        self.model = thread.env["agentic.ai.execution.log"]
        # The row's agent, user and company, read once: a commit empties Odoo's cache, and each step's rows
        # would otherwise read the thread again for what never changes while the run lasts.
        self.owner = {"agent_id": thread.agent_id.id, "user_id": thread.user_id.id or thread.env.uid,
                      "company_id": thread.company_id.id or thread.env.company.id}
        self.pending: list[tuple[str, object, dict]] = []
        self.depth = 0

    def record(self, action_type: str, **values) -> None:
        """One row (``values`` as for ``agentic.ai.execution.log.log``)."""
        self.pending.append((action_type, self.thread, {**self.owner, **values}))
        if not self.depth:
            self.flush()

    @contextmanager
    def step(self):
        """Keep the rows recorded inside, and write them when it ends (also
        when it ends with an exception)."""
        self.depth += 1
        try:
            yield self
        finally:
            self.depth -= 1
            if not self.depth:
                self.flush()

    def flush(self) -> None:
        """Write the kept rows now (before anything else logs, so that rows
        stay in the order things happened)."""
        rows, self.pending = self.pending, []
        self.model.log_many(rows)
