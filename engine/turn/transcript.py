"""The thread's transcript as the LLM sees it (spec 000 §3.4, §4.2): the
messages are read from the thread once per turn and kept in step with the
rows the turn appends, so a step costs the same whatever the history.

Rows become neutral LLM messages (``llm/base.py``) one by one: consecutive
``tool_call`` rows fold into one assistant message with ``tool_calls``,
results become ``tool`` messages, confirmation rows are not replayed (the
tool result that follows them stands for them). Reading the rows again
gives the same messages as the ones kept."""
from __future__ import annotations

import dataclasses
import json
import logging
import re

from ...llm import ToolCall
from ...tools.base_tool import TOOL_NAME_RE
from ..guard.confirmation import ConfirmationRequest
from ..guard.provenance import Provenance
from .history import HistoryFitter

_logger = logging.getLogger(__name__)
TOOL_CALL_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")  # ids kept as sent; others are replaced
ROW_FIELDS = ("role", "content", "tool_call_id", "tool_call_id_generated", "tool_provider_data", "tool_name",
              "tool_arguments", "untrusted_content", "tool_status", "tool_result_data", "references", "llm_failure")


class MessageFolder:
    """Turns transcript rows into neutral LLM messages, appending to ``messages``."""

    def __init__(self):
        self.messages: list[dict] = []
        self._open_calls: dict | None = None  # the assistant message later tool_call rows join
        self.statuses: dict[str, str] = {}  # tool_call_id -> status of its result (done, error, ...)
        self.arguments: dict[str, object] = {}  # tool_call_id -> the call's arguments, read once

    def add(self, row) -> None:
        """Fold one ``agentic.ai.thread.message`` row in."""
        role = row.role
        if role == "assistant" and row.llm_failure:  # the agent's words on a failure, never the model's
            self._open_calls = None
        elif role == "user" and self.messages and self.messages[-1]["role"] == "user" and self._open_calls is None:
            # A question the model never answered (its failure left out): one user turn with the next, so that
            # roles still alternate for the chat templates that require it.
            self.messages[-1] = {"role": "user", "content": f"{self.messages[-1]['content'] or ''}\n\n"
                                                            f"{row.content or ''}"}
        elif role in ("user", "assistant", "system"):
            self.messages.append({"role": role, "content": row.content})
            self._open_calls = None
        elif role == "tool_call":
            self.arguments[row.tool_call_id] = arguments = row._get_arguments()
            call = {"id": row.tool_call_id, "name": row.tool_name, "arguments": arguments,
                    "id_generated": row.tool_call_id_generated, "provider_data": row.tool_provider_data or {}}
            if self._open_calls is not None:
                self._open_calls["tool_calls"].append(call)
            else:
                self._open_calls = {"role": "assistant", "content": row.content or None, "tool_calls": [call]}
                self.messages.append(self._open_calls)
        elif role == "tool_result":
            self._open_calls = None
            self.statuses[row.tool_call_id] = row.tool_status or ""
            self.messages.append({"role": "tool", "tool_call_id": row.tool_call_id, "name": row.tool_name,
                                  "content": row.content})


class Transcript:
    """One turn's view of ``thread``'s transcript: ``messages`` for the LLM,
    the ids of the rows this turn added, and the tool-call ids in use.
    ``provenance`` (engine/guard/provenance.py), when given, is fed every row in
    order, read and added: the user's words, the results and what they
    trust."""

    def __init__(self, thread, on_row=None, provenance: Provenance | None = None):
        self.thread = thread
        self.on_row = on_row  # called with each row this turn adds
        self.provenance = provenance
        self._approved_calls: set[str] = set()
        self._folder = MessageFolder()
        self.owner = thread._owner()  # each row's user and company, read once: the thread's row is not read again
        rows = thread.message_ids.sorted("id")
        rows.fetch(ROW_FIELDS)
        for row in rows:
            self._folder.add(row)
        # The call rows by id, so that a result marks its call without a query.
        self.call_rows = {row.tool_call_id: row for row in rows if row.role == "tool_call"}
        self.call_ids = set(self.call_rows)
        # The result rows by call id: a plan's step reads its calls' outcome here.
        self.result_rows = {row.tool_call_id: row for row in rows if row.role == "tool_result"}
        self.new_ids: list[int] = []
        self._fitter: HistoryFitter | None = None
        self._system = {"role": "system", "content": ""}  # the system message of the last for_llm
        # Where the free text from records the model has seen came from (tools/untrusted.py).
        self.untrusted: list[str] = list(dict.fromkeys(
            f"an earlier result of {row.tool_name}" for row in rows
            if row.role == "tool_result" and row.untrusted_content))
        # A conversation an outside system started (models/agent_webhook.py): its messages are its data.
        webhook = thread.sudo().webhook_id if "webhook_id" in thread._fields else None
        if webhook:
            self.untrusted.insert(0, f"messages sent by the outside system {webhook.name}")
        if provenance is not None:
            if webhook:  # nobody at the keyboard: its messages are data, and every write waits for a person
                provenance.automated = True
                provenance.see_read(f"messages sent by the outside system {webhook.name}")
            for row in rows:
                self._see(row)
        # The calls the user rejected since their last message: ``[(tool, arguments)]``.
        self.rejected_calls: list[tuple[str, dict]] = []
        for row in rows:
            if row.role == "user":
                self.rejected_calls = []
            elif row.role == "tool_result" and row.tool_status == "rejected" and row.tool_call_id in self.call_rows:
                self.rejected_calls.append((row.tool_name, self.call_rows[row.tool_call_id]._get_arguments()))

    @property
    def messages(self) -> list[dict]:
        return self._folder.messages

    def for_llm(self, system_prompt: str, budget: int | None = None, count=None) -> list[dict]:
        """The system prompt, then the transcript's messages.

        With ``budget`` (tokens the system prompt and the messages may use:
        ``RunContext.history_budget``) and ``count`` (``text -> tokens``, the
        provider adapter's tokenizer: ``RunContext.count_tokens``), the
        oldest messages beyond the budget are left out in whole call/result
        groups and summarised at the end of the system prompt
        (engine/turn/history.py; issue 12 point 4, BR-25). Tokens are counted
        once per message per turn."""
        messages = self.messages
        if budget is not None and count is not None:
            if self._fitter is None or self._fitter.count != count:  # bound methods compare equal
                self._fitter = HistoryFitter(count)
            system_prompt, messages = self._fitter.fit(messages, system_prompt, budget, self._folder.statuses)
        if not system_prompt:
            return list(messages)
        if self._system["content"] != system_prompt:  # the same object while the prompt stays: a request's
            self._system = {"role": "system", "content": system_prompt}  # text is kept per message object
        return [self._system, *messages]

    def _see(self, row, data=None) -> None:
        """Feed ``row`` to the provenance (``data``: a result's data as the
        tool returned it; else read back from the row)."""
        provenance = self.provenance
        if provenance is None:
            return
        try:
            self._see_row(provenance, row, data)
        except Exception:  # a row that cannot be judged counts as read text, never as the user's
            _logger.exception("Conversation %s: row %s could not be judged for provenance", self.thread.id, row.id)
            provenance.see_read(f"row {row.id}")

    def _see_row(self, provenance: Provenance, row, data) -> None:
        role = row.role
        if role == "user" and not provenance.automated:
            provenance.see_user_words(row.content or "", message=True)
            if row.untrusted_content:  # that turn was given memories or excerpts nobody trusted wrote
                provenance.see_read("memories or knowledge excerpts given to an earlier request")
        elif role == "confirmation_response" and (row.content or "") == "approved":
            self._approved_calls.add(row.tool_call_id)
        elif role == "assistant" and row.references:
            provenance.see_read("knowledge excerpts")
        elif role == "tool_result":
            if data is None and row.tool_result_data:
                try:
                    data = json.loads(row.tool_result_data)
                except (ValueError, RecursionError):
                    data = None
            provenance.see_call(row.tool_name or "", self._folder.arguments.get(row.tool_call_id, {}), data,
                                success=row.tool_status == "done", approved=row.tool_call_id in self._approved_calls,
                                error=row.content or "" if row.tool_status != "done" else "")

    def _added(self, row, data=None):
        self._folder.add(row)
        self._see(row, data)
        self.new_ids.append(row.id)
        if self.on_row:
            self.on_row(row)
        return row

    # ------------------------------------------------------------- appending
    def add_user(self, text: str):
        self.rejected_calls = []  # a new request: the user may now want what they refused before
        return self._added(self.thread.add_user_message(text, self.owner))

    def add_assistant(self, text: str, failure: bool = False, **usage):
        """An answer of the agent; ``usage`` holds ``input_tokens``/``output_tokens``;
        ``failure``: the agent's words on the model's failure (``llm_failure``)."""
        return self._added(self.thread.add_assistant_message(text, owner=self.owner, **usage,
                                                             **({"llm_failure": True} if failure else {})))

    def add_tool_calls(self, calls: list[ToolCall], content: str = "") -> None:
        """The calls of one model answer, ``content`` the text sent with them."""
        for index, call in enumerate(calls):
            row = self.thread.add_tool_call(call, content=content if index == 0 else "", owner=self.owner)
            self.call_rows[call.id] = self._added(row)

    def add_tool_result(self, call_id: str, tool_name: str, text: str, *, success: bool, data=None,
                        status: str | None = None, untrusted: tuple[str, ...] = ()):
        """``untrusted``: the sources of the free text from records in ``text``."""
        self.untrusted += [source for source in untrusted if source not in self.untrusted]
        if status == "rejected" and call_id in self.call_rows:
            self.rejected_calls.append((tool_name, self.call_rows[call_id]._get_arguments()))
        row = self._added(self.thread.add_tool_result(call_id, tool_name, text, success=success, data=data,
                                                      status=status, call=self.call_rows.get(call_id),
                                                      untrusted=bool(untrusted), owner=self.owner), data)
        self.result_rows[call_id] = row
        return row

    def add_confirmation_request(self, request: ConfirmationRequest):
        return self._added(self.thread.request_confirmation(request))

    def add_confirmation_response(self, request: ConfirmationRequest, approved: bool, reason: str,
                                  cancelled: bool = False):
        return self._added(self.thread.add_confirmation_response(request, approved, reason, cancelled=cancelled))

    # ---------------------------------------------------------------- calls
    def normalize_calls(self, calls: list[ToolCall]) -> list[ToolCall]:
        """The calls with an id unique in the thread (some providers send
        none, or reuse one, and results are matched to calls by id) and a
        name providers accept when the history is replayed; the id is final
        from here on (transcript, log, confirmation)."""
        normalized = []
        for call in calls:
            changes = {}
            call_id = call.id if TOOL_CALL_ID_RE.match(call.id or "") else ""
            if not call_id or call_id in self.call_ids:
                counter = len(self.call_ids)
                while not call_id or call_id in self.call_ids:
                    counter += 1
                    call_id = f"call_{self.thread.id}_{counter}"
                changes.update(id=call_id, id_generated=True)
            self.call_ids.add(call_id)
            if not TOOL_NAME_RE.match(call.name or ""):
                # Stored (and replayed) under a name providers accept and no
                # tool has; the observation quotes what the model sent.
                safe = re.sub(r"[^a-zA-Z0-9_-]", "_", call.name or "")
                changes.update(parse_error=call.parse_error or f"invalid tool name {call.name!r}",
                               name=f"invalid_{safe}"[:64] if safe else "unnamed_tool")
            normalized.append(dataclasses.replace(call, **changes) if changes else call)
        return normalized
