"""Knowledge sources' text (issue 13 points 2 and 3, spec 000 §3.8 and §9.1):
the recursive chunker (engine/chunker.py, case BR-13), text extraction from
files and HTML (engine/extract.py, case BR-14) and the URL guard of web
sources (engine/url_fetch.py)."""
import random
import time
from itertools import pairwise

from odoo.tests import TransactionCase, tagged

from ..engine.chunker import chunk_text
from ..llm.tokenizer import count_tokens

EMBEDDING_MODEL = "text-embedding-3-small"  # cl100k_base, the product's default embedding model


def count(text):
    """Tokens of ``text`` for the embedding model, by the product's counter."""
    return count_tokens(text, EMBEDDING_MODEL)


def chinese_text(sentences=300, punctuated=True):
    """About 40 Chinese characters per sentence, each ending in 。 (or not)."""
    body = "本公司已收到贵方发票并安排付款请核对金额与交货日期如有疑问请及时联系财务部门处理相关"
    rng = random.Random(13)
    parts = []
    for _ in range(sentences):
        start = rng.randrange(len(body) - 38)
        parts.append(body[start:start + 39] + ("。" if punctuated else ""))
    return "".join(parts)


def english_text(paragraphs=40, seed=7):
    """Paragraphs of a few English sentences, separated by blank lines."""
    words = ("the", "invoice", "was", "paid", "after", "order", "reached", "warehouse", "and", "customer",
             "confirmed", "delivery", "of", "every", "product", "on", "list")
    rng = random.Random(seed)
    return "\n\n".join(
        " ".join(" ".join(rng.choice(words) for _ in range(rng.randint(6, 18))).capitalize() + "."
                 for _ in range(rng.randint(1, 6)))
        for _ in range(paragraphs))


@tagged("post_install", "-at_install")
class TestChunker(TransactionCase):
    """engine/chunker.py: sizes in tokens, overlap, and nothing lost."""

    def assertChunksValid(self, text, chunks, limit):
        """The properties every chunking must have (issue 13 point 3, BR-13)."""
        self.assertTrue(chunks, "no chunk for a text with content")
        self.assertEqual(chunks[0].start, 0, "the first chunk does not start at the beginning")
        self.assertEqual(chunks[-1].end, len(text), "the last chunk does not reach the end")
        rebuilt = [chunks[0].text]
        for previous, chunk in pairwise(chunks):
            self.assertLess(previous.start, chunk.start, "chunks do not move forward")
            self.assertLessEqual(chunk.start, previous.end, "a gap between two chunks: text lost")
            self.assertLess(previous.end, chunk.end, "a chunk brings nothing new")
            rebuilt.append(text[previous.end:chunk.end])
        self.assertEqual("".join(rebuilt), text, "the chunks minus their overlap do not give the input back")
        for chunk in chunks:
            self.assertEqual(text[chunk.start:chunk.end], chunk.text)
            self.assertTrue(chunk.text.strip(), f"an empty chunk at {chunk.start}")
            self.assertEqual(chunk.tokens, count(chunk.text), "a chunk's token count is wrong")
            self.assertLessEqual(chunk.tokens, limit, f"a chunk of {chunk.tokens} tokens over the limit {limit}")
            for cut in (chunk.start, chunk.end):
                if 0 < cut < len(text):
                    self.assertFalse(text[cut - 1] == "\r" and text[cut] == "\n", "\\r\\n split")
                    self.assertFalse("\ud800" <= text[cut - 1] <= "\udbff", "surrogate pair split")

    def test_BR_13_a_chinese_sentences_end_at_full_stops(self):
        text = chinese_text()
        chunks = chunk_text(text, 1000, 100, count)
        self.assertChunksValid(text, chunks, 1000)
        self.assertGreater(len(chunks), 5)
        for chunk in chunks:
            self.assertTrue(chunk.text.endswith("。"), f"chunk ends inside a sentence: …{chunk.text[-10:]}")
        for previous, chunk in pairwise(chunks):
            self.assertEqual(text[chunk.start - 1], "。", "the overlap does not start at a sentence")
            self.assertLess(chunk.start, previous.end, "no overlap between chunks")

    def test_BR_13_a_chinese_lines_and_semicolons_are_boundaries(self):
        text = "\n".join(chinese_text(20)[i:i + 120] for i in range(0, 800, 120)).replace("。", "；") * 6
        chunks = chunk_text(text, 200, 0, count)
        self.assertChunksValid(text, chunks, 200)
        for chunk in chunks[:-1]:
            self.assertIn(chunk.text[-1], "；\n", f"chunk ends inside a sentence: …{chunk.text[-10:]}")

    def test_BR_13_b_chinese_without_punctuation_is_hard_split(self):
        text = chinese_text(punctuated=False)
        chunks = chunk_text(text, 1000, 100, count)
        self.assertChunksValid(text, chunks, 1000)
        for chunk in chunks[:-1]:
            self.assertGreaterEqual(chunk.tokens, 850, "a hard split leaves chunks far below the size")
        for previous, chunk in pairwise(chunks):
            self.assertLess(chunk.start, previous.end, "no overlap between hard-split chunks")

    def test_BR_13_c_mixed_chinese_and_english(self):
        text = "发票 INV/2025/0001 已付款。Payment received. " * 500
        chunks = chunk_text(text, 1000, 100, count)
        self.assertChunksValid(text, chunks, 1000)
        for chunk in chunks[:-1]:
            self.assertTrue(chunk.text.endswith(("。", "received. ")), f"mid-sentence end: …{chunk.text[-20:]}")
        self.assertTrue(all("INV/2025/0001" in chunk.text for chunk in chunks), "an invoice number was cut")

    def test_BR_13_english_at_paragraphs_and_sentences(self):
        text = english_text()
        chunks = chunk_text(text, 120, 20, count)
        self.assertChunksValid(text, chunks, 120)
        for chunk in chunks[:-1]:
            self.assertTrue(chunk.text.endswith((". ", ".\n\n")), f"chunk ends inside a sentence: …{chunk.text[-20:]}")
        small = "One short paragraph.\n\nAnother one."
        self.assertEqual([c.text for c in chunk_text(small, 120, 20, count)], [small], "a small text was split")

    def test_max_tokens_caps_the_chunk_size(self):
        text = english_text(10)
        chunks = chunk_text(text, 1000, 50, count, max_tokens=64)
        self.assertChunksValid(text, chunks, 64)

    def test_whitespace_and_arguments(self):
        self.assertEqual(chunk_text("", 100, 10, count), [])
        self.assertEqual(chunk_text(" \n\n\t\u3000 \r\n", 100, 10, count), [])
        for size, overlap, max_tokens in ((0, 0, None), (100, -1, None), (100, 100, None), (100, 10, 0)):
            with self.assertRaises(ValueError):
                chunk_text("text", size, overlap, count, max_tokens)
        text = "\n\n   leading and trailing   \n\n\n"
        self.assertEqual(chunk_text(text, 100, 10, count)[0].text, text)

    def test_random_texts_keep_every_property(self):
        alphabet = ("word", "Wort", " ", "  ", "\n", "\r\n", "\n\n", ". ", "。", "，", ", ", "发票", "😀", "é",
                    "\t", "INV/2025/0001", "!", "? ", "；", "…", "x" * 30, "\u3000", "\ud83d\ude00")
        for seed in range(200):
            rng = random.Random(seed)
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 400)))
            size = rng.randint(8, 60)
            overlap = rng.randint(0, size - 1)
            max_tokens = rng.choice((None, rng.randint(8, 80)))
            with self.subTest(seed=seed, size=size, overlap=overlap, max_tokens=max_tokens):
                chunks = chunk_text(text, size, overlap, count, max_tokens)
                if text.isspace():
                    self.assertEqual(chunks, [])
                else:
                    self.assertChunksValid(text, chunks, min(size, max_tokens or size))

    def test_one_megabyte_chunks_fast(self):
        count("warm the tokenizer up")
        for label, text in (("English", english_text(3000)), ("Chinese", chinese_text(25000)),
                            ("words without sentences", english_text(3000).replace(". ", " ").replace("\n", " "))):
            text = (text * (1_000_000 // len(text) + 1))[:1_000_000]
            started = time.perf_counter()
            chunks = chunk_text(text, 1000, 100, count)
            elapsed = time.perf_counter() - started
            self.assertEqual(chunks[-1].end, len(text))
            self.assertLess(elapsed, 2.0, f"1 MB of {label} took {elapsed:.2f} s to chunk")
