"""Reading the values of a tool's arguments: numbers, percentages, dates,
periods, limits and product lines. Each reader raises ToolError with a
message naming the argument, so the model can correct its call."""
from __future__ import annotations

import math
import re
from datetime import date, datetime, time, timedelta
from typing import NamedTuple

from .base_tool import ToolError, record_ref
from .lookup import find_record

DEFAULT_LIMIT = 20   # records returned by a search when the model gives no limit
MAX_LIMIT = 200      # records one call may ever return
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MIN_DATE, MAX_DATE = date(1900, 1, 1), date(2199, 12, 31)


# ----------------------------------------------------------------- numbers
def clamp_limit(limit, default: int = DEFAULT_LIMIT) -> int:
    """A search limit between 1 and MAX_LIMIT; ``default`` when not given."""
    try:
        limit = int(limit) if limit not in (None, "", 0) else default
    except (TypeError, ValueError):
        raise ToolError(f"limit must be a whole number, got {limit!r}") from None
    return max(1, min(limit, MAX_LIMIT))


def finite_number(value, what: str) -> float:
    """``value`` as a finite number. Raises ToolError naming ``what``."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ToolError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ToolError(f"{what} must be a finite number, got {value!r}")
    return number


def positive_number(value, what: str = "quantity") -> float:
    """``value`` as a finite number greater than 0. Raises ToolError naming ``what``."""
    number = finite_number(value, what)
    if not number > 0:
        raise ToolError(f"{what} must be greater than 0, got {value!r}")
    return number


def non_negative_number(value, what: str) -> float:
    """``value`` as a finite number of at least 0. Raises ToolError naming ``what``."""
    number = finite_number(value, what)
    if number < 0:
        raise ToolError(f"{what} cannot be negative, got {value!r}")
    return number


def percentage(value, what: str = "discount") -> float:
    """``value`` as a percentage from 0 to 100. Raises ToolError naming ``what``."""
    number = finite_number(value, what)
    if not 0 <= number <= 100:
        raise ToolError(f"{what} is a percentage between 0 and 100, got {value!r}")
    return number


# ------------------------------------------------------------------- dates
def parse_date(value, what: str) -> date:
    """``value`` written YYYY-MM-DD as a date between MIN_DATE and MAX_DATE.
    Raises ToolError naming ``what``."""
    if not (isinstance(value, str) and DATE_RE.match(value.strip())):
        raise ToolError(f"{what} must be a date written YYYY-MM-DD, got {value!r}")
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise ToolError(f"{what} {value} is not a day of the calendar") from None
    if not MIN_DATE <= day <= MAX_DATE:
        raise ToolError(f"{what} {value} is outside the dates this tool accepts ({MIN_DATE} to {MAX_DATE})")
    return day


def parse_period(date_from, date_to, *, default_from: date | None = None, default_to: date | None = None,
                 required: bool = False) -> tuple[date | None, date | None]:
    """The days ``[date_from, date_to]`` (both YYYY-MM-DD, inclusive), each
    defaulting to the given default (None: open-ended) unless ``required``.
    Raises ToolError when a date is missing but required, does not parse, or
    the period is reversed."""
    def read(value, what, default):
        if value not in (None, ""):
            return parse_date(value, what)
        if required:
            raise ToolError(f"{what} is required (YYYY-MM-DD)")
        return default
    start, end = read(date_from, "date_from", default_from), read(date_to, "date_to", default_to)
    if start and end and start > end:
        given = "" if date_to not in (None, "") else " (not given: the default)"
        raise ToolError(f"date_from {start} is after date_to {end}{given}")
    return start, end


def period_schema(from_note: str = "", to_note: str = "") -> dict:
    """The ``date_from`` and ``date_to`` parameters read by ``parse_period``,
    each description ending with its note (e.g. its default)."""
    return {"date_from": {"type": "string", "description": f"First day, YYYY-MM-DD{from_note}."},
            "date_to": {"type": "string", "description": f"Last day, YYYY-MM-DD{to_note}."}}


def period_domain(model, field_name: str, start: date | None, end: date | None) -> list:
    """Domain of ``field_name`` of ``model`` within the days ``[start, end]``
    (whole days, UTC, for a datetime field)."""
    domain = []
    is_datetime = model._fields[field_name].type == "datetime"
    if start:
        domain.append((field_name, ">=", datetime.combine(start, time.min) if is_datetime else start))
    if end:
        domain.append((field_name, "<", datetime.combine(end + timedelta(days=1), time.min)) if is_datetime
                      else (field_name, "<=", end))
    return domain


# ------------------------------------------------------------------- lines
class ProductLine(NamedTuple):
    """One parsed line of a tool's ``lines`` argument."""
    index: int       # from 1, for messages
    line: dict       # the line as the model sent it
    product: object  # product.product
    quantity: float  # > 0, in ``uom``
    uom: object      # uom.uom: the line's unit, by default the product's


def product_lines_schema(description: str, quantity: str = "Quantity, in uom when given, else in the product's unit.",
                         **extra: dict) -> dict:
    """JSON Schema of a ``lines`` argument read by ``product_lines``: a
    non-empty list of ``{product, quantity, uom?}`` plus the ``extra``
    properties of the tool's lines."""
    return {"type": "array", "minItems": 1, "description": description, "items": {
        "type": "object", "required": ["product", "quantity"], "properties": {
            "product": record_ref("Product id or name.", "product.product"),
            "quantity": {"type": "number", "exclusiveMinimum": 0, "description": quantity},
            "uom": record_ref("Unit of measure (id or name, e.g. Units, Dozens) among the product's unit and "
                              "packagings.", "uom.uom"),
            **extra}}}


def line_objects(lines, shape: str):
    """``(index, line)`` for each line of a tool's ``lines`` argument, index
    from 1. Raises ToolError unless ``lines`` is a non-empty list of objects
    (``shape`` names their keys in the message)."""
    if not isinstance(lines, list) or not lines:
        raise ToolError(f"lines must be a non-empty list of {shape}")
    for index, line in enumerate(lines, start=1):
        if not isinstance(line, dict):
            raise ToolError(f"line {index} must be an object {shape}")
        yield index, line


def product_lines(env, lines, domain=None, vendor_units=False, outside="") -> list[ProductLine]:
    """Parsed ``lines`` of a tool (``[{product, quantity, uom?, ...}]``,
    products by id or name within ``domain``; ``outside`` says what the
    products it leaves out are, see ``find_record``). A line's unit (id or name) is
    one Odoo 19 allows on the line: the product's unit or packagings, plus
    its vendors' units when ``vendor_units`` (purchase lines, stock moves).
    A quantity must be above 0 at the unit's rounding. Raises ToolError
    naming the faulty line."""
    parsed = []
    for index, line in line_objects(lines, "{product, quantity}"):
        product = find_record(env, "product.product", line.get("product"), label="product", domain=domain,
                              outside=outside)
        quantity = positive_number(line.get("quantity"), f"line {index}: quantity")
        uom = product.uom_id
        if line.get("uom") not in (None, ""):
            allowed = product.uom_id | product.uom_ids
            if vendor_units:
                allowed |= product.sudo().seller_ids.product_uom_id
            try:
                uom = find_record(env, "uom.uom", line["uom"], label="unit of measure",
                                  domain=[("id", "in", allowed.ids)])
            except ToolError:
                units = ", ".join(f"{u.name} (id {u.id})" for u in allowed)
                raise ToolError(f"line {index}: {line['uom']!r} is not a unit of {product.display_name}; "
                                f"its units are: {units}") from None
        if uom.is_zero(quantity):
            raise ToolError(f"line {index}: quantity {quantity:g} is 0 in {uom.name} (rounding {uom.rounding:g})")
        parsed.append(ProductLine(index, line, product, quantity, uom))
    return parsed
