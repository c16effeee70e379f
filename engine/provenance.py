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

from .intent import METHOD_ACTIONS

TOKEN_RE = re.compile(r"\w+")
NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
# Scripts written without spaces between words: matched by characters, not words.
CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
GENERIC_TOOLS = frozenset({"odoo_search_read", "odoo_create", "odoo_write", "odoo_unlink", "odoo_method_call"})
METHOD_PREFIXES = ("action", "button", "do")
CANDIDATE_RE = re.compile(r"\(id (\d{1,10})\)")  # how tools/lookup.py lists the records a name matches
ID_KEYS = ("id", "ids")
# Keys of the addon's tool results that hold the name of a record (trusted, in a user-directed result, as a
# reference to that record: a record_ref parameter).
NAME_KEYS = frozenset({"reference", "product", "customer", "vendor", "partner", "employee", "leave_type",
                       "department", "manager", "journal", "uom", "location", "warehouse", "company", "invoice",
                       "order", "bom"})
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
        shown = self.value if isinstance(self.value, (int, float)) else json.dumps(self.value, ensure_ascii=False)
        what = f"{self.model} record" if self.kind == "record" and self.model else self.kind
        return f"{self.path} = {shown} ({what})"


def _tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text.casefold())


def _numbers(text: str) -> set[float]:
    """The numbers written in ``text`` ("1,250.50", "2,5", "10%")."""
    found = set()
    for match in NUMBER_RE.findall(text):
        for candidate in (match.replace(",", ""), match.replace(".", "").replace(",", "."), match.replace(",", ".")):
            try:
                found.add(_key(float(candidate)))
            except ValueError:
                continue
    return found


def _key(number: float) -> float:
    return round(abs(number), 6)


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

    # ---------------------------------------------------------------- origins
    def see_user_words(self, text) -> None:
        """The user wrote ``text`` (a message, an answer, their memory)."""
        if not isinstance(text, str) or not text.strip():
            return
        tokens = _tokens(text)
        self.words.append(" " + " ".join(tokens) + " ")
        self.compact.append("".join(tokens))
        self.numbers |= _numbers(text)

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
        user-directed (made before any read text, or all its values from
        the user, or ``approved``), the ids, numbers and names of ``data``
        become trusted, and so do the candidates a failed lookup of a name
        lists ("(id 23)": the records the user's name matches, among which
        the model may choose; tools/lookup.py)."""
        directed = approved or not self.untrusted_values(tool, params)
        self.see_read(f"the result of {tool}")
        if not directed:
            return
        spec = self.tools.get(tool)
        models = ((params.get("model"),) if tool in GENERIC_TOOLS and isinstance(params, dict)
                  and isinstance(params.get("model"), str) else tuple(getattr(spec, "model_names", ()) or ()))
        if success and data is not None:
            self._trust(data, models, 0, tool in GENERIC_TOOLS)
        elif not success and isinstance(error, str):
            for candidate in CANDIDATE_RE.findall(error[:20000]):
                for model in models or ("",):
                    self._trust_id(model, int(candidate))

    def _trust(self, data, models: tuple, depth: int, generic: bool) -> None:
        """Trust the ids, numbers and names of a user-directed result
        (``generic``: of a generic ORM tool, whose records are of
        ``models[0]``; a domain tool's results hold records of many models,
        so their ids are trusted for any model)."""
        if depth > 50:
            return
        if isinstance(data, dict):
            for name, value in data.items():
                name = str(name)
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
                if (name in NAME_KEYS or name.endswith("name")) and isinstance(value, str):
                    self.names.add(" ".join(_tokens(value)))
                self._trust(value, models, depth + 1, generic)
        elif isinstance(data, (list, tuple)):
            for value in data:
                self._trust(value, models, depth + 1, generic)
        elif isinstance(data, (int, float)) and not isinstance(data, bool) and math.isfinite(data):
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
        spec = self.tools.get(tool)
        found: list[Value] = []
        walker = _Walker(self, found)
        if not isinstance(params, dict):
            walker.generic("", params)
        elif tool in GENERIC_TOOLS:
            walker.generic_tool(tool, params)
        else:
            schema = getattr(spec, "schema", None) or {}
            properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
            for name, value in params.items():
                walker.schema(name, value, properties.get(name) or {})
        if walker.count > MAX_LEAVES:
            return [Value("", f"({walker.count} values)", "text")]
        return found

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

    def trusts_number(self, value: float) -> bool:
        return _key(value) in self.numbers or _key(value) in self.computed

    def trusts_record(self, model: str, record_id: int) -> bool:
        return (record_id in self.ids.get(model, ()) or record_id in self.ids.get("", ())
                or _key(record_id) in self.numbers)

    def trusts_name(self, value: str) -> bool:
        return self.trusts_text(value) or " ".join(_tokens(value)) in self.names

    def asks_for(self, words) -> bool:
        """Whether the user's words hold one of ``words`` (engine/intent.py):
        a word of the user's begins with its first five letters; Chinese,
        Japanese and Korean words by characters."""
        user_tokens = {token for text in self.words for token in text.split()}
        for word in words:
            if CJK_RE.search(word):
                if any(word in text for text in self.compact):
                    return True
            elif any(token.startswith(word[:5]) for token in user_tokens):
                return True
        return False

    def trusts_method(self, method: str) -> bool:
        """Whether the user's words name what ``method`` does: one of its
        words (its ``action_``/``button_`` prefix aside) begins a word of the
        user's, on its first five letters ("confirm" for action_confirm,
        "validat…" for button_validate)."""
        parts = [part for part in method.casefold().split("_") if part and part not in METHOD_PREFIXES]
        stems = [part[:5] for part in parts if len(part) >= 3]
        user_tokens = {token for words in self.words for token in words.split()}
        return any(token.startswith(stem) for stem in stems for token in user_tokens)


class _Walker:
    """Walks one call's arguments, appending the untrusted values to ``found``."""

    def __init__(self, provenance: Provenance, found: list[Value]):
        self.p = provenance
        self.found = found
        self.count = 0

    def _leaf(self) -> bool:
        self.count += 1
        return self.count <= MAX_LEAVES

    def text(self, path: str, value: str) -> None:
        if self._leaf() and not self.p.trusts_text(value):
            self.found.append(Value(path, value, "text"))

    def number(self, path: str, value) -> None:
        if self._leaf() and math.isfinite(value) and not self.p.trusts_number(value):
            self.found.append(Value(path, value, "number"))

    def record(self, path: str, model: str, value) -> None:
        if isinstance(value, bool) or value is None:
            return
        if not isinstance(value, int):
            return self.generic(path, value)
        if self._leaf() and not self.p.trusts_record(model, value):
            self.found.append(Value(path, value, "record", model))

    def generic(self, path: str, value, depth: int = 0) -> None:
        """Any JSON value: texts and numbers checked, structure skipped."""
        if depth > 60 or self.count > MAX_LEAVES:
            self.count = max(self.count, MAX_LEAVES + 1) if depth > 60 else self.count
            return
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, str):
            self.text(path, value)
        elif isinstance(value, (int, float)):
            self.number(path, value)
        elif isinstance(value, dict):
            for key, item in value.items():
                self.generic(f"{path}.{key}" if path else str(key), item, depth + 1)
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                self.generic(f"{path}[{index}]", item, depth + 1)

    # -------------------------------------------------------- the addon's tools
    def schema(self, path: str, value, schema, depth: int = 0) -> None:
        """A parameter of a tool with its JSON Schema: ``enum`` values are
        structure; a ``record_ref`` (integer or name) is a record."""
        if depth > 60:
            return self.generic(path, value, depth)
        schema = schema if isinstance(schema, dict) else {}
        if isinstance(schema.get("enum"), list) and value in schema["enum"]:
            return
        types = schema.get("type")
        types = set(types) if isinstance(types, list) else {types}
        if {"integer", "string"} <= types and isinstance(value, (int, str)) and not isinstance(value, bool):
            if isinstance(value, int):
                if self._leaf() and not self.p.trusts_number(value):
                    self.found.append(Value(path, value, "record"))
            elif self._leaf() and not self.p.trusts_name(value):
                self.found.append(Value(path, value, "name"))
            return
        if isinstance(value, dict):
            properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
            for key, item in value.items():
                self.schema(f"{path}.{key}", item, properties.get(key) or {}, depth + 1)
        elif isinstance(value, list):
            items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
            for index, item in enumerate(value):
                self.schema(f"{path}[{index}]", item, items, depth + 1)
        else:
            self.generic(path, value, depth)

    # ---------------------------------------------------------- generic tools
    def generic_tool(self, tool: str, params: dict) -> None:
        model = params.get("model") if isinstance(params.get("model"), str) else ""
        for record_id in params.get("record_ids") or () if isinstance(params.get("record_ids"), list) else ():
            self.record("record_ids", model, record_id)
        method = params.get("method") if tool == "odoo_method_call" else None
        if isinstance(method, str) and self._leaf() and not self.p.trusts_method(method) \
                and not self.p.asks_for(METHOD_ACTIONS.get(method, ())):
            self.found.append(Value("method", method, "method"))
        if tool in ("odoo_create", "odoo_write"):
            self.values("values", model, params.get("values"))
        if tool == "odoo_search_read":
            self.domain("domain", model, params.get("domain"))
        for name, value in params.items():  # anything else a tool of that name was sent
            if name not in ("model", "record_ids", "method", "values", "domain", "fields", "limit", "offset",
                            "order"):
                self.generic(name, value)

    def values(self, path: str, model: str, values, depth: int = 0) -> None:
        """Field values of ``model`` as create/write take them."""
        if not isinstance(values, dict) or depth > 20:
            return self.generic(path, values, depth)
        for name, value in values.items():
            where = f"{path}.{name}"
            info = self.p.field_info(model, name) if model and isinstance(name, str) else None
            if info is None:
                self.generic(where, value, depth)
            elif info.type == "boolean" or value is False or value is None or _chosen(info, value):
                continue
            elif info.type == "many2one":
                self.record(where, info.comodel, value)
            elif info.type in ("one2many", "many2many"):
                self.commands(where, info.comodel, value, depth + 1)
            else:
                self.generic(where, value, depth)

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
                if verb in (1, 2, 3, 4) and len(command) > 1:
                    self.record(f"{where}[1]", comodel, command[1])
                if verb in (0, 1) and len(command) > 2:
                    self.values(f"{where}[2]", comodel, command[2], depth + 1)
                if verb == 6 and len(command) > 2 and isinstance(command[2], list):
                    for position, record_id in enumerate(command[2]):
                        self.record(f"{where}[2][{position}]", comodel, record_id)
            else:
                self.generic(where, command, depth)

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
                        self.record(f"{where}[2]", target, record_id)
                elif info is not None and _chosen(info, operand):
                    continue
                else:
                    self.generic(f"{where}[2]", operand)
            else:
                self.generic(where, term)


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
