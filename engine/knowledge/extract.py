"""Plain text out of knowledge files and web pages (spec 000 §3.8 and §9.1
step 1, issue 13 point 2, case BR-14).

``extract_file`` reads PDF (pypdf), DOCX (python-docx's XML), TXT, CSV and
HTML; ``extract_html`` reads HTML (BeautifulSoup over lxml) and is what URL
sources use after ``engine/knowledge/url_fetch.py``. What could not be read is said in
``Extracted.warnings`` (with ``partial=True`` when some text may be
missing); a file that cannot be read at all raises ``ExtractionError`` with a
message fit for the source's failure reason. An empty ``text`` means "no
extractable text" (scanned pages without OCR, for instance).

Pure Python, no Odoo import. Everything read here is untrusted content.
"""
from __future__ import annotations

import csv
import io
import logging
import re
import zipfile
from dataclasses import dataclass

_logger = logging.getLogger(__name__)

MAX_INPUT_BYTES = 50_000_000  # a file or page larger than this is refused
MAX_PDF_PAGES = 5_000  # pages read from one PDF; the rest is left out (partial)
MAX_DOCX_UNZIPPED_BYTES = 300_000_000  # a DOCX that unzips to more is refused (zip bomb)
MAX_TEXT_CHARS = 20_000_000  # text kept from one file; the rest is left out (partial)


@dataclass(frozen=True)
class Extracted:
    """Text of one file or page. ``text`` is "" when nothing could be
    extracted; ``warnings`` are short sentences for the user; ``partial``
    says some of the content could not be read."""

    text: str
    warnings: tuple[str, ...] = ()
    partial: bool = False


class ExtractionError(Exception):
    """The file cannot be read at all: corrupt, encrypted, too large or of an
    unsupported type. The message says which, for the user."""


def extract_file(data: bytes, filename: str, mimetype: str = "") -> Extracted:
    """Text of a knowledge file: ``data`` its bytes, the type found from
    ``filename``'s extension, else from ``mimetype``.

    Supported: PDF, DOCX, TXT (also .md, .text), CSV, HTML/HTM. Raises
    ExtractionError for other types, for files over 50 MB and for files that
    cannot be parsed.
    """
    if len(data) > MAX_INPUT_BYTES:
        raise ExtractionError(f"{filename or 'the file'} is {len(data) / 1e6:.1f} MB, "
                              f"larger than the {MAX_INPUT_BYTES // 1_000_000} MB limit")
    kind = _file_kind(filename, mimetype)
    if kind is None:
        raise ExtractionError(f"{filename or 'the file'} ({mimetype or 'unknown type'}) is not a supported type: "
                              "use PDF, DOCX, TXT, CSV or HTML")
    extracted = _EXTRACTORS[kind](data)
    if len(extracted.text) > MAX_TEXT_CHARS:
        return Extracted(extracted.text[:MAX_TEXT_CHARS], (*extracted.warnings, (
            f"only the first {MAX_TEXT_CHARS:,} characters were kept")), partial=True)
    return extracted


_EXTENSIONS = {"pdf": "pdf", "docx": "docx", "txt": "txt", "text": "txt", "md": "txt", "csv": "csv",
               "html": "html", "htm": "html", "xhtml": "html"}
_MIMETYPES = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/plain": "txt", "text/markdown": "txt",
    "text/csv": "csv", "application/csv": "csv",
    "text/html": "html", "application/xhtml+xml": "html",
}


def _file_kind(filename: str, mimetype: str) -> str | None:
    extension = (filename or "").rsplit(".", 1)[-1].lower() if "." in (filename or "") else ""
    return _EXTENSIONS.get(extension) or _MIMETYPES.get((mimetype or "").split(";")[0].strip().lower())


# --- PDF (pypdf) ---------------------------------------------------------------
def _extract_pdf(data: bytes) -> Extracted:
    """Text of each page, pages separated by a blank line; pages without
    text (scanned images: no OCR here) are named in a warning."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("the PDF is password-protected")
        pages = reader.pages
        page_count = len(pages)
    except ExtractionError:
        raise
    except Exception as exc:  # pypdf raises many kinds (PdfReadError, ValueError, KeyError…) on damaged files
        raise ExtractionError(f"not a readable PDF file ({type(exc).__name__}: {exc})") from exc
    warnings, texts, empty, failed = [], [], [], []
    for number in range(1, min(page_count, MAX_PDF_PAGES) + 1):
        try:
            text = pages[number - 1].extract_text() or ""
        except Exception as exc:  # noqa: BLE001 - one damaged page must not lose the others
            _logger.info("PDF page %s unreadable: %s: %s", number, type(exc).__name__, exc)
            failed.append(number)
            continue
        text = text.replace("\x0c", "\n").strip()
        if text:
            texts.append(text)
        else:
            empty.append(number)
    partial = bool(failed) or page_count > MAX_PDF_PAGES
    if empty:
        warnings.append(f"{_pages(empty)} of {page_count} {'has' if len(empty) == 1 else 'have'} no extractable "
                        "text (scanned images are not read: no OCR)")
    if failed:
        warnings.append(f"{_pages(failed)} could not be read")
    if page_count > MAX_PDF_PAGES:
        warnings.append(f"only the first {MAX_PDF_PAGES} of {page_count} pages were read")
    return Extracted("\n\n".join(texts), tuple(warnings), partial)


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(map(str, numbers[:10])) + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
    return f"page {shown}" if len(numbers) == 1 else f"pages {shown}"


# --- DOCX (python-docx, read as XML) ---------------------------------------------
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_UNREAD = {  # content with text we do not read, by element namespace + name
    "{http://schemas.openxmlformats.org/officeDocument/2006/math}oMath": "equations",
    "{http://schemas.openxmlformats.org/drawingml/2006/chart}chart": "charts",
    "{http://schemas.openxmlformats.org/drawingml/2006/diagram}relIds": "diagrams (SmartArt)",
    f"{{{_W}}}object": "embedded objects",
}


def _extract_docx(data: bytes) -> Extracted:
    """Headers, then the body (paragraphs, tables row by row as
    "cell | cell", nested tables, text boxes, content controls) in document
    order, then footers."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unzipped = sum(info.file_size for info in archive.infolist())
        if unzipped > MAX_DOCX_UNZIPPED_BYTES:
            raise ExtractionError(f"the DOCX file unzips to {unzipped / 1e6:.0f} MB, "
                                  f"more than the {MAX_DOCX_UNZIPPED_BYTES // 1_000_000} MB limit")
        document = docx.Document(io.BytesIO(data))
    except ExtractionError:
        raise
    except Exception as exc:
        raise ExtractionError(f"not a readable DOCX file ({type(exc).__name__}: {exc})") from exc
    reader = _DocxReader()
    parts = sorted(((rel.reltype, rel.target_part) for rel in document.part.rels.values()
                    if not rel.is_external and rel.reltype in (RT.HEADER, RT.FOOTER)),
                   key=lambda item: str(item[1].partname))
    headers = [reader.part_text(part, "header") for reltype, part in parts if reltype == RT.HEADER]
    footers = [reader.part_text(part, "footer") for reltype, part in parts if reltype == RT.FOOTER]
    body = reader.blocks_text(document.element.body)
    texts = [text for text in (*headers, body, *footers) if text]
    return Extracted("\n\n".join(texts), tuple(reader.warnings), reader.partial)


class _DocxReader:
    """Walks WordprocessingML (ECMA-376 Part 1 §17) in document order."""

    def __init__(self):
        self.warnings: list[str] = []
        self.partial = False

    def note_unread(self, element) -> None:
        """Warn once per kind of content whose text is not read."""
        for tag, label in _UNREAD.items():
            if next(element.iter(tag), None) is not None:
                message = f"{label} in the document were not read"
                if message not in self.warnings:
                    self.warnings.append(message)
                    self.partial = True

    def part_text(self, part, label: str) -> str:
        """Text of a header or footer part ("" and a warning when unreadable)."""
        try:
            element = part.element
            return self.blocks_text(element)
        except Exception as exc:  # noqa: BLE001 - a damaged header must not lose the body
            _logger.info("DOCX %s %s unreadable: %s: %s", label, part.partname, type(exc).__name__, exc)
            self.warnings.append(f"a {label} could not be read")
            self.partial = True
            return ""

    def blocks_text(self, container) -> str:
        """Paragraphs and tables under ``container`` (body, cell, header,
        text box, content control), one per line."""
        self.note_unread(container)
        return "\n".join(line for line in self.block_lines(container) if line.strip())

    def block_lines(self, container):
        """Lines of the block-level children of ``container``, in order."""
        for child in container:
            tag = child.tag
            if tag == f"{{{_W}}}p":
                yield self.paragraph_text(child)
                for box in self.text_boxes(child):
                    yield self.blocks_text(box)
            elif tag == f"{{{_W}}}tbl":
                yield from self.table_lines(child)
            elif tag in (f"{{{_W}}}sectPr", f"{{{_W}}}tblPr", f"{{{_W}}}tcPr", f"{{{_W}}}pPr", f"{{{_MC}}}Fallback"):
                continue
            elif isinstance(tag, str):  # w:sdt/w:sdtContent, w:customXml, tracked insertions…
                yield from self.block_lines(child)

    def paragraph_text(self, paragraph) -> str:
        """A paragraph's visible text without its text boxes (read apart)."""
        out = []
        for element in self.inline_elements(paragraph):
            tag = element.tag
            if tag == f"{{{_W}}}t":
                out.append(element.text or "")
            elif tag == f"{{{_W}}}tab":
                out.append("\t")
            elif tag in (f"{{{_W}}}br", f"{{{_W}}}cr"):
                out.append("\n")
            elif tag == f"{{{_W}}}noBreakHyphen":
                out.append("-")
        return "".join(out)

    def inline_elements(self, element):
        """Descendants in order, not entering text boxes, the fallback copy
        of alternate content, or deleted text."""
        for child in element:
            tag = child.tag
            if not isinstance(tag, str) or tag in (f"{{{_W}}}txbxContent", f"{{{_MC}}}Fallback", f"{{{_W}}}del"):
                continue
            yield child
            yield from self.inline_elements(child)

    def text_boxes(self, paragraph):
        """The outermost text boxes (w:txbxContent) anchored in
        ``paragraph``, without the VML fallback copy of a DrawingML box."""
        stack = list(paragraph)[::-1]
        while stack:
            element = stack.pop()
            tag = element.tag
            if not isinstance(tag, str) or tag == f"{{{_MC}}}Fallback":
                continue
            if tag == f"{{{_W}}}txbxContent":
                yield element
                continue
            stack.extend(list(element)[::-1])

    def row_cells(self, row):
        """The cells of a table row, also inside content controls."""
        for child in row:
            if child.tag == f"{{{_W}}}tc":
                yield child
            elif child.tag == f"{{{_W}}}sdt":
                for content in child.iterchildren(f"{{{_W}}}sdtContent"):
                    yield from self.row_cells(content)

    def table_lines(self, table):
        """One line per row, "cell | cell"; a nested table's rows follow the
        row of the cell holding it."""
        for row in table.iterchildren(f"{{{_W}}}tr"):
            cells, nested = [], []
            for cell in self.row_cells(row):
                texts = []
                for child in cell:
                    if child.tag == f"{{{_W}}}p":
                        texts.append(self.paragraph_text(child))
                        texts.extend(self.blocks_text(box) for box in self.text_boxes(child))
                    elif child.tag == f"{{{_W}}}tbl":
                        nested.extend(self.table_lines(child))
                cells.append(" ".join(text.strip() for text in texts if text.strip()))
            yield " | ".join(cells)
            yield from nested


# --- TXT and CSV -------------------------------------------------------------------
def _decode(data: bytes) -> tuple[str, list[str]]:
    """Text of ``data``: UTF-8 (with or without BOM), UTF-16 with a BOM,
    else Windows-1252, else Latin-1 (which never fails), with a warning
    naming the fallback."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), []
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        pass
    for encoding in ("cp1252", "latin-1"):
        try:
            return data.decode(encoding), [f"the file is not UTF-8: read as {encoding}"]
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes any bytes")


def _extract_txt(data: bytes) -> Extracted:
    text, warnings = _decode(data)
    text = text.replace("\x00", "")
    return Extracted(text if text.strip() else "", tuple(warnings))


def _extract_csv(data: bytes) -> Extracted:
    """One line per data row, each value with its column's header:
    ``Product: Desk; Qty: 4`` (empty values left out)."""
    text, warnings = _decode(data)
    sample = text[:65536]
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        rows = list(csv.reader(io.StringIO(text.replace("\x00", "")), dialect))
    except csv.Error as exc:
        raise ExtractionError(f"not a readable CSV file ({exc})") from exc
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        return Extracted("", tuple(warnings))
    headers = [header.strip() or f"Column {index}" for index, header in enumerate(rows[0], 1)]
    lines = []
    for row in rows[1:]:
        names = headers + [f"Column {index}" for index in range(len(headers) + 1, len(row) + 1)]
        lines.append("; ".join(f"{name}: {value.strip()}" for name, value in zip(names, row, strict=False)
                               if value.strip()))
    if not lines:  # a header row only
        lines.append("; ".join(headers))
    return Extracted("\n".join(lines), tuple(warnings))


# --- HTML (BeautifulSoup + lxml) ---------------------------------------------------
_DROPPED_TAGS = ("script", "style", "noscript", "nav", "footer", "header", "aside", "form", "template",
                 "iframe", "svg", "canvas", "object", "embed", "button", "select", "dialog")
_PARAGRAPH, _LINE = "\ue000", "\ue001"  # private-use marks of breaks, replaced after get_text()
_BLOCK_TAGS = ("p", "div", "section", "article", "main", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li",
               "dl", "dt", "dd", "blockquote", "pre", "table", "tr", "figure", "figcaption", "address",
               "details", "summary", "hr", "caption")


def extract_html(html: str | bytes, base_url: str = "") -> Extracted:
    """The main text of an HTML page: ``<main>``, else its ``<article>``
    elements, else ``<body>``; scripts, styles, navigation, headers,
    footers, asides, forms and hidden elements dropped; blocks separated by
    blank lines, table rows one per line as "cell | cell"; the page's
    ``<title>`` first. ``base_url`` only names the page in warnings.

    Raises ExtractionError for input over 50 MB.
    """
    from bs4 import BeautifulSoup

    if len(html) > MAX_INPUT_BYTES:
        raise ExtractionError(f"the page is larger than the {MAX_INPUT_BYTES // 1_000_000} MB limit")
    soup = BeautifulSoup(html, "lxml")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for element in soup.find_all(_DROPPED_TAGS):
        element.decompose()
    for element in soup.find_all(attrs={"hidden": True}):
        element.decompose()
    for element in soup.find_all(attrs={"aria-hidden": "true"}):
        element.decompose()
    for element in soup.find_all(style=re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)):
        element.decompose()
    roots = [element for element in (soup.find("main"),) if element is not None and element.get_text(strip=True)]
    if not roots:
        roots = [article for article in soup.find_all("article")
                 if article.get_text(strip=True) and article.find_parent("article") is None]
    if not roots:
        roots = [soup.body or soup]
    text = "\n\n".join(_html_block_text(root) for root in roots).strip()
    if title and text and not text.startswith(title):
        text = f"{title}\n\n{text}"
    if not text:
        return Extracted("", (f"no text found in the page{' ' + base_url if base_url else ''}",))
    return Extracted(text)


def _html_block_text(root) -> str:
    """``root``'s text with HTML's insignificant whitespace collapsed,
    blocks separated by a blank line, rows, list items and ``<br>`` on their
    own line, ``<pre>`` keeping its lines.

    One walk over the tree with an explicit stack, in time linear in the
    page's size whatever its nesting: inserting the break marks into the
    tree (BeautifulSoup's ``insert_after`` walks the element's whole
    subtree) took minutes on a page of 100,000 nested ``<div>``."""
    from bs4 import CData, NavigableString, Tag

    def children(node, in_pre):
        """``node``'s children for the stack (last first), each with whether
        a cell of the same parent follows it."""
        later_cell, result = False, []
        for child in reversed(node.contents):
            is_cell = isinstance(child, Tag) and child.name in ("td", "th")
            result.append((child, in_pre, is_cell and later_cell))
            later_cell = later_cell or is_cell
        return result

    parts = []
    stack = children(root, False)
    while stack:
        node, in_pre, cell_sep = stack.pop()
        if node is None:  # the end of an element: its closing mark
            parts.append(cell_sep or "")
            continue
        if not isinstance(node, Tag):
            if type(node) in (NavigableString, CData):
                parts.append(node.replace("\n", _LINE) if in_pre else str(node))
            continue
        if node.name == "br":
            parts.append(_LINE)
            continue
        closing = ""
        if node.name in _BLOCK_TAGS:
            closing = _LINE if node.name in ("tr", "li", "dt", "dd") else _PARAGRAPH
            parts.append(closing)
        if cell_sep:  # a cell followed by another cell of its row
            closing = " | " + closing
        stack.append((None, False, closing))
        stack.extend(children(node, in_pre or node.name == "pre"))
    text = re.sub(r"\s+", " ", "".join(parts))
    text = re.sub(f" *[{_PARAGRAPH}{_LINE}][{_PARAGRAPH}{_LINE} ]*",
                  lambda match: "\n\n" if _PARAGRAPH in match.group() else "\n", text)
    return text.strip()


def _extract_html_file(data: bytes) -> Extracted:
    return extract_html(data)


_EXTRACTORS = {"pdf": _extract_pdf, "docx": _extract_docx, "txt": _extract_txt, "csv": _extract_csv,
               "html": _extract_html_file}
