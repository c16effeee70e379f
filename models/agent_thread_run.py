"""Who runs a conversation now (issue 26 point 2; engine/durable/run_lease.py).

A live run leaves two marks, written in SQL by the engine only: on its
thread, the run's ``run_token`` and the ``run_holder`` of its process; and
the process's ``agentic.ai.run.holder`` row, whose ``alive_until`` the
process renews every few seconds while it lives. A run is alive while its
thread carries a token and its holder's lease has not run out, so no
database session has to stay open for the run's whole length, and a run
whose process died is known dead once the lease ran out."""
from odoo import fields, models


class AgenticAiRunHolder(models.Model):
    """One Odoo process (a worker, the gevent server, a cron thread's
    process) that runs conversations on this database. Written and read by
    the engine only, in SQL; no foreign key points here, so renewing it
    never waits on, or conflicts with, a run's write."""
    _name = "agentic.ai.run.holder"
    _description = "AI Agent Run Holder"
    _log_access = False

    host = fields.Char(readonly=True)
    pid = fields.Integer(readonly=True)
    started_at = fields.Datetime(readonly=True)
    alive_until = fields.Datetime(required=True, readonly=True, index=True,
                                  help="The process's runs are alive until then, unless it renews it first.")


class AgenticAiThread(models.Model):
    _inherit = "agentic.ai.thread"

    run_token = fields.Char(readonly=True, copy=False, groups="base.group_system",
                            help="The live run's token; empty when no run holds the conversation.")
    run_holder = fields.Integer(readonly=True, copy=False, groups="base.group_system",
                                help="The agentic.ai.run.holder of the process running it (a plain id: no "
                                     "foreign key, so the process's renewals never touch this row).")
