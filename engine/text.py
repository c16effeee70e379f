"""Text that PostgreSQL can store: what an LLM or a client sends may hold NUL
characters or lone UTF-16 surrogates, which make psycopg2 fail and would lose
the whole run."""
from __future__ import annotations


def clean_text(value, limit: int | None = None) -> str:
    """``value`` as storable text: NUL removed, invalid code points replaced
    by U+FFFD, cut to ``limit`` characters. ``None``/``False`` give ``""``."""
    if value is None or value is False:
        return ""
    text = value if isinstance(value, str) else str(value)
    text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
    return text[:limit] if limit else text
