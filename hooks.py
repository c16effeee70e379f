"""Module hooks (``__manifest__.py``)."""
from .engine.vector_store import ensure_extension


def post_init_hook(env):
    """At install: the pgvector extension when the server offers it; the
    knowledge search falls back to NumPy otherwise (engine/vector_store.py)."""
    ensure_extension(env.cr)
