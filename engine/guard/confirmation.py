"""A tool call waiting for its user's approval (spec 000 §4.2 c-iii, §7.3;
seed 001: confirmation is a deterministic step, never the LLM's): what the
thread stores while paused, what the confirmation answer resumes and what
callers are given to show."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from ...tools.values.json_values import dumps

# Why a call waits (SafetyDecision.source): a safety rule, the agent's or the
# tool's confirmation policy, Odoo configuration, or record text seen earlier.
SOURCES = ("rule", "policy", "tool", "configuration", "untrusted")


def call_key(tool: str, params) -> str:
    """The canonical text of a call (tool name and sanitized arguments with
    sorted keys): two calls with the same key do exactly the same thing."""
    return dumps([tool, params], sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class ConfirmationRequest:
    """One call the user must approve, reject or cancel.

    ``tool_call_id`` is the call's id in the transcript; ``arguments`` the
    sanitized arguments that run, unchanged, once approved; ``reason`` why it
    is asked and ``source`` which kind of check asked (``SOURCES``);
    ``risk_level`` the tool's. What the call does, for the user to judge
    (engine/guard/confirmation_preview.py): ``model`` (technical name) and
    ``model_label``; ``operation`` (create, write, unlink, ``method:NAME`` or
    ``call``); ``records`` as ``[{"id", "name"}]`` (the first 50 of
    ``record_count``); ``changes`` as ``[{"field", "label", "before",
    "after"}]`` with display values (before is None for a new record), every
    value the call writes, the ones that change first. ``approved_operations``: the signatures of
    the ORM operations an approval covers (engine/guard/operation_guard.py).
    ``confirmation_id``: the id of the ``confirmation_request`` transcript
    row that asked it (0 until it is stored); each question has its own,
    also one asked again about the same call after an approval reached a
    further change, so an answer names the question the user saw.
    ``seen_versions``: ``[{"id", "version"}]`` of the shown records of
    ``model`` when the question was asked: an approval of records changed
    since is refused and the question asked again (issue 23 point 5).
    ``named``: ``[{"argument", "model", "id", "name", "given"}]``, the
    record each marked argument named when asked
    (engine/guard/record_arguments.py); an approval after a name came to name
    another record is refused the same way."""
    tool_call_id: str
    tool: str
    arguments: dict
    reason: str
    risk_level: str
    source: str = "policy"
    model: str = ""
    model_label: str = ""
    operation: str = "call"
    records: tuple = ()
    record_count: int = 0
    changes: tuple = ()
    approved_operations: tuple = ()
    confirmation_id: int = 0
    seen_versions: tuple = ()
    named: tuple = ()

    def to_dict(self) -> dict:
        data = asdict(self)
        data.update(records=list(self.records), changes=list(self.changes),
                    approved_operations=list(self.approved_operations), seen_versions=list(self.seen_versions),
                    named=list(self.named))
        return data

    def to_json(self) -> str:
        return dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> ConfirmationRequest:
        """Read what ``to_json`` wrote (also rows written before the
        preview fields existed). Raises ValueError when it cannot."""
        try:
            data = json.loads(text)
            return cls(tool_call_id=str(data["tool_call_id"]), tool=str(data["tool"]),
                       arguments=dict(data["arguments"]), reason=str(data.get("reason", "")),
                       risk_level=str(data.get("risk_level", "")), source=str(data.get("source") or "policy"),
                       model=str(data.get("model") or ""), model_label=str(data.get("model_label") or ""),
                       operation=str(data.get("operation") or "call"),
                       records=tuple(dict(r) for r in data.get("records") or ()),
                       record_count=int(data.get("record_count") or len(data.get("records") or ())),
                       changes=tuple(dict(c) for c in data.get("changes") or ()),
                       approved_operations=tuple(dict(o) for o in data.get("approved_operations") or ()),
                       confirmation_id=int(data.get("confirmation_id") or 0),
                       seen_versions=tuple(dict(v) for v in data.get("seen_versions") or ()),
                       named=tuple(dict(n) for n in data.get("named") or ()))
        except (TypeError, KeyError, AttributeError, ValueError) as error:
            raise ValueError(f"unreadable confirmation request: {error}") from None

    def summary(self) -> str:
        """The request in plain text, as the user reads it before answering:
        what runs on which records, each change as ``before → after``, the
        risk and why it is asked."""
        target = f" on {self.model_label or self.model}" if self.model else ""
        if self.model_label and self.model and self.model_label != self.model:
            target += f" ({self.model})"
        verb = {"create": "create a record", "write": "change", "unlink": "DELETE"}.get(
            self.operation, f"run {self.operation[7:]}" if self.operation.startswith("method:") else "run")
        lines = [f"Confirm {self.tool}: {verb}{target}."]
        count = max(self.record_count, len(self.records))
        if self.records:
            names = ", ".join(f"{r.get('name')} (#{r.get('id')})" for r in self.records[:20])
            more = f" and {count - 20} more" if count > 20 else ""
            lines.append(f"{count} record{'s' if count > 1 else ''}: {names}{more}.")
        changed = [c for c in self.changes if self.operation != "write" or c.get("before") != c.get("after")]
        for change in changed[:30]:
            label = change.get("label") or change.get("field")
            if self.operation == "write":
                lines.append(f"- {label}: {change.get('before')} → {change.get('after')}")
            else:
                lines.append(f"- {label}: {change.get('after')}")
        if len(changed) > 30:
            lines.append(f"- … and {len(changed) - 30} more values: "
                         + ", ".join(c.get("field") for c in changed[30:]) + " (see the exact parameters)")
        unchanged = len(self.changes) - len(changed)
        if unchanged:
            lines.append(f"- {unchanged} more field{'s' if unchanged > 1 else ''} written with the value "
                         f"{'they' if unchanged > 1 else 'it'} already {'have' if unchanged > 1 else 'has'}")
        lines.append(f"Risk: {self.risk_level or 'unknown'}. Why confirmation is asked: {self.reason}")
        return "\n".join(lines)
