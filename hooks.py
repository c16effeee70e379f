"""Module hooks (``__manifest__.py``)."""
from .engine.durable.log_chain import drop_head_table
from .engine.guard.provider_rate import drop_table as drop_provider_rate_table
from .engine.knowledge.vector_store import drop_storage, ensure_extension


def post_init_hook(env):
    """At install: the pgvector extension when the server offers it; the
    knowledge search falls back to NumPy otherwise (engine/knowledge/vector_store.py).
    The webhook API key of the spec (§11.2), not shown yet (Settings shows it once)."""
    ensure_extension(env.cr)
    env["agentic.ai.webhook"]._ensure_api_key()


def uninstall_hook(env):
    """At uninstall: the knowledge vector tables, the execution log's head
    table and the providers' request counts, which are not tables of Odoo
    models (engine/knowledge/vector_store.py, engine/durable/log_chain.py,
    engine/guard/provider_rate.py)."""
    drop_storage(env.cr)
    drop_head_table(env.cr)
    drop_provider_rate_table(env.cr)
