"""19.0.1.2.0: the execution log is hash-chained per company
(engine/durable/log_chain.py). Rows logged before get their level (from success),
their chain company and the ids they were logged with (a reference already
nulled by a deletion stays empty; a row whose company is gone goes to chain
0), then are chained in id order."""
from odoo import SUPERUSER_ID, api

from odoo.addons.agentic_ai.engine.durable import log_chain


def migrate(cr, version):
    cr.execute("""
        UPDATE agentic_ai_execution_log
           SET level = COALESCE(level, CASE WHEN success THEN 'info' ELSE 'error' END),
               chain_company_id = COALESCE(company_id, 0),
               logged_thread_id = thread_id,
               logged_agent_id = agent_id,
               logged_user_id = user_id,
               logged_provider_id = provider_id
         WHERE chain_company_id IS NULL
    """)
    log_chain.seal(api.Environment(cr, SUPERUSER_ID, {}))
