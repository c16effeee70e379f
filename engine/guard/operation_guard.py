"""The second layer of the safety guard (spec 000 §7.2, seed 003): while a
tool runs, every create, write and unlink that reaches the ORM is judged,
whatever the tool: a generic ORM tool, a business method, a one2many
command, a domain tool that creates related records, Python code.

The executor installs an ``OperationGuard`` for the length of one tool call
(``guarding``); ``models/base.py`` asks ``check`` before each create, write
and unlink of any model. A refusal raises ``OperationRefused`` before the
operation happens, and is remembered: should the tool catch the exception
and go on, the executor still fails the call and rolls it back. A change of
Odoo's configuration in a call the user has not approved raises
``ConfirmationNeeded`` the same way: the call is rolled back and the user
is asked about that very operation (records, values before → after); once
approved, the call runs again with the operation's signature approved,
and any other such operation it reaches is asked about in turn: an
approval covers what the user was shown, nothing more.

Each write and delete the guard lets through first records the values it
is about to change (spec §7.4 ``before_snapshot``): for a write the written
fields, for a delete every stored field, of every record, whoever the
business code runs as (the snapshot is read in the operation's own
environment, and only AI administrators read it in the log).

Each create, write and unlink that returned is noted (``note_done``): a
call kept is logged with one ``orm_operation`` row per kind of operation
under its ``tool_execution`` row (spec §3.7, issue 27 point 4).

Reads, and the allow lists, are judged before the tool runs, on what the
call declares (engine/safety.py): Odoo's business code reads many models,
and writes some (chatter, stock moves), on its own."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from odoo.exceptions import AccessError, MissingError

from .confirmation_preview import describe_operation
from .safety_rules import PROTECTED_PREFIX, Operation, RuleSet, domain_holds, is_configuration

_ACTIVE: ContextVar[OperationGuard | None] = ContextVar("agentic_ai_operation_guard", default=None)


# Fields of a user's contact that reach the user's credentials (the login
# e-mail, where password resets are sent).
USER_CONTACT_FIELDS = frozenset({"email"})
# Effects that always ask, whoever asks and whatever the policy (issue 23
# point 4), judged on the ORM operation itself, from any tool or business
# code: where money goes, what becomes public, what leaves the company.
PAYMENT_MODELS = frozenset({"res.partner.bank", "payment.token", "account.payment.method.line"})
# What decides where money goes on a bank account: a write of other fields (the holder's name Odoo copies
# when the partner is renamed) is not asked about on this account.
BANK_ACCOUNT_FIELDS = frozenset({"acc_number", "sanitized_acc_number", "partner_id", "allow_out_payment", "bank_id",
                                 "bank_bic", "clearing_number", "company_id", "active"})
PAYMENT_FIELDS = frozenset({"partner_bank_id", "bank_account_id", "bank_ids", "primary_bank_account_id",
                            "out_payment_method_line_id"})
PUBLISHING_FIELDS = frozenset({"website_published", "is_published", "is_public", "public"})
PORTAL_MODELS = frozenset({"portal.wizard", "portal.wizard.user", "portal.share"})
OUTGOING_MODELS = frozenset({"mail.mail", "mail.compose.message", "sms.sms", "sms.composer", "mail.mass_mailing"})
OUTGOING_MESSAGE_TYPES = frozenset({"comment", "email", "email_outgoing"})
MAX_SNAPSHOT_RECORDS = 200  # records whose values one tool call keeps; beyond, only their ids
MAX_LOGGED_OPERATIONS = 100  # orm_operation rows of one tool call (kinds of operation); beyond, one row counts them
MAX_LOGGED_IDS = 1000  # record ids kept per orm_operation row; beyond, the count only


class OperationRefused(Exception):
    """An ORM operation the safety rules refuse; ``args[0]`` says why."""


class ConfirmationNeeded(Exception):
    """An ORM operation that needs the user's confirmation first (a change
    of Odoo's configuration in a call the user did not approve)."""


class ChangesReached(BaseException):
    """A look-ahead run reached its first change (``stop_before_changes``).
    A BaseException, so that no ``except Exception`` in a tool or in
    business code can catch it and go on."""


class OperationGuard:
    """Judges the ORM operations of one tool call of a run.

    ``rules`` are the run's safety rules; ``blocked_models`` the agent's
    blocked models; ``tool`` the name of the running tool; ``approved``
    the signatures (``signature``) of the operations the user approved for
    this call; ``viewer`` the run's environment, in which what is shown to
    the user is read (business code may write as superuser);
    ``stop_before_changes``: a look-ahead run, which stops with
    ChangesReached at its first create, write or unlink (once judged, so a
    refused one is still told), before anything changes."""

    def __init__(self, tool: str, rules: RuleSet, blocked_models: frozenset[str], approved: tuple[dict, ...] = (),
                 viewer=None, stop_before_changes: bool = False):
        self.tool = tool
        self.stop_before_changes = stop_before_changes
        self.viewer = viewer
        self.rules = rules
        self.blocked_models = blocked_models
        self.approved = approved
        self.refusals: list[str] = []
        self.confirmations: list[str] = []
        self.pending: dict | None = None  # the first operation that asked, described for the user
        self.pending_signature: dict | None = None
        self.snapshots: list[dict] = []   # before_snapshot: [{"model", "id", "values"}] in order
        self.snapshot_overflow = 0         # records changed beyond MAX_SNAPSHOT_RECORDS
        self.changes = 0                   # creates, writes and unlinks let through
        # What was done (spec §3.7 orm_operation): (model, operation, field names) -> record ids, in the order
        # first started; the ids of each create, write and unlink that returned, business code's own included.
        self.done: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}

    def check(self, records, operation: str, values: dict) -> None:
        """Raise OperationRefused if ``operation`` (create/write/unlink) on
        ``records`` (the model for a create), setting ``values`` (field name
        to value; ``{}`` for a delete), is refused, ConfirmationNeeded if it
        needs the user's approval first; else keep the records' values
        before a write or delete (``snapshots``)."""
        reason = self.refusal(records, operation, values)
        if reason:
            self.refusals.append(reason)
            raise OperationRefused(reason)
        if self.stop_before_changes:
            raise ChangesReached
        self._ask_confirmation(records, operation, values)
        if operation != "create":
            self._snapshot(records, None if operation == "unlink" else list(values))
        # Its place in the log: where it started (an order before the lines its create makes), ids once it returned.
        self.done.setdefault((records._name, operation, tuple(sorted(values))), [])
        self.changes += 1

    def note_done(self, records, operation: str, field_names) -> None:
        """Note a create, write or unlink of ``records`` (setting
        ``field_names``) that returned: the rows ``operations_done`` gives.
        New records of a form's onchange (no database id) are left out."""
        ids = [id_ for id_ in records._ids if isinstance(id_, int)]
        if ids:
            self.done.setdefault((records._name, operation, tuple(sorted(field_names))), []).extend(ids)

    def operations_done(self) -> list[dict]:
        """The call's ORM operations as the execution log keeps them (one
        ``orm_operation`` row each): ``{"model_name", "record_ids",
        "input_data": {"operation", "fields", "count"}}`` per kind of
        operation (model, operation and fields), in the order first started,
        each record once; at most MAX_LOGGED_OPERATIONS kinds and
        MAX_LOGGED_IDS ids a row, the rest counted (``"more_ids"``, and a
        last row ``{"more_operations": n}``)."""
        rows = []
        done = [(key, ids) for key, ids in self.done.items() if ids]  # started, then failed inside: not done
        for (model, operation, field_names), ids in done[:MAX_LOGGED_OPERATIONS]:
            ids = list(dict.fromkeys(ids))
            data = {"operation": operation, "fields": list(field_names), "count": len(ids)}
            if len(ids) > MAX_LOGGED_IDS:
                data["more_ids"] = len(ids) - MAX_LOGGED_IDS
            rows.append({"model_name": model, "record_ids": ids[:MAX_LOGGED_IDS], "input_data": data})
        if len(done) > MAX_LOGGED_OPERATIONS:
            rows.append({"model_name": False, "record_ids": None,
                         "input_data": {"more_operations": len(done) - MAX_LOGGED_OPERATIONS}})
        return rows

    def _ask_confirmation(self, records, operation: str, values: dict) -> None:
        """Raise ConfirmationNeeded for changes that always ask."""
        reason = always_asked(records, operation, values)
        if reason:
            reason = f"{self.tool} would {reason}: always asked"
        elif is_configuration(records._name):
            reason = f"{self.tool} would {operation} {records._name}, which is Odoo's configuration"
        elif records._name == "res.partner" and operation == "write" and set(values) & USER_CONTACT_FIELDS \
                and records.sudo().user_ids:
            reason = (f"{self.tool} would change the e-mail of a user's contact, where Odoo sends that user's "
                      "password reset links")
        if not reason:
            return
        wanted = signature(records, operation, values)
        if any(covers(approved, wanted) for approved in self.approved):
            return
        self.confirmations.append(reason)
        if self.pending is None:
            shown = records.with_env(self.viewer) if self.viewer is not None else records
            self.pending, self.pending_signature = describe_operation(shown, operation, values), wanted
        raise ConfirmationNeeded(reason)

    def _snapshot(self, records, field_names: list[str] | None) -> None:
        """Keep ``records``' current values of ``field_names`` (when None, of
        every stored field the operation's user may read but files and
        one2many lines)."""
        records = records.browse([id_ for id_ in records._ids if isinstance(id_, int)])  # not onchange drafts
        room = MAX_SNAPSHOT_RECORDS - len(self.snapshots)
        self.snapshot_overflow += max(0, len(records) - room)
        records = records[:max(room, 0)]
        if not records:
            return
        fields = records._fields
        names = [name for name in (field_names if field_names is not None else fields)
                 if name in fields and fields[name].store and fields[name].type not in ("binary", "one2many")
                 and name not in ("create_uid", "write_uid", "create_date", "write_date")
                 and (field_names is not None or records._has_field_access(fields[name], "read"))]
        try:
            rows = records.read(names, load=None)
        except (AccessError, MissingError) as error:  # the operation itself decides; the log says why
            rows = [{"id": record.id, "unreadable": type(error).__name__} for record in records]
        self.snapshots += [{"model": records._name, "id": row.pop("id"), "values": row} for row in rows]

    def refusal(self, records, operation: str, field_names) -> str:
        """Why the operation is refused, or ``""`` (``field_names``: an
        iterable of the field names it sets)."""
        model = records._name
        if model.startswith(PROTECTED_PREFIX):
            return f"agents may not change {model} (the agent's own data)"
        if model in self.blocked_models:
            return f"the agent may not change {model} (blocked model)"
        op = Operation(self.tool, model, operation, frozenset(field_names))
        for rule in self.rules.refusing(op):
            if operation == "create" or domain_holds(rule, records):  # a record to create has no state yet
                return f"{rule.reason} (safety rule {rule.name}: {operation} on {model})"
        return ""


def always_asked(records, operation: str, values: dict) -> str:
    """What an operation does that always waits for a person (issue 23
    point 4), or ``""``: bank accounts and payment details (which account
    money goes to, changed on a record), making a record public (an
    attachment, a website page,
    portal access), outgoing e-mail, texts and messages that notify
    followers outside the company."""
    model = records._name
    if model in PAYMENT_MODELS and (operation != "write" or model != "res.partner.bank"
                                    or set(values) & BANK_ACCOUNT_FIELDS):
        return f"{operation} {model} (bank accounts and payment details)"
    banks = sorted(name for name in set(values) & PAYMENT_FIELDS if values[name])
    if operation == "write" and banks:  # on create, business code sets the default account itself
        return f"change which bank account {model} pays or is paid to ({', '.join(banks)})"
    published = [name for name in set(values) & PUBLISHING_FIELDS if values[name] and name in records._fields
                 and records._fields[name].type == "boolean"]
    if operation != "unlink" and published:
        return f"make {model} public ({', '.join(sorted(published))})"
    if model in PORTAL_MODELS:
        return f"{operation} {model} (portal access)"
    if model in OUTGOING_MODELS and operation == "create":
        return f"send a message out of the company ({model})"
    if model == "mail.message" and operation == "create" and values.get("message_type") in OUTGOING_MESSAGE_TYPES \
            and not _internal_note(records, values):
        return "post a message that notifies followers and recipients (mail.message)"
    return ""


def _internal_note(records, values: dict) -> bool:
    """Whether a new mail.message is an internal note (subtype "Note"), which
    notifies no one outside the company."""
    subtype = values.get("subtype_id")
    if not subtype:
        return False
    note = records.env.ref("mail.mt_note", raise_if_not_found=False)
    return bool(note) and subtype == note.id and not values.get("partner_ids")


def signature(records, operation: str, values) -> dict:
    """What an approval of ``operation`` on ``records`` with ``values``
    covers, as JSON-able data: ``{"model", "operation", "fields", "ids"}``."""
    return {"model": records._name, "operation": operation, "fields": sorted(values),
            "ids": sorted(id_ for id_ in records._ids if isinstance(id_, int))}


def covers(approved: dict, wanted: dict) -> bool:
    """Whether the approved signature covers the wanted one: same model and
    operation, no other record, and for a write or delete no other field
    (a create's values are completed by business code, e.g. a bank
    account's sanitized number: an approved create covers the record)."""
    if approved.get("model") != wanted["model"] or approved.get("operation") != wanted["operation"]:
        return False
    if wanted["operation"] == "create":
        return True
    return (set(wanted["fields"]) <= set(approved.get("fields") or ())
            and set(wanted["ids"]) <= set(approved.get("ids") or ()))


@contextmanager
def guarding(guard: OperationGuard):
    """Judge the ORM operations of this thread of execution with ``guard``."""
    token = _ACTIVE.set(guard)
    try:
        yield guard
    finally:
        _ACTIVE.reset(token)


def active_guard() -> OperationGuard | None:
    """The guard of the tool call running in this thread of execution, if any."""
    return _ACTIVE.get()
