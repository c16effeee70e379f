"""Provenance (issue 23, point 1): where each value of a tool call came
from, so that the guard decides from that, not from a field's name or a
text's length.

The design follows CaMeL (Debenedetti et al., "Defeating Prompt Injections
by Design", 2025) in its data-flow half: values are tagged by their origin
as they flow, and a write whose values did not all come from the user is
shown to the user before it runs. Control flow is not separated (one model
reads everything and chooses the next call); see "What it does not
guarantee" below.

Origins, in the order a conversation meets them (``Provenance.see_*``):

- **the user's words**: the user's messages in this conversation (answers to
  the agent's questions included), the memories written by the user's own
  hand or by an AI administrator, and the agent's own configuration
  (``see_user_words``);
- **read text**: every tool result (every string any tool returns: names,
  references, notes, ``properties`` and JSON contents, one2many lines), the
  memories nobody trusted wrote (learnt by consolidation, shared by an
  operator), knowledge excerpts, and the messages of a conversation an
  outside system started (``see_read``);
- **reads the user's words asked for**: a call all of whose values come
  from the user (checked by the same rule) is *user-directed*; the record
  ids, numbers (amounts, quantities Odoo computed) and record names its
  result holds become trusted as ids, numbers, and names used as record
  references (``see_result``). A call the user approved counts as
  user-directed too.

The rule (``untrusted_values``): once the conversation has shown the model
read text, a value of a call is from the user when it is

- a text whose words appear, in that order, in the user's words (case and
  punctuation aside; Chinese, Japanese and Korean text by characters);
- a number found in the user's words, or in the result of a user-directed
  call;
- a record id returned by a user-directed call for that model, or a number
  of the user's words;
- a record named by a text (a ``record_ref`` parameter of the addon's tools)
  whose name a user-directed call returned;
- a method whose name's words the user's words contain (``action_confirm``
  after "confirm");
- structure: a boolean, a null, a parameter's ``enum`` value, a selection
  field's own key, a model or field name, a relational command's verb.

Anything else (a target or a value that only read text put forward, or
that the model made up after reading it) is listed, and the call waits for
the user (engine/safety.py). Pure Python: Odoo facts arrive through the
``field_info`` callable."""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..text.clean_text import CJK_RE
from .intent import METHOD_ACTIONS

TOKEN_RE = re.compile(r"\w+")
NUMBER_RE = re.compile(r"(-?)(\d+(?:[.,]\d+)*)")
GENERIC_TOOLS = frozenset({"odoo_search_read", "odoo_create", "odoo_write", "odoo_unlink", "odoo_method_call"})
METHOD_PREFIXES = ("action", "button", "do")
ID_KEYS = ("id", "ids")
META_KEYS = frozenset({"total", "count", "offset", "limit", "rows_shown", "groups", "updated"})
# The keys under which a result names the record whose "id" stands beside them (``Provenance._trust``).
RECORD_NAME_KEYS = ("display_name", "name")
MAX_LEAVES = 2000  # values of one call examined; a call with more is judged untrusted as a whole
MAX_SHOWN = 5      # untrusted values quoted in a reason


@dataclass(frozen=True)
class FieldInfo:
    """What the rule needs of an Odoo field: ``type`` (Odoo's field type),
    ``comodel`` (relational fields), ``selection`` (the selection's keys)."""
    type: str
    comodel: str = ""
    selection: frozenset = frozenset()


@dataclass(frozen=True)
class Value:
    """One value of a call that did not come from the user: ``path`` where
    it sits in the arguments (``values.acc_number``), ``value`` as sent,
    ``kind`` text, number, record, name or method, ``model`` for a record."""
    path: str
    value: object
    kind: str
    model: str = ""

    def describe(self) -> str:
        shown = str(self.value) if isinstance(self.value, (int, float)) else json.dumps(self.value, ensure_ascii=False)
        shown = shown if len(shown) <= 200 else f"{shown[:150]}… ({len(shown)} characters)"
        what = f"{self.model} record" if self.kind == "record" and self.model else self.kind
        return f"{self.path} = {shown} ({what})"


def _tokens(text: str) -> list[str]:
    """Words, lower-case, a plain plural's ``s`` dropped ("Desks" is "desk")."""
    return [token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token
            for token in TOKEN_RE.findall(text.casefold())]


def _numbers(text: str) -> set[float]:
    """The numbers written in ``text`` ("1,250.50", "1.250,50", "2,5",
    "10%"), each read the one or two ways its separators allow; a minus
    sign right before one is kept."""
    found = set()
    for sign, match in NUMBER_RE.findall(text):
        candidates = {match.replace(",", "")}
        if re.fullmatch(r"\d{1,3}(\.\d{3})*(,\d+)?|\d+,\d{1,2}", match):  # 1.250,50 or 2,5: a decimal comma
            candidates.add(match.replace(".", "").replace(",", "."))
        for candidate in candidates:
            try:
                found.add(_key(float(sign + candidate)))
            except (ValueError, OverflowError):
                continue
    return found


def _key(number) -> float | int:
    """A number as compared: ints as they are, floats rounded to 6 places."""
    if isinstance(number, float):
        return round(number, 6) if math.isfinite(number) else number
    return number


def _finite(value) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


@dataclass
class Provenance:
    """The origins of the values of one conversation (see the module
    docstring). ``tools``: the run's ToolSpecs by name (their schema, models
    and risk); ``field_info(model, field) -> FieldInfo | None``."""
    tools: Mapping = field(default_factory=dict)
    field_info: Callable[[str, str], FieldInfo | None] = lambda model, name: None
    words: list[str] = field(default_factory=list)       # " a b c " token strings of the user's words
    compact: list[str] = field(default_factory=list)     # the same without spaces (CJK)
    numbers: set = field(default_factory=set)            # numbers of the user's words
    computed: set = field(default_factory=set)           # numbers of user-directed results
    ids: dict = field(default_factory=dict)              # model -> ids of user-directed results
    names: set = field(default_factory=set)              # record names of user-directed results, normalised
    read_sources: list[str] = field(default_factory=list)
    automated: bool = False                              # no person at the keyboard: every write waits
    request: tuple = (frozenset(), "")                   # the latest user message: its words, its characters

    # ---------------------------------------------------------------- origins
    def see_user_words(self, text, message: bool = False, numbers: bool = True) -> None:
        """The user wrote ``text``: a ``message`` of theirs (the latest one is
        the request whose actions engine/guard/intent.py reads), or their memory,
        or the agent's configuration (``numbers`` False: an example order
        number or today's date in a prompt names no record)."""
        if not isinstance(text, str) or not text.strip():
            return
        tokens = _tokens(text)
        self.words.append(" " + " ".join(tokens) + " ")
        self.compact.append("".join(tokens))
        if numbers:
            self.numbers |= _numbers(text)
        if message:
            self.request = (frozenset(tokens), "".join(tokens))

    def see_read(self, source: str) -> None:
        """The model was shown read text from ``source`` (a tool's result, a
        memory, an excerpt, an outside system's message)."""
        if source not in self.read_sources:
            self.read_sources.append(source)

    @property
    def has_read_text(self) -> bool:
        return bool(self.read_sources) or self.automated

    def see_call(self, tool: str, params, data, *, success: bool, approved: bool = False, error: str = "") -> None:
        """A call of ``tool`` with ``params`` returned ``data`` (or failed
        with ``error``): read text from then on; when the call was
        user-directed (``_directed``, or ``approved``), the ids, numbers and names of ``data``
        become trusted, and so do the candidates a failed lookup of a name
        listed, each of its own model only (``data`` of a failure:
        ``{"candidates": [{"model", "ids"}]}``, engine/executor.py; never
        the ids the error's text quotes, such as the closest names of a
        name that matched nothing)."""
        directed = approved or self._directed(tool, params)
        self.see_read(f"the result of {tool}")
        if not directed:
            return
        spec = self.tools.get(tool)
        models = ((params.get("model"),) if tool in GENERIC_TOOLS and isinstance(params, dict)
                  and isinstance(params.get("model"), str) else tuple(getattr(spec, "model_names", ()) or ()))
        if success and data is not None:
            self._trust(data, models, 0, tool in GENERIC_TOOLS)
        elif not success and isinstance(data, dict) and isinstance(data.get("candidates"), list):
            for listed in data["candidates"][:50]:
                model = listed.get("model") if isinstance(listed, dict) else None
                if isinstance(model, str) and model in models:
                    for candidate in (listed.get("ids") or [])[:50]:
                        if isinstance(candidate, int) and not isinstance(candidate, bool):
                            self._trust_id(model, candidate)

    def _directed(self, tool: str, params) -> bool:
        """Whether a call's result is what the user's words asked for: made
        before any read text, or with every value the user's and at least
        one of them a text, number or record of theirs (a read with an empty
        filter, once read text was shown, picks records nobody named)."""
        if not self.has_read_text:
            return True
        walker = self._walk(tool, params)
        return not walker.found and walker.count <= MAX_LEAVES and walker.users > 0

    def _trust(self, data, models: tuple, depth: int, generic: bool) -> None:
        """Trust the ids, numbers and names of a user-directed result
        (``generic``: of a generic ORM tool, whose records are of
        ``models[0]``; a domain tool's results hold records of many models,
        so their ids are trusted for any model)."""
        if depth > 50:
            return
        if isinstance(data, dict):
            if isinstance(data.get("id"), int) and not isinstance(data.get("id"), bool):
                # A record as a result gives it, {"id", "name"}: its name may name it again (a record_ref). A
                # text under any other key (a reference, a note) names nothing, whatever the key is called.
                for key in RECORD_NAME_KEYS:
                    if isinstance(data.get(key), str):
                        self.names.add(" ".join(_tokens(data[key])))
            for name, value in data.items():
                name = str(name)
                if name in META_KEYS:  # a result's counts and paging, not values of records
                    continue
                if isinstance(value, list) and len(value) == 2 and isinstance(value[0], int) \
                        and isinstance(value[1], str):  # a many2one as read() gives it: [id, name]
                    info = self.field_info(models[0], name) if models and models[0] else None
                    self._trust_id(info.comodel if info and info.comodel else "", value[0])
                    self.names.add(" ".join(_tokens(value[1])))
                    continue
                if name in ID_KEYS or name.endswith(("_id", "_ids")):
                    if name in ID_KEYS:  # a generic tool's records are of its model; a domain tool's of any
                        targets = models if generic and models else ("",)
                    else:  # a relational field of the result's model, else of any model
                        info = self.field_info(models[0], name) if models and models[0] else None
                        targets = (info.comodel if info and info.comodel else "",)
                    for number in (value if isinstance(value, list) else [value]):
                        if isinstance(number, int) and not isinstance(number, bool):
                            for model in targets:
                                self._trust_id(model, number)
                self._trust(value, models, depth + 1, generic)
        elif isinstance(data, (list, tuple)):
            for value in data:
                self._trust(value, models, depth + 1, generic)
        elif isinstance(data, (int, float)) and not isinstance(data, bool) and _finite(data):
            self.computed.add(_key(data))

    def _trust_id(self, model: str, record_id: int) -> None:
        self.ids.setdefault(model or "", set()).add(record_id)
        self.computed.add(_key(record_id))

    # ------------------------------------------------------------------ rule
    def untrusted_values(self, tool: str, params, strict: bool = False) -> list[Value]:
        """The values of a call of ``tool`` with ``params`` that did not come
        from the user (empty: the call may run without asking on this
        account). Before any read text nothing is listed unless ``strict``:
        only the user's words and the model's reading of them can have
        chosen them. In an automated run (nobody at the keyboard) one entry
        stands for all."""
        if not self.has_read_text and not strict:
            return []
        if self.automated:
            return [Value("", "(every value)", "text")]
        walker = self._walk(tool, params)
        if walker.count > MAX_LEAVES:
            return [Value("", f"({walker.count} values)", "text")]
        return walker.found

    def _walk(self, tool: str, params) -> _Walker:
        spec = self.tools.get(tool)
        writes = not getattr(spec, "read_only", tool == "odoo_search_read")
        walker = _Walker(self, [], getattr(spec, "model_names", ()) or (), writes)
        if not isinstance(params, dict):
            walker.generic("", params)
        elif tool in GENERIC_TOOLS:
            walker.generic_tool(tool, params)
        else:
            schema = getattr(spec, "schema", None) or {}
            properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
            for name, value in params.items():
                walker.schema(name, value, properties.get(name) or {})
        return walker

    def trusts_text(self, value: str) -> bool:
        """Whether the words of ``value`` appear, in order, in the user's words."""
        tokens = _tokens(value)
        if not tokens:
            return True  # punctuation only: carries nothing
        if CJK_RE.search(value):
            joined = "".join(tokens)
            return any(joined in words for words in self.compact)
        wanted = " " + " ".join(tokens) + " "
        return any(wanted in words for words in self.words)

    def trusts_number(self, value) -> bool:
        return _key(value) in self.numbers or _key(value) in self.computed

    def trusts_record(self, model: str, record_id: int) -> bool:
        """Whether a user-directed result returned record ``record_id`` of
        ``model`` (or of any model, from a domain tool); a number the user
        wrote is not an id until a read of theirs found that record."""
        return record_id in self.ids.get(model, ()) or record_id in self.ids.get("", ())

    def names_field(self, *names: str) -> bool:
        """Whether the user's words name one of ``names`` (field or
        parameter names, labels): one of their words, of three letters or
        more, begins a word of the user's on its first five letters."""
        stems = {part[:5] for name in names if isinstance(name, str) for part in _tokens(name.replace("_", " "))
                 if len(part) >= 3 and part not in ("is", "has", "the")}
        user_tokens = {token for words in self.words for token in words.split()}
        return any(token.startswith(stem) for stem in stems for token in user_tokens)

    def trusts_name(self, value: str) -> bool:
        return self.trusts_text(value) or " ".join(_tokens(value)) in self.names

    def asks_for(self, words) -> bool:
        """Whether the user's latest message holds one of ``words``
        (engine/guard/intent.py) as that very word, the way a request says it
        ("post the invoice", not "the posted invoices"); Chinese, Japanese
        and Korean words by characters. Never the agent's configuration or
        a memory."""
        tokens, characters = self.request
        return any((word in characters) if CJK_RE.search(word) else (" ".join(_tokens(word)) in tokens)
                   for word in words)

    def trusts_method(self, method: str) -> bool:
        """Whether the user's latest message names what ``method`` does: one
        of its words (its ``action_``/``button_`` prefix aside), or one of
        its action words (engine/guard/intent.py), as ``asks_for`` reads them."""
        parts = [part for part in method.casefold().split("_") if len(part) >= 3 and part not in METHOD_PREFIXES]
        return self.asks_for((*parts, *METHOD_ACTIONS.get(method, ())))


class _Walker:
    """Walks one call's arguments, appending the untrusted values to
    ``found`` and counting the user's own texts, numbers and records
    (``users``). ``models``: the tool's declared models (a ``record_ref``
    integer is a record of one of them). ``writes``: the call changes data,
    so structure (a boolean, an empty or punctuation-only text, a selection
    key, an ``enum`` value) is the user's only when their words name its
    field or parameter; for a read it is neutral."""

    def __init__(self, provenance: Provenance, found: list[Value], models: tuple = (), writes: bool = True):
        self.p = provenance
        self.found = found
        self.models = tuple(models)
        self.writes = writes
        self.count = 0
        self.users = 0

    def _leaf(self) -> bool:
        self.count += 1
        return self.count <= MAX_LEAVES

    def _judge(self, trusted: bool, value: Value) -> None:
        if trusted:
            self.users += 1
        else:
            self.found.append(value)

    def structure(self, path: str, value, *names: str) -> None:
        """A value that carries no text of its own: a choice between what
        Odoo or the tool offers, the user's when their words name its field
        or the choice itself ("invoice" for a contact's type)."""
        if not self.writes or not self._leaf():
            return
        chosen = isinstance(value, str) and bool(_tokens(value)) and self.p.trusts_text(value.replace("_", " "))
        if not chosen and not self.p.names_field(*names, path.rsplit(".", 1)[-1]):
            self.found.append(Value(path, value, "choice"))

    def text(self, path: str, value: str, name: str = "") -> None:
        if not _tokens(value):  # nothing but spaces or punctuation: clears or blanks a field
            return self.structure(path, value, name)
        if self._leaf():
            self._judge(self.p.trusts_text(value), Value(path, value, "text"))
        return None

    def number(self, path: str, value) -> None:
        if self._leaf() and _finite(value):
            self._judge(self.p.trusts_number(value), Value(path, value, "number"))

    def record(self, path: str, model: str, value, named: bool = False) -> None:
        """A record id; ``named``: a search filter, where an id the user
        wrote is theirs (their read then finds that record)."""
        if value is None or value is False:
            return self.structure(path, value)
        if isinstance(value, bool) or not isinstance(value, int):
            return self.generic(path, value)
        if self._leaf():
            trusted = self.p.trusts_record(model, value) or (named and _key(value) in self.p.numbers)
            self._judge(trusted, Value(path, value, "record", model))
        return None

    def generic(self, path: str, value, depth: int = 0, name: str = "") -> None:
        """Any JSON value: texts and numbers checked, structure as such."""
        if depth > 60 or self.count > MAX_LEAVES:
            self.count = max(self.count, MAX_LEAVES + 1) if depth > 60 else self.count
            return
        if isinstance(value, bool) or value is None:
            self.structure(path, value, name)
        elif isinstance(value, str):
            self.text(path, value, name)
        elif isinstance(value, (int, float)):
            self.number(path, value)
        elif isinstance(value, dict):
            for key, item in value.items():
                self.generic(f"{path}.{key}" if path else str(key), item, depth + 1, str(key))
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                self.generic(f"{path}[{index}]", item, depth + 1, name)

    # -------------------------------------------------------- the addon's tools
    def schema(self, path: str, value, schema, depth: int = 0) -> None:
        """A parameter of a tool with its JSON Schema: an ``enum`` value is
        structure; a ``record_ref`` (integer or name) is a record of the
        model it is marked with (``x-odoo-model``), else of one of the
        tool's models."""
        if depth > 60:
            return self.generic(path, value, depth)
        schema = schema if isinstance(schema, dict) else {}
        name = path.rsplit(".", 1)[-1].split("[")[0]
        if isinstance(schema.get("enum"), list) and value in schema["enum"]:
            return self.structure(path, value, name)
        types = schema.get("type")
        types = set(types) if isinstance(types, list) else {types}
        if {"integer", "string"} <= types and isinstance(value, (int, str)) and not isinstance(value, bool):
            if not self._leaf():
                return None
            if isinstance(value, int):
                marked = schema.get("x-odoo-model")  # the record's own model(s), when the tool marks it
                marked = [m for m in (marked if isinstance(marked, list) else [marked]) if isinstance(m, str)]
                trusted = any(self.p.trusts_record(model, value) for model in marked or self.models or ("",))
                return self._judge(trusted, Value(path, value, "record"))
            return self._judge(self.p.trusts_name(value), Value(path, value, "name"))
        if isinstance(value, dict):
            properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
            for key, item in value.items():
                self.schema(f"{path}.{key}", item, properties.get(key) or {}, depth + 1)
        elif isinstance(value, list):
            items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
            for index, item in enumerate(value):
                self.schema(f"{path}[{index}]", item, items, depth + 1)
        else:
            self.generic(path, value, depth, name)
        return None

    # ---------------------------------------------------------- generic tools
    def generic_tool(self, tool: str, params: dict) -> None:
        model = params.get("model") if isinstance(params.get("model"), str) else ""
        for record_id in params.get("record_ids") or () if isinstance(params.get("record_ids"), list) else ():
            self.record("record_ids", model, record_id)
        method = params.get("method") if tool == "odoo_method_call" else None
        if isinstance(method, str) and self._leaf():
            self._judge(self.p.trusts_method(method), Value("method", method, "method"))
        if tool in ("odoo_create", "odoo_write"):
            self.values("values", model, params.get("values"))
        if tool == "odoo_search_read":
            self.domain("domain", model, params.get("domain"))
        for name, value in params.items():  # anything else a tool of that name was sent
            if name not in ("model", "record_ids", "method", "values", "domain", "fields", "limit", "offset",
                            "order"):
                self.generic(name, value, name=name)

    def values(self, path: str, model: str, values, depth: int = 0) -> None:
        """Field values of ``model`` as create/write take them."""
        if not isinstance(values, dict) or depth > 20:
            return self.generic(path, values, depth)
        for name, value in values.items():
            where = f"{path}.{name}"
            info = self.p.field_info(model, name) if model and isinstance(name, str) else None
            if info is None:
                self.generic(where, value, depth, str(name))
            elif info.type == "boolean" or value is False or value is None or _chosen(info, value):
                self.structure(where, value, name)
            elif info.type == "many2one":
                self.record(where, info.comodel, value)
            elif info.type in ("one2many", "many2many"):
                self.commands(where, info.comodel, value, depth + 1)
            else:
                self.generic(where, value, depth, name)
        return None

    def commands(self, path: str, comodel: str, value, depth: int) -> None:
        """A one2many/many2many value: commands ``[verb, id, values]`` or ids."""
        if not isinstance(value, list):
            return self.generic(path, value, depth)
        for index, command in enumerate(value):
            where = f"{path}[{index}]"
            if isinstance(command, int) and not isinstance(command, bool):
                self.record(where, comodel, command)
            elif isinstance(command, (list, tuple)) and command and command[0] in (0, 1, 2, 3, 4, 5, 6):
                verb = command[0]
                if verb in (2, 3, 5) or (verb == 6 and not (len(command) > 2 and command[2])):
                    self.structure(where, verb, path.rsplit(".", 1)[-1])  # removes or clears lines
                if verb in (1, 2, 3, 4) and len(command) > 1:
                    self.record(f"{where}[1]", comodel, command[1])
                if verb in (0, 1) and len(command) > 2:
                    self.values(f"{where}[2]", comodel, command[2], depth + 1)
                if verb == 6 and len(command) > 2 and isinstance(command[2], list):
                    for position, record_id in enumerate(command[2]):
                        self.record(f"{where}[2][{position}]", comodel, record_id)
            else:
                self.generic(where, command, depth)
        return None

    def domain(self, path: str, model: str, domain) -> None:
        """A search domain: the operands of its conditions (ids for ``id``
        and relational fields, else texts and numbers)."""
        if not isinstance(domain, list):
            return self.generic(path, domain)
        for index, term in enumerate(domain):
            where = f"{path}[{index}]"
            if isinstance(term, str):
                continue  # '&', '|', '!'
            if isinstance(term, (list, tuple)) and len(term) == 3 and isinstance(term[0], str):
                first = term[0].split(".")[0]
                info = self.p.field_info(model, first) if model else None
                target = model if first == "id" else info.comodel if info and info.comodel and "." not in \
                    term[0] else ""
                operand = term[2]
                if target and (isinstance(operand, int) or (isinstance(operand, list) and all(
                        isinstance(item, int) for item in operand))):
                    for record_id in operand if isinstance(operand, list) else [operand]:
                        self.record(f"{where}[2]", target, record_id, named=True)
                elif (info is not None and _chosen(info, operand)) or isinstance(operand, bool) or operand is None:
                    self.structure(f"{where}[2]", operand, first)
                else:
                    self.generic(f"{where}[2]", operand, name=first)
            else:
                self.generic(where, term)
        return None


def _chosen(info: FieldInfo, value) -> bool:
    """Whether ``value`` is one of a selection field's own keys (structure)."""
    return info.type == "selection" and isinstance(value, str) and value in info.selection


def describe(values: Iterable[Value]) -> str:
    """The untrusted values of a call in one line, at most MAX_SHOWN quoted."""
    values = list(values)
    shown = "; ".join(value.describe() for value in values[:MAX_SHOWN])
    more = f"; and {len(values) - MAX_SHOWN} more" if len(values) > MAX_SHOWN else ""
    return shown + more


def field_info_of(env) -> Callable[[str, str], FieldInfo | None]:
    """``field_info`` for Provenance from an Odoo environment (duck-typed:
    this module imports no Odoo), cached per field; None for a model or
    field that does not exist."""
    cache: dict[tuple[str, str], FieldInfo | None] = {}

    def field_info(model: str, name: str) -> FieldInfo | None:
        key = (model, name)
        if key not in cache:
            odoo_field = env[model]._fields.get(name) if model in env else None
            if odoo_field is None:
                cache[key] = None
            else:
                selection = frozenset()
                if odoo_field.type == "selection":
                    try:
                        selection = frozenset(odoo_field.get_values(env))
                    except Exception:  # noqa: BLE001 - a selection computed from records: then no key is structure
                        selection = frozenset()
                cache[key] = FieldInfo(odoo_field.type, getattr(odoo_field, "comodel_name", "") or "", selection)
        return cache[key]

    return field_info
