"""Recursive text chunking with overlap, sized in tokens (spec 000 §9.1 step 2,
issue 13 point 3, case BR-13).

The text is cut at the coarsest boundary that makes pieces small enough:
paragraph (blank line) → line → sentence (``. ! ?`` followed by a space, and
the CJK / full-width ends ``。！？；．`` and ``…`` with or without a space) →
clause (``, ; :`` followed by a space, ``，、：``) → whitespace → a hard cut
between characters (Python code points; never between ``\\r`` and ``\\n`` nor
inside a surrogate pair). A separator stays with the text before it, so a
sentence keeps its full stop. Pieces are then merged greedily into chunks of
at most ``min(chunk_size, max_tokens)`` tokens, and each chunk after the first
starts up to ``overlap`` tokens before the previous one's end, at the
coarsest boundary found there.

Nothing is lost or changed: ``text[c.start:c.end] == c.text``, the first
chunk starts at 0, the last ends at ``len(text)``, and ``chunks[0].text``
followed by ``text[prev.end:c.end]`` for each next chunk gives ``text`` back.

Pure Python, no Odoo import. Token counts come from the caller's
``count_tokens`` (``llm/tokenizer.py``'s ``count_tokens`` bound to the
embedding model in the product); it is called on pieces and on each finished
chunk, never on a growing string, so a 1 MB text chunks in well under a
second.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# Boundaries, coarsest first; a match's end is where a piece may end.
_SEPARATORS = (
    re.compile(r"(?:\r\n|\r|\n)(?:[ \t\f\v\u00a0\u3000]*(?:\r\n|\r|\n))+"),  # blank line(s)
    re.compile(r"\r\n|\r|\n|\u2028|\u2029"),  # line
    re.compile(r"[.!?]+[\"'”’)\]]*[ \t\u00a0]+|[。！？；．…]+[”」』）\"')]*[ \t\u3000]*"),  # sentence
    re.compile(r"[,;:][ \t\u00a0]+|[，、：][ \t\u3000]*"),  # clause
    re.compile(r"\s+"),  # whitespace
)
_HARD = len(_SEPARATORS)
# Parts longer than this many characters per allowed token are split
# without counting them first: a token rarely spans more characters.
_NEVER_FITS_RATIO = 16


@dataclass(frozen=True)
class Chunk:
    """One chunk: ``text == source[start:end]`` (offsets in code points),
    ``tokens`` its exact count by the ``count_tokens`` used."""

    text: str
    start: int
    end: int
    tokens: int


def chunk_text(text: str, chunk_size: int, overlap: int, count_tokens: Callable[[str], int],
               max_tokens: int | None = None) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``min(chunk_size, max_tokens)``
    tokens, each after the first overlapping the previous by up to
    ``overlap`` tokens (issue 13 point 3, spec 000 §9.1).

    ``count_tokens(str) -> int`` counts tokens of the embedding model;
    ``max_tokens`` is that model's input limit (None: no limit beyond
    ``chunk_size``). When ``max_tokens`` lowers the limit to ``overlap`` or
    below, the overlap used is half the limit.

    Returns ``[]`` for empty or whitespace-only text. A chunk is only
    whitespace when one whitespace run alone is longer than the limit.

    Raises ValueError when ``chunk_size`` or ``max_tokens`` is below 1,
    ``overlap`` is negative or not below ``chunk_size``, or a single
    character (or ``\\r\\n``) counts more tokens than the limit.
    """
    if chunk_size < 1 or (max_tokens is not None and max_tokens < 1):
        raise ValueError(f"chunk size and token limit must be at least 1 (got {chunk_size}, {max_tokens})")
    if overlap < 0 or overlap >= chunk_size:
        raise ValueError(f"overlap must be between 0 and chunk size - 1 (got {overlap} for {chunk_size})")
    if not text or text.isspace():
        return []
    limit = min(chunk_size, max_tokens) if max_tokens else chunk_size
    if overlap >= limit:
        overlap = limit // 2
    return _Chunker(text, limit, overlap, count_tokens).run()


class _Chunker:
    """One chunking run over one text (state shared by the steps)."""

    def __init__(self, text: str, limit: int, overlap: int, count_tokens: Callable[[str], int]):
        self.text = text
        self.limit = limit
        self.overlap = overlap
        # Pieces of at most limit - overlap tokens leave room for the
        # overlap before them; never smaller than half the limit, so a large
        # overlap shrinks instead of the pieces.
        self.piece_limit = max(limit - overlap, (limit + 1) // 2)
        self._count = count_tokens
        self.counted_chars = 0
        self.counted_tokens = 0

    def count(self, start: int, end: int) -> int:
        """Exact tokens of ``text[start:end]``; feeds the chars-per-token estimate."""
        tokens = self._count(self.text[start:end])
        self.counted_chars += end - start
        self.counted_tokens += tokens
        return tokens

    def chars_per_token(self) -> float:
        """Characters per token seen so far (4 before any count)."""
        return self.counted_chars / self.counted_tokens if self.counted_tokens else 4.0

    def run(self) -> list[Chunk]:
        """Pieces, then chunks."""
        pieces: list[tuple[int, int, int]] = []  # (start, end, tokens)
        self.split(0, len(self.text), 0, pieces)
        return self.merge(self.absorb_whitespace(pieces))

    # --- pieces ------------------------------------------------------------
    def split(self, start: int, end: int, level: int, out: list, too_big: bool = False) -> None:
        """Append to ``out`` pieces covering ``text[start:end]``, each of at
        most ``piece_limit`` tokens, cut at ``level``'s boundaries or finer
        (``too_big``: the span is known not to fit, do not count it again)."""
        if not too_big and end - start <= self.piece_limit * _NEVER_FITS_RATIO:
            tokens = self.count(start, end)
            if tokens <= self.piece_limit:
                out.append((start, end, tokens))
                return
        if level == _HARD:
            self.hard_split(start, end, out)
            return
        cuts = [m.end() for m in _SEPARATORS[level].finditer(self.text, start, end) if start < m.end() < end]
        if not cuts:
            self.split(start, end, level + 1, out, too_big=True)
            return
        previous = start
        for cut in [*cuts, end]:
            self.split(previous, cut, level + 1, out)
            previous = cut

    def safe_cut(self, position: int, floor: int) -> int:
        """``position`` moved back (not below ``floor``) off the middle of a
        ``\\r\\n`` or a surrogate pair."""
        text = self.text
        while position > floor and (
                (text[position - 1] == "\r" and text[position] == "\n")
                or ("\ud800" <= text[position - 1] <= "\udbff" and "\udc00" <= text[position] <= "\udfff")):
            position -= 1
        return position

    def unit_end(self, start: int, end: int) -> int:
        """End of the smallest piece that may start at ``start``: one code
        point, or ``\\r\\n``, or a surrogate pair."""
        step = start + 1
        while step < end and self.safe_cut(step, start) != step:
            step += 1
        return step

    def hard_split(self, start: int, end: int, out: list) -> None:
        """Cut ``text[start:end]`` between characters into pieces of at most
        ``piece_limit`` tokens, each as long as fits: galloping from the
        chars-per-token estimate, then bisecting, so each piece costs a few
        counts of piece-sized strings."""
        limit = self.piece_limit
        while start < end:
            best = self.unit_end(start, end)
            best_tokens = self.count(start, best)
            if best_tokens > limit:
                raise ValueError(f"the character at offset {start} counts {best_tokens} tokens, "
                                 f"more than the limit of {limit}: use a larger chunk size")
            too_long = None  # shortest cut known not to fit
            probe = start + max(1, int(limit * self.chars_per_token()))
            while best < end:
                cut = self.safe_cut(min(max(probe, best + 1), end), best)
                if cut <= best:
                    cut = self.unit_end(best, end)
                tokens = self.count(start, cut)
                if tokens > limit:
                    too_long = cut
                    break
                best, best_tokens = cut, tokens
                probe = start + 2 * (cut - start)
            while too_long is not None:
                cut = self.safe_cut((best + too_long) // 2, best)
                if cut <= best:
                    break
                tokens = self.count(start, cut)
                if tokens <= limit:
                    best, best_tokens = cut, tokens
                else:
                    too_long = cut
            out.append((start, best, best_tokens))
            start = best

    def absorb_whitespace(self, pieces: list) -> list:
        """Whitespace-only pieces joined to the next piece, else to the
        previous one, else cut again with the next piece between characters,
        so that no chunk is only whitespace."""
        text = self.text
        result: list[tuple[int, int, int]] = []
        pending = None  # a whitespace piece waiting to join the next one
        for piece in pieces:
            if pending is not None:
                start, pending = pending[0], None
                tokens = self.count(start, piece[1])
                if tokens <= self.piece_limit:
                    piece = (start, piece[1], tokens)
                elif not self.join_previous(result, piece[0]):
                    self.hard_split(start, piece[1], result)
                    continue
            if text[piece[0]:piece[1]].isspace():
                pending = piece
            else:
                result.append(piece)
        if pending is not None and not self.join_previous(result, pending[1]):
            result.append(pending)
        return result

    def join_previous(self, pieces: list, end: int) -> bool:
        """Extend the last of ``pieces`` to ``end`` when it still fits; say
        whether it did."""
        if not pieces:
            return False
        tokens = self.count(pieces[-1][0], end)
        if tokens > self.piece_limit:
            return False
        pieces[-1] = (pieces[-1][0], end, tokens)
        return True

    # --- chunks ------------------------------------------------------------
    def merge(self, pieces: list) -> list[Chunk]:
        """Greedy merge of pieces into chunks of at most ``limit`` tokens,
        each chunk after the first opening with its overlap."""
        text, limit = self.text, self.limit
        chunks: list[Chunk] = []
        index = 0
        while index < len(pieces):
            if chunks:
                budget = min(self.overlap, limit - pieces[index][2])
                start, total = self.overlap_start(chunks[-1], budget)
            else:
                start, total = pieces[index][0], 0
            last = index
            total += pieces[index][2]
            while last + 1 < len(pieces) and total + pieces[last + 1][2] <= limit:
                last += 1
                total += pieces[last][2]
            # Counts of pieces do not add up exactly: check the chunk itself.
            while True:
                tokens = self.count(start, pieces[last][1])
                if tokens <= limit:
                    break
                if last > index:
                    last -= 1
                else:
                    start = pieces[index][0]  # one piece alone fits by construction
            chunks.append(Chunk(text[start:pieces[last][1]], start, pieces[last][1], tokens))
            index = last + 1
        return chunks

    def overlap_start(self, previous: Chunk, budget: int) -> tuple[int, int]:
        """Where the next chunk starts: the earliest boundary in
        ``previous`` whose tail up to ``previous.end`` counts at most
        ``budget`` tokens, trying sentence-or-coarser boundaries, then
        clauses, whitespace and characters. Returns (start, tail tokens);
        (previous.end, 0) when nothing fits."""
        end = previous.end
        if budget <= 0:
            return end, 0
        window = int(budget * self.chars_per_token() * 2) + 16
        low = max(previous.start + 1, end - window)
        groups = ((0, 1, 2), (3,), (4,))
        for group in groups:
            positions = sorted({m.end() for level in group
                                for m in _SEPARATORS[level].finditer(self.text, low, end) if low < m.end() < end})
            found = self.earliest_fitting(positions, end, budget)
            if found:
                return found
        positions = sorted({self.safe_cut(p, low) for p in range(low + 1, end)} - {low})
        return self.earliest_fitting(positions, end, budget) or (end, 0)

    def earliest_fitting(self, positions: list[int], end: int, budget: int) -> tuple[int, int] | None:
        """The first of the sorted ``positions`` whose tail
        ``text[position:end]`` counts at most ``budget`` tokens and is not
        only whitespace (bisecting: longer tails count more), or None."""
        fitting = None
        low, high = 0, len(positions)
        while low < high:
            middle = (low + high) // 2
            tokens = self.count(positions[middle], end)
            if tokens <= budget:
                fitting = (positions[middle], tokens)
                high = middle
            else:
                low = middle + 1
        if fitting and self.text[fitting[0]:end].isspace():
            return None
        return fitting

