"""Finding the records a tool's arguments name: by id, by name or reference
(through Odoo's own name search), never by guessing.

``find_record`` is the one lookup of every tool. A name matches, in order:
exactly (``display_name =ilike``), as a part of the name (``ilike``), then
word by word: every word of the name is a whole word of the record's name
as shown, in any order, punctuation only separating words (``Wood Large
Desk``, ``large desk (wood)`` or ``Large Desk - Wood`` for the variant
``Large Desk (Wood)``). A name is text, never a LIKE pattern. Several
matches are listed for the model to ask which one; none lists the closest
names, those sharing the most words first.

While ``tracing()`` is active, every lookup is noted: the record a value
named (``found``), or the records among which the user must choose
(``several``). The executor reads the trace to show a confirmation's records
exactly as the tool found them, and the provenance guard trusts only the
listed candidates, of their model (engine/executor.py, engine/guard/provenance.py).
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar

from .base_tool import ToolError
from .untrusted import note_record_names

MAX_LISTED = 5
MAX_NAME = 200  # characters of a name; longer ones are refused (each costs a scan of the table)
MAX_WORDS = 8  # longest words of a name the database narrows the candidates with; all words are compared
MAX_CANDIDATES = 1000  # records read, at most, to compare words with
CANDIDATE_PAGE = 200
WORD_RE = re.compile(r"\w+")

# Parts of a model's shown name that its name search does not cover, so that
# a name written as shown finds the record (Odoo 19: a product variant is
# shown "Large Desk (Wood)" but searched by template name, code and barcode).
SHOWN_NAME_FIELDS = {
    "product.product": ("product_template_attribute_value_ids.name",),
}


MAX_TRACED = 2000  # lookups one trace keeps
_TRACE: ContextVar[list | None] = ContextVar("agentic_ai_lookup_trace", default=None)


@contextmanager
def tracing():
    """Collect the lookups made while the block runs, as ``[{"kind":
    "found" | "several", "model", "value", "ids"}]`` (``value`` as the
    tool passed it; ``ids`` the record found, or the candidates listed)."""
    trace: list[dict] = []
    token = _TRACE.set(trace)
    try:
        yield trace
    finally:
        _TRACE.reset(token)


def _note(kind: str, model_name: str, value, records) -> None:
    trace = _TRACE.get()
    if trace is not None and len(trace) < MAX_TRACED:
        trace.append({"kind": kind, "model": model_name, "value": value, "ids": list(records.ids)})


def escape_like(text: str) -> str:
    """``text`` for an ``ilike`` domain value matching it literally: Odoo
    wraps the value in % and reads % _ \\ as patterns."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def get_model(env, model_name: str):
    """``env[model_name]`` after checking that it exists, is a stored
    business model and that the user may read it. Raises ToolError."""
    if not isinstance(model_name, str) or model_name not in env:
        raise ToolError(f"unknown model {model_name!r}; use odoo_get_available_models to list models")
    model = env[model_name]
    if model._abstract or model._transient:
        raise ToolError(f"{model_name} is not a stored business model")
    if not model.has_access("read"):
        raise ToolError(f"you have no read access to {model_name}")
    return model


class NoMatch(ToolError):
    """No record is named by the value (as opposed to several)."""


def find_record(env, model_name: str, value, *, label: str | None = None, domain=None, outside: str = ""):
    """One record of ``model_name`` named by ``value``: an id (int, or digits
    that are not also a name or reference), or a name (see the module
    docstring), within ``domain``. Record rules and companies apply: a
    record the user cannot read is not found. Raises ToolError listing the
    candidates when several match, the closest names when none does; when
    the record exists but ``domain`` leaves it out, the message names it
    and says why with ``outside`` (e.g. "cannot be sold")."""
    model = env[model_name]
    label = label or model._description
    domain = list(domain or [])
    try:
        record = _find(model, domain, value, label)
        _note("found", model_name, value, record)
        return record
    except NoMatch as error:
        if not (outside and domain):
            raise
        try:
            record = _find(model, [], value, label)
        except NoMatch:
            raise error from None
        except ToolError:  # several records, all left out
            raise ToolError(f"{_shown(value)} names several {label} records, and they {outside}") from None
        note_record_names(record)
        raise ToolError(f"{record.display_name} (id {record.id}) {outside}") from None


def _find(model, domain, value, label: str):
    """``find_record`` within ``domain``; raises NoMatch when nothing matches."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON Schema counts 12.0 as an integer
    if isinstance(value, bool) or value is None or (isinstance(value, str) and not value.strip()):
        raise ToolError(f"a {label} is required (an id or a name)")
    if isinstance(value, int):
        record = model.search(domain + [("id", "=", value)], limit=1)
        if not record:
            raise NoMatch(f"no {label} with id {value} (or you cannot access it)")
        return record
    if not isinstance(value, str):
        raise ToolError(f"a {label} must be given as an id or a name, got {_shown(value)}")
    name = value.strip()
    if len(name) > MAX_NAME:
        raise ToolError(f"a {label} name has at most {MAX_NAME} characters, got {len(name)}: {_shown(name)}")
    if name.isascii() and name.isdigit():
        return _by_id_or_reference(model, domain, name, label)
    pattern = escape_like(name)  # a name is text, never a LIKE pattern
    exact = model.search(domain + [("display_name", "=ilike", pattern)], limit=MAX_LISTED + 1)
    if len(exact) == 1:
        return exact
    matches = exact or model.search(domain + [("display_name", "ilike", pattern)], limit=MAX_LISTED + 1)
    if len(matches) == 1 and not exact and _inside_a_word(name, matches):
        note_record_names(matches)
        _note("several", model._name, value, matches)
        raise ToolError(f"{_shown(name)} is only a part of a word of {matches.display_name} (id {matches.id}); "
                        f"call again with its id if it is the {label} meant, or with its name.")
    if not matches:
        matches = _by_words(model, domain, name)
    if len(matches) == 1:
        return matches
    if matches:
        _note("several", model._name, value, matches[:MAX_LISTED])
        more = "+" if len(matches) > MAX_LISTED else ""
        raise ToolError(f"{len(matches[:MAX_LISTED])}{more} {label} records match {_shown(name)}: "
                        f"{_listed(matches)}. Ask the user which one, or call again with the id.")
    close = _closest(model, domain, _words(name))
    hint = f" Closest: {_listed(close)}." if close else ""
    raise NoMatch(f"no {label} matches {_shown(name)}.{hint}")


def find_record_among(env, model_names: list[str], value, label: str):
    """One record named by ``value`` among several models (e.g. a sales or a
    purchase order). A name equal to exactly one record's own name (its
    ``_rec_name``, such as an order number) wins over references and ids;
    else ``find_record`` runs on each model and several hits are ambiguous.
    Models the user cannot read are skipped. Raises ToolError."""
    models = [env[name] for name in model_names if name in env and env[name].has_access("read")]
    if isinstance(value, str):
        exact = [record for model in models
                 for record in model.search([(model._rec_name or "name", "=", value.strip())], limit=2)]
        if len(exact) == 1:
            _note("found", exact[0]._name, value, exact[0])
            return exact[0]
    found, errors = [], []
    for model in models:
        try:
            found.append(find_record(env, model._name, value, label=model._description.lower()))
        except ToolError as error:
            errors.append(str(error))
    if len(found) > 1:
        for record in found:
            note_record_names(record)
            _note("several", record._name, value, record)
        raise ToolError(f"{_shown(value)} names several records: {'; '.join(r.display_name for r in found)}; "
                        f"give the {label}'s number")
    if not found:
        raise ToolError(" ".join(errors) or f"no {label} you can read")
    return found[0]


def _by_id_or_reference(model, domain, digits: str, label: str):
    """A record named by digits: its id (written without leading zeros), or
    a name or reference made of those digits (an invoice reference, a
    product code); several are listed."""
    is_id = len(digits) < 10 and digits == str(int(digits))
    by_id = model.search(domain + [("id", "=", int(digits))], limit=1) if is_id else model
    by_name = model.search(domain + [("display_name", "=ilike", escape_like(digits))], limit=MAX_LISTED)
    candidates = by_id | by_name
    if len(candidates) == 1:
        return candidates
    if not candidates:
        raise NoMatch(f"no {label} with id or reference {_shown(digits, quoted=False)} (or you cannot access it)")
    _note("several", model._name, digits, candidates)
    raise ToolError(f"{_shown(digits)} matches several {label} records by id, name or reference: "
                    f"{_listed(candidates)}. Ask the user which one, or call again with the id as a number.")


def _words(name: str) -> list[str]:
    """The distinct words of ``name``, lower-cased, longest first, at most MAX_WORDS."""
    words = sorted(set(WORD_RE.findall(name.lower())), key=lambda w: (-len(w), w))
    return words[:MAX_WORDS]


def _by_words(model, domain, name: str):
    """Records whose shown name has every word of ``name`` as a whole word,
    in any order (at most MAX_LISTED + 1). The database narrows the
    candidates with the longest words (as parts of the name); the words are
    then compared whole, page by page, up to MAX_CANDIDATES candidates."""
    words = _words(name)
    if not words:
        return model
    wanted, found = set(WORD_RE.findall(name.lower())), model.browse()
    narrow = domain + _all_words_domain(model, words)
    for offset in range(0, MAX_CANDIDATES, CANDIDATE_PAGE):
        page = model.search(narrow, limit=CANDIDATE_PAGE, offset=offset, order="id")
        found |= page.filtered(lambda r: wanted <= set(WORD_RE.findall(r.display_name.lower())))
        if len(found) > MAX_LISTED or len(page) < CANDIDATE_PAGE:
            break
    return found[:MAX_LISTED + 1]


def _inside_a_word(name: str, record) -> bool:
    """``name`` is found in ``record``'s shown name only inside a word ("lee"
    in "Colleen"), not at the start of its words ("Azure Interi"). A record
    matched through a field it does not show (an e-mail, a reference) is not."""
    shown, words = record.display_name.lower(), WORD_RE.findall(name.lower())
    if not all(word in shown for word in words):
        return False
    parts = WORD_RE.findall(shown)
    return not all(any(part.startswith(word) for part in parts) for word in words)


def _word_domain(model, word: str) -> list:
    """Records whose shown name contains ``word``."""
    fields = ("display_name", *SHOWN_NAME_FIELDS.get(model._name, ()))
    pattern = escape_like(word)
    return ["|"] * (len(fields) - 1) + [(f, "ilike", pattern) for f in fields]


def _all_words_domain(model, words: list[str]) -> list:
    return [term for word in words for term in _word_domain(model, word)]


def _closest(model, domain, words: list[str]):
    """Up to MAX_LISTED records sharing the most words with the name: those
    with all words but one first (e.g. the variants of "Large Desk" for
    "Large Desk Oak"), then those with any word."""
    found = model.browse()
    if len(words) > 1:
        for left_out in words:
            rest = [w for w in words if w != left_out]
            found |= model.search(domain + _all_words_domain(model, rest), limit=MAX_LISTED)
            if len(found) >= MAX_LISTED:
                return found[:MAX_LISTED]
    significant = [w for w in words if len(w) > 2] or words
    if significant and len(found) < MAX_LISTED:
        any_word = ["|"] * (len(significant) - 1) + [t for w in significant for t in _word_domain(model, w)]
        found |= model.search(domain + [("id", "not in", found.ids)] + any_word, limit=MAX_LISTED - len(found))
    return found[:MAX_LISTED]


def _shown(value, limit: int = 80, quoted: bool = True) -> str:
    """``value`` for a message (``repr`` when ``quoted``), cut to ``limit``
    characters: the model would read its own long input back otherwise."""
    text = repr(value) if quoted else str(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _listed(records) -> str:
    note_record_names(records[:MAX_LISTED])
    return "; ".join(f"{r.display_name} (id {r.id})" for r in records[:MAX_LISTED])
