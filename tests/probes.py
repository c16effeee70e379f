"""Helpers of the adversarial probes (tests/test_route_probes.py,
tests/test_webhook_probes.py): no ERROR may be logged, a dead run as a
killed worker leaves it, strict JSON."""
import json
import logging
from contextlib import contextmanager

from ..llm import ToolCall


class ErrorLines(logging.Handler):
    """Log records of level ERROR and above, as ``logger: message``."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.lines = []

    def emit(self, record):
        self.lines.append(f"{record.name}: {record.getMessage()}")


@contextmanager
def no_error_logs(case):
    """Fail ``case`` when anything logs an ERROR (a traceback, a 500) in the block."""
    handler = ErrorLines()
    logging.getLogger().addHandler(handler)
    try:
        yield
    finally:
        logging.getLogger().removeHandler(handler)
    case.assertEqual(handler.lines, [], "an ERROR was logged")


def leave_dead_run(thread):
    """``thread`` as a worker killed while ``odoo_create`` ran leaves it:
    the call committed without a result, state executing, no run lock
    held. Returns it."""
    thread.add_user_message("create it")
    arguments = {"model": "res.partner", "values": {"name": "Dangling Partner"}}
    thread.add_tool_call(ToolCall(id="call_dead", name="odoo_create", arguments=arguments,
                                  raw_arguments=json.dumps(arguments)))
    thread._set_runtime_state(state="executing")
    return thread


def strict_json(text):
    """``text`` parsed as strict JSON: NaN and infinities refused."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)
