"""Untrusted content (issue 9, point 3): free text written by people (notes,
descriptions, chatter and e-mail bodies: Odoo's ``text`` and ``html``
fields) that a tool puts in front of the model. Such text may carry
instructions aimed at the model; it is data. A tool says when its result
holds some with ``note_free_text``; the executor collects the sources of
one call (``collecting``) and, once a conversation has shown the model any,
every change needs the user's confirmation (engine/safety.py)."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

FREE_TEXT_TYPES = frozenset({"text", "html"})

_SOURCES: ContextVar[list[str] | None] = ContextVar("agentic_ai_untrusted_sources", default=None)


@contextmanager
def collecting():
    """The list of free-text sources noted while the block runs."""
    sources: list[str] = []
    token = _SOURCES.set(sources)
    try:
        yield sources
    finally:
        _SOURCES.reset(token)


def note_free_text(source: str) -> None:
    """The result being built holds free text from ``source`` (``model.field``)."""
    sources = _SOURCES.get()
    if sources is not None and source not in sources:
        sources.append(source)


def note_free_text_fields(model, rows) -> None:
    """Note the ``text``/``html`` fields of ``model`` that hold a value in
    ``rows`` (dicts as ``read`` returns them)."""
    for name, field in model._fields.items():
        if field.type in FREE_TEXT_TYPES and any(row.get(name) for row in rows):
            note_free_text(f"{model._name}.{name}")
