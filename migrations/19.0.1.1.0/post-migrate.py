"""19.0.1.1.0: the execution log keeps no create_uid, write_uid or write_date
(``_log_access = False``: rows are inserted once with SQL and never written,
so they only cost a foreign-key check on every insert). Odoo removes the
fields but leaves their columns and foreign keys behind; drop them."""


def migrate(cr, version):
    cr.execute("""
        ALTER TABLE agentic_ai_execution_log
            DROP COLUMN IF EXISTS create_uid,
            DROP COLUMN IF EXISTS write_uid,
            DROP COLUMN IF EXISTS write_date
    """)
