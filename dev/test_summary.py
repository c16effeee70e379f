"""Read an Odoo test log, print failures and the plain summary line.

Usage: test_summary.py LOGFILE ODOO_EXIT_CODE. Prints each failing test's
ERROR block and the warnings our module logged, then ``N passed, N failed``
(errors and skipped tests count as failed: a skipped test here means a
broken set-up, e.g. a browser test without its browser; a warning logged
while the module installs counts as one failure). Exits 1 when
anything failed, Odoo exited non-zero, or no test ran.
"""
import re
import sys
from pathlib import Path

RESULT_RE = re.compile(r"odoo\.tests\.result: (\d+) failed, (\d+) error\(s\) of (\d+) tests")
RECORD_RE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ \d+ (\w+) ")


def read_records(text):
    """The log records of an Odoo log ``text`` as ``[level, text]`` pairs, a
    record's continuation lines (tracebacks) joined to it."""
    records, current = [], None
    for line in text.splitlines():
        match = RECORD_RE.match(line)
        if match:
            current = [match.group(1), line]
            records.append(current)
        elif current is not None:
            current[1] += "\n" + line
    return records


def main(path, odoo_rc):
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    records = read_records(text)
    failed = errors = total = 0
    for match in RESULT_RE.finditer(text):
        failed, errors, total = (int(g) for g in match.groups())
    skipped = [r[1] for r in records if r[0] == "INFO" and " skipped " in r[1] and "odoo.addons.agentic_ai" in r[1]]
    problems = [r[1] for r in records if r[0] in ("ERROR", "CRITICAL")
                or (r[0] == "WARNING" and "agentic_ai" in r[1])]
    # The module must install without a warning: any WARNING or ERROR logged
    # before "Module agentic_ai loaded" fails the run.
    loaded = next((i for i, r in enumerate(records) if "Module agentic_ai loaded" in r[1]), len(records))
    install_warnings = [r[1] for r in records[:loaded] if r[0] in ("WARNING", "ERROR", "CRITICAL")]
    for block in install_warnings:
        print("INSTALL WARNING (counted as failed):", block[:2000])
    for block in problems:
        print(block[:4000])
    for record in records:
        if "[timing]" in record[1]:
            print(record[1].split("] ", 1)[-1] if "] " in record[1] else record[1])
    for line in skipped:
        print("SKIPPED (counted as failed):", line[:500])
    bad = failed + errors + len(skipped) + bool(install_warnings)
    passed = max(0, total - failed - errors - len(skipped))
    if not total:
        print("no test ran (or the module failed to install): see", path)
        bad = max(bad, 1)
    if odoo_rc and not bad:
        print(f"Odoo exited with {odoo_rc}: see", path)
        bad = 1
    print(f"{passed} passed, {bad} failed")
    return 1 if bad or odoo_rc or not total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
