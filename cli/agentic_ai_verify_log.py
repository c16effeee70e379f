"""``odoo-bin --addons-path=… agentic_ai_verify_log -d DB [--company ID]``:
verify the hash chain of agentic_ai's execution log (engine/durable/log_chain.py).

Odoo 19 finds the command in an addon's ``cli/`` folder when the addons
path is given before the command name (odoo/cli/command.py). Prints one
line per company (rows checked, head seq and hash, or the first broken
row and why) and exits 1 when a chain is broken, 2 when the database has
no agentic_ai or cannot be opened, else 0. ``--heads FILE`` compares each chain with the heads
a former run printed (its output saved outside the database): a chain
rewritten or cut since then fails. Reads only; writes nothing."""
import optparse
import re
import sys

from odoo import api
from odoo.cli.command import Command
from odoo.modules.registry import Registry
from odoo.tools import config


class AgenticAiVerifyLog(Command):
    """Verify the agentic_ai execution log chain; exit 1 if it was altered"""
    name = "agentic_ai_verify_log"

    def run(self, cmdargs):
        parser = config.parser
        parser.prog = self.prog
        group = optparse.OptionGroup(parser, "Verify the execution log")
        group.add_option("--company", dest="agentic_ai_company", type="int",
                         help="id of the one company to verify (default: every company)")
        group.add_option("--heads", dest="agentic_ai_heads",
                         help="a file holding this command's earlier output: each chain must still hold that head")
        parser.add_option_group(group)
        opt = config.parse_config(cmdargs + ["--no-http"], setup_logging=True)
        if len(config["db_name"]) != 1:
            sys.exit("agentic_ai_verify_log needs one database: -d DB")
        try:
            registry = Registry(config["db_name"][0])
        except Exception as error:  # noqa: BLE001 - no such database, or not an Odoo one: said, not a traceback
            sys.stderr.write(f"cannot open database {config['db_name'][0]}: {error}\n")
            sys.exit(2)
        with registry.cursor() as cr:
            env = api.Environment(cr, api.SUPERUSER_ID, {})
            if "agentic.ai.execution.log" not in env:
                sys.stderr.write("agentic_ai is not installed in this database\n")
                sys.exit(2)
            heads = read_heads(opt.agentic_ai_heads) if opt.agentic_ai_heads else {}
            results = env["agentic.ai.execution.log"].verify_chain(opt.agentic_ai_company, expected_heads=heads)
            cr.rollback()
        for result in results:
            sys.stdout.write(describe(result) + "\n")
        if not results:
            sys.stdout.write("no company has execution log rows yet: no chain to verify, no head to keep\n")
        sys.exit(0 if all(result["ok"] for result in results) else 1)


HEAD_RE = re.compile(r"^company (\d+):.* head seq (\d+) hash ([0-9a-f]{64})\s*$")


def read_heads(path):
    """``{company_id: (seq, hash)}`` from a file of this command's output
    lines (the ``ok, head seq N hash H`` ones); SystemExit when none."""
    heads = {}
    with open(path, encoding="utf-8") as file:
        for line in file:
            match = HEAD_RE.match(line.strip())
            if match:
                heads[int(match.group(1))] = (int(match.group(2)), match.group(3))
    if not heads:
        sys.stderr.write(f"warning: {path} holds no head line of agentic_ai_verify_log (\"company N: ... head seq S "
                         "hash H\"): nothing kept outside to compare with\n")
    return heads


def describe(result):
    """One line of text for one company's ``verify_chain`` result."""
    head = f"company {result['company_id']}: {result['rows_checked']} rows checked"
    if result["checkpoint_seq"]:
        head += f" after checkpoint {result['checkpoint_seq']}"
    if result["unsealed"]:
        head += f", {result['unsealed']} not sealed yet"
    broken = result["first_broken"]
    if broken:
        where = f"row {broken['id']} (seq {broken['seq']})" if broken["id"] else f"chain number {broken['seq']}"
        return f"{head}; BROKEN at {where}: {broken['reason']}"
    return f"{head}; ok, head seq {result['head']['seq']} hash {result['head']['hash']}"
