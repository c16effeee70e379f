"""Text that PostgreSQL can store: what an LLM or a client sends may hold NUL
characters or lone UTF-16 surrogates, which make psycopg2 fail and would lose
the whole run."""
from __future__ import annotations

import re
import unicodedata

# Scripts written without spaces between words (Chinese, Japanese, Korean): matched by characters, not words.
CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


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


def is_blank(value) -> bool:
    """True when ``value`` holds nothing a person wrote once cleaned: no
    character but white space, control and format characters (NUL, U+0001,
    zero-width spaces: Unicode categories Cc and Cf). Not a text: True.
    The one rule every door applies to a message."""
    if not isinstance(value, str):
        return True
    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in clean_text(value))
