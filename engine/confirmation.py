"""A tool call waiting for its user's approval (spec 000 §4.2 c-iii): what
the thread stores while paused, what the confirmation answer resumes and
what callers are given to show."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ConfirmationRequest:
    """``tool_call_id`` is the call's id in the transcript; ``arguments``
    what the model sent; ``reason`` the safety guard's; ``risk_level`` the
    tool's."""
    tool_call_id: str
    tool: str
    arguments: dict
    reason: str
    risk_level: str

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> ConfirmationRequest:
        """Read what ``to_json`` wrote. Raises ValueError when it cannot."""
        try:
            data = json.loads(text)
            return cls(tool_call_id=str(data["tool_call_id"]), tool=str(data["tool"]),
                       arguments=dict(data["arguments"]), reason=str(data.get("reason", "")),
                       risk_level=str(data.get("risk_level", "")))
        except (TypeError, KeyError, AttributeError) as error:
            raise ValueError(f"unreadable confirmation request: {error}") from None
