"""Knowledge sources' text (issue 13 points 2 and 3, spec 000 §3.8 and §9.1):
the recursive chunker (engine/knowledge/chunker.py, case BR-13), text extraction from
files and HTML (engine/knowledge/extract.py, case BR-14) and the URL guard of web
sources (engine/knowledge/url_fetch.py)."""
import io
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise

import docx
from docx.oxml import parse_xml
from PIL import Image
from pypdf import PdfWriter
from pypdf.generic import DictionaryObject, NameObject, StreamObject
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from odoo.tests import TransactionCase, tagged

from ..engine.knowledge.chunker import chunk_text
from ..engine.knowledge.extract import Extracted, ExtractionError, extract_file, extract_html
from ..engine.knowledge.url_fetch import UrlFetchError, UrlRefused, address_refusal, fetch_url
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
    """engine/knowledge/chunker.py: sizes in tokens, overlap, and nothing lost."""

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
                if text.isspace():  # rare among the seeds: whitespace-only texts are also checked below, always
                    self.assertEqual(chunks, [])
                else:
                    self.assertChunksValid(text, chunks, min(size, max_tokens or size))
        for text in (" ", "\n\n", "\r\n\t", "\u3000 "):
            self.assertEqual(chunk_text(text, 8, 2, count), [], repr(text))

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


# A DOCX paragraph holding only a floating DrawingML text box, with the VML
# copy Word writes for older readers (ECMA-376 Part 1 §17.3.3.9 txbxContent,
# Part 3 §10.2.1 AlternateContent): the text must be read once.
FLOATING_TEXT_BOX = """<w:p xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"
  xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"
  xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
  xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"
  xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"
  xmlns:v="urn:schemas-microsoft-com:vml"><w:r><mc:AlternateContent>
 <mc:Choice Requires="wps"><w:drawing><wp:anchor distT="0" distB="0" distL="114300" distR="114300" simplePos="0"
   relativeHeight="1" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">
  <wp:simplePos x="0" y="0"/><wp:positionH relativeFrom="column"><wp:posOffset>0</wp:posOffset></wp:positionH>
  <wp:positionV relativeFrom="paragraph"><wp:posOffset>0</wp:posOffset></wp:positionV>
  <wp:extent cx="1828800" cy="457200"/><wp:wrapSquare wrapText="bothSides"/><wp:docPr id="1" name="Text Box 1"/>
  <a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">
   <wps:wsp><wps:cNvSpPr txBox="1"/><wps:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="1828800" cy="457200"/></a:xfrm>
    <a:prstGeom prst="rect"><a:avLst/></a:prstGeom></wps:spPr>
    <wps:txbx><w:txbxContent><w:p><w:r><w:t>Floating box: delivery on Friday</w:t></w:r></w:p></w:txbxContent>
    </wps:txbx><wps:bodyPr/></wps:wsp>
  </a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>
 <mc:Fallback><w:pict><v:shape style="width:144pt;height:36pt"><v:textbox><w:txbxContent><w:p><w:r>
  <w:t>Floating box: delivery on Friday</w:t></w:r></w:p></w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback>
</mc:AlternateContent></w:r></w:p>"""


def docx_bytes(document):
    """A python-docx document saved to bytes."""
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def fill_table(table, rows):
    """Rows of strings written into a python-docx table with no rows yet."""
    for row in rows:
        for cell, value in zip(table.add_row().cells, row, strict=True):
            cell.text = value


def pdf_with_content_streams(*streams):
    """A PDF with one page per content stream (bytes), Helvetica as /F1
    (ISO 32000-1 §9.4 text operators)."""
    writer = PdfWriter()
    for stream in streams:
        page = writer.add_blank_page(612, 792)
        font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                                 NameObject("/BaseFont"): NameObject("/Helvetica")})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({
            NameObject("/F1"): font})})
        content = StreamObject()
        content.set_data(stream)
        page.replace_contents(content)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


@tagged("post_install", "-at_install")
class TestKnowledgeExtract(TransactionCase):
    """engine/knowledge/extract.py: PDF, DOCX, TXT, CSV and HTML to text (BR-14)."""

    def test_BR_14_a_scanned_pdf_has_no_text_and_warns(self):
        buffer = io.BytesIO()
        pdf = canvas.Canvas(buffer)
        scan = ImageReader(Image.new("RGB", (170, 220), "white"))
        for _ in range(3):
            pdf.drawImage(scan, 36, 36, 540, 720)
            pdf.showPage()
        pdf.save()
        extracted = extract_file(buffer.getvalue(), "scan.pdf", "application/pdf")
        self.assertEqual(extracted.text, "", "a scanned PDF produced text")
        self.assertEqual(len(extracted.warnings), 1, extracted.warnings)
        self.assertIn("pages 1, 2, 3 of 3 have no extractable text", extracted.warnings[0])

    def test_BR_14_b_pdf_of_form_feeds_has_no_text(self):
        data = pdf_with_content_streams(b"BT /F1 12 Tf 72 720 Td (\\f\\f\\f) Tj ET",
                                        b"BT /F1 12 Tf 72 720 Td (\\014) Tj ET")
        extracted = extract_file(data, "blank.pdf")
        self.assertEqual(extracted.text, "", "form feeds counted as text")
        self.assertIn("no extractable text", extracted.warnings[0])

    def test_pdf_text_pages_and_the_empty_one(self):
        data = pdf_with_content_streams(b"BT /F1 12 Tf 72 720 Td (Invoice INV/2025/0001 paid) Tj ET",
                                        b"", b"BT /F1 12 Tf 72 720 Td (Delivery on Friday) Tj ET")
        extracted = extract_file(data, "mixed.pdf")
        self.assertEqual(extracted.text, "Invoice INV/2025/0001 paid\n\nDelivery on Friday")
        self.assertIn("page 2 of 3 has no extractable text", extracted.warnings[0])
        self.assertFalse(extracted.partial)

    def test_BR_14_c_docx_table_only_in_row_order(self):
        document = docx.Document()
        fill_table(document.add_table(rows=0, cols=2), (("Product", "Qty"), ("Desk", "4"), ("Chair", "12")))
        self.assertFalse(document.paragraphs, "the test document should have no body paragraph")
        extracted = extract_file(docx_bytes(document), "stock.docx")
        self.assertEqual(extracted.text, "Product | Qty\nDesk | 4\nChair | 12")
        words = extracted.text.replace("|", " ").split()
        self.assertEqual([w for w in words if w in ("Desk", "4", "Chair", "12")], ["Desk", "4", "Chair", "12"])

    def test_BR_14_d_docx_text_box_and_header(self):
        document = docx.Document()
        document.sections[0].header.paragraphs[0].text = "Header: ACME Corp"
        document.element.body.insert(0, parse_xml(FLOATING_TEXT_BOX))
        data = docx_bytes(document)
        self.assertEqual([p.text for p in docx.Document(io.BytesIO(data)).paragraphs], [""],
                         "python-docx itself should see no paragraph text here")
        extracted = extract_file(data, "letter.docx")
        self.assertEqual(extracted, Extracted("Header: ACME Corp\n\nFloating box: delivery on Friday"))

    def test_docx_body_order_nested_tables_and_footer(self):
        document = docx.Document()
        document.add_paragraph("Before the table.")
        table = document.add_table(rows=0, cols=2)
        fill_table(table, (("Order", "Lines"), ("SO001", "")))
        fill_table(table.rows[1].cells[1].add_table(rows=0, cols=2), (("Desk", "4"), ("Chair", "12")))
        document.add_paragraph("After the table.")
        document.sections[0].footer.paragraphs[0].text = "Page footer"
        extracted = extract_file(docx_bytes(document), "order.docx")
        self.assertEqual(extracted.text, "Before the table.\nOrder | Lines\nSO001 | \nDesk | 4\nChair | 12\n"
                                         "After the table.\n\nPage footer")

    def test_docx_equation_is_said_partly_extracted(self):
        document = docx.Document()
        document.add_paragraph("Area of a circle:")
        document.element.body.insert(1, parse_xml(
            '<w:p xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
            'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math">'
            '<m:oMath><m:r><m:t>A=πr²</m:t></m:r></m:oMath></w:p>'))
        extracted = extract_file(docx_bytes(document), "maths.docx")
        self.assertEqual(extracted.text, "Area of a circle:")
        self.assertTrue(extracted.partial, "a document with an unread equation is not said to be partial")
        self.assertEqual(extracted.warnings, ("equations in the document were not read",))

    def test_encrypted_pdf(self):
        for user_password, readable in (("secret", False), ("", True)):
            writer = PdfWriter()
            writer.add_blank_page(612, 792)
            writer.encrypt(user_password, owner_password="owner", algorithm="RC4-128")
            buffer = io.BytesIO()
            writer.write(buffer)
            with self.subTest(user_password=user_password):
                if readable:  # the loop has one case of each
                    self.assertEqual(extract_file(buffer.getvalue(), "open.pdf").text, "")
                else:
                    with self.assertRaisesRegex(ExtractionError, "password-protected"):
                        extract_file(buffer.getvalue(), "locked.pdf")

    def test_txt_encodings(self):
        self.assertEqual(extract_file("Café ✓".encode(), "a.txt"), Extracted("Café ✓"))
        self.assertEqual(extract_file(b"\xef\xbb\xbfBOM text", "a.txt").text, "BOM text")
        self.assertEqual(extract_file("Ünïcode".encode("utf-16"), "a.txt").text, "Ünïcode")
        cp1252 = extract_file(b"Caf\xe9 \x80 5", "notes.txt")
        self.assertEqual(cp1252.text, "Café € 5")
        self.assertIn("cp1252", cp1252.warnings[0])
        self.assertEqual(extract_file(b"\x81\x8d", "a.txt").text, "\x81\x8d")  # latin-1, the last resort
        self.assertEqual(extract_file(b" \n\t ", "empty.txt").text, "")

    def test_csv_rows_with_headers(self):
        for delimiter in (",", ";", "\t"):
            data = delimiter.join(("Product", "Qty", "Note")) + "\n" + delimiter.join(("Desk", "4", "")) + "\n" \
                + delimiter.join(("Chair", "12", '"blue, padded"')) + "\n"
            with self.subTest(delimiter=delimiter):
                self.assertEqual(extract_file(data.encode(), "stock.csv").text,
                                 "Product: Desk; Qty: 4\nProduct: Chair; Qty: 12; Note: blue, padded")

    def test_html_main_content_only(self):
        page = """<html><head><title>Return policy</title><style>p{color:red}</style></head><body>
            <header>Site header</header><nav><a href="/">Home</a></nav>
            <main><h1>Returns</h1><p>Goods may be returned<br>within 30 days.</p>
            <table><tr><th>Item</th><th>Days</th></tr><tr><td>Desk</td><td>30</td></tr></table>
            <script>steal()</script><noscript>enable js</noscript><form>Search <input></form>
            <p hidden>secret</p><div style="display: none">hidden offer</div></main>
           <aside>Ads</aside><footer>Copyright</footer></body></html>"""
        extracted = extract_html(page, "https://example.com/returns")
        self.assertEqual(extracted.text, "Return policy\n\nReturns\n\nGoods may be returned\nwithin 30 days.\n\n"
                                         "Item | Days\nDesk | 30")
        article = extract_html("<body><div>menu</div><article><p>Only this.</p></article></body>")
        self.assertEqual(article.text, "Only this.")
        self.assertEqual(extract_file(page.encode(), "page.htm").text, extracted.text)
        empty = extract_html("<html><body><script>x()</script></body></html>", "https://example.com/")
        self.assertEqual(empty.text, "")
        self.assertIn("https://example.com/", empty.warnings[0])

    def test_corrupt_unsupported_and_oversized_files_raise(self):
        cases = (
            (b"%PDF-1.7 this is not a pdf", "broken.pdf", "not a readable PDF"),
            (b"PK\x03\x04 not a zip", "broken.docx", "not a readable DOCX"),
            (b"MZ\x90\x00", "tool.exe", "not a supported type"),
            (b"0" * 50_000_001, "huge.txt", "larger than the 50 MB limit"),
        )
        for data, filename, message in cases:
            with self.subTest(filename=filename), self.assertRaisesRegex(ExtractionError, message):
                extract_file(data, filename)
        self.assertEqual(extract_file(b"plain", "noextension", "text/plain").text, "plain")


class _PageHandler(BaseHTTPRequestHandler):
    """The loopback web server of TestUrlFetch: a page, redirects, a large
    body, a slow answer and the Host header it received."""

    def do_GET(self):
        port = self.server.server_address[1]
        routes = {
            "/page": (200, {"Content-Type": "text/html; charset=utf-8"},
                      b"<html><body><nav>menu</nav><main><p>Returns within 30 days.</p></main></body></html>"),
            "/to-page": (302, {"Location": "/page"}, b""),
            "/to-metadata": (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, b""),
            "/to-file": (302, {"Location": "file:///etc/passwd"}, b""),
            "/to-localhost": (302, {"Location": f"http://localhost:{port}/page"}, b""),
            "/loop": (302, {"Location": "/loop"}, b""),
            "/missing": (404, {}, b"no"),
            "/host": (200, {"Content-Type": "text/plain"}, self.headers.get("Host", "").encode()),
        }
        if self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()  # no Content-Length: the limit must hold while streaming
            for _ in range(64):
                self.wfile.write(b"x" * 65536)
            return
        if self.path == "/slow":
            time.sleep(2)
        status, headers, body = routes.get(self.path, (200, {}, b"late"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        """Quiet: the test log is for test results."""


@tagged("post_install", "-at_install")
class TestUrlFetch(TransactionCase):
    """engine/knowledge/url_fetch.py: only public http(s) addresses, on every hop,
    within size and time."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), _PageHandler)
        cls.server.daemon_threads = True
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.port = cls.server.server_address[1]
        cls.base = f"http://127.0.0.1:{cls.port}"
        cls.only_this_server = {("127.0.0.1", cls.port)}

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        super().tearDownClass()

    def test_refused_schemes(self):
        for url in ("file:///etc/passwd", "ftp://example.com/a.txt", "gopher://example.com:70/", "javascript:alert(1)",
                    "data:text/html,<p>x</p>", "example.com/page"):
            with self.subTest(url=url), self.assertRaisesRegex(UrlRefused, "http and https|not a valid URL"):
                fetch_url(url)

    def test_refused_addresses_and_names(self):
        for url in ("http://127.0.0.1/", "http://localhost:8069/web", "http://10.1.2.3/", "http://172.16.0.1/",
                    "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/",
                    "http://0.0.0.0/", "http://2130706433/", "http://0x7f.1/", "http://[::ffff:127.0.0.1]/",
                    "http://[fe80::1]/", "http://[fd00::1]/", "http://224.0.0.1/", "http://240.0.0.1/",
                    "http://100.64.0.1/", "http://[2002:7f00:1::]/", "http://[64:ff9b::a9fe:a9fe]/",
                    "http://metadata.google.internal/computeMetadata/v1/", "http://METADATA.GOOGLE.INTERNAL./",
                    "http://printer.local/", "https://127.0.0.1:443/"):
            with self.subTest(url=url), self.assertRaises(UrlRefused):
                fetch_url(url, timeout=5)

    def test_address_refusal_reasons(self):
        self.assertIn("link-local", address_refusal("169.254.169.254"))
        self.assertIn("loopback", address_refusal("::ffff:127.0.0.1"))
        self.assertIn("private", address_refusal("fd12:3456::1"))
        self.assertEqual(address_refusal("93.184.215.14"), "")
        self.assertEqual(address_refusal("2606:4700::1111"), "")

    def test_loopback_server_when_allowed(self):
        with self.assertRaises(UrlRefused):
            fetch_url(f"{self.base}/page")
        fetched = fetch_url(f"{self.base}/to-page", allow_private=self.only_this_server)
        self.assertEqual(fetched.url, f"{self.base}/to-page")
        self.assertEqual(fetched.final_url, f"{self.base}/page")
        self.assertEqual(fetched.content_type, "text/html; charset=utf-8")
        self.assertEqual(extract_html(fetched.data, fetched.final_url).text, "Returns within 30 days.")

    def test_connects_to_the_checked_address_with_the_name_as_host(self):
        fetched = fetch_url(f"http://localhost:{self.port}/host", allow_private={("localhost", self.port)})
        self.assertEqual(fetched.data, f"localhost:{self.port}".encode(), "the Host header lost the name")

    def test_tls_failure_is_a_fetch_error(self):
        with self.assertRaisesRegex(UrlFetchError, "cannot (fetch|connect)"):
            fetch_url(f"https://127.0.0.1:{self.port}/page", allow_private=True, timeout=5)

    def test_every_redirect_is_checked(self):
        for path, error in (("/to-metadata", "169.254.169.254"), ("/to-file", "http and https"),
                            ("/to-localhost", "internal name")):
            with self.subTest(path=path), self.assertRaisesRegex(UrlRefused, error):
                fetch_url(f"{self.base}{path}", allow_private=self.only_this_server, timeout=5)
        with self.assertRaisesRegex(UrlFetchError, "more than 3 redirects"):
            fetch_url(f"{self.base}/loop", allow_private=True, max_redirects=3)
        with self.assertRaisesRegex(UrlFetchError, "HTTP 404"):
            fetch_url(f"{self.base}/missing", allow_private=True)

    def test_size_and_time_limits(self):
        with self.assertRaisesRegex(UrlFetchError, "larger than 1,000,000 bytes"):
            fetch_url(f"{self.base}/big", allow_private=True, max_bytes=1_000_000)
        self.assertEqual(len(fetch_url(f"{self.base}/big", allow_private=True, max_bytes=5_000_000).data), 64 * 65536)
        started = time.monotonic()
        with self.assertRaisesRegex(UrlFetchError, "took longer than 0.5 s"):
            fetch_url(f"{self.base}/slow", allow_private=True, timeout=0.5)
        self.assertLess(time.monotonic() - started, 1.5, "the timeout did not bound the fetch")
