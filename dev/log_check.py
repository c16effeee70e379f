"""Check the Odoo log of one step of dev/app_subsets.sh.

Usage: log_check.py LOGFILE. A record at level ERROR or CRITICAL, or a
WARNING about agentic_ai (logged by it, or by Odoo naming its module or
models, e.g. a model without access rules), fails the step: it is printed
and the exit code is 1. Odoo's other warnings, and the executor's one-line
record of a tool call refused (``Tool X refused: ...``, which the tools
check provokes on purpose, counted in one line), are printed as
``ignored:`` and do not fail the step.
"""
import re
import sys
from pathlib import Path

from test_summary import read_records

# Our logger, models, XML ids and files; not Odoo's own files, which live in
# the set-up's cache folder ~/.cache/agentic_ai/odoo-19.0.
OURS_RE = re.compile(r"agentic[._]ai(?!/odoo-19)")
REFUSAL_RE = re.compile(r"odoo\.addons\.agentic_ai\.engine\.executor: Tool \S+ refused: ")


def main(path):
    failed, refusals = False, 0
    for level, text in read_records(Path(path).read_text(encoding="utf-8", errors="replace")):
        text = text[:4000].replace("\n", "\n    ")
        if level == "WARNING" and REFUSAL_RE.search(text):
            refusals += 1
        elif level in ("ERROR", "CRITICAL") or (level == "WARNING" and OURS_RE.search(text)):
            print(f"    {text}")
            failed = True
        elif level == "WARNING":
            print(f"    ignored: {text}")
    if refusals:
        print(f"    ignored: {refusals} tool calls refused as expected (one WARNING line each)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
