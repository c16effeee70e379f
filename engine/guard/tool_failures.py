"""Which failures of a tool are refusals and which are bugs (issue 10,
point 7): a refusal is an observation for the model and one WARNING line
in the server log; a bug is also an ERROR with its traceback, for whoever
maintains the tool. The executor (engine/executor.py) asks ``is_refusal``.

Refusals:

- ``ToolError`` and ``OperationRefused``: the tools' own checks and the
  safety rules;
- Odoo's rules: ``UserError`` and its kinds (``ValidationError``,
  ``AccessError``, ``MissingError``, ``AccessDenied``...) and
  ``RedirectWarning``;
- ``psycopg2.Error``: PostgreSQL refusing a query the ORM built from the
  model's values (text compared with an id, a LIKE pattern ending in a
  backslash, a number out of range, a constraint). The tools run no SQL
  of their own. Odoo's ``odoo.sql_db`` logger still writes its own
  "bad query" ERROR line for such a query; that line is Odoo's;
- ``ValueError``, ``TypeError`` and ``KeyError`` raised inside Odoo's
  code: the ORM refusing a value the model sent (a list where a value
  belongs, text for a number, an unknown field in an order clause). Where
  an exception was raised is the innermost frame of its traceback that
  belongs to an ``odoo`` module (standard-library frames below it are
  Odoo's helpers); ``safe_eval`` turns what a Python-code tool raises
  into a ValueError of its own, so the exception it wraps is judged.

Everything else is a bug: any other exception, and a ValueError, TypeError
or KeyError raised in the tool's own code (its addon, this addon, or the
code of a Python-code tool)."""
from __future__ import annotations

import psycopg2

from odoo.exceptions import RedirectWarning, UserError

from ...tools.base_tool import ToolError
from .operation_guard import OperationRefused

REFUSALS = (ToolError, OperationRefused, UserError, RedirectWarning, psycopg2.Error)
INPUT_ERRORS = (ValueError, TypeError, KeyError)
OWN_PACKAGE = ".".join(__name__.split(".")[:3])  # odoo.addons.agentic_ai, wherever this module lies
SAFE_EVAL = "odoo.tools.safe_eval"


def is_refusal(error: BaseException, function=None) -> bool:
    """Whether ``error``, raised by a tool whose Python ``function`` (None
    for a Python-code or server-action tool) was running, is a refusal
    (see the module docstring) rather than a bug."""
    if isinstance(error, REFUSALS):
        return True
    if not isinstance(error, INPUT_ERRORS):
        return False
    raised_in = _raising_module(error)
    if raised_in == SAFE_EVAL and error.__context__ is not None:
        return is_refusal(error.__context__, function)
    own = {OWN_PACKAGE, _addon_package(getattr(function, "__module__", "") or "")}
    return raised_in.startswith("odoo.") and not any(
        raised_in == package or raised_in.startswith(f"{package}.") for package in own if package)


def _raising_module(error: BaseException) -> str:
    """The module of the innermost frame of ``error``'s traceback that is
    Odoo's, an addon's or evaluated code (``""`` for evaluated code or
    when there is none)."""
    found, tb = "", error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__") or ""
        if name == "odoo" or name.startswith("odoo.") or not name:
            found = name
        tb = tb.tb_next
    return found


def _addon_package(module: str) -> str:
    """``odoo.addons.<addon>`` of a module path, else ``""``."""
    parts = module.split(".")
    return ".".join(parts[:3]) if module.startswith("odoo.addons.") and len(parts) >= 3 else ""
