"""Rows the engine writes with one INSERT instead of the ORM's ``create``
(the execution log's, ``log_many``; the transcript's, ``_append``): rows
nobody edits afterwards, written at every step of a run, where ``create``
costs several times the statement (issue 26 point 6). Both models build the
statement and its parameters here; each keeps its own bookkeeping (the
cache, the seals)."""
from odoo.tools import SQL


def insert_statement(model) -> tuple[list, str]:
    """``(fields, "INSERT INTO table (columns)")`` of ``model``: its stored
    column fields but ``id``, in a fixed order, so that every row has the
    same shape (absent values go in as NULL). The statement is text, as
    Odoo's cursor takes it with a list of parameters: an ``SQL`` object of
    a step's rows would check each of their parameters again for nothing.
    Cache the result per registry (``tools.ormcache`` on the model)."""
    fields = [field for name, field in sorted(model._fields.items())
              if field.store and field.column_type and name != "id"]
    columns = SQL(", ").join(SQL.identifier(field.name) for field in fields)
    return fields, SQL("INSERT INTO %s (%s)", SQL.identifier(model._table), columns).code


def insert_params(model, fields, row: dict) -> list:
    """The parameters of one row for ``insert_statement``'s ``fields``:
    each value of ``row`` (by field name, as ``create`` takes it) in its
    column's form, NULL when absent or None."""
    return [None if (value := row.get(field.name)) is None else field.convert_to_column_insert(value, model)
            for field in fields]
