"""Tools (spec 000 §5): the registry and shared helpers, then one module of
tools per Odoo app. A tool module that fails to import is logged with the
reason and left out; the other tools still work."""
from . import lookup, parsing, summaries
from . import base_tool as registry

TOOL_MODULES = ["orm_tool", "sales_tools", "purchase_tools", "inventory_tools", "accounting_tools", "hr_tools",
                "manufacturing_tools", "report_tool"]
IMPORT_FAILURES = registry.import_tool_modules(__name__, TOOL_MODULES)
